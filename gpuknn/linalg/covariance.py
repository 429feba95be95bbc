"""Sample covariance as one GEMM, and its eigenvalue spectrum.

Two ways to the same matrix, chosen per call:

* **Gram shortcut** ``(X^T X - n mu mu^T) / (n - correction)``: one GEMM on X as it is
  (NumPy runs ``X.T @ X`` as BLAS ``syrk``, half the products), no pass to centre. It
  cancels when a column's mean is large against its spread: the rounding error of
  ``(X^T X)_jj`` is relative to ``sum x^2 = (n - 1) var + n mu^2``, not to the variance.
  So it is used only when every column has ``sum x_j^2 <= 16 (n - 1) var_j`` (offsets
  below ~3.9 standard deviations: pixel intensities, standardised or count data), which
  keeps its error within 16x (4 bits) of the centred product's. The exact test reads the
  Gram diagonal and the column sums (on NumPy's threaded path taken with the GEMM's row
  chunks, elsewhere one reduction pass), so it costs nothing
  once the GEMM is done; the same test on ~1000 evenly spaced rows, about their own mean,
  first sends data that clearly fail it (large offsets, constant non-zero columns, which
  have no variance) to the centred path without the GEMM.
* **Centred chunks** otherwise: ``sum_chunks (X_c - m)^T (X_c - m) - n d d^T`` with ``m``
  the mean rounded to X's dtype and ``d`` the float64 mean of ``X - m`` (the corrected
  two-pass algorithm: the rounding of ``m`` cancels to first order, and a constant column,
  where ``X - m`` is one repeated number, comes out zero up to ~1e-16 of its own scale).
  One pass over X more than the shortcut (timed in docs/benchmarks.md), accurate for
  any offset.

The column sums are accumulated in float64 (groups of 16 rows in X's dtype first, which
costs a third of a float64 sum): the shortcut subtracts ``n mu mu^T``, so an error in
``mu`` enters the covariance at first order (a plain float32 mean of 60 000 pixel rows is
off by ~1e-4 relative, which showed up as 4e-4 eigenvalue errors).

Both products run over row chunks of 16 MiB summed in chunk order
(:func:`_reduce_row_chunks`): shorter float32 sums than one long GEMM, the same on every
backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._backend import array_namespace, to_numpy, validate_matrix
from .._delegation import on_input_device
from ..errors import InvalidInputError

__all__ = ["covariance", "covariance_spectrum"]

_CHUNK_BYTES = 16 << 20
_GROUP_ROWS = 16  # rows summed in X's dtype before the float64 accumulation
_MAX_OFFSET_RATIO = 16.0  # largest sum x_j^2 / ((n-1) var_j) for the Gram shortcut


@on_input_device
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
    Cost: one GEMM, ``O(n_samples * n_features^2)`` (half of it with ``syrk``); one
    reduction pass for the means (on NumPy's threaded path done by the GEMM's row chunks
    instead); a centring pass only when some column has a large offset (see the module
    notes). Memory: the result plus, on the centred path, a 16 MiB chunk and a partial sum
    per thread (a few with parallel threads on NumPy).

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

    The finite check comes for free here: a NaN or infinity in X makes its column sum
    non-finite, and a finite value whose square overflows makes the Gram (or scatter)
    diagonal non-finite; only then is X scanned, for the error message. Used by :func:`covariance` and
    :class:`gpuknn.PCA` (which needs the mean too).
    """
    xp = array_namespace(X)
    n, d = X.shape
    if n - correction <= 0:
        raise InvalidInputError(
            f"covariance needs n_samples - correction > 0, got n_samples={n}, correction={correction}"
        )
    # NaN, infinities and overflowing squares are detected below, from the results:
    # NumPy's warnings about them would only precede the error.
    with np.errstate(over="ignore", invalid="ignore"):
        C = mean = None
        if _offsets_look_small(X, xp):
            G, sums = gram_and_sums(X)
            sq = to_numpy(xp.linalg.diagonal(G))
            # a NaN or infinity anywhere in a column makes its squares' sum non-finite too,
            # so this also clears the column sums
            if not bool(np.isfinite(sq).all()):
                _raise_not_finite(X, xp)
            mean = sums / n
            mu = to_numpy(mean)
            # the exact test (the sample above only spares the GEMM when it clearly fails)
            if _offsets_small(sq, sq - n * mu * mu):
                C = G - n * (mean[:, None] * mean[None, :])
        if C is None:
            if mean is None:
                mean = _finite_mean(column_sums(X), X, xp)
            C = centred_scatter(X, xp.astype(mean, X.dtype))
            if not bool(xp.all(xp.isfinite(xp.linalg.diagonal(C)))):
                _raise_not_finite(X, xp)
    C = C / (n - correction)
    # The BLAS may use a non-symmetric kernel; average away its last-bit asymmetry so the
    # result is exactly symmetric (eigen-solvers and symmetry checks rely on it).
    return (C + xp.matrix_transpose(C)) / 2, mean


def _finite_mean(sums: Any, X: Any, xp: Any) -> Any:
    """``sums / n``, after raising the right error if a NaN or infinity made them non-finite."""
    if not bool(np.isfinite(to_numpy(sums)).all()):
        _raise_not_finite(X, xp)
    return sums / X.shape[0]


