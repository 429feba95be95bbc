"""Dask plumbing shared by :mod:`gpuknn.distributed`: lazy import, input wrapping, tree merges.

Nothing here imports Dask at module import: ``import gpuknn`` must work without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from array_api_compat import is_cupy_array, is_dask_array  # neither imports Dask or CuPy

from .._backend import array_namespace, check_int, validate_matrix
from ..errors import InvalidInputError

__all__ = ["import_dask", "is_dask_array", "as_row_chunked", "row_blocks", "tree_reduce", "resolve_split_every"]

# Rows of a wrapped (non-Dask) input per chunk: large enough that a task's overhead (a few
# ms) is small against its GEMM, small enough that several chunks fit a worker at once.
_WRAP_CHUNK_BYTES = 64 << 20
_DEFAULT_SPLIT_EVERY = 8


def import_dask() -> tuple[Any, Any]:
    """``(dask, dask.array)``, or :class:`InvalidInputError` saying how to install them."""
    try:
        import dask  # noqa: PLC0415
        import dask.array as da  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the tests skip without Dask
        raise InvalidInputError(
            "gpuknn.distributed needs Dask: pip install 'gpuknn[dask]' (or dask[array] distributed)"
        ) from exc
    return dask, da


def resolve_split_every(split_every: Any) -> int:
    """Fan-in of the merge trees: ``None`` -> 8, else an int >= 2."""
    return _DEFAULT_SPLIT_EVERY if split_every is None else check_int(split_every, name="split_every", low=2)


def _current_client() -> Any:
    """The ``distributed.Client`` that will run the next compute, or None.

    Read from Dask's scheduler choice, so a ``dask.config.set(scheduler="synchronous")`` block
    counts as no client even while one exists; ``distributed`` itself is never imported here.
    """
    import dask.base  # noqa: PLC0415

    sched = dask.base.get_scheduler()
    client = getattr(sched, "__self__", None)
    return client if type(client).__name__ == "Client" and hasattr(client, "scatter") else None


def as_row_chunked(X: Any, name: str) -> Any:
    """``X`` as a 2-D dask array chunked by rows only (all columns in one chunk).

    Dask arrays are rechunked along the columns if needed (rows stay as they are: the
    chunk edges never change an answer). NumPy or CuPy arrays are cut into ~64 MiB row
    chunks; with a ``distributed`` client active the chunks are **scattered** first, so the
    graph holds references to them instead of the data (a large array inside a graph makes
    ``distributed`` warn "Sending large graph" and ship it through the scheduler).

    Raises
    ------
    InvalidInputError
        Not 2-D, no columns, unknown chunk sizes (NaN: call ``X.compute_chunk_sizes()``), or
        an array that is neither Dask, NumPy nor CuPy.
    """
    dask, da = import_dask()
    if is_dask_array(X):
        if X.ndim != 2:
            raise InvalidInputError(f"{name} must be 2-D, got shape {tuple(X.shape)}")
        if any(np.isnan(c) for c in X.chunks[0]) or any(np.isnan(c) for c in X.chunks[1]):
            raise InvalidInputError(
                f"{name} has unknown chunk sizes {X.chunks}: the global row indices need them; "
                f"call {name}.compute_chunk_sizes() first"
            )
        if X.shape[1] == 0:
            raise InvalidInputError(f"{name} has no columns (shape {tuple(X.shape)})")
        return X if X.numblocks[1] == 1 else X.rechunk({1: -1})
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name=name, check_finite=False)  # the tasks check values
    if not (isinstance(X, np.ndarray) or is_cupy_array(X)):
        raise InvalidInputError(
            f"{name} must be a dask array or a NumPy or CuPy array, got {type(X).__module__}.{type(X).__name__}"
        )
    n, d = X.shape
    rows = max(1, _WRAP_CHUNK_BYTES // (d * X.dtype.itemsize))
    client = _current_client()
    if client is None:
        return da.from_array(X, chunks=(rows, d))
    cuts = list(range(0, n, rows)) + [n]
    # hash=False: unique keys. A content-hashed key shared with an earlier scatter of equal
    # data can be released by that one's cleanup while this graph still needs it ("lost
    # dependencies", seen when the same array was wrapped twice in a row)
    futures = client.scatter([X[a:b] for a, b in zip(cuts[:-1], cuts[1:])], hash=False)
    blocks = [
        da.from_delayed(f, shape=(b - a, d), dtype=X.dtype, meta=X[:0]) for f, a, b in zip(futures, cuts[:-1], cuts[1:])
    ]
    return blocks[0] if len(blocks) == 1 else da.concatenate(blocks, axis=0)


def row_blocks(X: Any) -> list:
    """The row chunks of a row-chunked dask array as Delayed objects, in order.

    Unoptimised on purpose: optimising here drops the ``Future`` objects of scattered chunks
    from the graph (keeping only their keys), the scheduler then releases the data and the
    compute fails with "lost dependencies". The final compute still culls the graph.
    """
    return list(X.to_delayed(optimize_graph=False).ravel())


def tree_reduce(parts: Sequence[Any], combine: Callable[..., Any], split_every: int) -> Any:
    """Reduce delayed ``parts`` with ``combine(*group)`` over groups of ``split_every``,
    level by level, to one (depth ``ceil(log_split_every(len(parts)))``)."""
    parts = list(parts)
    if not parts:
        raise InvalidInputError("nothing to reduce: the array has no chunks")
    while len(parts) > 1:
        groups = [parts[i : i + split_every] for i in range(0, len(parts), split_every)]
        parts = [g[0] if len(g) == 1 else combine(*g) for g in groups]
    return parts[0]
