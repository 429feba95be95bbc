"""The exact re-rank: the tile nominates, the exact keys decide.

:func:`rerank` takes each query's candidate list from a tile pass (tile scores, descending,
with reference indices), computes the candidates' exact keys
(:func:`gpuknn.ops.exact.exact_keys`), orders them by (key descending, index ascending)
and certifies the rows whose list provably holds the true top k
(:func:`gpuknn.ops.certify.certified`). A row that is not certified gets a threshold: every
reference whose tile score reaches it may belong to the top k, and all others cannot
(:func:`gpuknn.ops.search.collect` finds them; :func:`top_pairs` keeps the best k of the
pairs, tile by tile).

The answer is then the same whatever the tiling, the BLAS, its threads or the backend:
the top k by exact key, ties to the lower index -- up to keys that differ by less than
their float64 rounding, which different backends may order differently.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._backend import array_namespace, device_of
from .._delegation import order_rows
from .certify import certified, reference_bound
from .exact import EXACT_BLOCK_BYTES, RowStats, exact_keys
from .rows import replace_rows
from .search import TilePlan, collect, prepare_queries
from .topk import merge_topk

__all__ = [
    "rerank_lists",
    "pair_keys",
    "Reranked",
    "rerank",
    "top_pairs",
    "take_stats",
    "collect_top",
    "second_pass",
    "Progress",
    "KEY_MAX",
]

# Collected pairs kept before they are sorted and cut to k per row.
_PENDING_PAIRS = 1 << 20
# The largest key a metric can give (cosine/correlation: 1, the euclidean family: 0, a
# distance of 0); inner products have none.
KEY_MAX = {"cosine": 1.0, "correlation": 1.0, "euclidean": 0.0, "sqeuclidean": 0.0}


class Reranked(NamedTuple):
    """Result of :func:`rerank` for m query rows."""

    keys: Any  # float64 (m, k), descending
    index: Any  # int64 (m, k); ties (equal keys) to the lower index
    ok: Any  # bool (m,): certified rows
    threshold: Any  # float64 (m,), tile units: the second pass collects scores >= this
    err: Any = None  # float64 (m,): bound on |key - exact key| (key units); 0 where exact


def rerank(
    Q: Any,
    R: Any,
    tile_scores: Any,
    index: Any,
    k: int,
    metric: str,
    ref_stats: RowStats,
    q_stats: RowStats,
    *,
    bound: Any,
    scale: Any = None,
    shift: Any = None,
    complete: bool,
    local: Any = None,
    max_bytes: int = EXACT_BLOCK_BYTES,
) -> Reranked:
    """Exact top k of each row's candidates, and the rows whose answer is certified.

    The first k candidates of every row get exact keys; a later candidate gets one only
    if its tile score, plus the bound, reaches the k-th exact key (usually none does).

    Parameters
    ----------
    Q : array (m, d)
        Query rows as given (float32 or float64).
    R : array (n_ref, d)
        Reference rows as given; ``local`` (same shape as ``index``) are row numbers into R
        when ``index`` holds other (global) numbers.
    tile_scores : array (m, kk)
        Tile scores of the candidates, descending.
    index : int array (m, kk)
        Their reference indices (ties are broken on these).
    k : int, ``k <= kk``
    metric : str
    ref_stats, q_stats : RowStats
        :func:`gpuknn.ops.exact.row_stats` of R and of Q.
    bound : float64 array (m,)
        ``e_q``, in tile units (:func:`gpuknn.ops.certify.tile_error_bound`).
    scale, shift : float or float64 arrays (m,), optional
        Tile units of a key: ``scale * key + shift`` (default: the key itself).
    complete : bool
        The lists hold every reference (``kk == n_ref``).
    max_bytes : int
        Block size of the exact pass's gathers (:func:`~gpuknn.ops.exact.exact_keys`); a
        search passes a share of its ``working_memory``.

    Returns
    -------
    Reranked
    """
    exact = pair_keys(Q, R, metric, ref_stats, q_stats, max_bytes)
    return rerank_lists(
        tile_scores, index, k, bound=bound, scale=scale, shift=shift, complete=complete, local=local, exact=exact
    )


def pair_keys(Q: Any, R: Any, metric: str, ref_stats: RowStats, q_stats: RowStats, max_bytes: int):
    """The ``exact(rows, idx)`` of :func:`rerank_lists` and
    :func:`gpuknn.ops.groups.decide_groups` for one search: the exact keys of Q's rows
    ``rows`` (all of them, in order, when None) against the rows ``idx`` of R."""

    def exact(rows: Any, idx: Any) -> Any:
        return exact_keys(Q, R, idx, metric, ref_stats, q_stats=q_stats, max_bytes=max_bytes, q_index=rows)

    return exact


def rerank_lists(
    tile_scores: Any,
    index: Any,
    k: int,
    *,
    bound: Any,
    scale: Any = None,
    shift: Any = None,
    complete: bool,
    local: Any = None,
    exact: Any,
) -> Reranked:
    """:func:`rerank` with the exact keys from ``exact(rows, idx)``: the keys (float64, shape
    of ``idx``) of query rows ``rows`` (int, ascending; None: every row in order) against
    the references ``idx`` (numbers of ``local``). Lists stacked from several searches (the
    p-sweep's grid positions, each with its own columns) are re-ranked in one call."""
    xp = array_namespace(tile_scores, index)
    local = index if local is None else local
    m, kk = index.shape

    def units(key):
        key = key if scale is None else key * scale
        return key if shift is None else key + shift

    keys = exact(None, local[:, :k])
    top_keys, top_idx = merge_topk(keys, index[:, :k], k)
    if kk > k:
        # Later candidates that could still beat the k-th exact key.
        reach = units(top_keys[:, k - 1]) - bound
        need = xp.astype(tile_scores[:, k:], xp.float64) >= reach[:, None]
        hit = xp.nonzero(xp.reshape(need, (-1,)))[0]
        if hit.shape[0]:
            top_keys, top_idx = _add_candidates(index, local, top_keys, top_idx, hit, k, exact)
    kth = units(top_keys[:, k - 1])
    ok = certified(tile_scores[:, -1], bound, kth, complete=complete)
    return Reranked(top_keys, xp.astype(top_idx, xp.int64), ok, kth - bound, xp.zeros_like(kth))


def _add_candidates(index, local, top_keys, top_idx, hit, k, exact):
    """Merge the exact keys of extra candidates (flat positions ``hit`` into the last
    ``kk - k`` columns) into the rows' top-k lists."""
    xp = array_namespace(top_keys)
    m, kk = index.shape
    rows = hit // (kk - k)
    cols = hit % (kk - k) + k
    flat = rows * kk + cols
    glob = xp.take(xp.reshape(index, (-1,)), flat)
    loc = xp.take(xp.reshape(local, (-1,)), flat)
    keys = exact(rows, loc[:, None])[:, 0]
    # Only the rows that got extra candidates are re-sorted (``rows`` is non-decreasing).
    dev = device_of(rows)
    new = xp.concat([xp.ones((1,), dtype=xp.bool, device=dev), rows[1:] != rows[:-1]])
    sub = xp.take(rows, xp.nonzero(new)[0])
    n_sub = sub.shape[0]
    at = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1  # each pair's position in sub
    sub_rows = xp.reshape(xp.broadcast_to(xp.arange(n_sub, device=dev)[:, None], (n_sub, k)), (-1,))
    r = xp.concat([sub_rows, at])
    kv = xp.concat([xp.reshape(xp.take(top_keys, sub, axis=0), (-1,)), keys])
    iv = xp.concat([xp.reshape(xp.take(top_idx, sub, axis=0), (-1,)), xp.astype(glob, top_idx.dtype)])
    _, sk, si = top_pairs(r, kv, iv, k, n_sub, final=True)
    return tuple(replace_rows(sub, m, [(top_keys, sk), (top_idx, si)]))


def take_stats(stats: RowStats, rows: Any) -> RowStats:
    """The statistics of the given rows (indices) only."""
    xp = array_namespace(rows)
    return RowStats(*(None if v is None else xp.take(v, rows) for v in stats))


def top_pairs(
    rows: Any,
    keys: Any,
    cols: Any,
    k: int,
    n_rows: int,
    *,
    final: bool = False,
) -> tuple[Any, Any, Any]:
    """Keep the k best pairs of each row by (key descending, column ascending).

    ``rows``, ``keys``, ``cols`` are flat arrays of pairs (any order, a row may have any
    number of pairs). Returns the kept ``(rows, keys, cols)``, sorted by row then rank; with
    ``final=True`` every row must have at least k pairs and the result is
    ``(None, keys (n_rows, k), cols (n_rows, k))``.
    """
    xp = array_namespace(keys, cols)
    o = order_rows(rows, keys, cols)
    rows, keys, cols = xp.take(rows, o), xp.take(keys, o), xp.take(cols, o)
    dev = device_of(rows)
    starts = xp.searchsorted(rows, xp.arange(n_rows, dtype=rows.dtype, device=dev))
    rank = xp.arange(rows.shape[0], dtype=rows.dtype, device=dev) - xp.take(starts, rows)
    keep = xp.nonzero(rank < k)[0]
    rows, keys, cols = xp.take(rows, keep), xp.take(keys, keep), xp.take(cols, keep)
    if final:
        if rows.shape[0] != n_rows * k:
            raise AssertionError("top_pairs: a row has fewer than k pairs")  # pragma: no cover
        return None, xp.reshape(keys, (n_rows, k)), xp.reshape(cols, (n_rows, k))
    return rows, keys, cols


class Progress:
    """Rows already settled by :func:`collect_top` (``done``, bool (m,)): a batch source
    may skip them."""

    def __init__(self, done: Any):
        self.done = done


def collect_top(
    make_batches: Any,
    Q: Any,
    R: Any,
    metric: str,
    ref_stats: RowStats,
    q_stats: RowStats,
    k: int,
    *,
    kth: Any,
    n_cols: int | None = None,
) -> tuple[Any, Any]:
    """Exact top k (keys, indices; (m, k)) of rows from their collected candidate pairs.

    ``make_batches(progress)`` returns an iterator of ``(rows, cols)`` (flat int arrays; rows index Q, cols index R), in
    row-major order within a batch and in ascending column order for each row across
    batches; together they hold every reference that can be in a row's top k. ``kth``
    (m,) is each row's k-th best exact key among its first candidates (all collected).

    A row whose ``kth`` is the largest key the metric allows (:data:`KEY_MAX`; keys within
    their own float64 rounding of it are snapped to it, :func:`gpuknn.ops.exact.exact_keys`)
    has at least k candidates tied at the top: its first k such candidates in column order
    are its answer (every later one has a higher index and cannot beat them), so it stops
    collecting there. That keeps massive ties (duplicates of the query; correlation of 2
    features, where every key is +-1) from costing an exact key for every tied reference.
    """
    xp = array_namespace(kth)
    m = kth.shape[0]
    dev = device_of(kth)
    arange_m = xp.arange(m, device=dev)
    top = KEY_MAX.get(metric)
    maxed = None if top is None else kth >= top
    if maxed is not None and not bool(xp.any(maxed)):
        maxed = None
    found = xp.zeros((m,), dtype=xp.int64, device=dev)
    progress = Progress(xp.zeros((m,), dtype=xp.bool, device=dev))
    run = None

    def keys_of(r, c):
        return exact_keys(
            xp.take(Q, r, axis=0), R, c[:, None], metric, ref_stats, q_stats=take_stats(q_stats, r), n_cols=n_cols
        )[:, 0]

    pending: list[tuple[Any, Any, Any]] = []  # pairs not merged yet (one sort for many)

    def merge(run, r, c, kv):
        pending.append((r, kv, c))
        if sum(int(p[0].shape[0]) for p in pending) < _PENDING_PAIRS:
            return run
        return flush(run)

    def flush(run):
        parts = ([run] if run is not None else []) + pending
        pending.clear()
        if not parts:
            return run
        return top_pairs(*(xp.concat([p[j] for p in parts]) for j in range(3)), k, m)

    for rows, cols in make_batches(progress):
        if maxed is None:
            run = merge(run, rows, cols, _chunked(keys_of, rows, cols, R.shape[1] if n_cols is None else n_cols, xp))
            continue
        on = xp.take(maxed, rows)
        g = xp.nonzero(~on)[0]
        if g.shape[0]:
            gr, gc = xp.take(rows, g), xp.take(cols, g)
            run = merge(run, gr, gc, _chunked(keys_of, gr, gc, R.shape[1] if n_cols is None else n_cols, xp))
        sel = xp.nonzero(on & (xp.take(found, rows) < k))[0]
        mr, mc = xp.take(rows, sel), xp.take(cols, sel)
        starts = xp.searchsorted(mr, arange_m)
        rank = xp.arange(mr.shape[0], device=dev) - xp.take(starts, mr)
        lo, width = 0, 2 * k
        while mr.shape[0]:
            needy = xp.take(found, mr) < k
            pick = xp.nonzero(needy & (rank >= lo) & (rank < lo + width))[0]
            if pick.shape[0] == 0:
                break
            pr, pc = xp.take(mr, pick), xp.take(mc, pick)
            kv = keys_of(pr, pc)
            good = xp.nonzero(kv >= top)[0]
            pr, pc, kv = xp.take(pr, good), xp.take(pc, good), xp.take(kv, good)
            run = merge(run, pr, pc, kv)
            found = found + (xp.searchsorted(pr, arange_m, side="right") - xp.searchsorted(pr, arange_m))
            lo, width = lo + width, 2 * width
        progress.done = maxed & (found >= k)
        if bool(xp.all(progress.done)):
            break  # every row settled by its first ties at the top
    run = flush(run)
    _, keys, idx = top_pairs(*run, k, m, final=True)
    return keys, idx


def _chunked(keys_of, rows, cols, d, xp):
    """keys_of over pairs in chunks whose gathered rows stay within about 4 MiB."""
    step = max(1, (4 << 20) // (12 * max(1, d)))
    n = rows.shape[0]
    if n <= step:
        return keys_of(rows, cols)
    return xp.concat([keys_of(rows[p0 : min(p0 + step, n)], cols[p0 : min(p0 + step, n)]) for p0 in range(0, n, step)])


def second_pass(Qb, ref, k, plan, xp, *, kth):
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
