"""The tile pass of a neighbour search: GEMM tiles that nominate candidates.

A search prepares query rows in chunks and reference rows block by block
(:class:`Reference`); each (query tile, reference block) pair is one GEMM of prepared rows
in the *tile dtype* (float32 for float32 input, and for large float64 input whose values
allow it; float64 otherwise). Rows are prepared in float64 and rounded once to the tile
dtype, which is what the bounds of :mod:`gpuknn.ops.certify` assume; euclidean rows are
centred on the reference mean first, so a large common offset costs no digits.

* :func:`nominate`: each query's ``kk`` best tile scores (faiss's blocked scheme: the first
  block seeds running lists, later tiles only let through scores above a row's current
  ``kk``-th, :func:`~gpuknn.ops.topk.update_topk`).
* :func:`collect`: every (query, reference) pair whose tile score reaches a per-query
  threshold -- the second pass for rows the certificate could not settle.

Prepared query chunk, prepared reference block (with its float64 preparation) and score
tile (selection scratch included) stay under a budget in bytes (:func:`plan_tiles`; the
public ``working_memory``, in MiB, becomes bytes in :func:`gpuknn.ops.limits.check_working_memory`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

from .._backend import array_namespace, device_of, to_numpy
from .._delegation import sqdist64
from .exact import RowStats, concat_stats, row_kappa, row_stats
from .topk import pad_lists, topk_largest, update_topk

__all__ = [
    "TilePlan",
    "plan_tiles",
    "Reference",
    "reference_centre",
    "prepare_rows",
    "prepare_queries",
    "nominate",
    "collect",
    "score_tile",
]

# Query rows a tile keeps when references must be split: enough rows to make the GEMM
# efficient (faiss uses 4096 x 1024 tiles on the CPU).
_MIN_TILE_ROWS = 1024
# Fewest rows prepared at once, whatever the budget (float64 temporaries of about
# 8 * 1024 * d bytes each); a larger budget prepares more at once (:func:`prep_rows`).
_PREP_ROWS = 1024
# Float64 temporaries alive at once while a row block is prepared (the float64 copy, its
# products, the summation tree's first level, the prepared rows), in units of 8 * d bytes.
_PREP_TEMPS = 4
# Rows whose mean is the euclidean centre (an evenly spread sample).
_CENTRE_SAMPLE = 4096
_EUCLID = ("euclidean", "sqeuclidean")


def _scratch_per_element(itemsize: int) -> int:
    """Worst-case selection scratch per score element, on top of the score itself.

    The compare mask (1 byte), candidate positions (at most one 8-byte index per 8
    elements: 1 byte) and the larger of a partitioned copy of the tile (the exact k-th
    value, ``itemsize``) and the massive-ties path (int32 running count + mask, 5 bytes).
    """
    return 2 + max(itemsize, 5)


class TilePlan(NamedTuple):
    """How a search walks the work: query chunk, tile rows, reference block."""

    query_chunk: int  # queries prepared at once
    rows: int  # query rows per score tile
    cols: int  # references per block (prepared at once)


def plan_tiles(
    n_queries: int,
    n_ref: int,
    row_width: int,
    itemsize: int,
    budget: int,
    *,
    tile_bytes: int | None = None,
    score_itemsize: int | None = None,
) -> TilePlan:
    """Tile plan whose buffers fit in ``budget`` **bytes**.

    ``chunk·row_width·itemsize`` (prepared queries) + ``cols·row_width·itemsize`` (prepared
    reference block) + ``rows·cols·(itemsize + scratch)`` (score tile and selection scratch)
    stays within ``budget`` whenever one row of each fits. ``tile_bytes`` caps the
    score tile itself, ``rows·cols·itemsize``, further (the host prefers cache-sized tiles,
    see :func:`gpuknn._memory.preferred_tile_bytes`). ``score_itemsize`` is the score
    tile's element size when it differs from the rows' (float64 rows screened in float32).

    Examples
    --------
    >>> plan_tiles(10_000, 60_000, 784, 4, 256 << 20, tile_bytes=18 << 20)
    TilePlan(query_chunk=10000, rows=1024, cols=4608)
    """
    row_bytes = max(1, row_width * itemsize)
    itemsize = itemsize if score_itemsize is None else score_itemsize
    per = itemsize + _scratch_per_element(itemsize)
    budget = max(int(budget), 1)
    tile_budget = budget // 2
    cap = tile_budget if tile_bytes is None else int(tile_bytes)
    quarter = budget // 4
    min_rows = min(n_queries, _MIN_TILE_ROWS)
    cols = max(1, min(n_ref, quarter // row_bytes, tile_budget // (min_rows * per), cap // (min_rows * itemsize)))
    rows = max(1, min(n_queries, tile_budget // (cols * per), cap // (cols * itemsize), quarter // row_bytes))
    rest = budget - cols * row_bytes - rows * cols * per
    chunk = min(n_queries, max(rows, rest // row_bytes))
    if chunk < n_queries:
        chunk = max(rows, chunk // rows * rows)  # whole tiles per chunk
    return TilePlan(chunk, rows, cols)


def prep_rows(n: int, d: int, budget: int | None) -> int:
    """Rows prepared at once under ``budget`` bytes of float64 temporaries (None: the
    fewest, ``1024``): a GPU-sized budget prepares a whole reference in one block -- a fixed
    number of kernel launches and one host sync, where 1 024-row blocks cost ~75 launches
    and a sync each."""
    if budget is None:
        return min(n, _PREP_ROWS) or 1
    return max(1, min(n, max(_PREP_ROWS, int(budget) // max(1, _PREP_TEMPS * 8 * (d + 1)))))


def prepare_rows(X: Any, metric: str, role: str, stats: RowStats, centre: Any, dtype: Any):
    """Tile rows of X in ``dtype`` and the norms the bounds need.

    Rows are computed in the more precise of X's dtype and ``dtype`` (float32 input with
    float32 tiles: float32 arithmetic from the float64 statistics rounded once; otherwise
    float64, then rounded once); each element is within ``4u`` of its exact value (u of
    ``dtype``), except that a float32 row centred on its mean rounded to float32 is shifted
    by up to ``u |mean|`` (:func:`gpuknn.ops.certify.tile_error_bound` counts it). Returns
    ``(rows, norm)``: rows (n, d), or (n, d + 1) for the euclidean family
    (``[x - c, 1]`` for queries, ``[x - c, -|x - c|^2 / 2]`` for references); ``norm``
    float64 (n,) -- cosine/correlation: 1, or 0 for a zero row; euclidean: ``|x - c|``;
    inner: ``|x|``.
    """
    xp = array_namespace(X)
    if dtype == xp.float64 and X.dtype != xp.float64:
        X = xp.astype(X, xp.float64)
    work = X.dtype
    if metric in _EUCLID:
        xc = X - xp.astype(centre, work)[None, :]
        norm = xp.sqrt(sqdist64(X, centre[None, :]))
        if role == "query":
            extra = xp.ones((X.shape[0], 1), dtype=work, device=device_of(X))
        else:
            extra = -0.5 * xp.sum(xc * xc, axis=1)[:, None]
        rows = xp.concat([xc, extra], axis=1)
    elif metric == "correlation":
        rows = (X - xp.astype(stats.mean, work)[:, None]) * xp.astype(stats.inv_norm, work)[:, None]
        norm = xp.astype(stats.inv_norm > 0, xp.float64)
    elif metric == "cosine":
        rows = X * xp.astype(stats.inv_norm, work)[:, None]
        norm = xp.astype(stats.inv_norm > 0, xp.float64)
    else:
        rows, norm = X, stats.norm
    return (rows if rows.dtype == dtype else xp.astype(rows, dtype)), norm


def reference_centre(R: Any) -> Any:
    """The euclidean family's translation of rows R (n, d): the mean of an evenly spread
    sample of at most ``4096`` rows, computed in float64 and rounded to R's dtype."""
    xp = array_namespace(R)
    step = max(1, -(-int(R.shape[0]) // _CENTRE_SAMPLE))
    return xp.astype(xp.mean(xp.astype(R[::step, :], xp.float64), axis=0), R.dtype)


def _stats_of(stats: RowStats, c0: int, c1: int) -> RowStats:
    return RowStats(*(None if v is None else v[c0:c1] for v in stats))


class Reference:
    """Reference rows with everything a search needs of them.

    Parameters
    ----------
    R : array of shape (n_ref, d), validated
    metric : str
    keep_rows : bool
        Keep the prepared tile rows (in R's dtype) for repeated searches; otherwise they
        are prepared block by block at each search (no copy of R), and the row statistics
        are gathered on the way, during the first sweep over the blocks.
    prep_bytes : int, optional
        Bytes of float64 temporaries a block of rows may take while it is prepared
        (:func:`prep_rows`; a search sets it from its ``working_memory``); default 1 024
        rows at a time.
    centre : array (d,) in R's dtype, optional
        The euclidean family's translation (below), when the caller fixes it: the folds of a
        cross-validation share their whole data's (:mod:`gpuknn.ops.folds`), so one tile
        serves two folds. Default :func:`reference_centre` of R.
    summary : (RowStats, float, float), optional
        ``(stats, ref_max, key_scale)`` of R's rows (below), when the caller has them
        (:func:`gpuknn.ops.folds.fold_lists` computes every fold's at once): the search then
        prepares no block just to learn them.

    Attributes
    ----------
    stats : RowStats
        Canonical float64 row statistics (:func:`gpuknn.ops.exact.row_stats`).
    centre : array (d,) in R's dtype, or None
        The euclidean family's translation: the mean of an evenly spread sample of at most
        ``4096`` rows, rounded to R's dtype. Any fixed vector leaves the distances
        unchanged; one inside the data keeps the tile's numbers small (and the certified
        bounds tight) whatever the data's offset.
    ref_max : float
        Largest prepared-row norm (:func:`gpuknn.ops.certify.tile_error_bound`).
    key_scale : float
        Largest ``|r| / |r - mean(r)|`` (correlation), else 1.

    Complexity: one pass over R in row blocks (with ``keep_rows``, or when a statistic is
    asked for before a search swept the blocks).
    """

    def __init__(
        self,
        R: Any,
        metric: str,
        *,
        keep_rows: bool,
        prep_bytes: int | None = None,
        centre: Any = None,
        summary: tuple | None = None,
    ):
        xp = array_namespace(R)
        self.data, self.metric, self.xp = R, metric, xp
        n, d = R.shape
        self.shape, self.dtype = (int(n), int(d)), R.dtype
        self.prep_rows = prep_rows(self.shape[0], self.shape[1], prep_bytes)
        self.centre = None
        if metric in _EUCLID:
            self.centre = reference_centre(R) if centre is None else centre
        self._parts: dict[int, tuple[int, RowStats, float, float]] = {}
        self._done: tuple[RowStats, float, float] | None = summary
        self.rows = None
        if keep_rows:
            step = self.prep_rows
            rows = [self._prepare_block(b0, min(b0 + step, n), R.dtype) for b0 in range(0, n, step)]
            self.rows = rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)

    @property
    def width(self) -> int:
        """Length of the tile rows."""
        return self.shape[1] + (1 if self.metric in _EUCLID else 0)

    def _prepare_block(self, b0: int, b1: int, dtype: Any) -> Any:
        """Tile rows of references b0 .. b1 - 1; their statistics are recorded once."""
        xp, block = self.xp, self.data[b0:b1, :]
        known = self._parts.get(b0)
        st = known[1] if known is not None and known[0] == b1 else row_stats(block, self.metric)
        rows, norm = prepare_rows(block, self.metric, "reference", st, self.centre, dtype)
        if known is None or known[0] != b1:
            top, scale = xp.max(norm), 1.0
            if self.metric == "correlation":  # the largest |r| / |r - m|, at least 1
                kap = xp.max(row_kappa(st, block.shape[1]))
                # One transfer for both maxima: a host sync per block, not two.
                top, scale = (float(v) for v in to_numpy(xp.stack([xp.astype(top, xp.float64), kap])))
                scale = max(scale, 1.0)
            else:
                top = float(top)
            self._parts[b0] = (b1, st, top, scale)
        return rows

    def _summary(self) -> tuple[RowStats, float, float]:
        """Statistics of every row, from the blocks seen so far and the ones missing."""
        if self._done is None:
            n, b, parts = self.shape[0], 0, []
            while b < n:
                if b not in self._parts:
                    later = [s for s in self._parts if s > b]
                    self._prepare_block(b, min(b + self.prep_rows, n, *later), self.dtype)
                parts.append(self._parts[b])
                b = self._parts[b][0]
            self._done = (
                concat_stats([p[1] for p in parts], self.xp),
                max(p[2] for p in parts),
                max(p[3] for p in parts),
            )
            self._parts = {}
        return self._done

    @property
    def stats(self) -> RowStats:
        return self._summary()[0]

    @property
    def ref_max(self) -> float:
        return self._summary()[1]

    @property
    def key_scale(self) -> float:
        return self._summary()[2]

    def block(self, c0: int, c1: int, dtype: Any) -> Any:
        """Prepared tile rows of references ``c0 .. c1 - 1`` in ``dtype``."""
        xp, step = self.xp, self.prep_rows
        # Kept rows serve their own dtype and narrower ones (one more rounding, as the
        # bounds assume); float64 tiles of float32 data are prepared afresh in float64.
        if self.rows is not None and (dtype != xp.float64 or self.rows.dtype == xp.float64):
            rows = self.rows[c0:c1, :]
            return rows if rows.dtype == dtype else xp.astype(rows, dtype)
        if self._done is not None:
            st = self._done[0]
            parts = [
                prepare_rows(
                    self.data[b0 : min(b0 + step, c1), :],
                    self.metric,
                    "reference",
                    _stats_of(st, b0, min(b0 + step, c1)),
                    self.centre,
                    dtype,
                )[0]
                for b0 in range(c0, c1, step)
            ]
        else:
            parts = [self._prepare_block(b0, min(b0 + step, c1), dtype) for b0 in range(c0, c1, step)]
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def prepare_queries(Q: Any, ref: Reference, dtype: Any, *, step: int | None = None) -> tuple[Any, RowStats, Any, Any]:
    """Tile rows of queries Q for searches against ``ref``, in blocks of ``step`` rows
    (default ``ref.prep_rows``).

    Returns ``(rows, stats, norm, sqnorm)``: tile rows in ``dtype``; canonical
    :class:`RowStats`; the bounds' query norms (float64 (n,)); and for the euclidean family
    ``|q - c|^2`` (the keys' tile units), else None.
    """
    xp, step = array_namespace(Q), step or ref.prep_rows
    parts = []
    for b0 in range(0, Q.shape[0], step):
        block = Q[b0 : min(b0 + step, Q.shape[0]), :]
        st = row_stats(block, ref.metric)
        parts.append((st, *prepare_rows(block, ref.metric, "query", st, ref.centre, dtype)))
    stats = concat_stats([p[0] for p in parts], xp)
    rows = [p[1] for p in parts]
    norm = [p[2] for p in parts]
    rows = rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)
    norm = norm[0] if len(norm) == 1 else xp.concat(norm, axis=0)
    return rows, stats, norm, (norm * norm if ref.metric in _EUCLID else None)


