"""Sample covariance as one GEMM, and its eigenvalue spectrum.

Two ways to the same matrix, chosen per call:

* **Gram shortcut** ``(X^T X - n mu mu^T) / (n - correction)``: one GEMM on X as it is
  (NumPy runs ``X.T @ X`` as BLAS ``syrk``, half the products), no pass to centre. It
  cancels when a column's mean is large against its spread: the rounding error of
  ``(X^T X)_jj`` is relative to ``sum x^2 = (n - 1) var + n mu^2``, not to the variance.
  So it is used only when every column has ``sum x_j^2 <= 16 (n - 1) var_j`` (offsets
  below ~3.9 standard deviations: pixel intensities, standardised or count data), which
  keeps its error within 16x (4 bits) of the centred product's; the test costs nothing,
  both sides come from the Gram diagonal and the column sums. Constant non-zero columns
  fail it (zero variance) and go the centred way, which gives them exactly zero.
* **Centred chunks** ``sum_chunks (X_c - mu)^T (X_c - mu)`` otherwise: one extra pass over
  X (about +15 % on Fashion-MNIST), exact for any offset.

The column sums are accumulated in float64 (groups of 16 rows in X's dtype first, which
costs a third of a float64 sum): the shortcut subtracts ``n mu mu^T``, so an error in
``mu`` enters the covariance at first order (a plain float32 mean of 60 000 pixel rows is
off by ~1e-4 relative, which showed up as 4e-4 eigenvalue errors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, to_numpy, validate_matrix
from ..errors import InvalidInputError

__all__ = ["covariance", "covariance_spectrum"]

_CHUNK_BYTES = 16 << 20
_GROUP_ROWS = 16  # rows summed in X's dtype before the float64 accumulation
_MAX_OFFSET_RATIO = 16.0  # largest sum x_j^2 / ((n-1) var_j) for the Gram shortcut


def covariance(X: Any, *, correction: int | float = 1, dtype: Any = None) -> Any:
    """Sample covariance of the columns of ``X``.

    Parameters
    ----------
    X : array, shape (n_samples, n_features)
        Observations in rows, features in columns. Integers are promoted to float64.
    correction : int or float, default 1
        Degrees-of-freedom correction (array-API name): the divisor is
        ``n_samples - correction`` (1: unbiased, 0: maximum likelihood).
    dtype : {None, "float32", "float64"} or dtype, optional
        Precision of the GEMM; default the input's floating dtype. ``"float64"`` on
        float32 data costs one cast and a float64 GEMM (about 2x the float32 time on a
        CPU) and makes the result accurate to ~1e-12 relative instead of ~1e-6.

    Returns
    -------
    C : array, shape (n_features, n_features)
        Symmetric covariance matrix, in the input's namespace and the GEMM's dtype.

    Raises
    ------
    InvalidInputError
        Not 2-D, empty, non-finite, values whose squares overflow the dtype, or
        ``n_samples - correction <= 0``.

    Notes
    -----
    Cost: one GEMM, ``O(n_samples * n_features^2)`` (half of it with ``syrk``), one
    reduction pass for the means, and a centring pass only for columns with large offsets
    (see the module notes); memory the result plus, on the centred path, one 16 MiB chunk.

    Examples
    --------
    >>> import numpy as np
    >>> covariance(np.array([[0.0, 1.0], [2.0, 3.0]])).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X", dtype=dtype, check_finite=False)
    C64, _ = covariance_and_mean(X, correction)
    return xp.astype(C64, X.dtype)


