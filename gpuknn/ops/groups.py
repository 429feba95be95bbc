"""Exact work only where the tile cannot decide: near-tie groups and the k-th boundary.

A float32 tile score is within ``e_q`` of its exact key (in tile units,
:mod:`gpuknn.ops.certify`), so two candidates whose tile scores differ by more than
``2 e_q`` are already in their exact order. :func:`rerank_groups` splits each row's
candidate list (tile scores, descending) into **groups** of consecutive candidates closer
than ``2 e_q``; only members of groups with two or more candidates, up to the end of the
group that holds the k-th place, get exact keys (:func:`gpuknn.ops.exact.exact_keys`), and
are ordered by (exact key, index) inside their group. A row is certified when the group of
the k-th place ends before the list does: every reference outside the list then scores
below it by more than ``2 e_q`` and cannot enter.

The other candidates keep the key their tile score implies, within ``e_q`` of the exact one
(the result's ``err``): the *order* of every list is the exact one, distances carry the
tile's certified rounding. On Fashion-MNIST (k = 10, 784 features) about one entry in
twenty needs an exact key, against every one of them in :func:`gpuknn.ops.rerank.rerank`,
which uncertified rows and float64 input searched in float32 still use.
"""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, device_of, to_numpy
from .certify import certified
from .exact import EXACT_BLOCK_BYTES, RowStats
from .rerank import Reranked, pair_keys
from .rows import replace_rows
from .topk import merge_topk

__all__ = ["rerank_groups", "decide_groups"]


def rerank_groups(
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
    labels: Any = None,
    max_bytes: int = EXACT_BLOCK_BYTES,
) -> Reranked:
    """Exact order of each row's top k, exact keys only for near-tie groups.

    Same parameters as :func:`gpuknn.ops.rerank.rerank`, and ``labels`` (int array of one
    label per reference, optional): for callers that only read the neighbours' labels and
    their distances through certified intervals (the sweeps' votes), a group before the
    k-th place whose members all share one label keeps its tile order. The set of the top k
    stays exact, the label at every position is the exact one (a group's members share it),
    and each position's distance is within ``err`` of the exact distance of that rank (the
    ranks' order statistics move by at most the keys' errors); ``refine`` callers sort the
    exact distances of a row to get those ranks back. Returns a
    :class:`~gpuknn.ops.rerank.Reranked` whose ``keys`` are exact for the group members
    and tile-derived (within ``err``, key units) for the others; rows that are not
    certified get exact keys for every candidate in the same pass, as
    :func:`~gpuknn.ops.rerank.rerank` would give them (a threshold for the second pass;
    ``ok`` where the exact k-th key certifies them after all).
    """
    exact = pair_keys(Q, R, metric, ref_stats, q_stats, max_bytes)
    return decide_groups(
        tile_scores,
        index,
        k,
        metric,
        bound=bound,
        scale=scale,
        shift=shift,
        complete=complete,
        local=local,
        labels=labels,
        exact=exact,
    )


