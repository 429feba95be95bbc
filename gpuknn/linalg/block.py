"""Block eigen-solver: subspace iteration with Rayleigh-Ritz, all matrix-matrix products.

One iteration on an orthonormal basis ``Q`` of ``b = p + oversample`` columns::

    W = C Q                         one (n x n) @ (n x b) GEMM, in C's dtype
    Q <- orth(W)                    Cholesky QR: Gram W^T W (b x b) in float64, W L^-T

and every ``check_every`` iterations a Rayleigh-Ritz step that also tests convergence::

    H = Q^T W = S diag(theta) S^T   the small b x b problem, in float64
    residuals of the leading p Ritz pairs  ||C q s - theta q s|| = ||W s - theta Q s||

The leading Ritz pair ``i`` converges like ``(lambda_{b+1} / lambda_i)^t`` for the vector
and twice as fast for the eigenvalue, so oversampling buys speed when the spectrum decays
slowly (Fashion-MNIST: lambda_150 / lambda_100 ~ 0.6). Rayleigh-Ritz does not change the
span, so doing it only every few iterations loses nothing; and Cholesky QR (a Gram GEMM, a
b x b Cholesky and a product) replaces Householder QR, an order of magnitude slower for
784 x 150 on a CPU (docs/benchmarks.md). Its accuracy degrades with cond(W)^2 * eps, so the small matrices are
formed in float64 (cond(W) <= lambda_1 / lambda_b); a float64 basis is orthonormalised
twice before each Rayleigh-Ritz step (CholeskyQR2), a float32 one once (its own rounding
is larger than what the second pass would correct); if the Cholesky factor is not finite, the
step falls back to Householder QR. The stopping test ``max_i ||r_i|| <= tol * |theta_1|``
bounds the eigenvalue error by ``||r_i||^2 / gap_i`` and the angle by ``||r_i|| / gap_i``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy
from .._delegation import on_input_device, symmetric_eigh
from ..errors import ConvergenceWarning, InvalidInputError
from .eigh import (
    EigenResult,
    check_n_components,
    eigh,
    fix_signs,
    residual_norms,
    validate_symmetric,
)
from .power_steps import decay_rate, decay_steps

__all__ = ["block_eigh"]


def default_tol(dtype: Any, xp: Any) -> float:
    """Relative residual tolerance: 1e-10 in float64, 1e-6 in float32 (near round-off)."""
    return 1e-10 if float(xp.finfo(dtype).eps) < 1e-10 else 1e-6


def _orth(W: Any, xp: Any, *, twice: bool = False) -> Any:
    """Orthonormal basis of W's columns: Cholesky QR (Gram in float64), Householder fallback.

    The fallback runs when the Gram is not numerically positive definite. NumPy raises
    ``LinAlgError`` there; CuPy neither raises nor always returns NaNs -- it hands back the
    partial factor -- so the factor itself is checked (:func:`cholesky_ok`).
    """
    Q = W
    for _ in range(2 if twice else 1):
        W64 = xp.astype(Q, xp.float64)
        G = xp.matmul(xp.matrix_transpose(W64), W64)
        try:
            L = xp.linalg.cholesky((G + xp.matrix_transpose(G)) / 2)
        except Exception as exc:  # noqa: BLE001 - LinAlgError's class differs by backend
            if type(exc).__name__ != "LinAlgError" and "positive definite" not in str(exc).lower():
                raise
            return xp.linalg.qr(W).Q
        if not cholesky_ok(L, G, xp):
            return xp.linalg.qr(W).Q
        Q = xp.astype(xp.matmul(W64, xp.matrix_transpose(_inv_lower(L, xp))), W.dtype)
    return Q


def cholesky_ok(L: Any, G: Any, xp: Any) -> bool:
    """Whether ``L`` (b, b) is a usable Cholesky factor of the symmetric ``G`` (float64).

    Finite, a diagonal clearly positive (above ``sqrt(b eps)`` of the largest), and
    ``L L^T`` reproducing ``G`` to ``b eps`` of its scale: a factor that stopped early (CuPy
    returns one without raising) fails the last test, since its later columns are left as
    they were. One host sync; O(b^3) work for a b of tens to hundreds.
    """
    b = int(L.shape[0])
    eps = float(xp.finfo(xp.float64).eps)
    d = xp.linalg.diagonal(L)
    scale = xp.max(xp.abs(xp.linalg.diagonal(G)))
    R = xp.matmul(L, xp.matrix_transpose(L)) - (G + xp.matrix_transpose(G)) / 2
    ok = (
        xp.all(xp.isfinite(L))
        & (xp.min(d) > math.sqrt(b * eps) * xp.sqrt(scale))
        & (xp.max(xp.abs(R)) <= 8 * b * eps * scale)
    )
    return bool(ok)


def _inv_lower(L: Any, xp: Any) -> Any:
    """Inverse of a lower-triangular ``L`` (b, b), exactly zero above the diagonal.

    ``xp.linalg.inv`` (one call, which a GPU wants), its round-off above the diagonal zeroed
    (LU pivots on a factor with large off-diagonal entries). (A NumPy-only recursive halving,
    faster on the CPU for b > 32, was removed by the delegation layer's 10 % rule: the block
    solver is not a default job; docs/benchmarks.md.)
    """
    i = xp.arange(L.shape[0], device=device_of(L))
    return xp.where(i[:, None] >= i[None, :], xp.linalg.inv(L), xp.zeros_like(L))


def _steps_to_go(history: list[tuple[int, float]], target: float, most: int) -> int:
    """Iterations until the next Rayleigh-Ritz step: at most ``most``, fewer when the decay
    of the largest residual between the last two steps predicts ``target`` sooner.

    The residuals of subspace iteration fall geometrically once the start-up is over, so
    the prediction lands on (or one short of) the converging iteration; a step placed
    too early only costs one more Rayleigh-Ritz step, never accuracy.
    """
    if len(history) < 2:
        return most
    (t0, r0), (t1, r1) = history[-2:]
    return decay_steps(r1, decay_rate(r0, r1, t1 - t0), target, most)


def _ritz(Q: Any, W: Any, xp: Any) -> tuple[Any, Any, Any, Any]:
    """Rayleigh-Ritz of ``W = C Q``: float64 ``Q``, ``W``, Ritz values (ascending) and the
    eigenvectors ``S`` of the b x b ``Q^T C Q``."""
    Q64, W64 = xp.astype(Q, xp.float64), xp.astype(W, xp.float64)
    H = xp.matmul(xp.matrix_transpose(Q64), W64)
    theta, S = symmetric_eigh((H + xp.matrix_transpose(H)) / 2)
    return Q64, W64, theta, S


def _shift(C: Any, Q64: Any, W64: Any, theta: Any, S: Any, xp: Any) -> float:
    """Shift for a positive semi-definite ``C``: half an estimate of ``lambda_{b+1}``, at
    most half the smallest Ritz value ``theta_b`` (a lower bound of ``lambda_b``).

    The estimate is the Rayleigh quotient ``alpha`` of the residual of the smallest Ritz
    pair, a direction orthogonal to the basis: it lies in the eigenvectors just beyond the
    block, so ``alpha`` follows ``lambda_{b+1}`` (Fashion-MNIST: 0.126-0.143 against
    0.161 from the second iteration on), and it is tiny when the spectrum drops right after
    the block -- where ``theta_b / 2`` would leave the unwanted eigenvalues near ``-sigma``
    and slow the iteration several-fold instead of speeding it up.
    """
    low = max(float(theta[0]), 0.0)
    s = S[:, :1]
    r = xp.matmul(W64, s) - theta[0] * xp.matmul(Q64, s)
    norm = float(xp.linalg.vector_norm(r))
    if not norm > 0:  # the basis is invariant: nothing left to speed up
        return 0.0
    r = r / norm
    alpha = float(xp.sum(r * xp.astype(xp.matmul(C, xp.astype(r, C.dtype)), xp.float64)))
    return max(min(low, alpha), 0.0) / 2


@on_input_device
def block_eigh(
    C: Any,
    n_components: int,
    *,
    tol: float | None = None,
    max_iter: int = 1000,
    random_state: Any = None,
    oversample: int | None = None,
    check_every: int = 4,
    psd: bool = False,
    callback: Callable[[dict], None] | None = None,
) -> EigenResult:
    """The ``n_components`` dominant eigenpairs by block subspace iteration.

    Parameters
    ----------
    C : array, shape (n, n)
        Symmetric matrix; positive semi-definite (a covariance) for "dominant" to mean
        "largest" (the iteration favours the largest magnitudes).
    n_components : int
        Number ``p`` of eigenpairs, ``1 <= p <= n``.
    tol : float, optional
        Stop when every leading residual ``||C v_i - theta_i v_i||`` is at most
        ``tol * |theta_1|``. Default 1e-10 (float64) or 1e-6 (float32).
    max_iter : int, default 1000
        Limit on iterations (products with ``C``).
    random_state : int, numpy Generator or None
        Seed of the random start basis (drawn on the host); unused when the block reaches
        ``n`` (``p + oversample >= n``), which is solved by a float64 dense ``eigh``.
    oversample : int, optional
        Extra basis columns; default ``max(10, p // 2)`` (the block is capped at ``n``).
    check_every : int, default 4
        Most iterations between Rayleigh-Ritz steps, each a convergence test and a host
        read; from the third step on, the next one comes sooner when the decay of the
        residuals predicts convergence sooner. The last iteration always has one.
    psd : bool, default False
        Declare ``C`` positive semi-definite (a covariance). The iteration then multiplies
        by the shifted ``C - sigma I``, with ``sigma`` about half of ``lambda_{b+1}``
        (estimated after the first product and at every Rayleigh-Ritz step, and never above
        half the smallest Ritz value; see :func:`_shift`). The unwanted eigenvalues
        ``[0, lambda_{b+1}]`` then shrink by ``max(sigma, lambda_{b+1} - sigma) /
        (lambda_i - sigma)`` per iteration instead of ``lambda_{b+1} / lambda_i``: about a
        quarter fewer iterations on slowly decaying spectra (Fashion-MNIST: 12 instead of
        16), no change where the spectrum drops right after the block. Ritz values never
        exceed the eigenvalues, so ``sigma <= lambda_p / 2`` whatever the start. Results
        are eigenpairs of ``C`` either way; on an indefinite ``C`` the shift favours the
        positive end.
    callback : callable, optional
        Called after each Rayleigh-Ritz step with ``{"iteration", "max_residual"}``.

    Returns
    -------
    EigenResult
        ``eigenvalues`` (p,) descending, ``eigenvectors`` (n, p), ``n_iter`` (p,) (the
        same count for all), ``converged`` (p,), ``residuals`` (p,).

    Warns
    -----
    ConvergenceWarning
        ``max_iter`` reached before ``tol``.

    Notes
    -----
    Cost per iteration O(n^2 b + n b^2 + b^3) with ``b = p + oversample``; memory O(n b).
    The products with ``C`` run in C's dtype; Gram matrices, Cholesky factors and the
    Rayleigh-Ritz problem in float64 (all b x b). Results come back in C's dtype.

    Examples
    --------
    >>> import numpy as np
    >>> r = block_eigh(np.diag([1.0, 4.0, 2.0, 0.5]), 2, random_state=0)
    >>> [round(float(x), 6) for x in r.eigenvalues]
    [4.0, 2.0]
    """
    xp = array_namespace(C)
    C = validate_symmetric(C, xp)
    n = C.shape[0]
    p = check_n_components(n_components, n)
    if oversample is None:
        oversample = max(10, p // 2)
    for name, val, low in (("max_iter", max_iter, 1), ("oversample", oversample, 0), ("check_every", check_every, 1)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < low:
            raise InvalidInputError(f"{name} must be an int >= {low}, got {val!r}")
    tol = default_tol(C.dtype, xp) if tol is None else tol
    if not isinstance(tol, (int, float, np.floating)) or not tol > 0:
        raise InvalidInputError(f"tol must be a positive number, got {tol!r}")
    b = min(n, p + int(oversample))
    rng = np.random.default_rng(random_state)
    if b == n:
        # A basis of the whole space: its single Rayleigh-Ritz step would be the dense eigh of
        # C itself (in float64, like every Rayleigh-Ritz step), so that is what runs
        r = eigh(xp.astype(C, xp.float64), p)
        if callback is not None:
            callback({"iteration": 1, "max_residual": float(xp.max(r.residuals))})
        return _result(C, r.eigenvectors, r.eigenvalues, 1, True, xp)
    dev = device_of(C)
    # A Gaussian n x b block is well conditioned (b < n): Cholesky QR is enough here too.
    Q = _orth(
        xp.astype(from_numpy(rng.standard_normal((n, b)), xp, device=dev), C.dtype), xp, twice=C.dtype == xp.float64
    )
    converged = False
    lead = xp.arange(b - 1, b - 1 - p, -1, device=dev)  # eigh is ascending: largest p first
    sigma = 0.0
    next_rr = min(check_every, max_iter)
    history: list[tuple[int, float]] = []
    for it in range(1, max_iter + 1):
        W = xp.matmul(C, Q)
        if psd and it == 1 and next_rr != 1:
            # the first shift: the smallest Ritz pair of the b x b Q^T C Q, no residual test
            sigma = _shift(C, *_ritz(Q, W, xp), xp)
        if it == next_rr or it == max_iter:
            Q64, W64, theta, S = _ritz(Q, W, xp)
            Sp = xp.take(S, lead, axis=1)
            lam = xp.take(theta, lead)
            V = xp.matmul(Q64, Sp)
            R = xp.matmul(W64, Sp) - V * lam
            worst = float(xp.max(xp.linalg.vector_norm(R, axis=0)))
            scale = float(xp.max(xp.abs(theta)))
            if callback is not None:
                callback({"iteration": it, "max_residual": worst})
            if worst <= tol * scale:
                converged = True
                break
            if psd:
                sigma = _shift(C, Q64, W64, theta, S, xp)
            history.append((it, worst))
            next_rr = it + _steps_to_go(history, tol * scale, check_every)
        if sigma:
            W = W - sigma * Q
        # Rayleigh-Ritz needs an orthonormal basis. One Cholesky QR with a float64 Gram
        # leaves ~cond(W)^2 * 1e-16 of non-orthogonality, far below the float32 rounding of
        # the stored Q, so only float64 bases are orthonormalised twice before that step.
        rr_next = it + 1 == next_rr or it + 1 == max_iter
        Q = _orth(W, xp, twice=rr_next and C.dtype == xp.float64)
    if not converged:
        warnings.warn(
            f"block_eigh: largest residual {worst:.3g} > tol * |theta_1| = {tol * scale:.3g} "
            f"after max_iter={max_iter} iterations",
            ConvergenceWarning,
            stacklevel=2,
        )
    return _result(C, V, lam, it, converged, xp)


def _result(C: Any, V: Any, lam: Any, it: int, converged: bool, xp: Any) -> EigenResult:
    """Eigenpairs in C's dtype (signs fixed after the cast), with residuals against C."""
    V = fix_signs(xp.astype(V, C.dtype), xp)
    lam = xp.astype(lam, C.dtype)
    p = lam.shape[0]
    return EigenResult(
        eigenvalues=lam,
        eigenvectors=V,
        n_iter=np.full(p, it, dtype=np.int64),
        converged=np.full(p, converged),
        residuals=residual_norms(C, V, lam, xp),
    )
