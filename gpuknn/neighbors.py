"""Exact k-nearest-neighbour search, blocked under a memory budget.

:func:`kneighbors` is a blocked search (the scheme of faiss's CPU flat index): queries are
prepared in chunks, references in blocks; each (query tile, reference block) pair is one
GEMM of prepared rows (:mod:`gpuknn.ops.distance`). The first block's top k seeds a running
list per query (:func:`~gpuknn.ops.topk.topk_largest`); every later tile only lets through
the scores above a row's current k-th value (:func:`~gpuknn.ops.topk.update_topk`), so a
tile usually costs a compare and a ``nonzero`` on top of its GEMM. Prepared query chunk,
prepared reference block and score tile (selection scratch included) together stay under
``working_memory``; on an out-of-memory error the tile is halved and the search retried.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ._backend import (
    array_namespace,
    check_int,
    default_working_memory,
    device_of,
    is_out_of_memory,
    preferred_tile_bytes,
    validate_matrix,
)
from .errors import InvalidInputError
from .ops.distance import check_metric, prepare_rows, scores_to_distances, validate_pair
from .ops.screen import rerank_exact, screen_margin, screening_sound
from .ops.topk import topk_largest, update_topk

__all__ = ["PreparedReference", "kneighbors", "plan_tiles"]

def _scratch_per_element(itemsize: int) -> int:
    """Worst-case selection scratch per score element, on top of the score itself.

    The compare mask (1 byte), candidate positions (at most one 8-byte index per 8
    elements: 1 byte) and the larger of a partitioned copy of the tile (the exact k-th
    value, ``itemsize``) and the massive-ties path (int32 running count + mask, 5 bytes).
    """
    return 2 + max(itemsize, 5)
# Query rows a tile keeps when references must be split: enough rows to make the GEMM
# efficient (faiss uses 4096 x 1024 tiles on the CPU).
_MIN_TILE_ROWS = 1024


# Float64 searches at least this large (queries x references x row width) screen in float32
# and re-rank exactly (gpuknn.ops.screen); below it the two passes are not worth it.
_SCREEN_MIN_WORK = 1 << 27


class TilePlan(NamedTuple):
    """How :func:`kneighbors` walks the work: query chunk, tile rows, reference block."""

    query_chunk: int  # queries prepared at once
    rows: int  # query rows per score tile
    cols: int  # references per block (prepared at once)


def plan_tiles(
    n_queries: int,
    n_ref: int,
    row_width: int,
    itemsize: int,
    working_memory: int,
    *,
    tile_bytes: int | None = None,
    score_itemsize: int | None = None,
) -> TilePlan:
    """Tile plan whose buffers fit in ``working_memory`` bytes.

    ``chunk·row_width·itemsize`` (prepared queries) + ``cols·row_width·itemsize`` (prepared
    reference block) + ``rows·cols·(itemsize + scratch)`` (score tile and selection scratch)
    stays within ``working_memory`` whenever one row of each fits. ``tile_bytes`` caps the
    score tile itself, ``rows·cols·itemsize``, further (the host prefers cache-sized tiles,
    see :func:`gpuknn._backend.preferred_tile_bytes`). ``score_itemsize`` is the score
    tile's element size when it differs from the rows' (float64 rows screened in float32).
    """
    row_bytes = max(1, row_width * itemsize)
    itemsize = itemsize if score_itemsize is None else score_itemsize
    per = itemsize + _scratch_per_element(itemsize)
    budget = max(int(working_memory), 1)
    tile_budget = budget // 2
    cap = tile_budget if tile_bytes is None else int(tile_bytes)
    quarter = budget // 4
    min_rows = min(n_queries, _MIN_TILE_ROWS)
    cols = max(1, min(n_ref, quarter // row_bytes, tile_budget // (min_rows * per),
                      cap // (min_rows * itemsize)))
    rows = max(1, min(n_queries, tile_budget // (cols * per), cap // (cols * itemsize),
                      quarter // row_bytes))
    rest = budget - cols * row_bytes - rows * cols * per
    chunk = min(n_queries, max(rows, rest // row_bytes))
    if chunk < n_queries:
        chunk = max(rows, chunk // rows * rows)  # whole tiles per chunk
    return TilePlan(chunk, rows, cols)


class PreparedReference:
    """Reference rows validated and prepared once, for repeated searches against them.

    Preparing (centring, normalising or augmenting) 60 000 x 784 rows costs about as much as
    a 300-query search, so estimators build this at ``fit`` and pass it to
    :func:`kneighbors` in place of ``R``.

    Parameters
    ----------
    R : array of shape (n_ref, d)
    metric : str

    Examples
    --------
    >>> import numpy as np
    >>> ref = PreparedReference(np.array([[0.0], [1.0], [2.0]]), metric="euclidean")
    >>> kneighbors(np.array([[1.9]]), ref, 1, metric="euclidean")[1]
    array([[2]])
    """

    def __init__(self, R: Any, *, metric: str = "euclidean"):
        check_metric(metric)
        xp = array_namespace(R)
        self.data = validate_matrix(R, xp, name="R", check_finite=False)
        self.magnitude = _check_magnitude(self.data, None, xp)
        self.metric = metric
        self.rows = prepare_rows(self.data, metric, role="reference").rows
        self.shape = tuple(self.data.shape)
        self.dtype = self.data.dtype


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
        See :mod:`gpuknn.ops.distance`. For ``"inner"`` the returned "distances" are the
        inner products, sorted from largest (closest) to smallest.
    working_memory : int, optional
        Bytes for the prepared query chunk, the prepared reference block and the score
        tile with its selection scratch. Default: half the free GPU memory under CuPy,
        256 MiB on the host (env ``GPUKNN_WORKING_MEMORY`` overrides). On the host the
        score tile (scores alone) is further capped at a cache-friendly 18 MiB.
    return_distance : bool
        Return ``(distances, indices)`` (default) or only ``indices``.

    Returns
    -------
    distances : array of shape (n_queries, k), ascending (``inner``: descending)
    indices : int64 array of shape (n_queries, k)
        **Ties:** equal distances are ordered by lower reference index, on every backend.

    Raises
    ------
    InvalidInputError
        NaN/inf (rows named), values whose squared norms would overflow the dtype, k out of
        range, feature mismatch, empty or non-2-D input, unknown metric. Nothing is computed
        before validation passes.

    Notes
    -----
    Complexity O(n_queries · n_ref · d) in GEMMs, one compare and one ``nonzero`` per score
    tile, and O(n_queries · k · log) merging. Extra memory: ``working_memory`` +
    O(n_queries · k) (the running lists and the result); the inputs are never copied whole.
    A :class:`PreparedReference` is used in place (its prepared rows are owned by it).

    Float64 input (at least ``2**27`` query x reference x feature products) is searched on
    float32 copies of the prepared rows for ``k + max(8, k // 2)`` candidates, which are then
    ranked by their float64 scores; a per-query bound on the float32 rounding error certifies
    that no other reference can be among the k nearest, and rows it does not certify are
    searched again in float64 (:mod:`gpuknn.ops.screen`). The result is the float64
    search's, except that scores equal up to float64 rounding (exact ties in real arithmetic,
    e.g. cosine on integer data) may be ordered differently: the candidates' scores are
    recomputed by dot products, whose rounding differs from the GEMM's.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> kneighbors(np.array([[1.2]]), R, 2)
    (array([[0.2, 0.8]]), array([[1, 2]]))
    """
    check_metric(metric)
    if isinstance(R, PreparedReference):
        if R.metric != metric:
            raise InvalidInputError(f"R was prepared for metric {R.metric!r}, not {metric!r}")
        xp = array_namespace(Q, R.data)
        Q = validate_matrix(Q, xp, name="Q", dtype=R.dtype, check_finite=False)
        if Q.shape[1] != R.shape[1]:
            raise InvalidInputError(
                f"Q has {Q.shape[1]} features but R has {R.shape[1]} "
                f"(shapes {tuple(Q.shape)} and {R.shape})"
            )
        ref_rows, ref_magnitude, R = R.rows, R.magnitude, None
        n_ref = ref_rows.shape[0]
    else:
        Q, R, xp = validate_pair(Q, R, names=("Q", "R"), check_finite=False)
        ref_rows, ref_magnitude = None, 0.0
        n_ref = R.shape[0]
    n_q = Q.shape[0]
    k = check_int(k, name="k", low=1, high=n_ref)
    magnitude = max(ref_magnitude, _check_magnitude(Q, R, xp))
    if working_memory is None:
        working_memory = default_working_memory(xp)
    elif working_memory <= 0:
        raise InvalidInputError(f"working_memory must be positive, got {working_memory}")
    itemsize = 8 if Q.dtype == xp.float64 else 4
    width = Q.shape[1] + (1 if metric in ("euclidean", "sqeuclidean") else 0)
    screen = (
        Q.dtype == xp.float64
        and n_q * n_ref * width >= _SCREEN_MIN_WORK
        and k + screen_margin(k) < n_ref
        and screening_sound(magnitude, xp)
    )
    plan = plan_tiles(
        n_q, n_ref, width + (width // 2 if screen else 0), itemsize, working_memory,
        tile_bytes=preferred_tile_bytes(xp), score_itemsize=4 if screen else None,
    )
    while True:
        try:
            dist, idx = _search(Q, R, ref_rows, k, metric, plan, xp, screen=screen)
            break
        except Exception as exc:  # noqa: BLE001 - only allocation failures are retried
            if not is_out_of_memory(exc) or (plan.rows == 1 and plan.cols == 1):
                raise
            if plan.rows > 1:
                rows = max(1, plan.rows // 2)
                plan = TilePlan(max(rows, plan.query_chunk // 2), rows, plan.cols)
            else:
                plan = TilePlan(plan.query_chunk, 1, max(1, plan.cols // 2))
    return (dist, idx) if return_distance else idx


def _search(
    Q: Any, R: Any, ref_rows: Any, k: int, metric: str, plan: TilePlan, xp: Any, *,
    screen: bool = False,
):
    """Run one tile plan: distances and indices of shape (n_queries, k)."""
    out_d, out_i = [], []
    for q0 in range(0, Q.shape[0], plan.query_chunk):
        Qc = Q[q0 : min(q0 + plan.query_chunk, Q.shape[0]), :]
        qp = prepare_rows(Qc, metric, role="query")
        scores, index = _search_chunk(qp.rows, R, ref_rows, k, metric, plan, xp, screen=screen)
        out_d.append(scores_to_distances(scores, metric, qp.sqnorm))
        out_i.append(index)
    if len(out_d) == 1:
        return out_d[0], out_i[0]
    return xp.concat(out_d, axis=0), xp.concat(out_i, axis=0)


def _search_chunk(
    q_rows: Any, R: Any, ref_rows: Any, k: int, metric: str, plan: TilePlan, xp: Any, *,
    screen: bool,
):
    """Top-k scores (descending) and indices of prepared query rows against all references.

    ``screen`` (float64 input): search float32 copies of the rows for ``k + margin``
    candidates, then re-rank them exactly (:mod:`gpuknn.ops.screen`); rows whose
    certificate fails are searched again in float64.
    """
    n_ref = ref_rows.shape[0] if ref_rows is not None else R.shape[0]
    kk = min(n_ref, k + screen_margin(k)) if screen else k
    rows32 = xp.astype(q_rows, xp.float32) if screen else q_rows
    n_chunk = q_rows.shape[0]
    tiles = range(0, n_chunk, plan.rows)
    best: list[Any] = [None] * len(tiles)
    b_max2 = None  # largest squared reference row norm, kept on the device until the end
    for c0 in range(0, n_ref, plan.cols):
        c1 = min(c0 + plan.cols, n_ref)
        if ref_rows is not None:
            block = ref_rows[c0:c1, :]
        else:  # prepared block by block: the reference is never copied whole
            block = prepare_rows(R[c0:c1, :], metric, role="reference").rows
        if screen:
            top = xp.max(xp.vecdot(block, block, axis=-1))
            b_max2 = top if b_max2 is None else xp.maximum(b_max2, top)
            block = xp.astype(block, xp.float32)
        block_t = block.T
        for t, r0 in enumerate(tiles):
            S = _score_tile(rows32[r0 : min(r0 + plan.rows, n_chunk), :], block_t)
            if best[t] is None:
                best[t] = _seed(S, kk, c0, xp)
            else:
                best[t] = update_topk(best[t][0], best[t][1], S, c0)
            del S
        del block, block_t
    scores = xp.concat([b[0] for b in best], axis=0) if len(best) > 1 else best[0][0]
    index = xp.concat([b[1] for b in best], axis=0) if len(best) > 1 else best[0][1]
    if not screen:
        return scores, index
    def rows_of(idx: Any) -> Any:  # prepared float64 rows of the candidate references
        if ref_rows is not None:
            return xp.take(ref_rows, idx, axis=0)
        return prepare_rows(xp.take(R, idx, axis=0), metric, role="reference").rows

    exact, best_i, ok = rerank_exact(
        q_rows, index, scores, k, rows_of, float(b_max2) ** 0.5, n_ref=n_ref,
        max_bytes=plan.rows * plan.cols * 4,
    )
    if bool(xp.all(ok)):
        return exact, best_i
    # Rare: search the uncertified rows again in float64 and put them in place.
    bad = xp.nonzero(~ok)[0]
    sub = TilePlan(min(plan.query_chunk, int(bad.shape[0])), plan.rows, plan.cols)
    s_bad, i_bad = _search_chunk(xp.take(q_rows, bad, axis=0), R, ref_rows, k, metric, sub, xp,
                                 screen=False)
    pos = xp.cumulative_sum(xp.astype(~ok, xp.int64)) - 1
    pos = xp.where(ok, xp.zeros_like(pos), pos)
    keep = ok[:, None]
    return (xp.where(keep, exact, xp.take(s_bad, pos, axis=0)),
            xp.where(keep, best_i, xp.take(i_bad, pos, axis=0)))


def _check_magnitude(Q: Any, R: Any, xp: Any) -> float:
    """Largest |value| of Q (and R); raise on NaN/inf or if squared norms would overflow.

    Every metric forms ``x.x`` (norms, the euclidean augmentation) or ``q.r`` in the input's
    dtype: beyond ``sqrt(max / d)`` they overflow and the neighbours are meaningless. The
    same two reductions (max, min) also clear the finite check (NaN propagates through
    them, an infinity is one of them); only a failing input is scanned row by row.
    """
    top = 0.0
    for name, a in (("Q", Q), ("R", R)):
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


def _score_tile(Qt: Any, block_t: Any) -> Any:
    """One GEMM: scores of a query tile against a (transposed) prepared reference block."""
    return Qt @ block_t


def _seed(S: Any, k: int, offset: int, xp: Any) -> tuple[Any, Any]:
    """Running top-k lists from a tile's own top k, padded with -inf if it is narrower.

    Scores are finite (:func:`_check_magnitude` refuses inputs whose squares overflow), so
    later tiles replace every padding slot before any real entry (k <= n_ref).
    """
    rows, m = S.shape
    values, cols = topk_largest(S, min(k, m))
    cols = cols + offset
    if m < k:
        dev = device_of(S)
        values = xp.concat(
            [values, xp.full((rows, k - m), -float("inf"), dtype=S.dtype, device=dev)], axis=1
        )
        cols = xp.concat([cols, xp.full((rows, k - m), -1, dtype=cols.dtype, device=dev)], axis=1)
    return values, cols
