"""The exact pass: canonical float64 keys of (query, reference) pairs.

Every neighbour search ends here (:mod:`gpuknn.ops.rerank`): a GEMM tile only *nominates*
candidates, their order is decided by a **key** recomputed pair by pair in float64 from the
caller's rows, larger = closer:

==============  =====================================================  ====================
metric          key of a pair ``(q, r)``                               distance
==============  =====================================================  ====================
euclidean       ``-sum((q - r)**2)`` (differences first: no            ``sqrt(-key)``
sqeuclidean     cancellation whatever the offset of the data)          ``-key``
cosine          ``(q . r) / (|q| |r|)``                                ``clip(1 - key, 0, 2)``
correlation     ``(q~ . r - m_r sum(q~)) / (|q~| |r~|)``, ``x~ = x - mean(x)``  same
inner           ``q . r``                                              ``key``
==============  =====================================================  ====================

The difference metrics (``manhattan``, ``chebyshev``, ``minkowski:p``, ``canberra``,
``braycurtis``, ``hamming``) take minus their distance as key, computed by
:mod:`gpuknn.ops.differences` (feature by feature, float64).

Zero rows (after centring, for correlation) get key 0 (distance 1), never NaN. The key of a
pair depends on its two rows alone: the row statistics (:class:`RowStats`) are functions of
one row, and the dot products are :func:`gpuknn._delegation.dot64` / ``sqdist64``, whose
rounding does not depend on where the pair sits in a batch, the batch size or the thread
count. So exact duplicates get bit-identical keys and tie by index, on any tiling.

The correlation key takes ``q~ . r - m_r sum(q~)`` rather than ``q~ . r~``: the same number
in real arithmetic (``sum(q~)`` is zero up to rounding), without a centred copy of every
candidate; its float64 error is at most ``gamma_d |q~| |r|`` (scaled by ``1/(|q~||r~|)``),
which :mod:`gpuknn.ops.certify` counts.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._delegation import dot64, masked_dot64, masked_sum64, prefix_dot64, sqdist64, sum64, take_rows, tree_sums
from .differences import pair_values, values_to_distances
from .metricspec import is_difference
from .rows import replace_rows

__all__ = [
    "RowStats",
    "row_stats",
    "prefix_row_stats",
    "exact_keys",
    "keys_to_distances",
    "distance_interval",
    "EXACT_BLOCK_BYTES",
]

_U64 = 2.0**-53
# 4 gamma_{d+2} per unit of |x| / |x - mean(x)|: the float64 error of a cosine/correlation key
# (d is at most ~10^7 features here: d u stays far below 1), as a multiple of d + 2.
_SNAP_PER_FEATURE = 4 * _U64 * 1.01
# Keys are snapped to 1 from at most this far below: a nearly constant row (a huge
# |x| / |x - mean|) must not make every key of its pairs a tie at the top.
_SNAP_MAX = 2.0**-30
# Gathered candidate rows are processed in row blocks of about this many bytes (large enough
# that the per-block overhead stays small beside the gather and the dot products).
EXACT_BLOCK_BYTES = 16 << 20
# Other names of euclidean a caller may carry along (scikit-learn's default "minkowski", p = 2).
_EUCLIDEAN_NAMES = ("l2", "minkowski")


class RowStats(NamedTuple):
    """Float64 per-row statistics of the exact keys (and of the tile error bounds).

    ``mean``: row means (correlation), else None; ``inv_norm``: ``1/|x|`` (cosine) or
    ``1/|x - mean|`` (correlation), 0 for zero rows, else None; ``norm``: ``|x|`` (cosine
    and inner), else None; ``kappa``: ``|x| / |x - mean(x)|`` (cosine: 1), 0 for zero rows,
    as :func:`row_kappa` gives it -- kept so that every exact pass over a reference takes
    it per pair (one gather) instead of recomputing it (eight launches); None where it was
    not computed (or the metric has none).
    """

    mean: Any
    inv_norm: Any
    norm: Any
    kappa: Any = None


def row_stats(X: Any, metric: str) -> RowStats:
    """Canonical float64 statistics of the rows of X (n, d) for ``metric``.

    Each entry is a function of its own row only (:func:`~gpuknn._delegation.dot64` and
    :func:`~gpuknn._delegation.sqdist64`), so references and queries, shards and prefixes
    of columns all get the same numbers for the same row.

    Constant rows (zero once centred) get ``inv_norm`` 0 for correlation, as zero rows do
    for cosine: their keys are 0, their distances 1.

    Complexity: O(n d) float64 work, without a float64 copy of X on NumPy.

    Examples
    --------
    >>> import numpy as np
    >>> row_stats(np.array([[1.0, 3.0], [0.0, 0.0]]), "correlation").inv_norm
    array([0.70710678, 0.        ])
    """
    xp = array_namespace(X)
    if metric == "correlation":
        d = X.shape[1]
        ones = xp.ones((d,), dtype=X.dtype, device=device_of(X))
        mean = dot64(X, ones) / d
        sq = dot64(X, X)
        # |x - m|^2 = |x|^2 - d m^2, accurate to float64 rounding where it keeps at least a
        # quarter of |x|^2; rows far from 0 against their spread take the two-pass sum.
        c2 = sq - d * mean * mean
        far = c2 < 0.25 * sq
        if bool(xp.any(far)):
            rows = xp.nonzero(far)[0]
            Xf = xp.take(X, rows, axis=0)
            two = sqdist64(Xf, xp.take(mean, rows)[:, None])
            # A constant row is zero once centred, whatever its rounded mean says.
            two = xp.where(xp.max(Xf, axis=1) == xp.min(Xf, axis=1), xp.zeros_like(two), two)
            c2 = replace_rows(rows, X.shape[0], [(c2, two)])[0]
        inv = _inverse(xp.sqrt(xp.clip(c2, min=0.0)), xp)
        return RowStats(mean, inv, None, _kappa(mean, inv, d, xp))
    if metric in ("cosine", "inner"):
        norm = xp.sqrt(dot64(X, X))
        if metric == "inner":
            return RowStats(None, None, norm)
        inv = _inverse(norm, xp)
        return RowStats(None, inv, norm, _kappa(None, inv, X.shape[1], xp))
    return RowStats(None, None, None)


def prefix_row_stats(X: Any, ps: list[int], metric: str) -> list[RowStats]:
    """:func:`row_stats` of ``X[:, :p]`` for every p in ``ps``, bit for bit.

    Generic: one :func:`row_stats` per p. Where the pair arithmetic sums in gpuknn's tree
    (:func:`gpuknn._delegation.tree_sums`: torch, CuPy), the whole grid at once: the sums
    of every prefix read off one tree (:func:`gpuknn._delegation.prefix_dot64`), the rows
    far from 0 against their spread (the two-pass sum of :func:`row_stats`) of every p in
    one masked pass, as wide as the widest p that has such rows (one transfer of their
    counts and one ``nonzero`` for the grid) -- a fixed number of launches where there
    were about forty and a sync per p.

    Complexity: O(n max(ps)) float64 work and memory, plus the far rows' two-pass sums.

    Examples
    --------
    >>> import numpy as np
    >>> [s.inv_norm for s in prefix_row_stats(np.array([[1.0, 3.0, 3.0]]), [2, 3], "correlation")]
    [array([0.70710678]), array([0.61237244])]
    """
    xp = array_namespace(X)
    if metric not in ("correlation", "cosine", "inner") or not tree_sums(xp) or not ps:
        return [row_stats(X[:, :p], metric) for p in ps]
    dev = device_of(X)
    top = max(ps)
    Xp = X[:, :top]
    # (len(ps), n) statistics: each p's row contiguous, as the per-p callers take them.
    sq = _grid_rows(prefix_dot64(Xp, Xp, ps), xp)
    if metric in ("cosine", "inner"):
        norm = xp.sqrt(sq)
        if metric == "inner":
            return [RowStats(None, None, norm[j, :]) for j in range(len(ps))]
        inv = _inverse(norm, xp)
        kap = _kappa(None, inv, 0, xp)
        return [RowStats(None, inv[j, :], norm[j, :], kap[j, :]) for j in range(len(ps))]
    d = xp.asarray([[float(p)] for p in ps], dtype=xp.float64, device=dev)  # p per grid row
    ones = xp.ones((top,), dtype=X.dtype, device=dev)
    mean = _grid_rows(prefix_dot64(Xp, ones, ps), xp) / d
    c2 = sq - d * mean * mean
    far = c2 < 0.25 * sq
    # One transfer: how many far rows each p has. They are mostly where p is small (every
    # row at p = 1), so the masked pass works in the widest such p, not in max(ps).
    counts = to_numpy(xp.sum(xp.astype(far, xp.int64), axis=1)).tolist()
    if any(counts):
        width = max(p for p, c in zip(ps, counts) if c)
        c2 = _two_pass(Xp[:, :width], ps, mean, c2, far, xp)
    inv = _inverse(xp.sqrt(xp.clip(c2, min=0.0)), xp)
    kap = _kappa(mean, inv, d, xp)
    return [RowStats(mean[j, :], inv[j, :], None, kap[j, :]) for j in range(len(ps))]


def _grid_rows(A: Any, xp: Any) -> Any:
    """(n, g) -> a C-ordered (g, n) copy."""
    return xp.reshape(xp.reshape(xp.permute_dims(A, (1, 0)), (-1,)), (A.shape[1], A.shape[0]))


def _two_pass(Xp: Any, ps: list[int], mean: Any, c2: Any, far: Any, xp: Any) -> Any:
    """``c2`` (g, n) with its ``far`` entries replaced by :func:`row_stats`'s two-pass sums
    ``|x[:p] - mean|^2`` (0 for rows constant on their first p columns): every far (p, row)
    pair of the grid in one masked pass (:func:`gpuknn._delegation.masked_dot64`)."""
    g, n = c2.shape
    flat = xp.nonzero(xp.reshape(far, (-1,)))[0]  # ascending: grid row, then data row
    j, r = flat // n, flat % n
    lengths = xp.take(xp.asarray(ps, dtype=flat.dtype, device=device_of(flat)), j)
    Xf = xp.take(Xp, r, axis=0)
    diff = xp.astype(Xf, xp.float64) - xp.take(xp.reshape(mean, (-1,)), flat)[:, None]
    two = masked_dot64(diff, diff, lengths)
    # A constant row is zero once centred, whatever its rounded mean says.
    cols = xp.arange(Xf.shape[1], dtype=lengths.dtype, device=device_of(Xf))[None, :]
    inside = cols < lengths[:, None]
    inf = xp.asarray(float("inf"), dtype=Xf.dtype, device=device_of(Xf))
    const = xp.max(xp.where(inside, Xf, -inf), axis=1) == xp.min(xp.where(inside, Xf, inf), axis=1)
    two = xp.where(const, xp.zeros_like(two), two)
    return xp.reshape(replace_rows(flat, g * n, [(xp.reshape(c2, (-1,)), two)])[0], (g, n))


def _inverse(norm: Any, xp: Any) -> Any:
    safe = xp.where(norm > 0, norm, xp.ones_like(norm))
    return xp.where(norm > 0, 1.0 / safe, xp.zeros_like(norm))


def concat_stats(parts: list[RowStats], xp: Any) -> RowStats:
    """Row statistics of stacked row blocks."""

    def cat(name):
        vals = [getattr(p, name) for p in parts]
        return None if vals[0] is None else (vals[0] if len(vals) == 1 else xp.concat(vals))

    return RowStats(cat("mean"), cat("inv_norm"), cat("norm"), cat("kappa"))


def exact_keys(
    Q: Any,
    R: Any,
    index: Any,
    metric: str,
    ref_stats: RowStats,
    *,
    q_stats: RowStats | None = None,
    max_bytes: int = EXACT_BLOCK_BYTES,
    n_cols: int | None = None,
    q_index: Any = None,
) -> Any:
    """Keys (float64, larger = closer) of the pairs ``(Q[i], R[index[i, j]])``.

    Parameters
    ----------
    Q : array of shape (m, d)
        Query rows as the caller gave them (float32 or float64).
    R : array of shape (n_ref, d)
        Reference rows (same namespace); ``index`` holds row numbers into R.
    index : int array of shape (m, c)
    metric : str
    ref_stats : RowStats
        :func:`row_stats` of all of R (indexed by ``index``).
    q_stats : RowStats, optional
        :func:`row_stats` of Q (computed here when not given).
    max_bytes : int
        Gathered rows are processed in row blocks of about this size.
    n_cols : int, optional
        Use only the first ``n_cols`` columns of Q and R (the p-sweep's prefixes).
    q_index : int array of shape (m,), optional
        Row ``i`` of ``index`` pairs with query ``Q[q_index[i]]`` (``q_stats`` then being
        those of all of Q): the query rows are gathered block by block, never all at once.

    Returns
    -------
    float64 array of shape (m, c)

    Complexity: O(m c d) float64 work and a gather of m c rows; memory ``max_bytes``.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> exact_keys(np.array([[0.0, 0.0]]), R, np.array([[1, 0]]), "euclidean", row_stats(R, "euclidean"))
    array([[-25.,  -0.]])
    """
    xp = array_namespace(Q, R)
    if n_cols is not None:
        Q, R = Q[:, :n_cols], R[:, :n_cols]
    if is_difference(metric):  # minus the distance (gpuknn.ops.differences): no statistics
        if q_index is not None:
            Q = xp.take(Q, q_index, axis=0)
        return -values_to_distances(pair_values(Q, R, index, metric, max_bytes=max_bytes), metric)
    d = R.shape[1]
    if index.shape[0] == 0:
        return xp.zeros((0, index.shape[1]), dtype=xp.float64, device=device_of(index))
    if q_stats is None:
        q_stats = row_stats(Q, metric)
    if q_index is not None:  # the pairs' statistics; their rows are gathered per block
        q_stats = RowStats(*(None if v is None else xp.take(v, q_index) for v in q_stats))
    dots, q_sum = _pair_dots(Q, R, index, metric, q_stats.mean, q_index, None, max_bytes, xp)
    if metric in ("euclidean", "sqeuclidean", "inner"):
        return dots
    centred = metric == "correlation"
    r_mean = _take(ref_stats.mean, index, xp) if centred else None
    r_kappa = None if ref_stats.kappa is None else _take(ref_stats.kappa, index, xp)
    return _unit_keys(dots, q_sum, q_stats, r_mean, _take(ref_stats.inv_norm, index, xp), r_kappa, d, xp)


def grid_exact_keys(
    Q: Any,
    R: Any,
    index: Any,
    metric: str,
    q_rows: Any,
    sets: Any,
    ps: list[int],
    ref_stats: list[RowStats],
    q_stats: list[RowStats],
    *,
    max_bytes: int = EXACT_BLOCK_BYTES,
) -> Any:
    """Keys of pairs in many column prefixes at once: row ``i`` pairs ``Q[q_rows[i], :p]``
    with ``R[index[i, j], :p]``, ``p = ps[sets[i]]``, each bit for bit :func:`exact_keys`
    with ``n_cols=p`` (the p-sweep's exact passes over a grid of sizes).

    Parameters
    ----------
    Q : array of shape (m, d); R : array of shape (n_ref, d)
    index : int array of shape (rows, c)
    metric : str
    q_rows, sets : int arrays of shape (rows,)
        Each row's query (into Q) and its size (into ``ps``).
    ps : list of int
        The sizes, each at most d.
    ref_stats, q_stats : lists of RowStats, one per size
        :func:`row_stats` of ``R[:, :p]`` and of ``Q[:, :p]``.
    max_bytes : int
        Gathered rows are processed in row blocks of about this size.

    Returns
    -------
    float64 array of shape (rows, c)

    Notes
    -----
    Where the pair arithmetic sums in gpuknn's tree (:func:`gpuknn._delegation.tree_sums`:
    torch, CuPy), one pass in the widest prefix, every row's columns past its own p set to
    ``-0.0`` (:func:`gpuknn._delegation.masked_dot64`), its statistics gathered from the
    sizes' stacked ones: a fixed number of launches for the whole grid. Elsewhere (NumPy,
    the host), one :func:`exact_keys` per size present, after one transfer of ``sets``.

    Complexity: O(rows c max(ps)) float64 work on the tree path, O(rows c p) per row
    elsewhere; memory ``max_bytes``.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> st = [row_stats(Z[:, :p], "euclidean") for p in (1, 2)]
    >>> grid_exact_keys(Z, Z, np.array([[1], [1]]), "euclidean", np.array([0, 0]), np.array([0, 1]), [1, 2], st, st)
    array([[ -9.],
           [-25.]])
    """
    xp = array_namespace(Q, R, index)
    if not tree_sums(xp) or is_difference(metric):
        return _keys_per_size(Q, R, index, metric, q_rows, sets, ps, ref_stats, q_stats, max_bytes, xp)
    dev = device_of(index)
    top = max(ps)
    n_ref, m = R.shape[0], Q.shape[0]
    sets = xp.astype(sets, index.dtype)
    p_of = xp.asarray(ps, dtype=index.dtype, device=dev)
    lengths = xp.take(p_of, sets)
    q_at = sets * m + xp.astype(q_rows, index.dtype)

    def stacked(stats, name, at):  # one statistic of every size, gathered per pair
        vals = [getattr(st, name) for st in stats]
        return None if vals[0] is None else _take(xp.concat(vals) if len(vals) > 1 else vals[0], at, xp)

    qs = RowStats(*(stacked(q_stats, name, q_at) for name in RowStats._fields))
    dots, q_sum = _pair_dots(Q[:, :top], R[:, :top], index, metric, qs.mean, q_rows, lengths, max_bytes, xp)
    if metric in ("euclidean", "sqeuclidean", "inner"):
        return dots
    r_at = sets[:, None] * n_ref + index
    r_mean = stacked(ref_stats, "mean", r_at) if metric == "correlation" else None
    r_kappa = stacked(ref_stats, "kappa", r_at)
    d = xp.astype(lengths, xp.float64)[:, None]
    return _unit_keys(dots, q_sum, qs, r_mean, stacked(ref_stats, "inv_norm", r_at), r_kappa, d, xp)


def _keys_per_size(Q, R, index, metric, q_rows, sets, ps, ref_stats, q_stats, max_bytes, xp):
    """:func:`grid_exact_keys`' generic branch: one :func:`exact_keys` per size present."""
    host = np.asarray(to_numpy(sets))
    order = np.argsort(host, kind="stable")
    parts = []
    dev = device_of(index)
    for s in np.unique(host).tolist():
        at = from_numpy(
            order[np.searchsorted(host[order], s) : np.searchsorted(host[order], s, side="right")], xp, device=dev
        )
        p = ps[s]
        parts.append(
            exact_keys(
                Q[:, :p],
                R[:, :p],
                xp.take(index, at, axis=0),
                metric,
                ref_stats[s],
                q_stats=q_stats[s],
                max_bytes=max_bytes,
                q_index=xp.take(q_rows, at),
            )
        )
    if not parts:
        return xp.zeros((0, index.shape[1]), dtype=xp.float64, device=dev)
    out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    if np.array_equal(order, np.arange(order.shape[0])):
        return out
    return xp.take(out, from_numpy(np.argsort(order), xp, device=dev), axis=0)  # the callers' order