def covariance_and_mean(X: Any, correction: int | float = 1) -> tuple[Any, Any]:
    """Covariance (float64) and column means (float64) of a shape-checked floating ``X``.

    The finite check comes for free here: a NaN or infinity in X makes its column sum or
    its Gram diagonal non-finite, and only then is X scanned (for the error message).
    Used by :func:`covariance` and :class:`gpuknn.PCA` (which needs the mean too).
    """
    xp = array_namespace(X)
    n, d = X.shape
    if n - correction <= 0:
        raise InvalidInputError(
            f"covariance needs n_samples - correction > 0, got n_samples={n}, "
            f"correction={correction}"
        )
    # NaN, infinities and overflowing squares are detected below, from the results:
    # NumPy's warnings about them would only precede the error.
    with np.errstate(over="ignore", invalid="ignore"):
        mean = column_sums(X) / n
        G = xp.matmul(xp.matrix_transpose(X), X)
        sq = xp.astype(xp.linalg.diagonal(G), xp.float64)
    # one host read of 2 * n_features numbers decides finiteness and the path
    host = to_numpy(xp.stack([mean, sq]))
    if not bool(np.isfinite(host).all()):
        _raise_not_finite(X, xp)
    mu, sq = host[0], host[1]
    scatter = sq - n * mu * mu
    if bool((sq <= _MAX_OFFSET_RATIO * scatter).all()):
        G64 = xp.astype(G, xp.float64)
        C = (G64 - n * (mean[:, None] * mean[None, :])) / (n - correction)
    else:
        C = xp.astype(centred_scatter(X, xp.astype(mean, X.dtype)), xp.float64) / (n - correction)
    # The BLAS may use a non-symmetric kernel; average away its last-bit asymmetry so the
    # result is exactly symmetric (eigen-solvers and symmetry checks rely on it).
    return (C + xp.matrix_transpose(C)) / 2, mean


def column_sums(X: Any) -> Any:
    """Column sums of ``X`` (n, d) accumulated in float64, shape (d,).

    Groups of 16 rows are added in X's dtype first (error ~16 ulp of the group's magnitude),
    then the n / 16 group sums in float64: a third of the cost of converting every entry.
    """
    xp = array_namespace(X)
    n, d = X.shape
    m = n - n % _GROUP_ROWS
    total = xp.zeros(d, dtype=xp.float64)
    if m:
        groups = xp.sum(xp.reshape(X[:m, :], (m // _GROUP_ROWS, _GROUP_ROWS, d)), axis=1)
        total = xp.sum(groups, axis=0, dtype=xp.float64)
    if m < n:
        total = total + xp.sum(X[m:, :], axis=0, dtype=xp.float64)
    return total


def centred_scatter(X: Any, mean: Any) -> Any:
    """``(X - mean)^T (X - mean)`` in X's dtype, centred and multiplied chunk by chunk.

    Row chunks of 16 MiB instead of one centred copy of X: the chunk is still in cache for
    its GEMM and no X-sized buffer is page-faulted in.
    """
    xp = array_namespace(X, mean)
    n, d = X.shape
    rows = max(1, _CHUNK_BYTES // max(1, d * (8 if X.dtype == xp.float64 else 4)))
    S = None
    for start in range(0, n, rows):
        Xc = X[start : min(start + rows, n), :] - mean
        part = xp.matmul(xp.matrix_transpose(Xc), Xc)
        S = part if S is None else S + part
    return S


def _raise_not_finite(X: Any, xp: Any) -> None:
    """Raise the right error for X whose sums or squares are not finite."""
    validate_matrix(X, xp, name="X")  # NaN or infinity: raises, naming the rows
    top = max(float(xp.max(X)), -float(xp.min(X)))
    raise InvalidInputError(
        f"X holds values up to {top:.3g}, whose squares summed over {X.shape[0]} rows "
        f"overflow {X.dtype}: rescale the data"
    )


def covariance_spectrum(X: Any, *, correction: int | float = 1, dtype: Any = None) -> Any:
    """All eigenvalues of the covariance of ``X``, largest first (no eigenvectors).

    The cheap way to draw explained-variance curves: ``xp.linalg.eigvalsh`` skips the
    eigenvectors (about 5x faster than a full ``eigh`` for 784 features).
    ``spectrum / sum(spectrum)`` is the explained-variance ratio of every component.

    Parameters
    ----------
    X : array, shape (n_samples, n_features)
        Data, as for :func:`covariance`.
    correction, dtype
        As for :func:`covariance`.

    Returns
    -------
    eigenvalues : array, shape (n_features,)
        Descending; tiny negative round-off values are clipped to 0 (a covariance is
        positive semi-definite).

    Examples
    --------
    >>> import numpy as np
    >>> covariance_spectrum(np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]])).shape
    (2,)
    """
    xp = array_namespace(X)
    C = covariance(X, correction=correction, dtype=dtype)
    w = xp.linalg.eigvalsh(C)
    w = xp.flip(w, axis=0)
    return xp.where(w < 0, xp.zeros_like(w), w)