def decide_groups(
    tile_scores: Any,
    index: Any,
    k: int,
    metric: str,
    *,
    bound: Any,
    scale: Any = None,
    shift: Any = None,
    complete: bool,
    local: Any = None,
    labels: Any = None,
    exact: Any,
) -> Reranked:
    """:func:`rerank_groups` with the exact keys from ``exact(rows, idx)``: the keys (float64,
    shape of ``idx``) of query rows ``rows`` (int, ascending, into the rows of ``index``)
    against the references ``idx`` (numbers of ``local``). The group logic sees only tile
    scores and indices, so lists stacked from several searches -- the p-sweep's grid
    positions, each with its own columns -- are decided in one call, with an ``exact`` that
    computes each search's keys its own way.
    """
    xp = array_namespace(tile_scores, index)
    local = index if local is None else local
    m, kk = index.shape
    dev = device_of(index)
    s = xp.astype(tile_scores, xp.float64)
    sc = (
        None
        if scale is None
        else (xp.asarray(scale, dtype=xp.float64, device=dev) if not hasattr(scale, "shape") else scale)
    )
    if sc is not None and sc.ndim == 0:
        sc = xp.full((m,), float(sc), dtype=xp.float64, device=dev)
    zero_scale = None if sc is None else sc == 0
    key_t = s if shift is None else s - shift[:, None]
    if sc is not None:
        key_t = xp.where(
            zero_scale[:, None], xp.zeros_like(key_t), key_t / xp.where(zero_scale, xp.ones_like(sc), sc)[:, None]
        )
    no = xp.zeros((m, 1), dtype=xp.bool, device=dev)
    linked = (s[:, :-1] - s[:, 1:]) <= 2 * bound[:, None] if kk > 1 else xp.zeros((m, 0), dtype=xp.bool, device=dev)
    gid = xp.cumulative_sum(xp.astype(xp.concat([no, ~linked], axis=1), xp.int32), axis=1)
    gk = gid[:, k - 1]
    exact_row = bound == 0
    ok = (gid[:, kk - 1] > gk) | exact_row
    if complete:
        ok = xp.ones_like(ok)
    if zero_scale is not None:  # tile units that carry no key (zero query rows)
        ok = ok & (exact_row | ~zero_scale)
    multi = xp.concat([linked, no], axis=1) | xp.concat([no, linked], axis=1)
    err = bound if sc is None else bound / xp.where(zero_scale, xp.ones_like(sc), sc)
    if labels is None:
        # Also exact: the first k whose distance the tile gets to worse than 1 % (near duplicates).
        coarse = _coarse(key_t, err, metric, k, xp)
    else:
        # The k-th place's group is always decided (the top-k set is exact); the others
        # only where their labels differ.
        multi = multi & (_mixed_groups(labels, index, linked, gid, xp) | (gid == gk[:, None]))
        coarse = xp.zeros_like(multi)
    # Rows the tile cannot certify get an exact key for every candidate in the same pass
    # (rather than a re-rank of their own: a fixed ~300 launches whenever any row needs it).
    bad = ~ok
    flag = ((multi & (gid <= gk[:, None]) | coarse) & ok[:, None] | bad[:, None]) & ~exact_row[:, None]
    keys = xp.reshape(key_t, (-1,))
    flat_flag = xp.reshape(flag, (-1,))
    sub = xp.nonzero(xp.any(flag, axis=1))[0]
    if sub.shape[0]:
        ex = _flagged_keys(local, flag, sub, exact, xp)
        pos = xp.cumulative_sum(xp.astype(flat_flag, xp.int64)) - 1
        keys = xp.where(flat_flag, xp.take(ex, xp.clip(pos, min=0)), keys)
    keys = xp.reshape(keys, (m, kk))
    top_keys, top_idx = keys[:, :k], index[:, :k]
    if sub.shape[0]:
        # Reorder by (key descending, index ascending). Groups need no key of their own:
        # every key of a group exceeds every key of the groups after it (their tile scores
        # differ by over 2 e_q, and each key is within e_q of its tile score); the rows
        # that were not certified have every key exact.
        all_rows = sub.shape[0] == m
        kv = keys if all_rows else xp.take(keys, sub, axis=0)
        iv = index if all_rows else xp.take(index, sub, axis=0)
        kv, iv = merge_topk(kv, iv, k)
        if all_rows:
            top_keys, top_idx = kv, iv
        else:
            top_keys, top_idx = replace_rows(sub, m, [(top_keys, kv), (top_idx, iv)])
    # With every candidate exact, the k-th exact key (in tile units) may certify a row after
    # all; otherwise the second pass collects every reference whose tile score reaches it
    # minus the bound.
    kth = top_keys[:, k - 1] if sc is None else top_keys[:, k - 1] * sc
    kth = kth if shift is None else kth + shift
    ok = ok | certified(tile_scores[:, -1], bound, kth, complete=complete)
    thr = xp.where(bad, kth - bound, s[:, k - 1] - 2 * bound)
    err = xp.where(exact_row | bad, xp.zeros_like(err), err)
    return Reranked(top_keys, xp.astype(top_idx, xp.int64), ok, thr, err)


