"""Partial searches and their merge: the unit of scale-out.

A reference set too large for one device (or spread over a Dask cluster) is searched shard
by shard: :func:`kneighbors_partial` searches one shard and returns, for every query, the
shard's k best **exact keys** (float64, larger = closer; :mod:`gpuknn.ops.exact`) with
their *global* reference indices (``offset`` + the row in the shard). Because the keys are
the exact ones, computed pair by pair, :func:`merge_partial` only has to keep the k best
entries of two lists by (key descending, index ascending): the merge is associative and
commutative, so any tree of merges over any split of the reference gives exactly the
single search's answer (:func:`gpuknn.kneighbors`). :func:`finalize_partial` turns the
merged keys into distances.

Examples
--------
>>> import numpy as np
>>> R = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
>>> Q = np.array([[2.2]])
>>> a = kneighbors_partial(Q, R[:2], 3, offset=0)   # a shard with fewer than k rows
>>> b = kneighbors_partial(Q, R[2:], 3, offset=2)
>>> finalize_partial(merge_partial(a, b))
(array([[0.2, 0.8, 1.2]]), array([[2, 3, 1]]))
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .._backend import array_namespace, check_int, device_of
from .._delegation import on_input_device
from ..errors import InvalidInputError
from .distance import check_metric
from .exact import keys_to_distances
from .kneighbors import kneighbors_keys, resolve_inputs
from .limits import check_working_memory, underflow_scale
from .topk import merge_topk

__all__ = ["PartialNeighbors", "kneighbors_partial", "merge_partial", "finalize_partial"]


class PartialNeighbors(NamedTuple):
    """The k best references of each query found so far.

    Attributes
    ----------
    keys : float64 array (n_queries, k)
        Exact keys, descending; ``-inf`` in slots no reference has filled yet.
    indices : int64 array (n_queries, k)
        Global reference indices; ``-1`` in unfilled slots.
    metric : str
    dtype : dtype
        The queries' dtype, which :func:`finalize_partial` gives the distances.
    shards : tuple of (start, stop)
        The global reference index ranges searched so far (sorted, half-open): what
        :func:`merge_partial` checks for overlap. Empty when unknown (a result built by
        hand), where the merge checks the listed indices instead.
    """

    keys: Any
    indices: Any
    metric: str
    dtype: Any
    shards: tuple = ()


@on_input_device
def kneighbors_partial(
    Q: Any,
    R: Any,
    k: int,
    *,
    offset: int = 0,
    metric: str = "euclidean",
    working_memory: float | None = None,
) -> PartialNeighbors:
    """Search one shard of the references: its k best, with global indices.

    Parameters
    ----------
    Q : array (n_queries, d)
    R : array (n_shard, d) or :class:`~gpuknn.ops.kneighbors.PreparedReference`
        The shard: references ``offset .. offset + n_shard - 1`` of the whole set. A shard
        with fewer than k rows fills the rest with ``(-inf, -1)``.
    k : int, >= 1
    offset : int, >= 0
        Global index of the shard's first row.
    metric, working_memory
        As for :func:`gpuknn.kneighbors`.

    Returns
    -------
    PartialNeighbors

    Raises
    ------
    InvalidInputError
        Bad input (as :func:`gpuknn.kneighbors`), or data so small that their squared
        distances underflow (below about 1e-138 in float64): scale all shards alike first.

    Notes
    -----
    The same work as :func:`gpuknn.kneighbors` on the shard, with exact keys for every
    returned entry. Shards must not overlap (a reference in two shards would be kept twice).

    Examples
    --------
    >>> import numpy as np
    >>> p = kneighbors_partial(np.array([[0.5]]), np.array([[3.0], [0.0]]), 3, offset=10)
    >>> p.indices, p.keys
    (array([[11, 10, -1]]), array([[-0.25, -6.25,  -inf]]))
    """
    check_metric(metric)
    k = check_int(k, name="k", low=1)
    offset = check_int(offset, name="offset", low=0)
    Q, ref, magnitude, xp = resolve_inputs(Q, R, metric)
    if underflow_scale(magnitude, Q.dtype, xp) != 1.0:
        # gpuknn.kneighbors rescales such data by a power of two; a shard cannot (the other
        # shards' magnitudes are unknown here, and keys of different scales do not merge).
        raise InvalidInputError(
            f"Q and R hold values no larger than {magnitude:.3g} in magnitude: their squared "
            f"distances underflow {Q.dtype}, and the keys of a partial search could not be "
            "merged exactly; multiply the queries and every shard by the same power of two "
            "first (e.g. 2.0**500), or search with gpuknn.kneighbors, which rescales itself"
        )
    wm = check_working_memory(working_memory, xp, device_of(Q))
    kk = min(k, ref.shape[0])
    keys, idx, _ = kneighbors_keys(Q, ref, kk, working_memory=wm, magnitude=magnitude, exact_all=True)
    idx = idx + offset
    if kk < k:
        dev, n = device_of(keys), keys.shape[0]
        keys = xp.concat([keys, xp.full((n, k - kk), -math.inf, dtype=keys.dtype, device=dev)], axis=1)
        idx = xp.concat([idx, xp.full((n, k - kk), -1, dtype=idx.dtype, device=dev)], axis=1)
    return PartialNeighbors(keys, idx, metric, Q.dtype, ((offset, offset + int(ref.shape[0])),))


def _shard_names(shards: tuple) -> str:
    return ", ".join(f"[{a}, {b})" for a, b in shards)


def _check_disjoint(a: PartialNeighbors, b: PartialNeighbors, xp: Any) -> None:
    """:class:`InvalidInputError` when ``a`` and ``b`` searched a common reference: their
    index ranges overlap, or (ranges unknown) a query lists one index in both."""
    if a.shards and b.shards:
        both = [(ra, rb) for ra in a.shards for rb in b.shards if ra[0] < rb[1] and rb[0] < ra[1]]
        if both:
            ra, rb = both[0]
            raise InvalidInputError(
                f"cannot merge partial results of overlapping shards: the first covers reference "
                f"indices {_shard_names(a.shards)}, the second {_shard_names(b.shards)} (both hold "
                f"[{max(ra[0], rb[0])}, {min(ra[1], rb[1])})); shards must not overlap, or their "
                "common references would be listed twice"
            )
        return
    # A query's lists hold distinct indices each, so an index in both is a duplicate: one
    # sort of the (n, 2k) indices finds it.
    idx = xp.sort(xp.concat([a.indices, b.indices], axis=1), axis=1)
    dup = (idx[:, 1:] == idx[:, :-1]) & (idx[:, 1:] >= 0)
    if bool(xp.any(dup)):
        row = int(xp.nonzero(xp.any(dup, axis=1))[0][0])
        col = int(xp.nonzero(dup[row, :])[0][0])
        raise InvalidInputError(
            f"cannot merge partial results that share references: query {row} lists reference "
            f"{int(idx[row, col + 1])} in both; shards must not overlap"
        )


def _union(a: tuple, b: tuple) -> tuple:
    """Sorted union of two disjoint lists of ranges, adjacent ranges joined; () if unknown."""
    if not (a and b):
        return ()
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(a + b):
        if out and out[-1][1] == lo:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


@on_input_device
def merge_partial(a: PartialNeighbors, b: PartialNeighbors) -> PartialNeighbors:
    """The k best of two partial results, by (key descending, index ascending).

    Associative and commutative: any order or tree of merges over disjoint shards gives
    the same lists, equal to the single search's. O(n k log k).

    Raises
    ------
    InvalidInputError
        Different metrics or shapes, or overlapping shards (their index ranges, from
        :attr:`PartialNeighbors.shards`; for results without ranges, an index listed by
        both), which would list the common references twice.

    Examples
    --------
    >>> import numpy as np
    >>> Q, R = np.array([[0.0]]), np.array([[1.0], [2.0], [-1.0]])
    >>> m = merge_partial(kneighbors_partial(Q, R[:2], 2), kneighbors_partial(Q, R[2:], 2, offset=2))
    >>> m.indices
    array([[0, 2]])
    """
    if a.metric != b.metric:
        raise InvalidInputError(f"cannot merge results of metrics {a.metric!r} and {b.metric!r}")
    if a.keys.shape != b.keys.shape:
        raise InvalidInputError(
            f"cannot merge partial results of shapes {tuple(a.keys.shape)} and {tuple(b.keys.shape)} "
            "(same queries and k expected)"
        )
    xp = array_namespace(a.keys, b.keys)
    _check_disjoint(a, b, xp)
    k = a.keys.shape[1]
    keys, idx = merge_topk(xp.concat([a.keys, b.keys], axis=1), xp.concat([a.indices, b.indices], axis=1), k)
    return PartialNeighbors(keys, idx, a.metric, a.dtype, _union(a.shards, b.shards))


@on_input_device
def finalize_partial(p: PartialNeighbors, *, return_distance: bool = True):
    """``(distances, indices)`` of a merged result, as :func:`gpuknn.kneighbors` returns them.

    Raises
    ------
    InvalidInputError
        Some slots are still unfilled (all shards together hold fewer than k references).
    """
    xp = array_namespace(p.keys, p.indices)
    if bool(xp.any(p.indices < 0)):
        filled = int(xp.min(xp.sum(xp.astype(p.indices >= 0, xp.int64), axis=1)))
        raise InvalidInputError(
            f"only {filled} of k={p.indices.shape[1]} neighbours were found: the shards merged "
            "so far hold fewer references than k"
        )
    if not return_distance:
        return p.indices
    return xp.astype(keys_to_distances(p.keys, p.metric), p.dtype), p.indices
