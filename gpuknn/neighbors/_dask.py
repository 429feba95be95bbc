"""Dask data in the neighbour estimators: what ``KNeighborsClassifier``,
``KNeighborsRegressor``, ``NearestNeighbors`` and ``KNeighborsTransformer`` do with a dask array.

``fit`` keeps the training rows lazy (:func:`gpuknn.base.validate_data` checks their
metadata and chunks them by rows: nothing is computed, whatever their size) and brings the
labels or targets to the host (computing a dask ``y``: they are small next to X). Every
query then runs :func:`gpuknn.distributed.kneighbors` against the training rows -- the
single-process neighbour lists, ties to the lower index -- and the per-query work (votes,
means, leaving each row out of its own list) is one task per row chunk of its neighbour
arrays. A dask query gives lazy dask arrays chunked by its rows; a NumPy or CuPy query gives
computed arrays in its namespace.

The estimators (:mod:`gpuknn.neighbors`) import this module only when they meet a dask
array: ``import gpuknn`` never imports Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from array_api_compat import is_dask_array

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from ..distributed._dask import _current_client, import_dask, row_blocks
from ..distributed.neighbors import kneighbors as _dask_kneighbors
from ..ops.kneighbors import drop_self
from ..ops.votes import vote_counts, votes_for_many_k
from ..ops.weights import neighbour_mean

__all__ = ["search", "answer", "computed", "kneighbors", "predict", "predict_proba", "regress"]


def search(est: Any, X: Any, k: int, *, return_distance: bool = True, float64: bool = False) -> Any:
    """Lazy ``(distances, indices)`` (or indices) of the k nearest training rows of validated X.

    ``float64``: search with float64 queries, so that the distances are the exact float64
    ones (:func:`gpuknn.distributed.kneighbors` finishes its exact keys in the queries'
    dtype); exact weighted votes need them, as single-process votes use ``vote_args``. The
    keys, hence the lists, are the same: they are computed in float64 from the rows anyway.
    """
    if float64:
        xp = array_namespace(X)
        X = xp.astype(X, xp.float64)
    # working_memory passed as set (None: resolved once on the client, never per worker)
    return _dask_kneighbors(
        X, est._fit_X, k, metric=est._metric, working_memory=est.working_memory, return_distance=return_distance
    )


def computed(*arrays: Any) -> tuple:
    """The dask arrays among ``arrays`` computed together (one pass), the others as given."""
    dask, _ = import_dask()
    return dask.compute(*arrays)


def answer(X: Any, *outputs: Any) -> Any:
    """What a query method returns: the lazy ``outputs`` for a dask query X, else computed
    and in X's namespace (numeric outputs; string labels stay NumPy, as single-process)."""
    if not is_dask_array(X):
        xp, dev = array_namespace(X), device_of(X)
        outputs = tuple(
            o if o.dtype.kind not in "biuf" or array_namespace(o) is xp else from_numpy(to_numpy(o), xp, device=dev)
            for o in computed(*outputs)
        )
    return outputs[0] if len(outputs) == 1 else outputs


def per_row_chunk(fn: Callable[..., tuple], arrays: Sequence[Any], outputs: Sequence[tuple], *args: Any) -> list:
    """Lazy arrays of ``fn(blocks, offset, *args)`` over the row chunks of ``arrays``.

    ``arrays``: dask arrays with the same row chunks (the outputs of one search); ``fn`` gets
    one chunk of each, the chunk's first global row and ``args``, and returns a tuple with
    one array per ``outputs`` entry ``(n_columns or None for 1-D, dtype, meta)``. One
    delayed task per chunk and one ``from_delayed`` array per output: a ``map_blocks``
    returning a tuple fails at gather.
    """
    dask, da = import_dask()
    task = dask.delayed(fn, pure=True, nout=len(outputs))
    blocks = [row_blocks(a) for a in arrays]
    cols: list[list] = [[] for _ in outputs]
    offset = 0
    for i, rows in enumerate(arrays[0].chunks[0]):
        res = task(tuple(b[i] for b in blocks), offset, *args)
        for col, r, (width, dtype, meta) in zip(cols, res, outputs):
            shape = (rows,) if width is None else (rows, width)
            col.append(da.from_delayed(r, shape=shape, dtype=dtype, meta=meta))
        offset += rows
    return [c[0] if len(c) == 1 else da.concatenate(c, axis=0) for c in cols]


def _shared(a: np.ndarray) -> Any:
    """A host array (labels, targets) for the tasks: one key of the graph, not a copy per
    task; scattered first with a ``distributed`` client, so the graph holds a reference
    (an array inside it makes ``distributed`` warn "Sending large graph")."""
    dask, da = import_dask()
    client = _current_client()
    if client is None:
        return dask.delayed(a, pure=True)
    # as gpuknn.distributed._dask.as_row_chunked does: a dask array over the future, whose
    # unoptimised Delayed keeps the future (hence the data) alive as long as the graph
    return row_blocks(da.from_delayed(client.scatter(a, hash=False), shape=a.shape, dtype=a.dtype, meta=a[:0]))[0]


