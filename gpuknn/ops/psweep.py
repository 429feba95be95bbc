"""Neighbours for every PCA size of a grid from one accumulated projection.

:func:`neighbors_for_p_sweep` keeps, per query tile, the Gram matrix of the first p
components (:mod:`gpuknn.ops.gram`) and, at each p of the grid, turns it into tile scores,
nominates ``k + margin`` candidates and settles their order with the exact pass (the
near-tie groups of :func:`gpuknn.ops.groups.rerank_groups`, and for rows the certificate
cannot settle, a second look at every score of the tile): the same lists as
``kneighbors(Z_test[:, :p], Z_train[:, :p], k)`` for every p, at the cost of one
projection-sized GEMM plus one scoring pass per p.

On a device every launch and host sync counts, so the grid is batched wherever the work is
not p's own: the prefix statistics and bounds of every p come from cumulative sums and
(rows, len(ps)) arrays, the score tiles of several p share one top-k, and the group logic of
the exact pass runs once on the stacked lists of every p, with one host transfer; only the
scoring, the canonical row statistics and the exact keys (each in p's own prefix of the
columns) stay per p.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy, validate_matrix
from .._delegation import fp32_matmul, gram_accumulate, matmul_unit_roundoff
from .._memory import is_out_of_memory, preferred_tile_bytes
from ..errors import InvalidInputError
from .distance import check_metric
from .exact import EXACT_BLOCK_BYTES, RowStats, grid_exact_keys, keys_to_distances, prefix_row_stats
from .gram import prefix_bounds, prefix_norms, prefix_references, prefix_stats, score_from_gram
from .groups import decide_groups
from .kneighbors import candidate_margin
from .limits import check_working_memory
from .rerank import KEY_MAX, Reranked, collect_top, rerank_lists, take_stats
from .rows import replace_rows
from .search import round_down
from .topk import pad_lists, topk_largest, update_topk

__all__ = ["neighbors_for_p_sweep", "check_grid", "prefix_refine"]


def check_grid(values: Sequence[int], *, name: str, upper: int) -> list[int]:
    """Sorted unique ints in [1, upper]; a clear error otherwise."""
    vals = sorted({int(v) for v in values})
    if not vals or vals[0] < 1 or vals[-1] > upper:
        raise InvalidInputError(f"{name} values must be in [1, {upper}], got {list(values)}")
    return vals


def neighbors_for_p_sweep(
    Z_train: Any,
    Z_test: Any,
    ps: Sequence[int],
    k_max: int,
    *,
    metric: str,
    working_memory: float | None = None,
    on_tile: Callable[[int, int], None] | None = None,
    return_keys: bool = False,
    references: Sequence[Any] | None = None,
    labels: Any = None,
) -> dict[int, tuple[Any, ...]]:
    """Neighbours in the space of the first p components, for every p in ``ps``.

    Parameters
    ----------
    Z_train : array (n_train, p_max), Z_test : array (n_test, p_max)
        Rows projected onto the leading components (columns sorted by variance).
    ps : sequence of int
        PCA sizes, each in [1, p_max].
    k_max : int
    metric : str
        As for :func:`gpuknn.kneighbors`, applied to the first p columns.
    working_memory : float, optional
        MiB for the Gram and score tiles together (as for :func:`gpuknn.kneighbors`;
        default :func:`gpuknn._memory.default_working_memory`).
    on_tile : callable(done_rows, total_rows), optional
        Progress callback after each query tile.
    return_keys : bool
        Return ``(keys, indices, err)`` instead: the float64 keys (:mod:`gpuknn.ops.exact`)
        and, per test row, a bound on their error (0 where every key is exact), which exact
        decisions on the distances need (:func:`gpuknn.votes_for_many_k`).
    references : sequence of PrefixReference, optional
        ``prefix_references(Z_train, Z_test, ps, ...)`` (:mod:`gpuknn.ops.gram`) for the
        sorted grid, when the caller has them already.
    labels : int array (n_train,), optional
        As for :func:`gpuknn.ops.kneighbors.search`: the caller reads only labels and certified
        distances, so neighbours of one label may keep their tile order among themselves.

    Returns
    -------
    dict p -> (distances (n_test, k_max), indices (n_test, k_max))
        The neighbour lists of ``kneighbors(Z_test[:, :p], Z_train[:, :p], k_max)``: the
        same tile-nominates, exact-pass-decides contract (:mod:`gpuknn.ops.kneighbors`), with
        tile scores from the accumulated Gram matrix.

    Notes
    -----
    Cost: one GEMM of depth p_max per query tile in total (blocks between consecutive p),
    plus one scoring pass and the exact keys of the near-ties per p; the top-k selections
    and the group logic of several p are batched. Memory: a (rows, n_train) Gram tile plus
    as many score tiles of that size as ``working_memory`` holds (one on the host, whose
    tiles are cache-sized).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 5.0]])
    >>> out = neighbors_for_p_sweep(Z, np.array([[1.0, 4.0]]), [1, 2], 1, metric="euclidean")
    >>> out[1][1].tolist(), out[2][1].tolist()
    ([[1]], [[2]])
    """
    check_metric(metric)
    Z_train, Z_test, xp = _pair(Z_train, Z_test)
    n_tr, p_max = Z_train.shape
    ps = check_grid(ps, name="p", upper=p_max)
    if not 1 <= k_max <= n_tr:
        raise InvalidInputError(f"k_max must be in [1, {n_tr}], got {k_max}")
    budget = check_working_memory(working_memory, xp, device_of(Z_train))  # bytes
    # Full-FP32 GEMMs whatever the user's TF32 setting, the bounds read inside (as a search).
    with fp32_matmul(xp, device_of(Z_train)):
        return _p_sweep(Z_train, Z_test, ps, k_max, metric, budget, on_tile, return_keys, references, labels, xp)


def _p_sweep(Z_train, Z_test, ps, k_max, metric, budget, on_tile, return_keys, references, labels, xp):
    """:func:`neighbors_for_p_sweep` of checked arguments (``budget`` in bytes)."""
    n_tr = Z_train.shape[0]
    itemsize = 8 if Z_train.dtype == xp.float64 else 4
    rows = max(1, min(Z_test.shape[0], budget // (n_tr * (2 * itemsize + 2))))
    # Reference blocks: a cache-sized Gram/score tile on the host, whole rows on a GPU.
    cap = preferred_tile_bytes(xp)
    cols = n_tr if cap is None else max(1, min(n_tr, cap // (rows * itemsize)))
    # Score tiles of this many sizes go through one top-k together: the budget left beside
    # the Gram tile, in tiles and their selection masks (one on the host: its cache cap).
    tile_budget = budget if cap is None else min(budget, cap)
    stack = max(1, min(len(ps), (tile_budget // (rows * cols) - itemsize) // (itemsize + 2)))
    kk = min(n_tr, k_max + candidate_margin(k_max))
    u, eta = matmul_unit_roundoff(Z_train.dtype, xp, device_of(Z_train))
    r_sum, r_n2 = prefix_stats(Z_train, ps)
    q_sum, _ = prefix_stats(Z_test, ps)
    refs = list(references) if references is not None else prefix_references(Z_train, Z_test, ps, metric, budget=budget)
    sweep = _Sweep(Z_train, ps, metric, refs, r_sum, r_n2, cols, stack, None if cap is not None else budget)
    parts: dict[int, list[tuple[Any, Any, Any]]] = {p: [] for p in ps}
    n_te = Z_test.shape[0]
    # A small first tile finds the sizes float32 cannot order (see _WIDEN) at little cost;
    # the other tiles then go through the reference blocks together.
    first = rows if n_te <= rows else min(_PROBE_ROWS, rows)
    edges = [0] + list(range(first, n_te, rows)) + [n_te]
    spans = list(zip(edges[:-1], edges[1:]))
    for group in ([spans[0]], spans[1:]):
        if not group:
            continue
        tiles = []
        for a, b in group:
            tiles.append((Z_test[a:b, :], [q[a:b] for q in q_sum], _bounds(sweep, Z_test, a, b, u, eta)))
        done0 = group[0][0]
        progress = (
            None
            if on_tile is None
            else (lambda frac, d0=done0, d1=group[-1][1]: on_tile(d0 + round((d1 - d0) * frac), n_te))
        )
        cands = _nominate(sweep, tiles, kk, progress)
        for (a, b), (Zq, qs, bounds), cand in zip(group, tiles, cands):
            first = _first_passes(sweep, cand, Zq, k_max, bounds, labels)
            # The rows the certificate left open at every size: one transfer for the grid.
            ok = to_numpy(xp.stack([res.ok for res in first]))
            for j, p in enumerate(ps):
                res = first[j]
                if ok[j].all():
                    keys, best, err, failed = res.keys, res.index, res.err, 0
                else:
                    bad = from_numpy(np.nonzero(~ok[j])[0], xp, device=device_of(Zq))
                    keys, best, err, kth = _second_pass(sweep, j, res, bad, Zq, qs[j], k_max, bounds[j])
                    # Only a later query tile can use the count (and its sync).
                    failed = _unsettled(kth, metric, xp) if b < n_te else 0
                parts[p].append(
                    (keys if return_keys else xp.astype(keys_to_distances(keys, metric), Z_train.dtype), best, err)
                )
                if failed > _WIDEN * (b - a):
                    # float32 cannot order this size's neighbours (their keys are closer than
                    # its rounding, as at p = 3 under correlation): later tiles score it in float64.
                    sweep.wide.add(j)
    n_out = 3 if return_keys else 2
    # One query tile: its lists as they are (a concatenation of one part is a copy).
    return {
        p: v[0][:n_out] if len(v) == 1 else tuple(xp.concat([part[j] for part in v], axis=0) for j in range(n_out))
        for p, v in parts.items()
    }


def _nominate(sweep: _Sweep, tiles: list, kk: int, progress: Any) -> list:
    """:meth:`_Sweep.nominate`, retried with half the stacked sizes, then reference blocks
    of half the width, when the device runs out of memory (the tiles scale with both; the
    lists do not)."""
    while True:
        try:
            return sweep.nominate(tiles, kk, progress=progress)
        except Exception as exc:  # noqa: BLE001 - only allocation failures are retried
            if not is_out_of_memory(exc) or sweep.cols == sweep.stack == 1:
                raise
            if sweep.stack > 1:
                sweep.stack //= 2
            else:
                sweep.cols = max(1, sweep.cols // 2)


class _Sweep:
    """The tile scores of one query tile against reference blocks, for every p of the grid."""

    def __init__(self, Z_train, ps, metric, refs, r_sum, r_n2, cols, stack, device_budget):
        self.Z, self.ps, self.metric, self.refs = Z_train, ps, metric, refs
        self.r_sum, self.r_n2, self.cols = r_sum, r_n2, cols
        self.stack = stack  # sizes whose score tiles share one top-k
        # Bytes a device's blocks may take (None on the host, which keeps cache-sized ones).
        self.device_budget = device_budget
        # Row blocks of the exact keys: the host's cache-friendly size, or the budget.
        self.key_bytes = EXACT_BLOCK_BYTES if device_budget is None else device_budget
        self.xp = array_namespace(Z_train)
        self.wide: set[int] = set()  # grid positions scored in float64

    def scores(self, G, j, q_sum, bounds, c0, c1, out=None, Zq=None, out64=None):
        """Tile scores at ps[j] of references c0..c1-1 from their Gram block G; for a
        position in :attr:`wide`, float64 scores from ``Zq`` (G unused; ``out64`` a float64
        buffer like ``out``)."""
        xp, ref, p = self.xp, self.refs[j], self.ps[j]
        if j in self.wide:
            f64 = xp.float64
            Zr = xp.astype(self.Z[c0:c1, :p], f64)
            q = xp.astype(Zq[:, :p], f64)
            lift = None if bounds[3] is None else (bounds[3], xp.astype(ref.kappa_rows[c0:c1], f64))
            w = None if ref.stats.inv_norm is None else ref.stats.inv_norm[c0:c1]
            return score_from_gram(
                q @ Zr.T,
                p,
                self.metric,
                xp.sum(q, axis=1),
                xp.sum(Zr, axis=1),
                xp.sum(Zr * Zr, axis=1),
                w,
                lift=lift,
                out=out64,
            )
        lift = None if bounds[3] is None else (xp.astype(bounds[3], G.dtype), ref.kappa_rows[c0:c1])
        w = None if ref.weight is None else ref.weight[c0:c1]
        return score_from_gram(
            G, p, self.metric, q_sum, self.r_sum[j][c0:c1], self.r_n2[j][c0:c1], w, out=out, lift=lift
        )

    def nominate(self, tiles, kk, *, progress=None):
        """Each p's ``kk`` best tile scores per query row (descending) and their indices,
        for every query tile ``(Zq, q_sums, bounds)`` of ``tiles``.

        Reference blocks are the outer loop, so each block's column slices are copied once
        (contiguous, as BLAS wants them) for all query tiles. Per (query tile, block) the
        Gram matrix grows over the p grid (one GEMM of depth p_max in all); the score tiles
        of :attr:`stack` sizes at a time are stacked row-wise and select their candidates in
        one top-k (or one :func:`~gpuknn.ops.topk.update_topk` of the stacked running
        lists): a few launches and syncs per stack, not per p. The last stacked size's
        candidates give the next stack's first block a threshold (neighbours change slowly
        with p). ``progress(fraction)`` after each block.
        """
        xp, n_tr = self.xp, self.Z.shape[0]
        best = [[None] * len(self.ps) for _ in tiles]
        dev = device_of(self.Z)
        m_max = max(t[0].shape[0] for t in tiles)
        width = min(self.cols, n_tr)
        # Stacked score buffers (a tile's scores are a contiguous prefix of its slot).
        buf = xp.empty(self.stack * m_max * width, dtype=self.Z.dtype, device=dev)
        buf64 = xp.empty(m_max * width, dtype=xp.float64, device=dev) if self.wide else None
        # One Gram buffer for every (query tile, block): a tile's G is a contiguous prefix.
        gbuf = xp.empty(m_max * width, dtype=self.Z.dtype, device=dev)
        n_blocks = -(-n_tr // self.cols)
        for nb_i, c0 in enumerate(range(0, n_tr, self.cols)):
            c1 = min(c0 + self.cols, n_tr)
            w = c1 - c0
            bounds_p = [0] + list(self.ps)
            chunks = [xp.asarray(self.Z[c0:c1, bounds_p[j] : bounds_p[j + 1]], copy=True) for j in range(len(self.ps))]
            for t, (Zq, q_sums, bounds) in enumerate(tiles):
                m = Zq.shape[0]
                G = xp.reshape(gbuf[: m * w], (m, w))
                out64 = None if buf64 is None else xp.reshape(buf64[: m * w], (m, w))
                prev, seed, pending, run = 0, None, [], 1
                for j, p in enumerate(self.ps):
                    G = gram_accumulate(G, Zq[:, prev:p], chunks[j], first=j == 0)
                    prev = p
                    if j in self.wide:  # float64 scores: a top-k of their own
                        S = self.scores(G, j, q_sums[j], bounds[j], c0, c1, Zq=Zq, out64=out64)
                        seed = self._select(best[t], [j], S, c0, kk, seed, m)
                        continue
                    slot = xp.reshape(buf[len(pending) * m * w : (len(pending) + 1) * m * w], (m, w))
                    S = self.scores(G, j, q_sums[j], bounds[j], c0, c1, out=slot, Zq=Zq)
                    # ``inner`` scores are G itself, which the next size's GEMM overwrites.
                    pending.append((j, xp.asarray(S, copy=True) if S is G else S, slot))
                    # On a first block each stack's threshold comes from the last size of the
                    # one before (the first goes alone): stacks of 1, 1, 2, 4, ... sizes keep
                    # that seed near the sizes it bounds; later blocks stack all they can.
                    limit = self.stack if best[t][j] is not None else min(self.stack, max(1, run))
                    if len(pending) == limit or j == len(self.ps) - 1:
                        run = 2 * len(pending) if seed is not None else 1
                        js, tiles_j, slots = zip(*pending)
                        # In place where the backend writes into its slot; a copy otherwise.
                        in_place = all(S is slot for S, slot in zip(tiles_j, slots))
                        stacked = (
                            xp.reshape(buf[: len(js) * m * w], (len(js) * m, w))
                            if in_place
                            else xp.concat(tiles_j, axis=0)
                        )
                        seed = self._select(best[t], list(js), stacked, c0, kk, seed, m)
                        pending = []
            if progress is not None:
                progress((nb_i + 1) / n_blocks)
        return best

    def _select(self, best, js, stacked, c0, kk, seed, m):
        """Merge the stacked score tiles of sizes ``js`` (rows: one (m, w) tile per size)
        into their running lists ``best[j]``; returns the last size's new candidate
        columns (the next stack's threshold seed) on a first block, else None."""
        xp = self.xp
        w = stacked.shape[1]
        if best[js[0]] is None:
            # Any kk columns of a tile bound its kk-th best score from below: the seed's.
            th = None
            if seed is not None:
                g = len(js)
                at = xp.broadcast_to(seed[None, :, :], (g, m, seed.shape[1]))
                th = xp.reshape(xp.min(xp.take_along_axis(xp.reshape(stacked, (g, m, w)), at, axis=2), axis=2), (-1,))
            vals, cols = topk_largest(stacked, min(kk, w), threshold=th)
            for s, j in enumerate(js):
                best[j] = pad_lists(vals[s * m : (s + 1) * m, :], cols[s * m : (s + 1) * m, :], kk)
            return cols[(len(js) - 1) * m :, :]
        vals = xp.concat([best[j][0] for j in js], axis=0)
        idx = xp.concat([best[j][1] for j in js], axis=0)
        vals, idx = update_topk(vals, idx, stacked, c0)
        for s, j in enumerate(js):
            best[j] = (vals[s * m : (s + 1) * m, :], idx[s * m : (s + 1) * m, :])
        return None

    def collect(self, j, Zq, q_sum, bounds, threshold):
        """``make_batches`` for :func:`~gpuknn.ops.rerank.collect_top`: every reference
        whose tile score at ps[j] reaches each row's threshold, block by block (the scores
        of :meth:`nominate`, from a depth-p GEMM: within the same bound)."""
        xp, p = self.xp, self.ps[j]
        dtype = xp.float64 if j in self.wide else self.Z.dtype
        t = round_down(threshold, dtype)
        Zq = Zq[:, :p]

        def batches(progress):
            n_tr = self.Z.shape[0]
            # Narrow blocks on the host: rows tied at the top (settled by their first hits)
            # stop early. A device takes as wide a block as the budget holds for these rows
            # (a launch and a sync per block).
            width = min(self.cols, _SECOND_PASS_COLS)
            if self.device_budget is not None:
                width = max(width, min(n_tr, self.device_budget // (Zq.shape[0] * _COLLECT_ENTRY_BYTES)))
            for c0 in range(0, n_tr, width):
                c1 = min(c0 + width, n_tr)
                G = None if j in self.wide else Zq @ self.Z[c0:c1, :p].T
                S = self.scores(G, j, q_sum, bounds, c0, c1, Zq=Zq)
                hit = (S >= t[:, None]) & ~progress.done[:, None]
                flat = xp.nonzero(xp.reshape(hit, (-1,)))[0]
                if flat.shape[0]:
                    yield flat // (c1 - c0), flat % (c1 - c0) + c0

        return batches


# Correlation at small p: rows whose |r| / |r - mean(r)| exceeds this anywhere get
# per-reference bounds (an optimistic tile) instead of one bound for all.
_KAPPA_SPREAD = 2.0
# A grid position whose float32 tile leaves more than this fraction of a query tile's rows
# uncertified is scored in float64 from the next query tile on.
_WIDEN = 0.25
# Reference block width of the second pass (on the host; a device's is budget-sized).
_SECOND_PASS_COLS = 1024
# Bytes per (row, reference) of a second-pass block: float64 scores, the hit mask and up to
# three int64 positions per hit.
_COLLECT_ENTRY_BYTES = 33
# Query rows of the first tile.
_PROBE_ROWS = 64


def _bounds(sweep, Z_test, a, b, u, eta):
    """Per grid position, the statistics and tile bounds of query rows a..b-1:
    ``(q_stats, bound, scale, lift, shift)`` (:func:`gpuknn.ops.gram.prefix_bounds`, every
    p at once; positions in ``sweep.wide`` with float64's rounding)."""
    xp, ps, refs = sweep.xp, sweep.ps, sweep.refs
    wide = [j in sweep.wide for j in range(len(ps))]
    per_row = [ref.kappa > _KAPPA_SPREAD for ref in refs]
    inv = refs[0].query_stats.inv_norm
    q_inv = None if inv is None else xp.stack([ref.query_stats.inv_norm[a:b] for ref in refs], axis=1)
    u64, eta64 = matmul_unit_roundoff(xp.float64, xp)
    bound, scale, shift, lift = prefix_bounds(
        sweep.metric,
        ps,
        q_inv,
        prefix_norms(Z_test[a:b, :], ps),
        [ref.kappa for ref in refs],
        u=[u64 if w else u for w in wide],
        eta=[eta64 if w else eta for w in wide],
        per_row=per_row,
    )

    def column(v, j):
        return v[:, j] if hasattr(v, "shape") else v

    return [
        (
            RowStats(*(None if v is None else v[a:b] for v in ref.query_stats)),
            bound[:, j],
            column(scale, j),
            lift[:, j] if lift is not None and per_row[j] else None,
            column(shift, j),
        )
        for j, ref in enumerate(refs)
    ]


def _first_passes(sweep, cand, Zq, k, bounds, labels=None):
    """Exact order of the top k at every grid position from the tile candidates
    (:class:`~gpuknn.ops.rerank.Reranked` per position; rows not ``ok`` need
    :func:`_second_pass`).

    Optimistic (lifted) scores only bound the keys from above, and float64 input wants
    exact distances: every candidate exact there (:func:`~gpuknn.ops.rerank.rerank_lists`);
    the near-tie groups of every other position (:func:`~gpuknn.ops.groups.decide_groups`).
    Either way the positions' lists are stacked and decided in one call."""
    xp, ps = sweep.xp, sweep.ps
    grouped = [j for j in range(len(ps)) if bounds[j][3] is None and Zq.dtype != xp.float64]
    every = [j for j in range(len(ps)) if j not in grouped]
    out = {}
    groups = partial(decide_groups, metric=sweep.metric, labels=labels)
    # As many positions at once as the exact pass's share of the budget holds (the group
    # logic keeps about sixteen (rows, kk) float64 arrays): the whole grid on a device, a
    # position at a time on the host, whose blocks are cache-sized.
    m, kk = cand[0][1].shape
    at_once = max(1, sweep.key_bytes // max(1, 16 * 8 * m * kk))
    for js_all, decide in ((grouped, groups), (every, rerank_lists)):
        for g0 in range(0, len(js_all), at_once):
            js = js_all[g0 : g0 + at_once]
            out.update(zip(js, _stacked_pass(sweep, js, cand, Zq, k, bounds, decide)))
    return [out[j] for j in range(len(ps))]


def _stacked_pass(sweep, js, cand, Zq, k, bounds, decide):
    """``decide`` (:func:`~gpuknn.ops.groups.decide_groups` or
    :func:`~gpuknn.ops.rerank.rerank_lists`) of the grid positions ``js`` at once.

    Their candidate lists are stacked row-wise (one set of m rows per position) and decided
    together: row by row the decisions of one call per position, in a fixed number of
    launches for the whole grid. Only the exact keys are computed per position
    (:func:`_stacked_keys`), each in its own prefix of the columns.
    """
    xp, Z = sweep.xp, sweep.Z
    m = Zq.shape[0]
    dev = device_of(cand[js[0]][1])
    tile_scores = xp.concat([cand[j][0] for j in js], axis=0)
    index = xp.concat([cand[j][1] for j in js], axis=0)
    M = index.shape[0]
    scale, shift = bounds[js[0]][2], bounds[js[0]][4]
    if scale is not None and hasattr(scale, "shape"):
        scale = xp.concat([bounds[j][2] for j in js])
    elif scale is not None:
        scale = xp.full((M,), float(scale), dtype=xp.float64, device=dev)

    def exact(rows: Any, idx: Any) -> Any:
        return _stacked_keys(sweep, js, m, Zq, rows, idx, bounds)

    res = decide(
        tile_scores,
        index,
        k,
        bound=xp.concat([bounds[j][1] for j in js]),
        scale=scale,
        shift=None if shift is None else xp.concat([bounds[j][4] for j in js]),
        complete=index.shape[1] >= Z.shape[0],
        exact=exact,
    )
    return [Reranked(*(v[t * m : (t + 1) * m, ...] for v in res)) for t in range(len(js))]


def _stacked_keys(sweep, js, m, Zq, rows, idx, bounds):
    """Exact keys of stacked query rows ``rows`` (rows ``t*m .. (t+1)*m - 1`` are grid
    position ``js[t]``'s; None: every stacked row, in order) against references ``idx``:
    each position's rows in its own prefix of the columns, the whole grid in one
    :func:`~gpuknn.ops.exact.grid_exact_keys` call."""
    xp = sweep.xp
    if rows is None:
        rows = xp.arange(len(js) * m, dtype=idx.dtype, device=device_of(idx))
    return grid_exact_keys(
        Zq,
        sweep.Z,
        idx,
        sweep.metric,
        rows % m,
        rows // m,
        [sweep.ps[j] for j in js],
        [sweep.refs[j].stats for j in js],
        [bounds[j][0] for j in js],
        max_bytes=sweep.key_bytes,
    )


def _second_pass(sweep, j, res, bad, Zq, q_sum, k, bounds):
    """Keys, indices and errors at ps[j], and the k-th exact keys of the rows ``bad`` (int
    array) that the certificate could not settle: they take every reference whose score
    reaches their threshold (:meth:`_Sweep.collect`)."""
    xp = sweep.xp
    p, metric, ref = sweep.ps[j], sweep.metric, sweep.refs[j]
    Zp, Zr = Zq[:, :p], sweep.Z[:, :p]
    q_stats = bounds[0]
    kth, qb_stats = xp.take(res.keys[:, k - 1], bad), take_stats(q_stats, bad)
    batches = sweep.collect(
        j, xp.take(Zq, bad, axis=0), xp.take(q_sum, bad), _rows_of(bounds, bad, xp), xp.take(res.threshold, bad)
    )
    kb, ib = collect_top(batches, xp.take(Zp, bad, axis=0), Zr, metric, ref.stats, qb_stats, k, kth=kth)
    keys, index, err = replace_rows(
        bad, res.ok.shape[0], [(res.keys, kb), (res.index, xp.astype(ib, xp.int64)), (res.err, xp.zeros_like(kth))]
    )
    return keys, index, err, kth


def _unsettled(kth, metric, xp):
    """Rows that failed for want of precision: not those whose k-th key is the metric's
    largest (ties at the top, which no precision separates)."""
    top = KEY_MAX.get(metric)
    return int(kth.shape[0]) if top is None else int(xp.sum(xp.astype(kth < top, xp.int64)))


def _rows_of(bounds, rows, xp):
    """The per-row parts of :func:`_bounds`'s result for the given rows only."""

    def sub(v):
        return v if v is None or not hasattr(v, "shape") or v.ndim == 0 else xp.take(v, rows)

    q_stats, bound, scale, lift, shift = bounds
    return take_stats(q_stats, rows), sub(bound), sub(scale), sub(lift), sub(shift)


def prefix_refine(
    Z_test: Any,
    Z_train: Any,
    ps: Sequence[int],
    index: Any,
    metric: str,
    stats: Sequence[Any],
    query_stats: Sequence[Any] | None = None,
    *,
    max_bytes: int = EXACT_BLOCK_BYTES,
):
    """``refine(rows)`` of :func:`gpuknn.votes_for_many_k` for a p-sweep's lists stacked
    over the sizes ``ps`` (``index``: ``len(ps)`` sets of ``len(Z_test)`` rows, in the
    order of ``ps``): the exact float64 distances of the given stacked rows' neighbours in
    ``Z[:, :p]`` of their set's p, ascending (``stats``: the
    :class:`~gpuknn.ops.exact.RowStats` of ``Z_train[:, :p]`` for each p; ``query_stats``,
    optional, those of ``Z_test[:, :p]``, computed here when not given; ``max_bytes``: the
    exact pass's block, :func:`~gpuknn.ops.exact.grid_exact_keys`).

    Every size's rows in one :func:`~gpuknn.ops.exact.grid_exact_keys` call."""
    n = Z_test.shape[0]
    ps, stats = list(ps), list(stats)
    q_stats = [] if query_stats is None else [list(query_stats)]  # computed at the first call

    def refine(rows: Any) -> Any:
        xp = array_namespace(index)
        if not q_stats:
            q_stats.append(prefix_row_stats(Z_test, ps, metric))
        idx = xp.take(index, rows, axis=0)
        keys = grid_exact_keys(
            Z_test, Z_train, idx, metric, rows % n, rows // n, ps, stats, q_stats[0], max_bytes=max_bytes
        )
        return keys_to_distances(xp.sort(keys, axis=1, descending=True), metric)  # rank by rank

    return refine


def _pair(A: Any, B: Any) -> tuple[Any, Any, Any]:
    xp = array_namespace(A, B)
    A = validate_matrix(A, xp, name="Z_train")
    B = validate_matrix(B, xp, name="Z_test", dtype=A.dtype)
    if A.shape[1] != B.shape[1]:
        raise InvalidInputError(f"Z_train has {A.shape[1]} columns but Z_test has {B.shape[1]}")
    return A, B, xp