def _offsets_look_small(X: Any, xp: Any) -> bool:
    """The offset test of the module notes on ~1000 evenly spaced rows (float64, host),
    about their own mean (the full column sums come with the Gram).

    Decides whether the Gram GEMM is worth computing: data with large offsets go to the
    centred path without paying for it. The exact test on the Gram diagonal follows.
    NaN or infinities in the sample fail it (the centred path then raises).
    """
    n = X.shape[0]
    step = max(1, n // 1024)
    S = to_numpy(xp.astype(X[::step, :], xp.float64))
    return _offsets_small(np.sum(S * S, axis=0), np.sum((S - S.mean(axis=0)) ** 2, axis=0))


def _offsets_small(sq: np.ndarray, scatter: np.ndarray) -> bool:
    """The Gram shortcut's condition: ``sum x_j^2 <= 16 * sum (x_j - mu_j)^2`` for every j."""
    return bool((sq <= _MAX_OFFSET_RATIO * scatter).all())


def column_sums(X: Any) -> Any:
    """Column sums of ``X`` (n, d) accumulated in float64, shape (d,).

    Groups of 16 rows are added in X's dtype first (error ~16 ulp of the group's magnitude),
    then the n / 16 group sums in float64: a third of the cost of converting every entry.
    """
    xp = array_namespace(X)
    n, d = X.shape
    m = n - n % _GROUP_ROWS
    parts = []
    if m:
        groups = xp.sum(xp.reshape(X[:m, :], (m // _GROUP_ROWS, _GROUP_ROWS, d)), axis=1)
        parts.append(xp.sum(groups, axis=0, dtype=xp.float64))
    if m < n:
        parts.append(xp.sum(X[m:, :], axis=0, dtype=xp.float64))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def gram_and_sums(X: Any) -> tuple[Any, Any]:
    """``X^T X`` (d, d), computed in X's dtype and returned in float64, and the column sums
    of X (d,) in float64 (:func:`column_sums`).

    Row chunks of 16 MiB (:func:`_reduce_row_chunks`), each one GEMM and its column sums
    (taken right after the GEMM, while the chunk is in cache), summed in chunk order: the
    shorter float32 sums are more accurate than one long GEMM's (whose error grows with n).
    """
    xp = array_namespace(X)
    G, sums = _reduce_row_chunks(X, lambda Xc: (xp.matmul(xp.matrix_transpose(Xc), Xc), column_sums(Xc)), xp)
    return xp.astype(G, xp.float64), sums


def centred_scatter(X: Any, mean: Any) -> Any:
    """Scatter matrix ``sum (x - mu)(x - mu)^T`` (float64) from ``mean`` ~ mu in X's dtype.

    Row chunks of 16 MiB are centred on ``mean`` and multiplied (in X's dtype): the chunk is
    still in cache for its GEMM and no X-sized buffer is page-faulted in (on NumPy with a
    multithreaded OpenBLAS the chunks run in parallel, see :func:`gram_and_sums`). The float64 sums
    ``d`` of the centred rows then remove what the rounding of ``mean`` left:
    ``sum (x - m)(x - m)^T - n dd^T`` with ``d = mean(x - m)`` equals the scatter about the
    true mean for any ``m``.
    """
    xp = array_namespace(X, mean)
    n, d = X.shape

    def chunk(Xc: Any) -> tuple[Any, Any]:
        Xc = Xc - mean
        return xp.astype(xp.matmul(xp.matrix_transpose(Xc), Xc), xp.float64), column_sums(Xc)

    S, sums = _reduce_row_chunks(X, chunk, xp)
    drift = sums / n
    return S - n * (drift[:, None] * drift[None, :])


def _reduce_row_chunks(X: Any, f: Callable[[Any], tuple], xp: Any) -> tuple:
    """Sum, term by term in chunk order, of the tuples ``f(X[rows])`` over row chunks of
    16 MiB (memory: a chunk's results and the partial sums).

    (A NumPy-only variant ran the chunks on threads with BLAS limited to one thread each; it
    saved nothing of a ``PCA().fit`` (docs/benchmarks.md) and was removed by the 10 % rule
    of the delegation layer.)
    """
    n, d = X.shape
    rows = max(1, _CHUNK_BYTES // max(1, d * (8 if X.dtype == xp.float64 else 4)))
    total = None
    for a in range(0, n, rows):
        total = _add(total, f(X[a : min(a + rows, n), :]))
    return total


def _add(total: tuple | None, part: tuple) -> tuple:
    """Term-by-term sum of result tuples (in place: every term is a fresh array)."""
    if total is None:
        return tuple(part)
    for t, p in zip(total, part):
        t += p
    return total


def _raise_not_finite(X: Any, xp: Any) -> None:
    """Raise the right error for X whose sums or squares are not finite."""
    validate_matrix(X, xp, name="X")  # NaN or infinity: raises, naming the rows
    top = max(float(xp.max(X)), -float(xp.min(X)))
    raise InvalidInputError(
        f"X holds values up to {top:.3g}, whose squares summed over {X.shape[0]} rows "
        f"overflow {X.dtype}: rescale the data"
    )


@on_input_device
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