def _meta(like: Any, ndim: int, dtype: Any) -> Any:
    from dask.array.utils import meta_from_array  # noqa: PLC0415

    return meta_from_array(like, ndim=ndim, dtype=dtype)


# ----------------------------------------------------------------------- estimators' entries
def kneighbors(est: Any, X: Any, k: int, return_distance: bool) -> Any:
    """``kneighbors`` of a neighbour estimator (X None: the training rows, each left out of
    its own list as in :class:`~gpuknn.NearestNeighbors`)."""
    if X is not None:
        out = search(est, X, k, return_distance=return_distance)
        return answer(X, *out) if return_distance else answer(X, out)
    D, ind = search(est, est._fit_X, k + 1)
    outputs = [(k, D.dtype, _meta(D, 2, D.dtype)), (k, np.int64, _meta(ind, 2, np.int64))]
    D, ind = per_row_chunk(_drop_self_block, [D, ind], outputs)
    return answer(est._fit_X, D, ind) if return_distance else answer(est._fit_X, ind)


def _drop_self_block(blocks: tuple, offset: int) -> tuple:
    """Each row of a chunk out of its own list: rows are numbered from the chunk's start."""
    D, ind = blocks
    D, ind = drop_self(D, ind - offset, array_namespace(ind))
    return D, ind + offset


def _neighbours_of_block(est: Any, X: Any) -> tuple[list, Any]:
    """The arrays the per-chunk decisions need: indices, and exact float64 distances
    when the weights use them (weights="distance" or a callable)."""
    weighted = est.weights not in (None, "uniform")
    if weighted:
        D, ind = search(est, X, est.n_neighbors, float64=True)
        return [ind, D], ind
    ind = search(est, X, est.n_neighbors, return_distance=False)
    return [ind], ind


def predict(est: Any, X: Any) -> Any:
    """``KNeighborsClassifier.predict``: the vote of :func:`gpuknn.votes_for_many_k` per chunk."""
    arrays, ind = _neighbours_of_block(est, X)
    classes = to_numpy(est.classes_)
    # string labels stay NumPy (as single-process); numeric ones follow the chunks
    meta = classes[:0] if classes.dtype.kind not in "biuf" else _meta(ind, 1, classes.dtype)
    (pred,) = per_row_chunk(
        _vote_block,
        arrays,
        [(None, classes.dtype, meta)],
        _shared(to_numpy(est._y)),
        classes,
        est.n_neighbors,
        est.weights,
        False,
    )
    return answer(X, pred)


def predict_proba(est: Any, X: Any) -> Any:
    """``KNeighborsClassifier.predict_proba``: vote shares per chunk, float64."""
    arrays, ind = _neighbours_of_block(est, X)
    classes = to_numpy(est.classes_)
    out = [(int(classes.shape[0]), np.float64, _meta(ind, 2, np.float64))]
    (proba,) = per_row_chunk(
        _vote_block, arrays, out, _shared(to_numpy(est._y)), classes, est.n_neighbors, est.weights, True
    )
    return answer(X, proba)


def _vote_block(
    blocks: tuple, offset: int, codes: np.ndarray, classes: np.ndarray, k: int, weights: str, proba: bool
) -> tuple:
    ind, dist = blocks if len(blocks) == 2 else (blocks[0], None)
    xp, dev = array_namespace(ind), device_of(ind)
    labels = from_numpy(codes[to_numpy(ind)], xp, device=dev)  # small gather on the host
    n_classes = int(classes.shape[0])
    if proba:
        counts = vote_counts(labels, [k], n_classes=n_classes, distances=dist, weights=weights)[0, ...]
        counts = xp.astype(counts, xp.float64)
        return (counts / xp.sum(counts, axis=1, keepdims=True),)
    # the distances are exact float64: the vote is decided exactly, near ties included
    pred = votes_for_many_k(labels, [k], n_classes=n_classes, weights=weights, distances=dist)[0, :]
    out = classes[to_numpy(pred)]
    return (out if classes.dtype.kind not in "biuf" else from_numpy(out, xp, device=dev),)


def regress(est: Any, X: Any) -> Any:
    """``KNeighborsRegressor.predict``: the weighted mean of
    :func:`gpuknn.ops.weights.neighbour_mean` per chunk."""
    arrays, ind = _neighbours_of_block(est, X)
    y = to_numpy(est._y)
    width = None if y.ndim == 1 else int(y.shape[1])
    Y = np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)
    out = [(width, y.dtype, _meta(ind, 1 if width is None else 2, y.dtype))]
    (pred,) = per_row_chunk(_regress_block, arrays, out, _shared(Y), est.weights, X.dtype, y.dtype, y.ndim)
    return answer(X, pred)


def _regress_block(
    blocks: tuple, offset: int, Y: np.ndarray, weights: Any, q_dtype: Any, y_dtype: Any, y_ndim: int
) -> tuple:
    ind, dist = blocks if len(blocks) == 2 else (blocks[0], None)
    xp, dev = array_namespace(ind), device_of(ind)
    Yn = from_numpy(Y[to_numpy(ind)], xp, device=dev)  # (rows, k, n_outputs), gathered on the host
    return (neighbour_mean(Yn, dist, weights, q_dtype, y_dtype, y_ndim, xp),)
