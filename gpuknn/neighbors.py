"""Exact k-nearest-neighbour search: the tile nominates, an exact pass decides.

:func:`kneighbors` runs in three steps per query chunk, under a memory budget:

1. **Tile pass** (:mod:`gpuknn.ops.search`): blocked GEMMs of prepared rows (faiss's
   scheme) keep each query's ``kk = k + margin`` best *tile scores*. Euclidean rows are
   centred on the reference mean first (translation invariance: a large common offset
   costs no digits).
2. **Exact pass**: a certified bound on the tile's rounding (:mod:`gpuknn.ops.certify`)
   tells which candidates the tile cannot order -- near-tie groups, and the k-th place's
   group -- and those get keys recomputed pair by pair in float64 from the caller's rows
   (:mod:`gpuknn.ops.exact`), ordered by (key, index) (:mod:`gpuknn.ops.groups`; float64
   input: every candidate, :mod:`gpuknn.ops.rerank`). The bound also proves, for almost
   every row, that no reference outside the list can enter the top k.
3. **Second pass** for the rows it cannot prove (exact duplicates or ties around the k-th
   neighbour, say): every reference whose float64 tile score comes within its bound of the
   k-th exact key is collected and decided exactly.

So the neighbour lists -- which neighbours, in which order -- are the same with any
``working_memory``, BLAS thread count or backend: the top k by exact distance, equal
distances to the lower index, up to distances that differ by less than their float64
rounding. Distances are exact for float64 input; for float32 input they are exact for near
ties and near duplicates and within the tile's certified bound elsewhere.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

from ._backend import (
    array_namespace,
    check_int,
    default_working_memory,
    is_out_of_memory,
    preferred_tile_bytes,
    validate_matrix,
)
from ._delegation import on_input_device
from .errors import InvalidInputError, WorkingMemoryWarning
from .ops.certify import reference_bound
from .ops.distance import check_metric, validate_pair
from .ops.exact import distance_interval, exact_keys, keys_to_distances
from .ops.groups import rerank_groups
from .ops.rerank import collect_top, rerank
from .ops.rows import replace_rows
from .ops.search import (
    Reference,
    TilePlan,
    _scratch_per_element,
    collect,
    nominate,
    plan_tiles,
    prepare_queries,
)

__all__ = [
    "PreparedReference",
    "Neighbors",
    "kneighbors",
    "search",
    "kneighbors_keys",
    "plan_tiles",
    "candidate_margin",
]

# Float64 searches at least this large (queries x references x row width) run their tile
# pass in float32 (the exact pass restores float64); below it one float64 pass is cheaper.
_SCREEN_MIN_WORK = 1 << 27
# Largest |value| a float32 tile of float64 input may see: squares stay far inside range.
_FLOAT32_SAFE = 1e15
_EUCLID = ("euclidean", "sqeuclidean")


def candidate_margin(k: int) -> int:
    """Candidates kept beyond k by the tile pass, so that the k-th and the last differ."""
    return max(8, k // 16)


class PreparedReference:
    """Reference rows validated and prepared once, for repeated searches against them.

    Preparing 60 000 x 784 rows (statistics, centring, normalising) costs about as much as
    a 300-query search, so estimators build this at ``fit`` and pass it to
    :func:`kneighbors` in place of ``R``.

    Parameters
    ----------
    R : array of shape (n_ref, d)
    metric : str
    name : str, default "R"
        How messages about the rows name them (an estimator passes ``"X"``).

    Examples
    --------
    >>> import numpy as np
    >>> ref = PreparedReference(np.array([[0.0], [1.0], [2.0]]), metric="euclidean")
    >>> kneighbors(np.array([[1.9]]), ref, 1, metric="euclidean")[1]
    array([[2]])
    """

    def __init__(self, R: Any, *, metric: str = "euclidean", name: str = "R"):
        check_metric(metric)
        xp = array_namespace(R)
        data = validate_matrix(R, xp, name=name, check_finite=False)
        self.magnitude = _check_magnitude(None, data, xp, names=("Q", name))
        self.metric = metric
        self.reference = Reference(data, metric, keep_rows=True)

    @property
    def data(self) -> Any:
        """The reference rows as validated (the caller's array when it was floating)."""
        return self.reference.data

    @property
    def shape(self) -> tuple[int, int]:
        return self.reference.shape

    @property
    def dtype(self) -> Any:
        return self.reference.dtype


@on_input_device
def kneighbors(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    working_memory: int | None = None,
    return_distance: bool = True,
):
    """Exact k nearest references of every query, tiled under a memory budget.

    Parameters
    ----------
    Q : array of shape (n_queries, d)
    R : array of shape (n_ref, d), or a :class:`PreparedReference`
        Same namespace as Q. Integer input is computed in float64; float32 stays float32.
        With a :class:`PreparedReference` (of the same metric), Q is cast to its dtype.
    k : int
        Number of neighbours, ``1 <= k <= n_ref``.
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
        See :mod:`gpuknn.ops.exact`. For ``"inner"`` the returned "distances" are the
        inner products, sorted from largest (closest) to smallest.
    working_memory : int, optional
        Bytes for the prepared query chunk, the prepared reference block, the score tile
        with its selection scratch and the exact pass. Default: half the free GPU memory
        under CuPy, 256 MiB on the host (env ``GPUKNN_WORKING_MEMORY`` overrides). On the
        host the score tile (scores alone) is further capped at a cache-friendly 18 MiB.
    return_distance : bool
        Return ``(distances, indices)`` (default) or only ``indices``.

    Returns
    -------
    distances : array of shape (n_queries, k), ascending (``inner``: descending), Q's dtype
        Float64 input: the exact distances (float64, from the input rows). Float32 input:
        exact for near ties and near duplicates, elsewhere the tile's, within its
        certified bound (:func:`search` reports it per row).
    indices : int64 array of shape (n_queries, k)
        **Ties:** equal distances are ordered by lower reference index, on every backend,
        tiling and thread count (see the module docstring for what "equal" means).

    Raises
    ------
    InvalidInputError
        NaN/inf (rows named), values whose squared norms would overflow the dtype, k out of
        range, feature mismatch, empty or non-2-D input, unknown metric. Nothing is computed
        before validation passes.

    Notes
    -----
    Complexity O(n_queries · n_ref · d) in GEMMs, one compare and one ``nonzero`` per score
    tile, O(n_queries · (k + margin) · d) float64 work in the exact pass, and a second
    tile pass over the references for the rows the certificate cannot settle (usually none).
    Extra memory: ``working_memory`` + O(n_queries · k).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> kneighbors(np.array([[1.2]]), R, 2)
    (array([[0.2, 0.8]]), array([[1, 2]]))
    """
    nb = search(Q, R, k, metric=metric, working_memory=working_memory)
    if not return_distance:
        return nb.indices
    return nb.output_distances(), nb.indices


class Neighbors(NamedTuple):
    """A search's result with what exact decisions on its distances need.

    Attributes
    ----------
    keys : float64 array (n, k)
        Keys (:mod:`gpuknn.ops.exact`), descending; exact, or within ``err`` of exact.
    indices : int64 array (n, k)
    err : float64 array (n,)
        Bound on each row's key errors (0 where every key is exact).
    metric : str
    dtype : the queries' dtype (that of :meth:`output_distances`)
    refine : callable(rows) -> float64 array (len(rows), k)
        The exact distances of the given rows' neighbours, ascending (rank by rank).
    """

    keys: Any
    indices: Any
    err: Any
    metric: str
    dtype: Any
    refine: Any

    @property
    def distances(self) -> Any:
        """Float64 distances of the keys."""
        return keys_to_distances(self.keys, self.metric)

    def output_distances(self) -> Any:
        """Distances in the queries' dtype, as :func:`kneighbors` returns them."""
        xp = array_namespace(self.keys)
        return xp.astype(self.distances, self.dtype)

    def vote_args(self) -> dict:
        """Keyword arguments of :func:`gpuknn.votes_for_many_k` for exact weighted votes."""
        xp = array_namespace(self.keys)
        bounds = None
        if bool(xp.any(self.err > 0)):
            bounds = distance_interval(self.keys, self.err, self.metric)
        return {"distances": self.distances, "bounds": bounds, "refine": self.refine}


def search(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    working_memory: int | None = None,
    labels: Any = None,
    names: tuple[str, str] = ("Q", "R"),
) -> Neighbors:
    """:func:`kneighbors` returning a :class:`Neighbors` (for exact decisions downstream).

    ``labels`` (one int label per reference): the caller reads only the neighbours' labels
    and certified distances (votes), so neighbours of one label may stay in tile order
    among themselves (:func:`gpuknn.ops.groups.rerank_groups`). ``names``: how messages name
    the queries and the references (the caller's argument names, e.g. ``("X_test", "X")``).
    """
    check_metric(metric)
    Q, ref, magnitude, xp = resolve_inputs(Q, R, metric, names=names)
    k = check_int(k, name="k", low=1, high=ref.shape[0])
    working_memory = _check_working_memory(working_memory, xp)
    keys, idx, err = kneighbors_keys(Q, ref, k, working_memory=working_memory, magnitude=magnitude, labels=labels)

    def refine(rows: Any) -> Any:
        exact = exact_keys(xp.take(Q, rows, axis=0), ref.data, xp.take(idx, rows, axis=0), metric, ref.stats)
        # Sorted: with labels, a one-label group may be listed in tile order, and the
        # distance of rank j is what a vote at rank j needs.
        return keys_to_distances(xp.sort(exact, axis=1, descending=True), metric)

    return Neighbors(keys, idx, err, metric, Q.dtype, refine)


def resolve_inputs(
    Q: Any, R: Any, metric: str, *, names: tuple[str, str] = ("Q", "R")
) -> tuple[Any, Reference, float, Any]:
    """Validate ``(Q, R)`` (R an array or a :class:`PreparedReference` of ``metric``).

    Returns ``(Q, reference, magnitude, xp)``: Q in the common float dtype, a
    :class:`~gpuknn.ops.search.Reference`, the largest |value| of both, the namespace.
    """
    qn, rn = names
    if isinstance(R, PreparedReference):
        if R.metric != metric:
            raise InvalidInputError(f"{rn} was prepared for metric {R.metric!r}, not {metric!r}")
        xp = array_namespace(Q, R.data)
        Q = validate_matrix(Q, xp, name=qn, dtype=R.dtype, check_finite=False)
        if Q.shape[1] != R.shape[1]:
            raise InvalidInputError(
                f"{qn} has {Q.shape[1]} features but {rn} has {R.shape[1]} (shapes {tuple(Q.shape)} and {R.shape})"
            )
        return Q, R.reference, max(R.magnitude, _check_magnitude(Q, None, xp, names=names)), xp
    Q, R, xp = validate_pair(Q, R, names=names, check_finite=False)
    magnitude = _check_magnitude(Q, R, xp, names=names)
    return Q, Reference(R, metric, keep_rows=False), magnitude, xp


def _check_working_memory(working_memory: Any, xp: Any) -> int:
    if working_memory is None:
        return default_working_memory(xp)
    if (
        isinstance(working_memory, bool)
        or not isinstance(working_memory, (int, float))
        or not (math.isfinite(working_memory) and working_memory > 0)
    ):
        raise InvalidInputError(f"working_memory must be a positive number of bytes, got {working_memory!r}")
    return int(working_memory)


def minimum_working_memory(n_queries: int, kk: int, row_width: int) -> int:
    """Smallest ``working_memory`` holding one row of tiles: one prepared query row and
    reference row and one score element, float64, with its selection scratch
    (:func:`plan_tiles` gives a quarter of its budget to the prepared rows and half to the
    tile; the search gives it three quarters of its own). Blocks may be narrower than
    ``kk`` (the candidates are merged across blocks)."""
    row_bytes = max(1, row_width) * 8
    per = 8 + _scratch_per_element(8)
    plan_budget = max(4 * row_bytes, 2 * per)
    return -(-4 * plan_budget // 3)


def _raise_to_minimum(working_memory: int, n_queries: int, kk: int, row_width: int) -> int:
    low = minimum_working_memory(n_queries, kk, row_width)
    if working_memory < low:
        warnings.warn(
            f"working_memory={working_memory} bytes is too small for one row of tiles "
            f"({n_queries} queries, {kk} candidates, rows of width {row_width}); using the "
            f"minimum, {low} bytes",
            WorkingMemoryWarning,
            stacklevel=4,
        )
        return low
    return working_memory


# Tiles beyond which a search is dominated by per-tile overhead (a 10 KiB budget made a
# 2000 x 30000 search take 89 s instead of 0.15 s, issue 18): it says so.
_MANY_TILES = 20_000


def _warn_many_tiles(plan: TilePlan, n_q: int, n_ref: int, working_memory: int) -> None:
    n_tiles = -(-n_q // plan.rows) * -(-n_ref // plan.cols)
    if n_tiles > _MANY_TILES:
        warnings.warn(
            f"working_memory={working_memory} bytes splits this {n_q} x {n_ref} search into "
            f"{n_tiles} tiles of {plan.rows} x {plan.cols} scores: expect it to be slow (the "
            f"default, None, is {_CPU_HINT})",
            WorkingMemoryWarning,
            stacklevel=4,
        )


_CPU_HINT = "256 MiB on the CPU and half the free memory on a GPU"


def kneighbors_keys(
    Q: Any,
    ref: Reference,
    k: int,
    *,
    working_memory: int,
    magnitude: float,
    exact_all: bool = False,
    labels: Any = None,
) -> tuple[Any, Any, Any]:
    """Keys (float64, descending), indices (n_queries, k) and key errors of validated input.

    The engine of :func:`kneighbors` (and of :func:`gpuknn.partial.kneighbors_partial`):
    plans the tiles, retries with halved tiles on an out-of-memory error. The order is the
    exact one always; ``err`` (n_queries,) bounds ``|key - exact key|`` of the entries
    whose order the tile settled (:mod:`gpuknn.ops.groups`; float32 input), 0 where every
    key is exact: float64 input (exact keys cost little beside its float64 or screened
    tiles), and every row with ``exact_all``.
    """
    xp = array_namespace(Q)
    n_q, n_ref = Q.shape[0], ref.shape[0]
    tile_dtype = _tile_dtype(Q, n_ref, ref.width, magnitude, xp)
    kk = min(n_ref, k + candidate_margin(k))
    itemsize = 8 if tile_dtype == xp.float64 else 4
    working_memory = _raise_to_minimum(working_memory, n_q, kk, ref.width)
    # A quarter of the budget is left to the float64 row preparation and the exact pass.
    plan = plan_tiles(
        n_q, n_ref, ref.width, itemsize, max(1, working_memory * 3 // 4), tile_bytes=preferred_tile_bytes(xp)
    )
    _warn_many_tiles(plan, n_q, n_ref, working_memory)
    while True:
        try:
            return _search(
                Q, ref, k, kk, plan, tile_dtype, xp, exact_all=exact_all or Q.dtype == xp.float64, labels=labels
            )
        except Exception as exc:  # noqa: BLE001 - only allocation failures are retried
            if not is_out_of_memory(exc) or (plan.rows == 1 and plan.cols == 1):
                raise
            if plan.rows > 1:
                rows = max(1, plan.rows // 2)
                plan = TilePlan(max(rows, plan.query_chunk // 2), rows, plan.cols)
            else:
                plan = TilePlan(plan.query_chunk, 1, max(1, plan.cols // 2))


def _tile_dtype(Q: Any, n_ref: int, width: int, magnitude: float, xp: Any) -> Any:
    """float32 tiles for float32 input, and for large float64 input when they are sound."""
    if Q.dtype == xp.float32:
        return xp.float32
    big = Q.shape[0] * n_ref * width >= _SCREEN_MIN_WORK
    return xp.float32 if big and magnitude < _FLOAT32_SAFE else xp.float64


def _search(
    Q: Any, ref: Reference, k: int, kk: int, plan: TilePlan, dtype: Any, xp: Any, *, exact_all: bool, labels: Any = None
):
    """Run one tile plan: keys, indices (n_queries, k) and key errors (n_queries,)."""
    out = [
        _search_chunk(
            Q[q0 : min(q0 + plan.query_chunk, Q.shape[0]), :],
            ref,
            k,
            kk,
            plan,
            dtype,
            xp,
            exact_all=exact_all,
            labels=labels,
        )
        for q0 in range(0, Q.shape[0], plan.query_chunk)
    ]
    if len(out) == 1:
        return out[0]
    return tuple(xp.concat([o[j] for o in out], axis=0) for j in range(3))


def _search_chunk(
    Qc: Any,
    ref: Reference,
    k: int,
    kk: int,
    plan: TilePlan,
    dtype: Any,
    xp: Any,
    *,
    exact_all: bool,
    labels: Any = None,
):
    """Tile pass, exact pass and (if needed) second pass for one query chunk."""
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Qc, ref, dtype)
    scores, index = nominate(q_rows, ref, kk, plan, dtype)
    bound = reference_bound(ref, q_norm, q_stats, dtype)
    euclid = ref.metric in _EUCLID
    # Tile units of a key: the key itself, or (|q - c|^2 + key) / 2 for the euclidean family.
    common = dict(
        bound=bound, scale=0.5 if euclid else None, shift=0.5 * q_sq if euclid else None, complete=kk >= ref.shape[0]
    )
    if exact_all:
        res = rerank(Qc, ref.data, scores, index, k, ref.metric, ref.stats, q_stats, **common)
    else:
        res = rerank_groups(Qc, ref.data, scores, index, k, ref.metric, ref.stats, q_stats, labels=labels, **common)
    if bool(xp.all(res.ok)):
        return res.keys, res.index, res.err
    bad = xp.nonzero(~res.ok)[0]
    keys_bad, idx_bad = _second_pass(xp.take(Qc, bad, axis=0), ref, k, plan, xp, kth=xp.take(res.keys[:, k - 1], bad))
    keys, idx, err = replace_rows(
        bad,
        res.ok.shape[0],
        [(res.keys, keys_bad), (res.index, idx_bad), (res.err, xp.zeros_like(res.err[: bad.shape[0]]))],
    )
    return keys, idx, err


def _second_pass(Qb, ref, k, plan, xp, *, kth):
    """Exact top k of rows the certificate could not settle (``kth``: their k-th exact key
    among the candidates). Their tile scores are recomputed in float64, whose bound is
    some 10^-9 of float32's, and every reference scoring within it of the k-th is
    collected (the true top k are among them) and decided by its exact key."""
    f64 = xp.float64
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Qb, ref, f64)
    bound = reference_bound(ref, q_norm, q_stats, f64)
    kth_units = kth if q_sq is None else 0.5 * kth + 0.5 * q_sq
    threshold = kth_units - bound
    # Float64 tiles and rows take twice the bytes of the plan's float32 ones: half the rows.
    plan = TilePlan(plan.query_chunk, max(1, plan.rows // 2), max(1, plan.cols // 2))
    keys, idx = collect_top(
        lambda progress: collect(q_rows, ref, threshold, plan, f64, progress),
        Qb,
        ref.data,
        ref.metric,
        ref.stats,
        q_stats,
        k,
        kth=kth,
    )
    return keys, xp.astype(idx, xp.int64)


def _check_magnitude(Q: Any, R: Any, xp: Any, *, names: tuple[str, str] = ("Q", "R")) -> float:
    """Largest |value| of Q (and R); raise on NaN/inf or if squared norms would overflow.

    Every metric forms ``x.x`` (norms, the euclidean augmentation) or ``q.r`` in the input's
    dtype: beyond ``sqrt(max / d)`` they overflow and the neighbours are meaningless. The
    same two reductions (max, min) also clear the finite check (NaN propagates through
    them, an infinity is one of them); only a failing input is scanned row by row.
    """
    top = 0.0
    for name, a in zip(names, (Q, R)):
        if a is None:
            continue
        hi, lo = float(xp.max(a)), float(xp.min(a))
        if not (math.isfinite(hi) and math.isfinite(lo)):
            validate_matrix(a, xp, name=name)  # raises, naming the rows
        top_a = max(hi, -lo)
        limit = (float(xp.finfo(a.dtype).max) / (4 * (a.shape[1] + 1))) ** 0.5
        if top_a > limit:
            raise InvalidInputError(
                f"{name} holds values up to {top_a:.3g}; {a.dtype} squared norms of "
                f"{a.shape[1]} features overflow beyond {limit:.3g}: rescale the data"
            )
        top = max(top, top_a)
    return top
