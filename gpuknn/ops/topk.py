"""Top-k selection per row, with one deterministic tie rule on every backend.

``topk_largest(S, k)`` returns the k largest scores of each row, sorted from largest to
smallest; **equal scores keep the lower column first**. The neighbour engine calls it on
similarity tiles (larger = closer), so equal distances give the lower reference index.

Algorithm (a threshold filter, generic over the array API):

1. A lower bound ``t`` on each row's k-th largest score is taken from a sample of the
   row's columns, a few contiguous chunks spread over the row (the k-th largest of a subset
   can only be smaller). Computing it is the only backend-specific step
   (:func:`gpuknn._delegation.kth_largest`): NumPy/CuPy ``partition``, ``torch.topk``, a
   native ``top_k`` when the namespace has one, else a generic ``sort``.
2. ``S >= t`` keeps every true top-k element plus a few extras (≈ k·m/sample per row); the
   candidates are compacted with one flat ``nonzero`` (row starts by ``searchsorted``).
3. Each row's candidates are gathered into a block padded with -inf and sorted row by row
   (stable: equal scores keep column order); the first k of each row are kept. Very uneven
   candidate counts use one global stable sort by (row, score) instead.

The full tile is read twice (compare, compaction) and never sorted; no index array of the
tile's size is built. Callers that know a lower bound of the k-th value (the sweeps: the
previous PCA size's neighbours) pass it as ``threshold`` and skip the sample; if that bound
lets through too many candidates, the sampled one tightens it. If candidates are still too
many, either ``t`` already is every row's exact k-th value (massive ties: the mask keeps the
entries above it plus the first equal ones per row, a running count, no sort) or the exact
k-th value is computed.
"""

from __future__ import annotations

import math
from typing import Any

from .._backend import array_namespace, device_of
from .._delegation import kth_largest, mask_counts, order_rows

__all__ = ["topk_largest", "kth_largest", "merge_topk", "update_topk", "pad_lists"]

_SAMPLE_MIN = 256  # sample columns used for the threshold, at least
# Sample width m balances the sample's partition (~m per row) against the candidates it lets
# through (~k·n_cols/m per row, each costing ~10x more to order): m ≈ sqrt(12·k·n_cols).
_SAMPLE_BALANCE = 12.0


