"""Reference eigen-solver and the pieces every solver shares.

:func:`eigh` wraps the array API's ``xp.linalg.eigh`` (LAPACK ``syevd`` on NumPy, cuSOLVER on
CuPy) and returns the leading eigenpairs in *descending* order, the order PCA wants. The
helpers here validate symmetric matrices, fix eigenvector signs and compute residuals, so
that the direct, deflation and block solvers return identical conventions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, validate_matrix
from .._delegation import on_input_device, symmetric_eigh
from ..errors import InvalidInputError

__all__ = ["EigenResult", "eigh"]


@dataclass(frozen=True)
class EigenResult:
    """Leading eigenpairs of a symmetric matrix (descending eigenvalues).

    Attributes
    ----------
    eigenvalues : array, shape (..., p)
        Eigenvalues, largest first, in the input's namespace.
    eigenvectors : array, shape (..., n, p)
        Unit eigenvectors in the columns, signs fixed by :func:`fix_signs`.
    n_iter : numpy.ndarray of int, shape (..., p)
        Iterations spent per eigenpair (0 for the direct solver; the block solver reports
        the same count for every pair of the block).
    converged : numpy.ndarray of bool, shape (..., p)
        Whether each pair met the tolerance before ``max_iter``.
    residuals : array, shape (..., p)
        ``||C v - lambda v||_2`` per pair, measured against the *original* matrix.
    """

    eigenvalues: Any
    eigenvectors: Any
    n_iter: np.ndarray
    converged: np.ndarray
    residuals: Any


def validate_symmetric(C: Any, xp: Any, *, name: str = "C", batched: bool = False) -> Any:
    """Check that ``C`` is a finite, square, symmetric floating matrix (or a stack of them).

    Symmetry is tested to ``sqrt(eps) * max|C|`` (about 1.5e-8 relative in float64), loose
    enough for a covariance assembled by a GEMM, tight enough to catch a wrong argument.

    Raises
    ------
    InvalidInputError
        Wrong ndim, non-square, non-finite or non-symmetric input.
    """
    if not hasattr(C, "shape"):
        C = xp.asarray(np.asarray(C, dtype=np.float64))
    ndim = C.ndim if batched and C.ndim >= 2 else 2
    C = validate_matrix(C, xp, name=name, ndim=ndim)
    if C.shape[-1] != C.shape[-2]:
        raise InvalidInputError(f"{name} must be square, got shape {tuple(C.shape)}")
    asym = float(xp.max(xp.abs(C - xp.matrix_transpose(C))))
    scale = float(xp.max(xp.abs(C)))
    limit = float(np.sqrt(float(xp.finfo(C.dtype).eps))) * max(scale, 1e-300)
    if asym > limit:
        raise InvalidInputError(f"{name} must be symmetric: max |{name} - {name}^T| = {asym:.3g} > {limit:.3g}")
    return C


def check_n_components(p: Any, n: int, *, name: str = "n_components") -> int:
    """Return ``p`` as an int in ``[1, n]`` or raise :class:`InvalidInputError`."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise InvalidInputError(f"{name} must be an int in [1, {n}], got {p!r}")
    if not 1 <= int(p) <= n:
        raise InvalidInputError(f"{name} must be in [1, {n}], got {int(p)}")
    return int(p)


def fix_signs(V: Any, xp: Any) -> Any:
    """Flip each column of ``V`` (..., n, p) so its largest-magnitude entry is positive.

    Ties in magnitude go to the lowest row index, so CPU and GPU agree whenever they agree
    on which entry is largest.
    """
    n, p = V.shape[-2], V.shape[-1]
    batch = V.shape[:-2]
    m = int(np.prod(batch)) if batch else 1
    V3 = xp.reshape(V, (m, n, p))
    idx = xp.argmax(xp.abs(V3), axis=1)  # (m, p): first maximum
    flat = (
        xp.reshape(xp.arange(m, dtype=idx.dtype, device=device_of(V)), (m, 1)) * (n * p)
        + idx * p
        + xp.reshape(xp.arange(p, dtype=idx.dtype, device=device_of(V)), (1, p))
    )
    picked = xp.take(xp.reshape(V3, (m * n * p,)), xp.reshape(flat, (m * p,)))
    signs = xp.where(picked < 0, -xp.ones_like(picked), xp.ones_like(picked))
    V3 = V3 * xp.reshape(signs, (m, 1, p))
    return xp.reshape(V3, tuple(V.shape))


def residual_norms(C: Any, V: Any, lam: Any, xp: Any) -> Any:
    """``||C v_j - lam_j v_j||_2`` for the columns of ``V`` (works on stacks).

    Each column is divided by the power of two at or below its largest |entry| first
    (exact): the squares of a float32 residual of a matrix with entries ~1e30 would
    overflow. A non-finite residual stays non-finite.
    """
    R = xp.matmul(C, V) - V * lam[..., None, :]
    big = xp.max(xp.abs(R), axis=-2, keepdims=True)
    ok = (big > 0) & (big < xp.inf)
    big = 2.0 ** xp.floor(xp.log2(xp.where(ok, big, xp.ones_like(big))))
    return big[..., 0, :] * xp.linalg.vector_norm(R / big, axis=-2)


@on_input_device
def eigh(C: Any, n_components: int | None = None) -> EigenResult:
    """Leading eigenpairs of a symmetric matrix by the dense direct solver.

    Parameters
    ----------
    C : array, shape (n, n)
        Symmetric, finite matrix (e.g. a covariance). Integers are promoted to float64.
    n_components : int, optional
        Number of leading pairs ``p`` to return (default: all ``n``).

    Returns
    -------
    EigenResult
        ``eigenvalues`` (p,) descending, ``eigenvectors`` (n, p), ``n_iter`` zeros,
        ``converged`` all True, ``residuals`` (p,).

    Notes
    -----
    Cost O(n^3) whatever ``p`` is: the full decomposition is computed, then the leading
    ``p`` columns are kept. This is the reference the iterative solvers are tested against.

    Examples
    --------
    >>> import numpy as np
    >>> r = eigh(np.diag([1.0, 3.0, 2.0]), 2)
    >>> [float(v) for v in r.eigenvalues]
    [3.0, 2.0]
    """
    xp = array_namespace(C)
    C = validate_symmetric(C, xp)
    n = C.shape[0]
    p = n if n_components is None else check_n_components(n_components, n)
    w, V = symmetric_eigh(C)  # one answer whatever the BLAS thread count
    # LAPACK returns ascending order: reverse to largest first and keep p.
    order = xp.arange(n - 1, n - 1 - p, -1, device=device_of(C))
    lam = xp.take(w, order)
    V = fix_signs(xp.take(V, order, axis=1), xp)
    return EigenResult(
        eigenvalues=lam,
        eigenvectors=V,
        n_iter=np.zeros(p, dtype=np.int64),
        converged=np.ones(p, dtype=bool),
        residuals=residual_norms(C, V, lam, xp),
    )