def score_tile(Qt: Any, block_t: Any) -> Any:
    """One GEMM: scores of a query tile against a (transposed) prepared reference block."""
    return Qt @ block_t


def nominate(q_rows: Any, ref: Reference, kk: int, plan: TilePlan, dtype: Any) -> tuple[Any, Any]:
    """The ``kk`` best tile scores of each prepared query row, descending, and their indices.

    Ties go to the lower reference index (it does not matter for the result: the exact
    pass orders the candidates), so a row with exact tile scores is already its answer.
    """
    xp = array_namespace(q_rows)
    n_ref = ref.shape[0]
    n = q_rows.shape[0]
    tiles = range(0, n, plan.rows)
    best: list[Any] = [None] * len(tiles)
    for c0 in range(0, n_ref, plan.cols):
        c1 = min(c0 + plan.cols, n_ref)
        block_t = ref.block(c0, c1, dtype).T
        for t, r0 in enumerate(tiles):
            S = score_tile(q_rows[r0 : min(r0 + plan.rows, n), :], block_t)
            if best[t] is None:
                best[t] = _seed(S, kk, c0, xp)
            else:
                best[t] = update_topk(best[t][0], best[t][1], S, c0)
            del S
        del block_t
    if len(best) == 1:
        return best[0]
    return xp.concat([b[0] for b in best], axis=0), xp.concat([b[1] for b in best], axis=0)


