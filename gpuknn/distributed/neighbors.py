"""Exact kNN of dask arrays: a query-chunk x reference-chunk grid of partial searches and a
tree merge per query chunk (see :mod:`gpuknn.ops.partial` for why the merge is exact)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._backend import array_namespace, check_finite_rows, check_int
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..ops.limits import check_working_memory, to_mib
from ..ops.partial import finalize_partial, kneighbors_partial, merge_partial
from ._dask import as_row_chunked, import_dask, resolve_split_every, row_blocks, tree_reduce

__all__ = ["kneighbors"]


def kneighbors(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    working_memory: float | None = None,
    split_every: int | None = None,
    return_distance: bool = True,
):
    """Exact k nearest references of every query, for dask arrays; lazy.

    Every (query chunk, reference chunk) pair is one task,
    :func:`gpuknn.kneighbors_partial` with the reference chunk's global row offset; the
    partial lists of a query chunk are merged by a tree of :func:`gpuknn.merge_partial`
    (fan-in ``split_every``) and finished by :func:`gpuknn.finalize_partial`. The merge
    keeps the k best by (exact key, index), so the answer is that of single-process
    :func:`gpuknn.kneighbors`: the same indices (ties: lower index) whatever the chunking.

    Parameters
    ----------
    Q : dask array (n_queries, d), or a NumPy/CuPy array
    R : dask array (n_ref, d), or a NumPy/CuPy array
        Row chunks of any sizes (smaller than k, uneven); column chunks are merged into one.
        NumPy/CuPy inputs are cut into ~64 MiB row chunks, scattered first when a
        ``distributed`` client is active (no large graph).
    k : int, 1 <= k <= n_ref
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
    working_memory : float, optional
        MiB per task for its tiles (as for :func:`gpuknn.kneighbors`); resolved here and
        passed to every task (default 256 MiB, env ``GPUKNN_WORKING_MEMORY`` in MiB), never
        a worker's own default: half the free GPU memory is wrong on a worker that also
        holds chunks and a memory pool.
    split_every : int >= 2, optional
        Fan-in of the merge tree (default 8).
    return_distance : bool, default True

    Returns
    -------
    distances : dask array (n_queries, k), Q and R's common float dtype
        Only with ``return_distance``.
    indices : dask array (n_queries, k), int64
        Global reference indices. Both are chunked by rows like Q (less Q's empty chunks).

    Raises
    ------
    InvalidInputError
        Not 2-D, different numbers of columns, unknown chunk sizes, ``k > n_ref``, unknown
        metric, bad ``working_memory`` / ``split_every``. Value errors inside a chunk (NaN)
        are raised by its task at compute time.

    Notes
    -----
    ``a x b`` search tasks (query and reference chunk counts), each
    O(n_q_chunk n_r_chunk d); about ``a b / (split_every - 1)`` merges, each O(n_q_chunk k
    split_every log k). A task holds one query chunk, one reference chunk and
    ``working_memory``; a merge holds ``split_every`` lists of (n_q_chunk, k).

    Examples
    --------
    >>> import numpy as np, dask, dask.array as da
    >>> R = da.from_array(np.arange(10.0)[:, None], chunks=3)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     D, I = dask.compute(*kneighbors(np.array([[4.2]]), R, 3))
    >>> I
    array([[4, 5, 3]])
    """
    dask, da = import_dask()
    check_metric(metric)
    k = check_int(k, name="k", low=1)
    split_every = resolve_split_every(split_every)
    # resolved here, on the client, and passed to every task (see working_memory above)
    wm = to_mib(check_working_memory(working_memory, np))  # MiB, validated (None: the host default)
    Q = as_row_chunked(Q, "Q")
    R = as_row_chunked(R, "R")
    if Q.shape[1] != R.shape[1]:
        raise InvalidInputError(f"Q has {Q.shape[1]} features but R has {R.shape[1]} (shapes {Q.shape} and {R.shape})")
    if Q.shape[0] == 0 or R.shape[0] == 0:
        raise InvalidInputError(f"Q and R need at least one row each, got shapes {Q.shape} and {R.shape}")
    if k > R.shape[0]:
        raise InvalidInputError(f"k={k} must be <= n_ref={R.shape[0]} (the rows of R)")
    out_dtype = np.result_type(_float(Q.dtype), _float(R.dtype))
    from dask.array.utils import meta_from_array  # noqa: PLC0415

    d_meta = meta_from_array(Q, ndim=2, dtype=out_dtype)
    i_meta = meta_from_array(Q, ndim=2, dtype=np.int64)

    offsets = np.cumsum((0,) + tuple(R.chunks[0]))[:-1]
    # empty reference chunks hold nothing and kneighbors_partial refuses them
    refs = [(b, int(o)) for b, o, rows in zip(row_blocks(R), offsets, R.chunks[0]) if rows]
    partial = dask.delayed(_partial, pure=True)
    merge = dask.delayed(_merge_many, pure=True)
    finish = dask.delayed(_finish, pure=True, nout=2)
    dist, idx = [], []
    q_offsets = np.cumsum((0,) + tuple(Q.chunks[0]))[:-1]
    for qb, rows, q_off in zip(row_blocks(Q), Q.chunks[0], q_offsets):
        if not rows:  # empty query chunks give no task (and no chunk of the output)
            continue
        parts = [partial(qb, rb, k, off, metric, wm, int(q_off)) for rb, off in refs]
        out = finish(tree_reduce(parts, merge, split_every), out_dtype)
        dist.append(da.from_delayed(out[0], shape=(rows, k), dtype=out_dtype, meta=d_meta))
        idx.append(da.from_delayed(out[1], shape=(rows, k), dtype=np.int64, meta=i_meta))
    ind = idx[0] if len(idx) == 1 else da.concatenate(idx, axis=0)
    if not return_distance:
        return ind
    return (dist[0] if len(dist) == 1 else da.concatenate(dist, axis=0)), ind


def _float(dtype: Any) -> Any:
    """The dtype a chunk is searched in: floats as they are, integers and bools float64."""
    return dtype if np.issubdtype(dtype, np.floating) else np.float64


def _partial(q: Any, r: Any, k: int, offset: int, metric: str, working_memory: float, q_offset: int) -> Any:
    """One grid task: the chunk pair's k best, with global indices (the pair is promoted to
    one float dtype inside, as single-process kneighbors promotes Q and R); ``working_memory``
    in MiB, resolved on the client."""
    # NaN rows named by their number in the whole array (the engine's own check would count
    # from the chunk's first row); two reductions clear a finite chunk, small against the GEMM
    check_finite_rows(q, array_namespace(q), name="Q", first_row=q_offset, where=" of this chunk")
    check_finite_rows(r, array_namespace(r), name="R", first_row=offset, where=" of this chunk")
    return kneighbors_partial(q, r, k, offset=offset, metric=metric, working_memory=working_memory)


def _merge_many(*parts: Any) -> Any:
    """k best of several partial lists (merge order is free: the merge is associative)."""
    return functools.reduce(merge_partial, parts)


def _finish(merged: Any, dtype: Any) -> tuple[Any, Any]:
    """``(distances, indices)`` of one query chunk, the distances in the output dtype."""
    dist, ind = finalize_partial(merged)
    xp = array_namespace(dist)
    return xp.astype(dist, getattr(xp, np.dtype(dtype).name)), ind
