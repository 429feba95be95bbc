"""Moments, covariance and PCA of dask arrays, by tree reductions of chunk moments
(:mod:`gpuknn.linalg.moments`), with the centred second pass when the offset guard fails."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._backend import _dtype_from, array_namespace
from ..errors import InvalidInputError
from ..linalg.moments import (
    centred_moments,
    covariance_from_centred,
    covariance_from_moments,
    merge_moments,
)
from ..linalg.moments import moments as _chunk_moments
from ._dask import as_row_chunked, import_dask, resolve_split_every, row_blocks, tree_reduce

__all__ = ["moments", "covariance", "covariance_and_mean", "pca_moments", "project"]


def _merge_many(*parts: Any) -> Any:
    return functools.reduce(merge_moments, parts)


def moments(X: Any, *, split_every: int | None = None, mean: Any = None) -> Any:
    """Lazy :class:`~gpuknn.linalg.Moments` of a dask array: one task per row chunk and a
    merge tree of fan-in ``split_every`` (default 8).

    Parameters
    ----------
    X : dask array (n, d), or a NumPy/CuPy array (wrapped as by :func:`kneighbors`)
    split_every : int >= 2, optional
    mean : float64 array (d,), optional
        Centre every chunk on it (:func:`gpuknn.linalg.centred_moments`, the second pass).

    Returns
    -------
    dask.delayed.Delayed
        Computes to the Moments, in the chunks' namespace.

    Notes
    -----
    One GEMM per chunk, O(n d^2) in all; the merges O(d^2) each; a task holds one chunk
    and O(d^2).

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> X = da.from_array(np.arange(12.0).reshape(6, 2), chunks=2)
    >>> moments(X).compute(scheduler="synchronous").n
    6
    """
    dask, _ = import_dask()
    split_every = resolve_split_every(split_every)
    X = as_row_chunked(X, "X")
    blocks = row_blocks(X)
    if mean is None:
        f = dask.delayed(_chunk_moments, pure=True)
        parts = [f(b) for b in blocks]
    else:
        m = dask.delayed(mean)  # one key in the graph, shared by every task
        f = dask.delayed(centred_moments, pure=True)
        parts = [f(b, m) for b in blocks]
    return tree_reduce(parts, dask.delayed(_merge_many, pure=True), split_every)


def covariance_and_mean(X: Any, *, correction: int | float = 1, split_every: int | None = None) -> tuple[Any, Any]:
    """Float64 covariance and mean of a dask array, computed now (one or two passes over X).

    The first pass merges the chunks' moments; when the offset guard of
    :func:`gpuknn.linalg.covariance` fails (a column's mean large against its spread), a
    second pass merges the chunks' moments about that mean. Same test and formulas as
    single-process, so the results agree to rounding (better, for float32 chunks: the
    chunks' Grams are added in float64).

    Returns
    -------
    C : float64 array (d, d), mean : float64 array (d,)
        In the chunks' namespace (NumPy or CuPy), on the client.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> X = da.from_array(np.array([[0.0, 1.0], [2.0, 3.0]]), chunks=1)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     C, mean = covariance_and_mean(X)
    >>> C.tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    X = as_row_chunked(X, "X")
    C, mean, ok = covariance_from_moments(moments(X, split_every=split_every).compute(), correction=correction)
    if not ok:
        centred = moments(X, split_every=split_every, mean=mean).compute()
        C, mean = covariance_from_centred(centred, mean, correction=correction)
    return C, mean


def covariance(X: Any, *, correction: int | float = 1, dtype: Any = None, split_every: int | None = None) -> Any:
    """Sample covariance (d, d) of a dask array, computed now, in X's float dtype (or
    ``dtype``), as :func:`gpuknn.linalg.covariance` returns it. See :func:`covariance_and_mean`."""
    X = _as_float(as_row_chunked(X, "X"), dtype)
    C, _ = covariance_and_mean(X, correction=correction, split_every=split_every)
    xp = array_namespace(C)
    return xp.astype(C, getattr(xp, np.dtype(X.dtype).name))


def _as_float(X: Any, dtype: Any) -> Any:
    """X (dask) cast lazily to ``dtype`` or, by default, to its own float dtype (ints: float64)."""
    target = np.dtype(_dtype_from(dtype, np)) if dtype is not None else None
    if target is None:
        target = X.dtype if np.issubdtype(X.dtype, np.floating) and X.dtype.itemsize in (4, 8) else np.float64
    return X if X.dtype == target else X.astype(target)


def pca_moments(X: Any, *, dtype: Any = None, split_every: int | None = None) -> tuple[Any, Any, int, int, Any]:
    """What a PCA fit needs of a dask array: ``(C64, mean, n_samples, n_features, dtype)``.

    The float64 covariance and mean come from :func:`covariance_and_mean` (one or two passes
    over X, never X on one machine); ``dtype`` is X's float dtype (or the one asked for).
    ``PCA().fit`` calls this for a dask array and runs its eigen-solver on the client, so the
    fitted attributes equal the single-process fit's to rounding.

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> X = da.from_array(np.random.default_rng(0).normal(size=(40, 3)), chunks=10)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     C, mean, n, d, dtype = pca_moments(X)
    >>> C.shape, n, d
    ((3, 3), 40, 3)
    """
    X = _as_float(as_row_chunked(X, "X"), dtype)
    n_samples, n_features = X.shape
    if n_samples < 2:
        raise InvalidInputError(f"PCA needs at least 2 samples, got n_samples = {n_samples} (X of shape {X.shape})")
    C64, mean = covariance_and_mean(X, split_every=split_every)
    xp = array_namespace(C64)
    return C64, mean, int(n_samples), int(n_features), getattr(xp, X.dtype.name)


def project(X: Any, components: Any, mean: Any) -> Any:
    """``PCA.transform`` of a dask array, lazily: one GEMM per row chunk, ``(n, n_components)``.

    ``components`` (n_components, n_features) and ``mean`` (n_features,) enter the graph once
    (one key each), not once per task.
    """
    _, da = import_dask()
    X = _as_float(as_row_chunked(X, "X"), None)
    if X.shape[1] != components.shape[1]:
        raise InvalidInputError(f"X has {X.shape[1]} features, but PCA is expecting {components.shape[1]} features")
    W = da.from_array(components, chunks=tuple(components.shape))
    mu = da.from_array(mean, chunks=tuple(mean.shape))
    from dask.array.utils import meta_from_array  # noqa: PLC0415

    return da.blockwise(
        _project, "ij", X, "ik", W, "jk", mu, "k", concatenate=True, dtype=X.dtype, meta=meta_from_array(X, ndim=2)
    )


def _project(Xc: Any, W: Any, mu: Any) -> Any:
    """One chunk's scores, as ``PCA.transform``: centred on the training mean, in Xc's dtype."""
    xp = array_namespace(Xc, W, mu)
    return xp.matmul(Xc - xp.astype(mu, Xc.dtype), xp.matrix_transpose(xp.astype(W, Xc.dtype)))
