"""Power method, batched and free of per-iteration host syncs (Hotelling deflation on top of
it: :mod:`gpuknn.linalg.deflation`).

The seed algorithm, kept exactly::

    v_t = B v_{t-1} / ||B v_{t-1}||        t = 1, 2, ..., max_iter
    stop at the first t with ||v_t - s_t v_{t-1}||_inf < tol,  s_t = sign(v_t . v_{t-1})
    lambda = v_t^T B v_t                     (Rayleigh quotient)
    B <- B - lambda v v^T                    (Hotelling deflation, next eigenpair;
                                              gpuknn.linalg.deflation)

The sign ``s_t`` makes a negative dominant eigenvalue (whose iterates flip sign every step)
converge too. ``n_iter`` is that first ``t``.

Why blocks: reading the stopping test back to the host every iteration stalls a GPU. The
iterates of a block of up to ``check_every`` steps are kept on the device and their
differences inspected in one transfer (with the block's norms; a careful block reads its
growth separately), so the reported ``t`` and vector are exactly those of the step-by-step
loop. The block after ends where the decay of the differences predicts the
stop (:func:`~gpuknn.linalg.power_steps.predict_steps`), which saves the steps a fixed block
wasted after it. Every routine takes a stack of matrices ``(..., n, n)`` and iterates the
whole stack together; a member that has converged is dropped from the working set.

How a block's iterates are made (lazy products normalised once per block, the careful
per-step normalisation, or matrix powers for tiny ``n``) is in
:mod:`gpuknn.linalg.power_steps`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._delegation import on_input_device
from ..errors import ConvergenceWarning, InvalidInputError
from .eigh import residual_norms, validate_symmetric
from .power_steps import (
    FIRST_BLOCK,
    careful_steps,
    exponent_limit,
    lazy_growth,
    lazy_length,
    lazy_ok,
    lazy_steps,
    matrix_powers,
    normalize,
    predict_steps,
    rescale_exponent,
    step_test,
)

__all__ = ["PowerResult", "power_method"]

_POWERS_MAX_N = 16  # "auto" forms matrix powers only for matrices this small


@dataclass(frozen=True)
class PowerResult:
    """Dominant eigenpair found by :func:`power_method`.

    Attributes
    ----------
    eigenvalue : array, shape (...)
        Rayleigh quotient ``v^T B v`` (0-d for a single matrix).
    eigenvector : array, shape (..., n)
        Unit vector at the iteration that met the tolerance (or the last one).
    n_iter : int or numpy.ndarray of int, shape (...)
        First iteration meeting the tolerance; ``max_iter`` if none did.
    converged : bool or numpy.ndarray of bool, shape (...)
    """

    eigenvalue: Any
    eigenvector: Any
    n_iter: Any
    converged: Any


def _check_options(max_iter: Any, tol: Any, check_every: Any, strategy: str) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidInputError(f"max_iter must be a positive int, got {max_iter!r}")
    if not isinstance(tol, (int, float, np.floating)) or not tol > 0:
        raise InvalidInputError(f"tol must be a positive number, got {tol!r}")
    if isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1:
        raise InvalidInputError(f"check_every must be a positive int, got {check_every!r}")
    if strategy not in ("auto", "matvec", "powers"):
        raise InvalidInputError(f"strategy must be 'auto', 'matvec' or 'powers', got {strategy!r}")


def _random_unit(rng: np.random.Generator, m: int, n: int, xp: Any, dtype: Any, device: Any) -> Any:
    v = rng.standard_normal((m, n))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return xp.astype(from_numpy(v, xp, device=device), dtype)


def _iterate(
    B: Any,
    V: Any,
    xp: Any,
    *,
    max_iter: int,
    tol: float,
    check_every: int,
    powers: bool,
    growth: np.ndarray | None = None,
    callback: Callable[[dict], None] | None = None,
    info: dict | None = None,
) -> tuple[Any, Any, np.ndarray, np.ndarray, np.ndarray]:
    """Power iterations on a stack ``B`` (m, n, n) from unit rows ``V`` (m, n).

    ``growth``: log2 of the expected growth of ``||B v||`` per step for each matrix (from an
    earlier run; NaN or None: unknown, the first block steps carefully). When the growth is
    steep enough to shorten the lazy blocks, the iteration goes on with a copy of the
    matrix divided by a power of two (exact while no entry falls below the smallest normal
    number: the same directions, bit for bit).

    Returns ``(V, D, n_iter, converged, growth)``: the vectors at the stopping iteration, the
    last step difference ``v_t - s_t v_{t-1}`` (a good start for the next eigenpair), host
    arrays of iterations and convergence flags, and the last measured growth of the
    caller's ``B`` (host).
    """
    m, n = V.shape
    dev = device_of(B)
    g = np.full(m, np.nan) if growth is None else np.asarray(growth, dtype=np.float64).copy()
    n_iter = np.full(m, max_iter, dtype=np.int64)
    converged = np.zeros(m, dtype=bool)
    done_idx: list[np.ndarray] = []
    done_V: list[Any] = []
    done_D: list[Any] = []
    active = np.arange(m)
    Ba, Va = B, V
    Da = xp.zeros_like(V)
    Pa = matrix_powers(B, min(check_every, max_iter), xp) if powers else None
    shift = np.zeros(m)  # log2 of the factor each working matrix was divided by
    limit = exponent_limit(V.dtype, xp)
    rates = np.full(m, np.nan)  # last decay rate of the step differences, per matrix
    t, want = 0, min(check_every, FIRST_BLOCK)
    while active.size and t < max_iter:
        K = min(want, max_iter - t)
        dmax_h = None  # set by a lazy block, which reads its test with its norms
        if powers:
            W = xp.matmul(Pa[:, :K, ...], Va[:, None, :, None])[..., 0]
            Vs = normalize(W, Va[:, None, :], xp)
        else:
            e = np.array([rescale_exponent(float(x), K, limit) for x in g[active]])
            if e.any():  # a steep growth would shorten the blocks: iterate on B / 2^e (exact)
                f = from_numpy(np.exp2(-e)[:, None, None], xp, device=dev)
                Ba = Ba * xp.astype(f, Ba.dtype)
                g[active] -= e
                shift[active] += e
            Kl = min(lazy_length(float(x), K) for x in g[active])
            if Kl:
                # an out-of-range block may hold inf/NaN: it is redone, warnings would mislead
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    Vs, nrm, k = lazy_steps(Ba, Va, Kl, g[active], xp)
                    D, dmax = step_test(Vs, Va, xp)
                    # one host transfer per block: the norms and the test together
                    both = to_numpy(xp.stack([xp.astype(nrm, xp.float64), xp.astype(dmax, xp.float64)]))
                if lazy_ok(both[0]):
                    dmax_h, K = both[1], Kl
                    g[active] = lazy_growth(both[0], k)
            if dmax_h is None:  # no growth known yet, or the lazy block left the safe range
                K = Kl or K
                Vs, g[active] = careful_steps(Ba, Va, K, xp)
        if dmax_h is None:  # matrix powers or careful steps: their test is read here
            D, dmax = step_test(Vs, Va, xp)
            dmax_h = to_numpy(dmax).astype(np.float64)
        hit_h = dmax_h < tol
        fin = np.nonzero(hit_h.any(axis=1))[0]
        if fin.size:
            first = hit_h[fin].argmax(axis=1)
            onehot = np.zeros((fin.size, K, 1))
            onehot[np.arange(fin.size), first, 0] = 1.0
            sel = xp.astype(from_numpy(onehot, xp, device=dev), V.dtype)
            fin_x = from_numpy(fin, xp, device=dev)
            # exact selection: one term is 1 * x, the others 0 * x with x finite
            done_V.append(xp.sum(xp.take(Vs, fin_x, axis=0) * sel, axis=1))
            done_D.append(xp.sum(xp.take(D, fin_x, axis=0) * sel, axis=1))
            done_idx.append(active[fin])
            n_iter[active[fin]] = t + first + 1
            converged[active[fin]] = True
            keep = np.nonzero(~hit_h.any(axis=1))[0]
            keep_x = from_numpy(keep, xp, device=dev)
            active = active[keep]
            dmax_h = dmax_h[keep]
            Va = xp.take(Vs[:, -1, :], keep_x, axis=0)
            Da = xp.take(D[:, -1, :], keep_x, axis=0)
            Ba = xp.take(Ba, keep_x, axis=0)
            if powers:
                Pa = xp.take(Pa, keep_x, axis=0)
        else:
            Va, Da = Vs[:, -1, :], D[:, -1, :]
        # the next block ends where the slowest member is predicted to converge
        want = check_every if not active.size else 0
        for r, a in zip(dmax_h, active):
            steps, rates[a] = predict_steps(r, tol, check_every, rates[a])
            want = max(want, steps)
        t += K
        if callback is not None:
            callback({**(info or {}), "iteration": t, "n_active": int(active.size)})
    done_idx.append(active)
    done_V.append(Va)
    done_D.append(Da)
    order = np.argsort(np.concatenate(done_idx), kind="stable")
    order_x = from_numpy(order, xp, device=dev)
    V_out = xp.take(xp.concat(done_V, axis=0), order_x, axis=0)
    D_out = xp.take(xp.concat(done_D, axis=0), order_x, axis=0)
    return V_out, D_out, n_iter, converged, g + shift


def _prescale(B: Any, xp: Any) -> tuple[Any, np.ndarray]:
    """``(B * 2^e0, e0)``: each matrix of the stack ``B`` (m, n, n) whose largest entry lies
    below ``2^-(limit // 2)`` (2^-63 in float32) scaled up so that entry is in [1, 2)
    (at least 2^-24 for subnormal maxima: ``e0`` stops at ``limit``, 126 in float32, so
    ``2^-e0`` stays a normal number too).

    GPUs' matrix products flush subnormal operands and results to zero: a matrix with tiny
    entries became the zero matrix there (eigenvalue 0, a random "converged" vector) and
    one near the bottom of the range lost digits. Scaling by a power of two is exact and
    keeps the directions; matrices in the ordinary range are left as they are (e0 = 0), so
    their results do not change. One host read of the entries' maxima.
    """
    limit = exponent_limit(B.dtype, xp)
    # The maxima in float64: CuPy's float32 max reduction flushes subnormal entries to zero
    # too (an H200 read 0 for a matrix of them), while their float64 copies are normal.
    amax = to_numpy(xp.max(xp.abs(xp.astype(B, xp.float64)), axis=(1, 2)))
    e0 = np.zeros(amax.shape, dtype=np.int64)
    small = (amax > 0) & (amax < 2.0 ** -(limit // 2))
    if small.any():
        e0[small] = np.minimum(limit, -np.floor(np.log2(amax[small]))).astype(np.int64)
        B = times_pow2(B, e0, xp)
    return B, e0


def times_pow2(X: Any, e: np.ndarray, xp: Any) -> Any:
    """``X * 2^e`` with ``e`` (host ints) per leading row of ``X``, computed in float64
    (exact: 2^e and the products are float64 numbers) and rounded once to X's dtype -- a
    result below float32's normal range is rounded correctly, not flushed."""
    shape = (-1,) + (1,) * (X.ndim - 1)
    f = from_numpy(np.exp2(np.asarray(e, dtype=np.float64)).reshape(shape), xp, device=device_of(X))
    return xp.astype(xp.astype(X, xp.float64) * f, X.dtype)


# A converged pair's residual is at most ||B v|| ||v_t - v_{t-1}||_2 <= ||B|| sqrt(n) tol (the
# Rayleigh quotient minimises ||B v - mu v||); twice that, plus rounding, is the bound.
RESIDUAL_FACTOR = 2.0


def residual_ok(B: Any, res: Any, tol: float, xp: Any) -> np.ndarray:
    """Host mask (m, p) of the residuals ``res`` (m, p) of a stack ``B`` (m, n, n) that
    verify convergence: ``res <= (RESIDUAL_FACTOR tol + 16 eps) sqrt(n) ||B||_F``.

    The stopping test watches the iterates' change only, which stalls as well as converges
    (a start nearly orthogonal to the eigenvector, an eigenvalue cluster, error carried over
    from earlier deflations); the residual is what "converged" promises. One host transfer.
    """
    n = B.shape[-1]
    eps = float(xp.finfo(B.dtype).eps)
    B64 = xp.astype(B, xp.float64)
    big = xp.max(xp.abs(B64), axis=(-2, -1))
    unit = B64 / xp.where(big > 0, big, xp.ones_like(big))[:, None, None]
    norm = big * xp.sqrt(xp.sum(unit * unit, axis=(-2, -1)))  # no square under- or overflows
    h = to_numpy(xp.concat([norm[:, None], xp.astype(res, xp.float64)], axis=1))
    bound = (RESIDUAL_FACTOR * tol + 16 * eps) * math.sqrt(n) * h[:, :1]
    return h[:, 1:] <= bound


def _rayleigh(B: Any, V: Any, xp: Any) -> Any:
    BV = xp.matmul(B, V[..., None])[..., 0]
    return xp.sum(V * BV, axis=-1) / xp.sum(V * V, axis=-1)


def _use_powers(strategy: str, n: int) -> bool:
    return strategy == "powers" or (strategy == "auto" and n <= _POWERS_MAX_N)


def _start(x0: Any, rng: np.random.Generator, m: int, n: int, xp: Any, dtype: Any, device: Any) -> Any:
    if x0 is None:
        return _random_unit(rng, m, n, xp, dtype, device)
    x0 = xp.astype(x0 if hasattr(x0, "shape") else from_numpy(np.asarray(x0), xp, device=device), dtype)
    if x0.shape[-1] != n:
        raise InvalidInputError(f"x0 must have length {n}, got shape {tuple(x0.shape)}")
    x0 = xp.reshape(xp.broadcast_to(x0, (m, n)) if x0.ndim == 1 else x0, (m, n))
    if not bool(xp.all(xp.isfinite(x0))) or not bool(xp.all(xp.linalg.vector_norm(x0, axis=-1) > 0)):
        raise InvalidInputError("x0 must be finite and non-zero")
    return normalize(x0, x0, xp)


@on_input_device
def power_method(
    B: Any,
    *,
    x0: Any = None,
    max_iter: int = 10_000,
    tol: float = 1e-7,
    random_state: Any = None,
    check_every: int = 32,
    strategy: str = "auto",
    callback: Callable[[dict], None] | None = None,
) -> PowerResult:
    """Dominant eigenpair of a symmetric matrix (or of each matrix of a stack).

    Parameters
    ----------
    B : array, shape (n, n) or (..., n, n)
        Symmetric, finite matrix or stack of them.
    x0 : array, shape (n,) or (..., n), optional
        Start vector(s); default a seeded standard normal vector, normalised.
    max_iter : int, default 10_000
        Iteration limit per matrix.
    tol : float, default 1e-7
        Stop at the first iteration with ``||v_t - s_t v_{t-1}||_inf < tol``.
    random_state : int, numpy Generator or None
        Seed of the start vectors (drawn on the host, so every backend starts alike).
    check_every : int, default 32
        Most iterations between host reads of the stopping test (a run's first block has
        at most 8, later ones end where the decay of the step differences predicts the
        stop). Results depend on it only through rounding (a block's products are
        normalised together), which can still move the stopping step of a float32 run
        whose step differences hover near ``tol``.
    strategy : {"auto", "matvec", "powers"}
        How iterates are produced (see the module notes); "auto" uses powers for n <= 16.
    callback : callable, optional
        Called after each block with ``{"iteration", "n_active"}``.

    Returns
    -------
    PowerResult
        ``eigenvalue`` (...), ``eigenvector`` (..., n), ``n_iter``, ``converged``.

    Warns
    -----
    ConvergenceWarning
        Some matrix reached ``max_iter``, or met ``tol`` on its iterates while its residual
        ``||B v - lambda v||`` exceeds :func:`residual_ok`'s bound (its ``converged`` is
        False either way).

    Notes
    -----
    Converges at rate ``|lambda_2 / lambda_1|`` per iteration towards the eigenvalue of
    largest magnitude; equal magnitudes of opposite sign never converge. The zero matrix
    returns eigenvalue 0, the (unit) start vector, ``n_iter == 1`` and converged. Cost
    O(n^2) per iteration and matrix.

    Examples
    --------
    >>> import numpy as np
    >>> r = power_method(np.diag([1.0, 4.0, 2.0]), random_state=0, tol=1e-12)
    >>> round(float(r.eigenvalue), 6), r.converged
    (4.0, True)
    """
    xp = array_namespace(B, x0)
    _check_options(max_iter, tol, check_every, strategy)
    B = validate_symmetric(B, xp, name="B", batched=True)
    batch, n = tuple(B.shape[:-2]), B.shape[-1]
    m = int(np.prod(batch)) if batch else 1
    B3 = xp.reshape(B, (m, n, n))
    V0 = _start(x0, np.random.default_rng(random_state), m, n, xp, B.dtype, device_of(B))
    B3, e0 = _prescale(B3, xp)
    V, _, n_iter, conv, _ = _iterate(
        B3,
        V0,
        xp,
        max_iter=max_iter,
        tol=tol,
        check_every=check_every,
        powers=_use_powers(strategy, n),
        callback=callback,
    )
    lam = _rayleigh(B3, V, xp)
    verified = residual_ok(B3, residual_norms(B3, V[..., None], lam[..., None], xp), tol, xp)[:, 0]
    if e0.any():  # back to the caller's scale
        lam = times_pow2(lam, -e0, xp)
    if not conv.all():
        warnings.warn(
            f"power method: {int((~conv).sum())} of {m} matrices did not reach "
            f"tol={tol:g} in max_iter={max_iter} iterations",
            ConvergenceWarning,
            stacklevel=2,
        )
    if (conv & ~verified).any():
        warnings.warn(
            f"power method: {int((conv & ~verified).sum())} of {m} matrices met tol={tol:g} on "
            f"their iterates but their residuals ||B v - lambda v|| exceed {RESIDUAL_FACTOR:g} "
            "sqrt(n) tol ||B||_F (the iteration stagnated); reported as not converged",
            ConvergenceWarning,
            stacklevel=2,
        )
    conv = conv & verified
    if not batch:
        return PowerResult(lam[0], V[0, :], int(n_iter[0]), bool(conv[0]))
    return PowerResult(
        xp.reshape(lam, batch),
        xp.reshape(V, batch + (n,)),
        n_iter.reshape(batch),
        conv.reshape(batch),
    )