def _mixed_groups(labels: Any, index: Any, linked: Any, gid: Any, xp: Any) -> Any:
    """Candidates (m, kk) whose group holds more than one label."""
    m, kk = index.shape
    dev = device_of(index)
    lab = xp.reshape(xp.take(labels, xp.reshape(index, (-1,))), (m, kk))
    no = xp.zeros((m, 1), dtype=xp.bool, device=dev)
    # Link j joins candidates j and j + 1; a group is mixed if one of its links joins two labels.
    mixed = xp.reshape(xp.concat([linked & (lab[:, :-1] != lab[:, 1:]), no], axis=1), (-1,))
    # Groups numbered through all rows, non-decreasing in row-major order.
    g = xp.reshape(xp.astype(gid, xp.int64) + xp.arange(m, dtype=xp.int64, device=dev)[:, None] * (kk + 1), (-1,))
    start = xp.searchsorted(g, g, side="left")
    end = xp.searchsorted(g, g, side="right")
    before = xp.cumulative_sum(xp.astype(mixed, xp.int64)) - xp.astype(mixed, xp.int64)  # links before j
    count = xp.take(before, end - 1) - xp.take(before, start)  # links inside [start, end - 1)
    return xp.reshape(count > 0, (m, kk))


def _coarse(key_t: Any, err: Any, metric: str, k: int, xp: Any) -> Any:
    """Candidates among the first k whose key-derived distance may be off by over 1 %."""
    m, kk = key_t.shape
    if metric in ("euclidean", "sqeuclidean"):
        size = xp.clip(-key_t, min=0.0)  # squared distance: err is in its units
    elif metric in ("cosine", "correlation"):
        size = xp.clip(1.0 - key_t, min=0.0)
    else:
        return xp.zeros((m, kk), dtype=xp.bool, device=device_of(key_t))
    near = err[:, None] > 0.01 * size
    head = xp.arange(kk, device=device_of(key_t))[None, :] < k
    return near & head


def _flagged_keys(local, flag, sub, exact, xp):
    """Exact keys of the flagged candidates, in row-major order of ``flag``.

    ``sub``: the rows with a flag. One transfer reads how many pairs are flagged and the
    widest row; then the cheaper of two layouts computes them. Where the flags are dense
    (the block below holds at most twice the flagged pairs: large k) each row's flagged
    candidates are packed left in a (rows, widest) block and the query row is broadcast
    over them; where they are sparse (Fashion-MNIST at k = 10: the block would be ~4x the
    pairs) each flagged pair gathers its own query row. The keys are the same either way
    (a key depends on its two rows alone).
    """
    fl = xp.take(flag, sub, axis=0)
    counts = xp.sum(xp.astype(fl, xp.int64), axis=1)
    total, width = (int(v) for v in to_numpy(xp.stack([xp.sum(counts), xp.max(counts)])))
    if sub.shape[0] * width <= 2 * total:
        dev = device_of(fl)
        order = xp.argsort(xp.astype(~fl, xp.int32), axis=1, stable=True)[:, :width]
        valid = xp.arange(width, device=dev)[None, :] < counts[:, None]
        idx = xp.take_along_axis(xp.take(local, sub, axis=0), xp.where(valid, order, xp.zeros_like(order)), axis=1)
        keys = exact(sub, idx)
        return xp.take(xp.reshape(keys, (-1,)), _first(xp.reshape(valid, (-1,)), total, xp))
    kk = flag.shape[1]
    pos = _first(xp.reshape(flag, (-1,)), total, xp)
    return exact(pos // kk, xp.take(xp.reshape(local, (-1,)), pos)[:, None])[:, 0]


def _first(mask: Any, n: int, xp: Any) -> Any:
    """Positions of the ``n`` True entries of a flat ``mask`` (``n`` known), ascending: a
    stable sort instead of ``nonzero``, whose output size would cost a host sync."""
    return xp.argsort(xp.astype(~mask, xp.int8), stable=True)[:n]
