"""Hotelling deflation on top of the power method: the ``p`` dominant eigenpairs, one by one.

After each eigenpair ``(lambda, v)`` found by the power iterations of
:mod:`gpuknn.linalg.power`, the working matrix becomes ``B <- B - lambda v v^T`` and the
power method runs again on it -- the seed algorithm, kept exactly. Stacks ``(..., n, n)``
are deflated together.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy
from .._delegation import on_input_device
from ..errors import ConvergenceWarning
from .eigh import EigenResult, check_n_components, fix_signs, residual_norms, validate_symmetric
from .power import (
    RESIDUAL_FACTOR,
    _check_options,
    _iterate,
    _prescale,
    _random_unit,
    _rayleigh,
    _use_powers,
    residual_ok,
    times_pow2,
)
from .power_steps import exponent_limit, normalize

__all__ = ["deflated_power_method"]

#: Weight of the random unit vector added to a warm start (see ``deflated_power_method``):
#: enough to grow into a repeated eigenvalue's missing directions within a few dozen steps,
#: small enough to keep the warm start's head start (1.0 cost Fashion-MNIST's 100 float64
#: pairs 34 % more iterations than the bare difference; 2**-10 costs 15 %, float32 none).
_WARM_MIX = 2.0**-10


def _deflate(B: Any, V: Any, lam: Any, xp: Any, *, e: np.ndarray) -> Any:
    """Hotelling deflation ``(B - lam v v^T) / 2^e`` of a stack (m, n, n).

    The division by ``2^e`` (exact while no entry falls below the smallest normal number)
    brings the eigenvalue just found to about 1, so the next run's growth hint is
    ``lambda_{j+1} / lambda_j <= 1`` and its lazy blocks rarely need the run's own
    rescaling (see :mod:`gpuknn.linalg.power_steps`). (An in-place NumPy update through
    BLAS ``ger`` was removed by the delegation layer's 10 % rule: the deflation solver is
    not a default job; docs/benchmarks.md.)
    """
    f = np.exp2(-e)
    B = B - V[:, :, None] * (lam[:, None] * V)[:, None, :]
    if np.all(f == 1.0):
        return B
    return B * xp.astype(from_numpy(f[:, None, None], xp, device=device_of(B)), B.dtype)


@on_input_device
def deflated_power_method(
    C: Any,
    n_components: int,
    *,
    max_iter: int = 10_000,
    tol: float = 1e-7,
    random_state: Any = None,
    check_every: int = 32,
    strategy: str = "auto",
    warm_start: bool = False,
    callback: Callable[[dict], None] | None = None,
) -> EigenResult:
    """The ``n_components`` dominant eigenpairs by power method + Hotelling deflation.

    After each eigenpair ``(lambda, v)`` the working matrix becomes
    ``B <- B - lambda v v^T`` and the power method runs again on it.

    Parameters
    ----------
    C : array, shape (n, n) or (..., n, n)
        Symmetric matrix (positive semi-definite for "dominant" to mean "largest").
    n_components : int
        Number ``p`` of eigenpairs, ``1 <= p <= n``.
    max_iter, tol, random_state, check_every, strategy
        As for :func:`power_method`, per eigenpair. Start vectors for all eigenpairs come
        from one generator seeded by ``random_state``.
    warm_start : bool, default False
        Start eigenpair ``j + 1`` from the last step difference of eigenpair ``j``, which
        is dominated by the next eigenvector, plus 2**-10 of a random unit vector (the seed
        algorithm starts at random; the difference alone misses the rest of a repeated
        eigenvalue's eigenspace). Cuts iterations on data with slowly decaying spectra.
    callback : callable, optional
        Called after each block with ``{"component", "iteration", "n_active"}``.

    Returns
    -------
    EigenResult
        ``eigenvalues`` (..., p) in the order found (descending for a PSD matrix),
        ``eigenvectors`` (..., n, p), ``n_iter`` and ``converged`` (..., p) host arrays,
        ``residuals`` (..., p) = ``||C v - lambda v||`` against the original ``C``.

    Warns
    -----
    ConvergenceWarning
        Some eigenpair reached ``max_iter``, or met ``tol`` on its iterates but not the
        residual test (:func:`~gpuknn.linalg.power.residual_ok`): it is reported as not
        converged.

    Notes
    -----
    Errors accumulate: each deflation leaves ``lambda (v v^T - u u^T)`` of the error
    of ``v`` in ``B``. Cost O(p * iterations * n^2).

    Examples
    --------
    >>> import numpy as np
    >>> r = deflated_power_method(np.diag([1.0, 4.0, 2.0]), 2, random_state=0, tol=1e-10)
    >>> [round(float(x), 6) for x in r.eigenvalues]
    [4.0, 2.0]
    """
    xp = array_namespace(C)
    _check_options(max_iter, tol, check_every, strategy)
    C = validate_symmetric(C, xp, batched=True)
    batch, n = tuple(C.shape[:-2]), C.shape[-1]
    p = check_n_components(n_components, n)
    m = int(np.prod(batch)) if batch else 1
    C3 = xp.reshape(C, (m, n, n))
    rng = np.random.default_rng(random_state)
    powers = _use_powers(strategy, n)
    # Tiny matrices start scaled up by 2^e0 (exact): GPUs flush subnormal products to zero.
    C3s, e0 = _prescale(C3, xp)
    B, lams, vecs, iters, convs = C3s, [], [], [], []
    D, growth = None, None
    E = -e0.astype(np.float64)  # B = (the deflated C) / 2^E, per matrix
    limit = exponent_limit(C.dtype, xp)
    dev = device_of(C)
    for j in range(p):
        V0 = _random_unit(rng, m, n, xp, C.dtype, dev)
        if warm_start and D is not None:
            # The step difference alone is no start: with a repeated eigenvalue the iterates'
            # components in its eigenspace keep their ratio, so D is orthogonal to the rest of
            # that eigenspace -- the next run started from it stayed there and returned the
            # next smaller eigenvalue as "converged" ([3, 1] for diag(3, 3, 1), issue 32).
            # A small random unit vector restores a start with components everywhere (almost
            # surely), which power steps amplify, and keeps the warm start (D dominates).
            V0 = normalize(normalize(D, V0, xp) + _WARM_MIX * V0, V0, xp)
        # growth: each eigenpair's run starts from the last one's |lambda| (its successor's is
        # at most that), so only the first run needs a careful first block; the working
        # matrix is divided by 2^round(growth) with each deflation (eigenvalue found -> ~1)
        V, D, it, cv, growth = _iterate(
            B,
            V0,
            xp,
            max_iter=max_iter,
            tol=tol,
            check_every=check_every,
            powers=powers,
            growth=growth,
            callback=callback,
            info={"component": j},
        )
        lam = _rayleigh(B, V, xp)  # of the scaled working matrix
        # 2^e and 2^E stay normal numbers of the dtype (eigenvalues near its limits)
        e = np.clip(
            np.where(np.isfinite(growth), np.round(growth), 0.0),
            np.maximum(-limit, -limit - E),
            np.minimum(limit, limit - E),
        )
        B = _deflate(B, V, lam, xp, e=e)
        lams.append(times_pow2(lam, E, xp))
        E, growth = E + e, growth - e
        vecs.append(V)
        iters.append(it)
        convs.append(cv)
    lam = xp.stack(lams, axis=-1)  # (m, p)
    V = fix_signs(xp.stack(vecs, axis=-1), xp)  # (m, n, p)
    n_iter, conv = np.stack(iters, axis=-1), np.stack(convs, axis=-1)
    if not conv.all():
        bad = np.nonzero(~conv.all(axis=0))[0].tolist()
        warnings.warn(
            f"deflated power method: eigenpair(s) {bad} did not reach tol={tol:g} in "
            f"max_iter={max_iter} iterations for {int((~conv).any(axis=1).sum())} of {m} matrices",
            ConvergenceWarning,
            stacklevel=2,
        )
    # against the caller's C, computed on its scaled copy (the same numbers times 2^e0)
    res_s = residual_norms(C3s, V, times_pow2(lam, e0, xp), xp) if e0.any() else residual_norms(C3, V, lam, xp)
    res = times_pow2(res_s, -e0, xp) if e0.any() else res_s
    verified = residual_ok(C3s if e0.any() else C3, res_s, tol, xp)
    if (conv & ~verified).any():
        bad = np.nonzero((conv & ~verified).any(axis=0))[0].tolist()
        warnings.warn(
            f"deflated power method: eigenpair(s) {bad} met tol={tol:g} on their iterates but "
            f"their residuals ||C v - lambda v|| exceed {RESIDUAL_FACTOR:g} sqrt(n) tol ||C||_F "
            "(stagnation or error carried over from earlier deflations); reported as not converged",
            ConvergenceWarning,
            stacklevel=2,
        )
    conv = conv & verified
    if not batch:
        return EigenResult(lam[0, :], V[0, ...], n_iter[0], conv[0], res[0, :])
    return EigenResult(
        xp.reshape(lam, batch + (p,)),
        xp.reshape(V, batch + (n, p)),
        n_iter.reshape(batch + (p,)),
        conv.reshape(batch + (p,)),
        xp.reshape(res, batch + (p,)),
    )
