"""Covariance from mergeable moments: the unit of a distributed (or out-of-core) PCA.

A data set split into row chunks is summarised chunk by chunk into :class:`Moments`
``(n, column sums, Gram X^T X)``; :func:`merge_moments` adds two summaries, so any tree of
merges over any split gives the moments of the whole (exactly for data whose sums are
exact, to float64 rounding otherwise). :func:`covariance_from_moments` then applies the
Gram shortcut ``(X^T X - n mu mu^T) / (n - correction)`` of
:func:`gpuknn.linalg.covariance` with the same offset guard: when a column's mean is large
against its spread the shortcut cancels, ``ok`` is False, and the caller makes a second,
centred pass: :func:`centred_moments` of every chunk about the first pass's mean, merged
the same way, and :func:`covariance_from_centred` (the corrected two-pass algorithm of
:func:`gpuknn.linalg.covariance.centred_scatter`, accurate for any offset).

Each chunk's Gram is one GEMM in the chunk's dtype (16 MiB row blocks summed in that
dtype, as :func:`gpuknn.linalg.covariance.gram_and_sums`), converted to float64; the
merges add in float64, so float32 chunks lose nothing in the accumulation across chunks.

Examples
--------
>>> import numpy as np
>>> X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 7.0]])
>>> m = merge_moments(moments(X[:1]), moments(X[1:]))
>>> C, mean, ok = covariance_from_moments(m)
>>> ok, np.round(C, 6).tolist(), np.round(mean, 6).tolist()
(True, [[4.0, 6.0], [6.0, 9.333333]], [2.0, 3.666667])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._backend import array_namespace, device_of, to_numpy, validate_matrix
from .._delegation import on_input_device
from ..errors import InvalidInputError
from .covariance import _offsets_small, _raise_not_finite, gram_and_sums

__all__ = [
    "Moments",
    "moments",
    "merge_moments",
    "covariance_from_moments",
    "centred_moments",
    "covariance_from_centred",
]


class Moments(NamedTuple):
    """Row count, column sums and Gram matrix of some rows of a data set.

    Attributes
    ----------
    n : int
        Number of rows summarised.
    sums : float64 array (d,)
        Column sums.
    gram : float64 array (d, d)
        ``X^T X`` (each chunk's GEMM in its own dtype, sums across chunks in float64).

    The offset guard needs nothing more: its ``sum x_j^2`` is the Gram diagonal and its
    scatter ``sum x_j^2 - n mu_j^2`` follows from the sums.
    """

    n: int
    sums: Any
    gram: Any


@on_input_device
def moments(X: Any) -> Moments:
    """The :class:`Moments` of one chunk of rows, in X's namespace and on its device.

    Parameters
    ----------
    X : array (n, d)
        Rows of the data set; integers are promoted to float64. ``n = 0`` is allowed (an
        empty chunk: zero sums and Gram).

    Returns
    -------
    Moments

    Raises
    ------
    InvalidInputError
        Not 2-D, no columns, NaN or infinity (rows named, counted within this chunk), or
        values whose squares overflow the dtype.

    Notes
    -----
    One GEMM, O(n d^2), and the column sums (taken while the GEMM's row block is in cache);
    memory O(d^2). One host sync (the finite check of the Gram diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> m = moments(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> m.n, m.sums.tolist(), m.gram.tolist()
    (2, [4.0, 6.0], [[10.0, 14.0], [14.0, 20.0]])
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X", check_finite=False, allow_empty=True)
    n, d = X.shape
    if d == 0:
        raise InvalidInputError(f"X has no columns (shape {tuple(X.shape)}): moments need at least 1 feature")
    if n == 0:
        dev = device_of(X)
        return Moments(0, xp.zeros((d,), dtype=xp.float64, device=dev), xp.zeros((d, d), dtype=xp.float64, device=dev))
    # NaN, infinities and overflowing squares show in the Gram diagonal (a NaN anywhere in a
    # column reaches its squares' sum): checked from the result, NumPy's warnings would only precede it.
    with np.errstate(over="ignore", invalid="ignore"):
        G, sums = gram_and_sums(X)
    if not bool(xp.all(xp.isfinite(xp.linalg.diagonal(G)))):
        _raise_not_finite(X, xp)
    return Moments(n, sums, G)


@on_input_device
def merge_moments(a: Moments, b: Moments) -> Moments:
    """The moments of the union of two disjoint sets of rows.

    Term-by-term sums (float64): associative and commutative up to float64 rounding
    (exactly, for data whose sums are exact), so any merge tree over any split works.
    O(d^2).

    Raises
    ------
    InvalidInputError
        The two summarise different numbers of columns, or arrays of different namespaces.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(12.0).reshape(4, 3)
    >>> m = merge_moments(moments(X[:3]), moments(X[3:]))
    >>> bool((m.gram == X.T @ X).all()), m.n
    (True, 4)
    """
    if tuple(a.sums.shape) != tuple(b.sums.shape):
        raise InvalidInputError(
            f"cannot merge moments of {a.sums.shape[0]} and {b.sums.shape[0]} columns (a and b must agree)"
        )
    array_namespace(a.sums, b.sums)  # refuses mixed namespaces or devices, naming both
    return Moments(a.n + b.n, a.sums + b.sums, a.gram + b.gram)


def _check_count(m: Moments, correction: int | float) -> None:
    if m.n - correction <= 0:
        raise InvalidInputError(
            f"covariance needs n_samples - correction > 0, got n_samples={m.n}, correction={correction}"
        )


def _check_finite(m: Moments, xp: Any) -> None:
    # The chunks check themselves; this catches moments built or merged by hand, and sums
    # that overflowed only when merged.
    ok = bool(xp.all(xp.isfinite(m.sums))) and bool(xp.all(xp.isfinite(xp.linalg.diagonal(m.gram))))
    if not ok:
        raise InvalidInputError(
            f"the moments of {m.n} rows are not finite: the data hold NaN or infinity, or values whose "
            "squares overflow (rescale the data)"
        )


def _symmetric(C: Any, xp: Any) -> Any:
    # The chunks' GEMMs may use a non-symmetric kernel: average away the last-bit asymmetry
    # (eigen-solvers and symmetry checks rely on an exactly symmetric matrix).
    return (C + xp.matrix_transpose(C)) / 2


@on_input_device
def covariance_from_moments(m: Moments, *, correction: int | float = 1) -> tuple[Any, Any, bool]:
    """Covariance and mean from merged moments, when the Gram shortcut is accurate.

    Parameters
    ----------
    m : Moments
        Of the whole data set (merged).
    correction : int or float, default 1
        The divisor is ``n - correction``.

    Returns
    -------
    C : float64 array (d, d) or None
        ``(X^T X - n mu mu^T) / (n - correction)``, symmetric; None when ``ok`` is False.
    mean : float64 array (d,)
        Column means (needed by the centred pass).
    ok : bool
        Whether every column passes the offset guard of :func:`gpuknn.linalg.covariance`
        (``sum x_j^2 <= 16 (n - 1) var_j``). False: the shortcut would cancel; make the
        centred pass (:func:`centred_moments` of every chunk about ``mean``, merged, then
        :func:`covariance_from_centred`).

    Raises
    ------
    InvalidInputError
        ``n - correction <= 0`` or non-finite moments.

    Notes
    -----
    O(d^2) arithmetic and one host transfer of the Gram diagonal and the means (2d values).
    The same test and formula as single-process :func:`gpuknn.linalg.covariance`, so the
    two agree to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> C, mean, ok = covariance_from_moments(moments(np.array([[1e8, 0.0], [1e8 + 1, 1.0]])))
    >>> ok, C, mean.tolist()
    (False, None, [100000000.5, 0.5])
    """
    xp = array_namespace(m.sums, m.gram)
    _check_count(m, correction)
    _check_finite(m, xp)
    mean = m.sums / m.n
    sq = to_numpy(xp.linalg.diagonal(m.gram))
    mu = to_numpy(mean)
    if not _offsets_small(sq, sq - m.n * mu * mu):
        return None, mean, False
    C = (m.gram - m.n * (mean[:, None] * mean[None, :])) / (m.n - correction)
    return _symmetric(C, xp), mean, True


@on_input_device
def centred_moments(X: Any, mean: Any) -> Moments:
    """The :class:`Moments` of ``X - mean``, ``mean`` rounded to X's dtype (the second pass).

    Parameters
    ----------
    X : array (n, d)
        One chunk of rows, as for :func:`moments`.
    mean : array (d,)
        The first pass's mean (float64, same namespace and device), the same for every chunk.

    Returns
    -------
    Moments
        Of the centred rows; merge them with :func:`merge_moments` and finish with
        :func:`covariance_from_centred` and the same ``mean``.

    Notes
    -----
    One subtraction pass and one GEMM, O(n d^2), in X's dtype: the centred values are
    small, so the GEMM no longer cancels.

    Examples
    --------
    >>> import numpy as np
    >>> centred_moments(np.array([[1e8], [1e8 + 2]]), np.array([1e8 + 1])).gram.tolist()
    [[2.0]]
    """
    xp = array_namespace(X, mean)
    X = validate_matrix(X, xp, name="X", check_finite=False, allow_empty=True)
    if tuple(mean.shape) != (X.shape[1],):
        raise InvalidInputError(
            f"mean has shape {tuple(mean.shape)}, expected ({X.shape[1]},) for X of {tuple(X.shape)}"
        )
    return moments(X - xp.astype(mean, X.dtype))


@on_input_device
def covariance_from_centred(m: Moments, mean: Any, *, correction: int | float = 1) -> tuple[Any, Any]:
    """Covariance and mean from merged :func:`centred_moments` about ``mean``.

    ``(sum (x - m)(x - m)^T - n d d^T) / (n - correction)`` with ``d = mean(x - m)``: the
    scatter about the true mean for any ``m``, so the rounding of ``mean`` to X's dtype
    cancels to first order (the corrected two-pass algorithm).

    Parameters
    ----------
    m : Moments
        Merged centred moments of the whole data set.
    mean : float64 array (d,)
        The mean the chunks were centred on (from :func:`covariance_from_moments`).
    correction : int or float, default 1

    Returns
    -------
    C : float64 array (d, d), symmetric
    mean : float64 array (d,)
        ``mean`` itself, as single-process :func:`gpuknn.linalg.covariance` returns it.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1e8, 0.0], [1e8 + 1, 1.0]])
    >>> _, mu, ok = covariance_from_moments(moments(X))
    >>> covariance_from_centred(centred_moments(X, mu), mu)[0].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    xp = array_namespace(m.sums, m.gram, mean)
    _check_count(m, correction)
    _check_finite(m, xp)
    drift = m.sums / m.n
    S = m.gram - m.n * (drift[:, None] * drift[None, :])
    return _symmetric(S / (m.n - correction), xp), mean
