"""Every fold's candidate lists of a K-fold cross-validation from one tile pass.

A K-fold cross-validation searches each fold's test rows against the rows of the other
folds, so the score of two rows of different folds is computed twice, once from each side:
``2 (K - 1) / K · n²`` products of rows in all. When the test sets partition the rows and
each training set is the complement of its test set (K-fold, stratified or not, shuffled or
not), one GEMM tile of two folds' rows serves both sides -- its rows nominate candidates for
the first fold's test rows, its columns for the second's -- and the tile pass does half the
products, on any device (:func:`fold_lists`).

Only the tile pass is shared. Each fold then runs its own exact pass against its own
training rows (:func:`gpuknn.ops.kneighbors.search_validated` with ``nominated=``), so each
fold's answer is what a search of its own returns:

* a list holds a row's ``kk`` best tile scores over the rows of the other folds, as the
  fold's own tile pass would (equal scores in another order: the exact pass orders them);
* a tile score is within the same certified bound (:mod:`gpuknn.ops.certify`): the
  cosine/correlation/inner tile is the same product of the same prepared rows; the
  euclidean one, ``q_c . r_c - |r_c|^2 / 2``, is summed as the ``d`` products (one GEMM of
  the centred rows) and then the last term, one order of the ``d + 1`` terms the bound
  covers; every fold shares the whole data's centre, so both sides' rows are prepared alike;
* rows whose bound is 0 (zero rows of cosine/correlation/inner), whose tile order is their
  answer, are nominated again by the fold's own tile pass.

The rows' statistics (and the largest prepared-row norm that the bound takes) are
computed once for all rows here and gathered for each fold's reference, instead of each
fold preparing its training rows again to learn them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, to_numpy
from .._delegation import fp32_matmul, take_rows
from .._memory import is_out_of_memory, preferred_tile_bytes
from .exact import RowStats, concat_stats, row_kappa, row_stats
from .kneighbors import candidate_margin, tile_dtype_of
from .limits import _MANY_TILES, underflow_scale
from .search import _scratch_per_element, prep_rows, prepare_rows, reference_centre
from .topk import merge_topk, update_topk

__all__ = ["FoldSearch", "fold_lists", "partition_order"]

# The metrics whose tile is a product of rows prepared alone (the difference metrics
# compute every pair's value instead, :mod:`gpuknn.ops.differences`).
_SHARED = ("euclidean", "sqeuclidean", "cosine", "correlation", "inner")
_EUCLID = ("euclidean", "sqeuclidean")


class FoldSearch:
    """What :func:`fold_lists` gives one fold's search.

    Attributes
    ----------
    centre : array (d,) or None
        The euclidean translation the fold's reference must use (every fold shares the
        whole data's); None for the other metrics.
    summary : (RowStats, float, float)
        The fold's training rows' statistics (in the order of its training indices), largest
        prepared-row norm and key scale, as :class:`gpuknn.ops.search.Reference` learns them
        (gathered when asked for from the statistics of every row, which the folds share:
        K folds hold one copy of them, not K - 1).
    lists : (scores, index, alone)
        The tile pass's lists of the fold's test rows (in the order of its test indices):
        tile scores (n_test, kk) in the tile dtype, descending, and the candidates'
        positions in the fold's training rows (int64); ``alone``: whether some test row
        may have a bound of 0 (a zero prepared-row norm, or every training row's zero) and
        so need a tile pass of its own.

    :func:`gpuknn.ops.kneighbors.reference_for` takes ``centre`` and ``summary``,
    :func:`gpuknn.ops.kneighbors.search_validated` takes ``lists`` (``nominated=``).
    """

    def __init__(self, centre: Any, stats: RowStats, rows: Any, norms: tuple[float, float], lists: tuple):
        self.centre, self.lists = centre, lists
        self._stats, self._rows, self._norms = stats, rows, norms

    @property
    def summary(self) -> tuple[RowStats, float, float]:
        xp = array_namespace(self.lists[1])
        pos = xp.asarray(self._rows, device=device_of(self.lists[1]))
        return (RowStats(*(None if v is None else xp.take(v, pos) for v in self._stats)), *self._norms)


def partition_order(folds: list[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray | None:
    """The rows in fold order (every fold's test rows, one fold after the other) when the
    test sets partition ``range(n)`` and each training set is the rest; else None."""
    if len(folds) < 2:
        return None
    order = np.concatenate([te for _, te in folds])
    if order.size != n or np.bincount(order, minlength=n).max() != 1:
        return None
    for tr, te in folds:
        if tr.size + te.size != n:
            return None
        seen = np.zeros(n, dtype=bool)
        seen[tr] = True
        seen[te] = True
        if not seen.all():
            return None
    return order


def fold_lists(
    X: Any, folds: list[tuple[np.ndarray, np.ndarray]], metric: str, k: int, *, magnitude: float, working_memory: int
) -> list[FoldSearch] | None:
    """The tile pass of every fold's search at once, where the folds allow it.

    Parameters
    ----------
    X : array (n, d), validated (finite, a float dtype)
    folds : list of (train, test) host int64 index arrays (:func:`gpuknn.model_selection.cv.check_folds`)
    metric : str
        An engine name (:func:`gpuknn.ops.metricspec.resolve_metric`).
    k : int
        The neighbours each fold's search will ask for (``1 <= k <=`` its training size).
    magnitude : float
        ``max |X|`` (:func:`gpuknn.ops.limits.check_values`).
    working_memory : int
        Bytes (:func:`gpuknn.ops.limits.check_working_memory`): the prepared rows of X in
        the tile dtype and every row's candidate lists take at most half of it, the score
        tiles and their selection the rest.

    Returns
    -------
    list of FoldSearch (one per fold), or None where the searches must run their own tile
    passes: folds that do not partition the rows (:func:`partition_order`), difference
    metrics, data small enough to be rescaled (:func:`gpuknn.ops.limits.underflow_scale`),
    folds whose searches would choose different tile dtypes, prepared rows and candidate
    lists over half the budget, a budget that would split the pass into over 20 000 tiles
    (the folds' own searches warn of it), or an allocation that fails.

    Notes
    -----
    Cost: ``(K - 1) / K · n² · d / 2`` multiply-adds in GEMMs (the folds' own tile passes:
    twice that), one compare and one ``nonzero`` per tile and side, O(n · d) preparation.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(8.0)[:, None]
    >>> folds = [(np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7])), (np.array([4, 5, 6, 7]), np.array([0, 1, 2, 3]))]
    >>> fl = fold_lists(X, folds, "euclidean", 1, magnitude=7.0, working_memory=1 << 20)
    >>> fl[0].lists[1][:, :2]  # test rows 4..7: their nearest training rows first
    array([[3, 2],
           [3, 2],
           [3, 2],
           [3, 2]])
    """
    xp = array_namespace(X)
    n, d = int(X.shape[0]), int(X.shape[1])
    order = partition_order(folds, n) if metric in _SHARED else None
    if order is None or underflow_scale(magnitude, X.dtype, xp) != 1.0:
        return None
    euclid = metric in _EUCLID
    width = d + (1 if euclid else 0)
    sizes = [int(te.size) for _, te in folds]
    dtypes = {tile_dtype_of(X.dtype, s * (n - s) * width, magnitude, xp) for s in sizes}
    if len(dtypes) != 1:
        return None
    dtype = dtypes.pop()
    itemsize = 4 if dtype == xp.float32 else 8
    kk = max(min(n - s, k + candidate_margin(k)) for s in sizes)
    # The prepared rows and every row's running lists (with a copy while a fold's are cut
    # out and renumbered) stay within half the budget; the tiles take the other half.
    prepared = n * width * itemsize + 2 * n * kk * (itemsize + 8)
    if 2 * prepared > working_memory:
        return None
    cap = preferred_tile_bytes(xp)
    # Per tile element: the product, a side's scores (euclidean), the other side's, and
    # the selection's scratch; the host keeps its cache-sized tiles.
    elements = (working_memory - prepared) // 2 // (3 * itemsize + _scratch_per_element(itemsize))
    if cap is not None:
        elements = min(elements, cap // itemsize)
    side = max(1, math.isqrt(max(1, elements)))
    if (n / side) ** 2 / 2 > _MANY_TILES:
        return None
    centre = reference_centre(X) if euclid else None
    block = prep_rows(n, d, working_memory // 4 if cap is None else min(working_memory // 4, cap))
    rows, half_sq, stats, norm = _prepared(X, order, metric, centre, dtype, block)
    starts = np.cumsum([0, *sizes])
    blocks = [
        (f, b0, min(b0 + side, starts[f + 1]))
        for f in range(len(folds))
        for b0 in range(starts[f], starts[f + 1], side)
    ]
    try:
        with fp32_matmul(xp, device_of(X)):
            best = _pairs(rows, half_sq, blocks, kk, side, xp)
    except Exception as exc:  # noqa: BLE001 - only allocation failures fall back
        if not is_out_of_memory(exc):
            raise
        return None  # the folds' own searches retry with smaller tiles
    del rows, half_sq
    # Each fold's largest prepared-row norm, rows of norm 0 (bound 0: see the module's
    # docstring) and key scale: one transfer for every fold.
    kappa = row_kappa(stats, d) if metric == "correlation" else None
    K = len(folds)
    tops = [xp.max(norm[starts[f] : starts[f + 1]]) for f in range(K)]
    tops += [xp.astype(xp.any(norm[starts[f] : starts[f + 1]] == 0), xp.float64) for f in range(K)]
    if kappa is not None:
        tops += [xp.max(kappa[starts[f] : starts[f + 1]]) for f in range(K)]
    tops = np.asarray(to_numpy(xp.stack([xp.astype(t, xp.float64) for t in tops])), dtype=np.float64)
    where = np.empty(n, dtype=np.int64)
    where[order] = np.arange(n, dtype=np.int64)  # each row's position in fold order
    scores = xp.concat([b[0] for b in best], axis=0) if len(best) > 1 else best[0][0]  # (n, kk), fold order
    index = xp.concat([b[1] for b in best], axis=0) if len(best) > 1 else best[0][1]
    del best
    lists = []
    for f, (tr, _) in enumerate(folds):
        kk_f = min(n - sizes[f], k + candidate_margin(k))
        # Positions in fold order -> the fold's training rows (never its own test rows).
        local = np.full(n, -1, dtype=np.int64)
        local[tr] = np.arange(tr.size, dtype=np.int64)
        to_train = xp.asarray(local[order], device=device_of(X))
        mine = index[starts[f] : starts[f + 1], :kk_f]
        lists.append(
            (
                scores[starts[f] : starts[f + 1], :kk_f],
                xp.reshape(xp.take(to_train, xp.reshape(mine, (-1,))), mine.shape),
            )
        )
    # Equal tile scores by the lower training index, as the fold's own tile pass lists them
    # (fold order is another order): with labels, a one-label group keeps it. One sort for
    # every fold's rows where they keep as many candidates (all but tiny data).
    if all(li[1].shape[1] == kk for li in lists):
        s_all, i_all = merge_topk(scores, xp.concat([li[1] for li in lists], axis=0), kk)
        lists = [(s_all[starts[f] : starts[f + 1], :], i_all[starts[f] : starts[f + 1], :]) for f in range(K)]
    else:
        lists = [merge_topk(s_f, i_f, i_f.shape[1]) for s_f, i_f in lists]
    out = []
    for f, (tr, _) in enumerate(folds):
        others = [g for g in range(K) if g != f]
        ref_max = float(tops[others].max())
        key_scale = max(1.0, float(tops[[2 * K + g for g in others]].max())) if kappa is not None else 1.0
        alone = bool(tops[K + f] > 0) or ref_max == 0.0
        out.append(FoldSearch(centre, stats, where[tr], (ref_max, key_scale), (*lists[f], alone)))
    return out


def _prepared(X: Any, order: np.ndarray, metric: str, centre: Any, dtype: Any, step: int) -> tuple:
    """X's rows in fold ``order`` as a search prepares its references: tile rows (n, d) in
    ``dtype``; for the euclidean family their ``-|x - c|^2 / 2`` (n,), else None; the
    rows' :class:`RowStats`; the prepared rows' norms (float64 (n,), the bounds')."""
    xp = array_namespace(X)
    d = int(X.shape[1])
    parts, extra, stats, norms = [], [], [], []
    for b0 in range(0, order.size, step):
        block = take_rows(X, order[b0 : b0 + step])
        stats.append(row_stats(block, metric))
        rows, norm = prepare_rows(block, metric, "reference", stats[-1], centre, dtype)
        norms.append(norm)
        if metric in _EUCLID:
            parts.append(rows[:, :d])
            extra.append(rows[:, d])
        else:
            parts.append(rows)
    rows = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    half_sq = None if metric not in _EUCLID else (extra[0] if len(extra) == 1 else xp.concat(extra, axis=0))
    norm = norms[0] if len(norms) == 1 else xp.concat(norms, axis=0)
    return rows, half_sq, concat_stats(stats, xp), norm


def _pairs(rows: Any, half_sq: Any, blocks: list[tuple[int, int, int]], kk: int, side: int, xp: Any) -> list:
    """Each block's running ``kk`` best lists over the blocks of the other folds.

    Blocks (at most ``side`` rows each) are visited in order, each with the blocks of the
    later folds, taken together as far as ``side`` rows (one GEMM and one update per side
    where the budget holds several blocks: a GPU's). A row then meets the columns of the
    earlier blocks (as a tile's column) before those of the later ones (as a row), so every
    update brings higher positions, as :func:`~gpuknn.ops.topk.update_topk` wants.
    """
    dev = device_of(rows)
    best = [
        (
            xp.full((b1 - b0, kk), -math.inf, dtype=rows.dtype, device=dev),
            xp.full((b1 - b0, kk), -1, dtype=xp.int64, device=dev),
        )
        for _, b0, b1 in blocks
    ]
    for a, (fa, a0, a1) in enumerate(blocks):
        later = [b for b in range(a + 1, len(blocks)) if blocks[b][0] != fa]
        for group in _groups(later, blocks, side):
            c0, c1 = blocks[group[0]][1], blocks[group[-1]][2]
            G = rows[a0:a1, :] @ rows[c0:c1, :].T
            # Euclidean: q_c . r_c - |r_c|^2 / 2, the reference's term added once, per side.
            S = G if half_sq is None else G + half_sq[None, c0:c1]
            best[a] = update_topk(*best[a], S, c0)
            del S
            S = G if half_sq is None else G + half_sq[a0:a1, None]
            del G
            if len(group) == 1:
                best[group[0]] = update_topk(*best[group[0]], S, a0, columns=True)
            else:
                both = [xp.concat([best[g][j] for g in group], axis=0) for j in (0, 1)]
                values, index = update_topk(*both, S, a0, columns=True)
                for g in group:
                    r0, r1 = blocks[g][1] - c0, blocks[g][2] - c0
                    best[g] = (values[r0:r1, :], index[r0:r1, :])
            del S
    return best


def _groups(later: list[int], blocks: list[tuple[int, int, int]], side: int) -> list[list[int]]:
    """Runs of consecutive ``later`` blocks of at most ``side`` rows in all (one block at least)."""
    out: list[list[int]] = []
    for b in later:
        if out and blocks[b][2] - blocks[out[-1][0]][1] <= side:
            out[-1].append(b)
        else:
            out.append([b])
    return out