def topk_largest(S: Any, k: int, *, threshold: Any = None) -> tuple[Any, Any]:
    """The k largest entries of each row of ``S``, sorted descending, ties -> lower column.

    Parameters
    ----------
    S : array of shape (rows, m), finite
    k : int, 1 <= k <= m
    threshold : array of shape (rows,), optional
        A known lower bound of each row's k-th largest value (e.g. the smallest score of
        any k columns). It replaces the sampled bound; the tighter, the fewer candidates.

    Returns
    -------
    values : array of shape (rows, k), same dtype as S
    columns : int64 array of shape (rows, k)

    Complexity: O(rows·m) reads plus O(c log c) for c ≈ rows·k·m/sample candidates.

    Examples
    --------
    >>> import numpy as np
    >>> topk_largest(np.array([[1.0, 3.0, 3.0, 2.0]]), 2)
    (array([[3., 3.]]), array([[1, 2]]))
    """
    xp = array_namespace(S)
    rows, m = S.shape
    if not 1 <= k <= m:
        raise ValueError(f"k must be in [1, {m}], got {k}")
    sample_size = max(_SAMPLE_MIN, 4 * k, int(math.sqrt(_SAMPLE_BALANCE * k * m)))
    exact = 2 * sample_size >= m
    if threshold is not None:
        t = threshold
    else:
        t = kth_largest(S if exact else _column_sample(S, sample_size, xp), k)
    mask = S >= t[:, None]
    total = int(xp.count_nonzero(mask))
    cap = max(rows * k * 4, (rows * m) // 8)
    if total > 8 * rows * k and threshold is not None and not exact:
        # The caller's bound was loose: a sampled one is cheap and usually tight.
        t = xp.maximum(t, kth_largest(_column_sample(S, sample_size, xp), k))
        mask = S >= t[:, None]
        total = int(xp.count_nonzero(mask))
    if total > cap:
        above = S > t[:, None]
        n_above = xp.count_nonzero(above, axis=1)
        if not bool(xp.all(n_above < k)):
            # t is below some row's k-th value (the bound was loose): take the exact one
            t = kth_largest(S, k)
            mask = S >= t[:, None]
            total = int(xp.count_nonzero(mask))
            above = None
        if total > cap:
            mask = _first_ties(S, t, k, xp, above=above)  # massive ties at the k-th value
            total = rows * k
    # Flat positions come out sorted: row-major, so by row and then by column.
    flat = xp.nonzero(xp.reshape(mask, (-1,)))[0]
    del mask
    dev = device_of(S)
    vals = xp.take(xp.reshape(S, (-1,)), flat)
    starts = xp.searchsorted(flat, xp.arange(rows, device=dev, dtype=flat.dtype) * m)
    keep = _best_per_row(vals, flat, m, starts, total, k, xp)
    values = xp.reshape(xp.take(vals, keep), (rows, k))
    columns = xp.reshape(xp.take(flat, keep) % m, (rows, k))
    return values, xp.astype(columns, xp.int64)


def _best_per_row(vals: Any, flat: Any, m: int, starts: Any, total: int, k: int, xp: Any) -> Any:
    """Positions (into ``vals``) of the k best candidates of each row, best first.

    Candidates come grouped by row (row r owns ``vals[starts[r]:starts[r+1]]``) in column
    order; ``flat`` are their flat positions in the (rows, m) tile. They are gathered into a
    (rows, widest row) block padded with -inf and sorted row by row (stable, so equal values
    keep column order) -- one batched sort of short rows instead of a global two-key sort.
    A very uneven candidate count falls back to the global sort by (row, value).
    """
    rows = starts.shape[0]
    dev = device_of(vals)
    counts, widest = _row_counts(starts, total, xp)
    if _even_enough(rows, widest, total, k):
        pos = _row_slots(starts, counts, widest, total, xp)
        padded = xp.concat([vals, xp.asarray([-math.inf], dtype=vals.dtype, device=dev)])
        block = xp.take(padded, xp.reshape(pos, (-1,)))
        order = xp.argsort(-xp.reshape(block, (rows, widest)), axis=1, stable=True)[:, :k]
        return xp.reshape(xp.take_along_axis(pos, order, axis=1), (-1,))
    r_idx = flat // m
    # Candidates arrive in row-major order, so a stable order keeps equal values by column.
    order = order_rows(r_idx, vals)
    rank = xp.arange(total, device=dev, dtype=starts.dtype) - xp.take(starts, xp.take(r_idx, order))
    return xp.take(order, xp.nonzero(rank < k)[0])


def _row_counts(starts: Any, total: int, xp: Any) -> tuple[Any, int]:
    """Candidates per row from the row starts of ``total`` grouped candidates, and the most."""
    end = xp.asarray([total], dtype=starts.dtype, device=device_of(starts))
    counts = xp.concat([starts[1:], end]) - starts
    return counts, int(xp.max(counts))


def _even_enough(rows: int, widest: int, total: int, k: int) -> bool:
    """Whether a (rows, widest) padded block is worth it (not mostly padding)."""
    return rows * widest <= 8 * total + 4 * rows * k


def _row_slots(starts: Any, counts: Any, widest: int, pad: int, xp: Any) -> Any:
    """(rows, widest) positions of each row's candidates; slots past a row's count hold ``pad``."""
    j = xp.arange(widest, dtype=starts.dtype, device=device_of(starts))
    pos = starts[:, None] + j[None, :]
    return xp.where(j[None, :] < counts[:, None], pos, xp.full_like(pos, pad))


def _first_ties(S: Any, t: Any, k: int, xp: Any, *, above: Any = None) -> Any:
    """Mask of exactly k entries per row: all above the exact k-th value ``t`` and the
    first (lowest-column) entries equal to it. No sort: a running count of the ties, over
    the first few columns only when they hold enough ties for every row (the usual case)."""
    rows, m = S.shape
    if above is None:
        above = S > t[:, None]
    need = k - xp.astype(xp.count_nonzero(above, axis=1), xp.int32)
    width = min(m, max(64, 4 * k))
    head = S[:, :width] == t[:, None]
    seen = xp.cumulative_sum(xp.astype(head, xp.int32), axis=1)
    if bool(xp.all(seen[:, width - 1] >= need)):
        first = head & (seen <= need[:, None])
        if width == m:
            return above | first
        rest = xp.zeros((rows, m - width), dtype=xp.bool, device=device_of(S))
        return above | xp.concat([first, rest], axis=1)
    tied = S == t[:, None]
    seen = xp.cumulative_sum(xp.astype(tied, xp.int32), axis=1)
    return above | (tied & (seen <= need[:, None]))


_SAMPLE_CHUNKS = 16


def _column_sample(S: Any, size: int, xp: Any) -> Any:
    """About ``size`` columns of S in a few contiguous chunks spread over the row.

    Contiguous chunks copy fast (a strided column sample is a cache miss per element);
    spreading them keeps the threshold sound when references are ordered (e.g. by class).
    """
    m = S.shape[1]
    width = -(-size // _SAMPLE_CHUNKS)
    offsets = [(j * m) // _SAMPLE_CHUNKS for j in range(_SAMPLE_CHUNKS)]
    return xp.concat([S[:, o : min(o + width, m)] for o in offsets], axis=1)


def merge_topk(values: Any, index: Any, k: int) -> tuple[Any, Any]:
    """Keep the k best of candidate lists whose columns are *not* in index order.

    ``values`` and ``index`` have shape (rows, c); the result is sorted by value descending,
    ties by ``index`` ascending (the global reference index), shape (rows, min(k, c)).
    Used to merge partial top-k lists from several reference tiles.
    """
    xp = array_namespace(values, index)
    k = min(k, values.shape[1])
    by_index = xp.argsort(index, axis=1, stable=True)
    v = xp.take_along_axis(values, by_index, axis=1)
    i = xp.take_along_axis(index, by_index, axis=1)
    by_value = xp.argsort(-v, axis=1, stable=True)[:, :k]
    return xp.take_along_axis(v, by_value, axis=1), xp.take_along_axis(i, by_value, axis=1)


def update_topk(values: Any, index: Any, S: Any, offset: int, *, columns: bool = False) -> tuple[Any, Any]:
    """Merge a score tile into running top-k lists (a faiss-style blocked search).

    Parameters
    ----------
    values, index : arrays of shape (rows, k)
        The running lists, sorted as :func:`topk_largest` returns them (descending, ties
        by lower index). Every index is below ``offset``. Rows not yet full hold ``-inf``
        (index -1) in their tail, which any finite score replaces.
    S : array of shape (rows, m), finite
        Scores of columns ``offset .. offset + m - 1``.
    offset : int
    columns : bool, default False
        S has shape (m, rows) and holds the lists' scores in its *columns* (the transpose
        of the tile above): a tile that serves two sets of lists, its rows' and its
        columns' (:mod:`gpuknn.ops.folds`), is read as it is, without a transposed copy.

    Returns
    -------
    values, index : arrays of shape (rows, k), the k best of both, same order and tie rule.

    Notes
    -----
    Only entries *strictly* above a row's current k-th value can enter (an equal one has a
    higher index and loses the tie), so once the lists hold good neighbours a tile lets
    through a handful per row: the cost is one compare and one ``nonzero`` over the tile,
    plus a row-wise sort of ``k + (widest row's candidates)`` entries. When the lists are
    still poor (many candidates, or very uneven ones), the tile's own top k is taken and
    merged instead. With ``columns`` the few candidates are put in list order by one
    stable sort of their positions (the tile is never transposed, except for that own
    top k).
    """
    xp = array_namespace(S, values)
    k = values.shape[1]
    if columns:
        m, rows = S.shape
        mask = S > values[:, k - 1][None, :]
    else:
        rows, m = S.shape
        mask = S > values[:, k - 1 : k]
    dev = device_of(S)
    total, widest, per_row = mask_counts(mask, axis=0 if columns else 1)
    if total == 0:
        return values, index
    # The count bounds the candidate arrays before they are built (the tile budget).
    sparse = total <= max(2 * rows * k, (rows * m) // 16)
    flat = xp.nonzero(xp.reshape(mask, (-1,)))[0] if sparse else None
    del mask
    if flat is not None:
        src = flat  # the candidates' positions in S
        if columns:
            # Positions in S come by tile row; the lists want them by list (S's column),
            # then by tile row: one stable sort of the few candidates' list numbers.
            lst = flat % rows
            order = xp.argsort(lst, stable=True)
            src = xp.take(flat, order)
            flat = xp.take(lst, order) * m + src // rows  # as if in the transposed tile
        if per_row is None:
            starts = xp.searchsorted(flat, xp.arange(rows, device=dev, dtype=flat.dtype) * m)
            counts, widest = _row_counts(starts, total, xp)
        else:  # counted already (a device): exclusive prefix sums, no second sync
            counts = xp.astype(per_row, flat.dtype)
            starts = xp.cumulative_sum(counts) - counts
        if _even_enough(rows, widest, total, k):
            # Gather [current k | candidates, padded] row by row from one flat source.
            pos_old = xp.reshape(xp.arange(rows * k, dtype=starts.dtype, device=dev), (rows, k))
            pos_new = rows * k + _row_slots(starts, counts, widest, total, xp)
            pos = xp.concat([pos_old, pos_new], axis=1)
            inf = xp.asarray([-math.inf], dtype=S.dtype, device=dev)
            src_v = xp.concat([xp.reshape(values, (-1,)), xp.take(xp.reshape(S, (-1,)), src), inf])
            none = xp.asarray([-1], dtype=index.dtype, device=dev)
            cols = xp.astype(flat % m + offset, index.dtype)
            src_i = xp.concat([xp.reshape(index, (-1,)), cols, none])
            block_v = xp.reshape(xp.take(src_v, xp.reshape(pos, (-1,))), pos.shape)
            block_i = xp.reshape(xp.take(src_i, xp.reshape(pos, (-1,))), pos.shape)
            return _sorted_head(block_v, block_i, k, xp)
        del flat, src
    if columns:  # row-major copy of the transpose (reshape copies in row-major order)
        S = xp.reshape(xp.reshape(S.T, (-1,)), (rows, m))
    v, c = topk_largest(S, min(k, m))
    block_v = xp.concat([values, v], axis=1)
    block_i = xp.concat([index, xp.astype(c + offset, index.dtype)], axis=1)
    return _sorted_head(block_v, block_i, k, xp)


def _sorted_head(block_v: Any, block_i: Any, k: int, xp: Any) -> tuple[Any, Any]:
    """First k of each row by value descending; stable, so column order breaks ties."""
    order = xp.argsort(-block_v, axis=1, stable=True)[:, :k]
    return xp.take_along_axis(block_v, order, axis=1), xp.take_along_axis(block_i, order, axis=1)


def pad_lists(values: Any, index: Any, k: int) -> tuple[Any, Any]:
    """Running lists (rows, c) widened to k columns with ``(-inf, -1)`` padding (c <= k).

    Seed lists of a block narrower than k: tile scores are finite, so later blocks replace
    every padding slot before any real entry.
    """
    xp = array_namespace(values, index)
    rows, c = values.shape
    if c == k:
        return values, index
    dev = device_of(values)
    return (
        xp.concat([values, xp.full((rows, k - c), -math.inf, dtype=values.dtype, device=dev)], axis=1),
        xp.concat([index, xp.full((rows, k - c), -1, dtype=index.dtype, device=dev)], axis=1),
    )