def _seed(S: Any, k: int, offset: int, xp: Any) -> tuple[Any, Any]:
    """Running top-k lists from a tile's own top k, padded with -inf if it is narrower.

    Tile scores are finite (inputs whose squares overflow are refused), so later tiles
    replace every padding slot before any real entry (k <= n_ref).
    """
    values, cols = topk_largest(S, min(k, S.shape[1]))
    return pad_lists(values, cols + offset, k)


def round_down(threshold: Any, dtype: Any) -> Any:
    """``threshold`` in ``dtype``, rounded down where the cast rounded it up: a tile compared
    with it as it is (``S >= t``) keeps every pair whose score reaches the threshold."""
    xp = array_namespace(threshold)
    t = xp.astype(threshold, dtype)
    if dtype == threshold.dtype:
        return t
    low = xp.astype(t, threshold.dtype) > threshold
    return xp.where(low, xp.nextafter(t, xp.full_like(t, -math.inf)), t)


def collect(
    q_rows: Any,
    ref: Reference,
    threshold: Any,
    plan: TilePlan,
    dtype: Any,
    progress: Any = None,
) -> Iterator[tuple[Any, Any]]:
    """Yield ``(rows, columns)`` (int64, flat) of every pair with tile score >= threshold.

    ``threshold`` is float64 (n,), one per prepared query row; ``rows`` index ``q_rows``,
    ``columns`` are reference indices. Pairs come tile by tile (each at most a tile's size),
    reference blocks in ascending order; rows in ``progress.done`` are skipped.
    """
    xp = array_namespace(q_rows)
    n_ref, n = ref.shape[0], q_rows.shape[0]
    t = round_down(threshold, dtype)
    for c0 in range(0, n_ref, plan.cols):
        c1 = min(c0 + plan.cols, n_ref)
        block_t = ref.block(c0, c1, dtype).T
        for r0 in range(0, n, plan.rows):
            r1 = min(r0 + plan.rows, n)
            S = score_tile(q_rows[r0:r1, :], block_t)
            hit = S >= t[r0:r1, None]
            if progress is not None:
                hit = hit & ~progress.done[r0:r1, None]
            flat = xp.nonzero(xp.reshape(hit, (-1,)))[0]
            if flat.shape[0]:
                yield flat // (c1 - c0) + r0, flat % (c1 - c0) + c0
