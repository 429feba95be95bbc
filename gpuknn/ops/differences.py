"""The difference metrics: float64 keys of every pair, from the differences, in a fixed order.

==============  ==============================================  ==========================
metric          value ``s`` of a pair ``(q, r)``                distance
==============  ==============================================  ==========================
manhattan       ``sum |q_j - r_j|``                             ``s``
chebyshev       ``max |q_j - r_j|``                             ``s``
minkowski:p     ``sum |q_j - r_j|**p`` (integer p: repeated     ``s**(1/p)`` (host NumPy)
                multiplication; other p: NumPy's pow, host)
canberra        ``sum |q_j - r_j| / (|q_j| + |r_j|)``, 0/0 -> 0   ``s``
braycurtis      ``sum |q_j - r_j| / sum |q_j + r_j|`` (0/0 -> 0)   ``s``
hamming         ``#{j: q_j != r_j} / d``                        ``s``
==============  ==============================================  ==========================

**Exact, one answer everywhere.** ``s`` is accumulated in float64 feature by feature
(:func:`gpuknn._delegation.differences.feature_sums`): every step is a correctly rounded
IEEE operation, so a pair's ``s`` depends on its two rows alone -- the same bits on NumPy,
``array_api_strict``, torch and CuPy, on any tiling (``working_memory``). Neighbours are
ranked by ``-s`` (larger = closer) with the top-k machinery of :mod:`gpuknn.ops.topk`:
equal values go to the lower reference index. Minkowski ranks by ``s`` (never by the
rounded root) and takes the root of the k winners on the host (``pow`` is not correctly
rounded on every device; NumPy's is the same on every host). Non-integer p computes the
powers on the host as well: the whole search runs there and its results move back.

No GEMM screening: every pair gets its float64 value (a float32 screen with a certified
bound would save little -- the work per pair is O(d) elementwise steps either way, with no
BLAS kernel to exploit). Sums that overflow saturate at the largest float64 (then tie).

Blocks: ``(rows, cols)`` tiles of pair values under the byte budget (a few float64
``(rows, cols)`` buffers; never a ``rows x cols x d`` temporary), cache-sized on the host.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._delegation import take_rows
from .._delegation.differences import feature_sums
from .metricspec import is_difference, minkowski_p
from .topk import pad_lists, topk_largest, update_topk

__all__ = [
    "DifferenceReference",
    "tile_values",
    "pair_values",
    "values_to_distances",
    "dense_plan",
    "dense_search",
    "difference_distances",
]

_BIG = float(np.finfo(np.float64).max)
# Float64 buffers a tile holds at once (the generic branch's temporaries, keys, masks).
_BUFFERS = 8
# Host tiles: about this many feature-steps of work per tile, between these sizes (small
# tiles stay in cache across the d steps; tiny d wants larger tiles, top-k calls dominate).
_HOST_WORK = 1 << 22
_HOST_MIN, _HOST_MAX = 1 << 17, 1 << 20


def _kind(metric: str) -> tuple[str, float | None]:
    p = minkowski_p(metric)
    if p is None:
        return metric, None
    return ("power", p) if p == int(p) and p >= 1 else ("powf", p)


def _on_host(metric: str) -> bool:
    """Non-integer Minkowski p: powers on the host (NumPy's pow, the same on every host)."""
    return _kind(metric)[0] == "powf"


def _finish(acc: Any, acc2: Any, metric: str, d: int) -> Any:
    xp = array_namespace(acc)
    if metric == "braycurtis":
        pos = acc2 > 0
        # a = -b (sum |a + b| = 0, sum |a - b| > 0): infinitely far, saturated.
        far = xp.where(acc > 0, xp.full_like(acc, _BIG), xp.zeros_like(acc))
        acc = xp.where(pos, acc / xp.where(pos, acc2, xp.ones_like(acc2)), far)
    elif metric == "hamming":
        acc = acc / float(d)
    return xp.clip(acc, max=_BIG)  # overflowing powers saturate (finite keys for top-k)


def tile_values(Q: Any, R: Any, metric: str) -> Any:
    """``s`` (float64, larger = farther; see the module table) of every pair of Q (m, d) and
    R (n, d): shape (m, n). Q and R in one namespace; float32 rows are taken exactly."""
    kind, p = _kind(metric)
    if kind == "powf" and not _is_numpy(Q):
        xp, dev = array_namespace(Q), device_of(Q)
        return from_numpy(tile_values(to_numpy(Q), to_numpy(R), metric), xp, device=dev)
    acc, acc2 = feature_sums(Q, R, kind, p)
    return _finish(acc, acc2, metric, Q.shape[1])


def pair_values(Q: Any, R: Any, index: Any, metric: str, *, max_bytes: int = 16 << 20) -> Any:
    """``s`` of the pairs ``(Q[i], R[index[i, j]])``: float64 (m, c), the same bits as
    :func:`tile_values` gives those pairs. Gathered rows in blocks of about ``max_bytes``."""
    xp = array_namespace(Q, R)
    kind, p = _kind(metric)
    if kind == "powf" and not _is_numpy(Q):
        dev = device_of(Q)
        out = pair_values(to_numpy(Q), to_numpy(R), to_numpy(index), metric, max_bytes=max_bytes)
        return from_numpy(out, xp, device=dev)
    m, c = index.shape
    d = R.shape[1]
    step = max(1, int(max_bytes) // max(1, c * d * 16))
    out = []
    for r0 in range(0, m, step):
        r1 = min(r0 + step, m)
        rows = xp.reshape(take_rows(R, xp.reshape(index[r0:r1, :], (-1,))), (r1 - r0, c, d))
        acc, acc2 = feature_sums(Q[r0:r1, :], rows, kind, p, pairs=True)
        out.append(_finish(acc, acc2, metric, d))
    if not out:
        return xp.zeros((0, c), dtype=xp.float64, device=device_of(index))
    return out[0] if len(out) == 1 else xp.concat(out, axis=0)


def values_to_distances(s: Any, metric: str) -> Any:
    """Distances (float64) of values ``s``: themselves, or Minkowski's ``s**(1/p)`` taken
    on the host (one NumPy pow: the same bits whatever the array's device)."""
    p = minkowski_p(metric)
    if p is None:
        return s
    xp = array_namespace(s)
    root = np.power(to_numpy(s), 1.0 / p)
    return from_numpy(root, xp, device=device_of(s)) if not _is_numpy(s) else root


def _is_numpy(x: Any) -> bool:
    return isinstance(x, np.ndarray)


class DifferenceReference:
    """Reference rows of a difference metric (nothing to prepare: the rows themselves).

    Stands where the engine takes a :class:`gpuknn.ops.search.Reference` (an estimator's
    :class:`gpuknn.ops.kneighbors.PreparedReference`, the radius functions): ``data``,
    ``metric``, ``shape``, ``dtype`` and no row statistics (``stats`` None).
    """

    def __init__(self, R: Any, metric: str):
        if not is_difference(metric):
            raise ValueError(f"not a difference metric: {metric!r}")
        self.data, self.metric = R, metric
        self.shape, self.dtype = (int(R.shape[0]), int(R.shape[1])), R.dtype
        self.stats = None

    def values(self, Qb: Any, c0: int, c1: int) -> Any:
        """``s`` of the query block against references ``c0 .. c1 - 1``."""
        return tile_values(Qb, self.data[c0:c1, :], self.metric)

    def pair_values(self, Qb: Any, index: Any) -> Any:
        return pair_values(Qb, self.data, index, self.metric)

    def distances(self, s: Any) -> Any:
        return values_to_distances(s, self.metric)


def dense_plan(n_q: int, n_ref: int, d: int, budget: int, xp: Any) -> tuple[int, int]:
    """``(rows, cols)`` of the value tiles within ``budget`` bytes: half of it for
    ``_BUFFERS`` float64 ``(rows, cols)`` tiles, a quarter each for the float64 copies of the
    query and reference rows of a tile (and their transposes); at least one pair. On the
    host the tiles hold about ``2**22 / d`` pairs, within ``[2**17, 2**20]`` (cache-sized:
    the d steps reread them)."""
    budget = max(1, int(budget))
    elems = max(1, budget // (2 * 8 * _BUFFERS))
    if _is_numpy_ns(xp):
        elems = min(elems, max(_HOST_MIN, min(_HOST_MAX, _HOST_WORK // max(1, d))))
    rows_max = max(1, budget // 4 // (16 * max(1, d)))
    cols = max(1, min(n_ref, rows_max, elems // max(1, min(n_q, 256, rows_max))))
    rows = max(1, min(n_q, rows_max, elems // cols))
    return rows, cols


def _is_numpy_ns(xp: Any) -> bool:
    from array_api_compat import is_numpy_namespace  # noqa: PLC0415

    return is_numpy_namespace(xp)


def dense_search(Q: Any, ref: Any, k: int, *, budget: int) -> tuple[Any, Any]:
    """The k nearest references of every query by exact pair values: ``(s, indices)``.

    ``ref`` gives ``values(Qb, c0, c1)`` (float64, larger = farther) and ``shape``
    (:class:`DifferenceReference`, :class:`gpuknn.ops.hostmetric.HostReference`). Returns
    ``s`` float64 (n, k), ascending, and int64 indices; equal values: lower index first
    (:func:`gpuknn.ops.topk.update_topk`'s rule, whatever the tiling).

    Complexity: the pair values of every (query, reference) pair, one top-k merge per tile.
    """
    xp = array_namespace(Q)
    n, n_ref = int(Q.shape[0]), ref.shape[0]
    rows, cols = dense_plan(n, n_ref, ref.shape[1], budget, xp)
    keys, index = [], []
    for q0 in range(0, n, rows):
        Qb = Q[q0 : min(q0 + rows, n), :]
        best = None
        for c0 in range(0, n_ref, cols):
            c1 = min(c0 + cols, n_ref)
            S = -ref.values(Qb, c0, c1)
            if best is None:
                v, c = topk_largest(S, min(k, c1 - c0))
                best = pad_lists(v, c + c0, k)
            else:
                best = update_topk(best[0], best[1], S, c0)
            del S
        keys.append(best[0])
        index.append(xp.astype(best[1], xp.int64))
    if len(keys) == 1:
        return -keys[0], index[0]
    return -xp.concat(keys, axis=0), xp.concat(index, axis=0)


def difference_distances(X: Any, Y: Any, metric: str, *, budget: int) -> Iterator[tuple[int, Any]]:
    """Row blocks ``(start, D)`` of the distance matrix of a difference metric (float64),
    each block ``(rows, n_y)`` of tiles within ``budget`` bytes (one block of rows per
    query tile row)."""
    xp = array_namespace(X, Y)
    ref = DifferenceReference(Y, metric)
    n, n_y = int(X.shape[0]), int(Y.shape[0])
    rows, cols = dense_plan(n, n_y, int(X.shape[1]), budget, xp)
    # A whole row block (rows x n_y) is returned at once: its rows are sized for it.
    rows = max(1, min(rows, int(budget) // max(1, 8 * _BUFFERS * n_y)))
    for r0 in range(0, n, rows):
        Xb = X[r0 : min(r0 + rows, n), :]
        parts = [ref.values(Xb, c0, min(c0 + cols, n_y)) for c0 in range(0, n_y, cols)]
        s = parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)
        yield r0, ref.distances(s)