def _pair_dots(Q, R, index, metric, q_mean, q_index, lengths, max_bytes, xp):
    """The blocked gather and float64 dot products of :func:`exact_keys` (``lengths``: each
    row's prefix, masked, on the tree path of :func:`grid_exact_keys`); ``(dots, q_sum)``,
    ``q_sum`` the centred query rows' sums (correlation) else None."""
    m, c = index.shape
    d = R.shape[1]
    # Only the gather and its dot products are blocked; the per-pair statistics are
    # (m, c) arrays computed once (a fixed number of launches, whatever the block count).
    # Bytes per gathered entry: the row and its float64 copy; masked, also the products,
    # the mask and the masked products.
    step = max(1, int(max_bytes) // max(1, c * d * (12 if lengths is None else 36)))
    out, sums = [], []
    centred = metric == "correlation"
    for r0 in range(0, m, step):
        r1 = min(r0 + step, m)
        idx = index[r0:r1, :]
        rows = xp.reshape(take_rows(R, xp.reshape(idx, (-1,))), (r1 - r0, c, d))
        q = Q[r0:r1, :] if q_index is None else xp.take(Q, q_index[r0:r1], axis=0)
        L = None if lengths is None else lengths[r0:r1]
        if metric in ("euclidean", "sqeuclidean"):
            if L is None:
                out.append(-sqdist64(rows, q[:, None, :]))
            else:  # sqdist64's arithmetic, each row in its own prefix
                diff = xp.astype(rows, xp.float64) - xp.astype(q, xp.float64)[:, None, :]
                out.append(-masked_dot64(diff, diff, L[:, None]))
        elif centred:
            q64 = xp.astype(q, xp.float64) - q_mean[r0:r1, None]
            # sum(q~) is ~0, not 0: the key's m_r sum(q~) term, per row, applied below.
            if L is None:
                out.append(dot64(rows, q64[:, None, :]))
                sums.append(sum64(q64))
            else:
                out.append(masked_dot64(rows, q64[:, None, :], L[:, None]))
                sums.append(masked_sum64(q64, L))
        else:
            out.append(dot64(rows, q[:, None, :]) if L is None else masked_dot64(rows, q[:, None, :], L[:, None]))
    if not out:
        empty = xp.zeros((0, c), dtype=xp.float64, device=device_of(index))
        return empty, (xp.zeros((0,), dtype=xp.float64, device=device_of(index)) if centred else None)
    return _cat(out, xp), (_cat(sums, xp) if centred else None)


def _unit_keys(dots, q_sum, q_stats, r_mean, r_inv, r_kappa, d, xp):
    """Cosine and correlation keys from the pairs' dot products and statistics (``d``: the
    number of features, or each row's, (rows, 1))."""
    if r_mean is not None:
        dots = dots - r_mean * q_sum[:, None]
    dots = dots * q_stats.inv_norm[:, None] * r_inv
    # Keys within their own float64 rounding of the largest possible one are that one:
    # real ties at the top (a row and its multiples; correlation of 2 features) then
    # tie bit for bit, and go to the lower index like exact duplicates.
    q_kappa = q_stats.kappa if q_stats.kappa is not None else _kappa(q_stats.mean, q_stats.inv_norm, _rows_d(d), xp)
    kappa = q_kappa[:, None] + (r_kappa if r_kappa is not None else _kappa(r_mean, r_inv, d, xp))
    top = 1.0 - 8 * _U64 - xp.clip(_SNAP_PER_FEATURE * (d + 2) * kappa, max=_SNAP_MAX)
    return xp.where(dots >= top, xp.ones_like(dots), dots)


def _rows_d(d):
    """``d`` per row: a (rows, 1) array's column, or the int."""
    return d if isinstance(d, int) else d[:, 0]


def _cat(parts: list, xp: Any) -> Any:
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def row_kappa(stats: RowStats, d: int) -> Any:
    """``kappa = |x| / |x - mean(x)|`` of each row (correlation statistics), 0 for rows that
    are zero once centred; None for other metrics. The kept ``stats.kappa`` where
    :func:`row_stats` computed it."""
    if stats.mean is None:
        return None
    return _row_kappa(stats, d, array_namespace(stats.inv_norm))


def _row_kappa(stats: RowStats, d: int, xp: Any) -> Any:
    """Each row's ``kappa`` (cosine: 1, or 0 for a zero row): kept, or computed."""
    return stats.kappa if stats.kappa is not None else _kappa(stats.mean, stats.inv_norm, d, xp)


def _kappa(mean: Any, inv: Any, d: int, xp: Any) -> Any:
    """``|x| / |x - mean(x)|`` (correlation; 1 for cosine: ``mean`` None), 0 for zero rows."""
    if mean is None:
        return xp.astype(inv > 0, xp.float64)
    return xp.where(inv > 0, xp.sqrt(1.0 + d * (mean * inv) ** 2), xp.zeros_like(inv))


def _take(v: Any, idx: Any, xp: Any) -> Any:
    return xp.reshape(xp.take(v, xp.reshape(idx, (-1,))), idx.shape)


def keys_to_distances(keys: Any, metric: str) -> Any:
    """Distances (float64) from keys; see the module table. The difference metrics
    (:mod:`gpuknn.ops.differences`) and the host metrics (``precomputed``, ``callable``:
    :mod:`gpuknn.ops.hostmetric`) keep minus the distance as their key."""
    xp = array_namespace(keys)
    if is_difference(metric) or metric in ("precomputed", "callable"):
        return -keys
    if metric in _EUCLIDEAN_NAMES:
        metric = "euclidean"
    if metric == "euclidean":
        return xp.sqrt(xp.clip(-keys, min=0.0))
    if metric == "sqeuclidean":
        return xp.clip(-keys, min=0.0)
    if metric in ("cosine", "correlation"):
        return xp.clip(1.0 - keys, min=0.0, max=2.0)
    return keys


def distance_interval(keys: Any, err: Any, metric: str) -> tuple[Any, Any]:
    """``(d_lo, d_hi)`` float64: the distances of keys known to within ``err`` (n,) each."""
    e = err[:, None]
    if is_difference(metric) or metric in ("precomputed", "callable"):
        return -keys - e, -keys + e
    if metric == "inner":  # the "distance" is the key itself
        return keys - e, keys + e
    return keys_to_distances(keys + e, metric), keys_to_distances(keys - e, metric)
