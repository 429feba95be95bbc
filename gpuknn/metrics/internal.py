"""Internal validity: how well a partition or a hierarchy fits the data's own distances
(the gap statistic, which compares with reference data instead, is :mod:`.gap`).

* :func:`hubert_gamma` — Γ between the distances d(i, j) and the indicator "i and j are in
  different clusters" (or between two partitions, when given two label vectors).
* :func:`cophenetic_correlation` — CPCC, the correlation between distances and the
  cophenetic (merge-height) distances of a hierarchical clustering.

Distance-based sums run over row tiles from
:func:`gpuknn.ops.distance.pairwise_distances_chunked`: memory is bounded by
``working_memory`` (MiB; never the whole n × n matrix), so they work for 10⁵ points on a GPU.
Pair sums are taken over the ordered pairs i ≠ j (twice the unordered pairs, which leaves
means and correlations unchanged).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy, validate_matrix
from .._backend import device_of as _device
from .._delegation import max_abs, on_input_device
from .._labels import encode
from ..errors import InvalidInputError
from ..ops.distance import sample_mean
from ..ops.limits import check_working_memory, to_mib, underflow_scale
from .external import _hubert_gamma_partitions

__all__ = ["hubert_gamma", "cophenetic_correlation"]

_TEMPS = 8  # tile-sized temporaries alive at once in the pair sums below


def _label_codes(labels: Any, X: Any, n: int) -> tuple[Any, int]:
    """Cluster labels -> int64 codes 0..K-1 in ``X``'s namespace and on its device, and K."""
    xp = array_namespace(X)
    _, classes, (codes,) = encode(labels, names=("labels",))
    if array_namespace(codes) is not xp or _device(codes) != _device(X):
        codes = from_numpy(to_numpy(codes), xp, device=_device(X))
    if int(codes.shape[0]) != n:
        raise InvalidInputError(f"X has {n} rows but labels has {int(codes.shape[0])} entries")
    return codes, int(classes.shape[0])


def _budget(working_memory: Any, xp: Any) -> int | None:
    """Bytes of a public ``working_memory`` (MiB), validated; None stays None (each tiling
    below has its own default)."""
    return None if working_memory is None else check_working_memory(working_memory, xp)


def _distance_blocks(X: Any, metric: str, budget: int | None, *, temps: int = _TEMPS) -> Iterator[tuple[int, Any]]:
    """Row tiles ``(start, D)`` of the self-distance matrix, diagonal exactly 0.

    ``metric="precomputed"`` slices the given square matrix; otherwise the engine computes
    tiles sized so that ``temps`` tile-sized arrays fit in ``budget`` **bytes** (from
    :func:`_budget`; None: whole rows of a precomputed matrix, the engine's default budget).
    """
    xp = array_namespace(X)
    n = int(X.shape[0])
    if metric == "precomputed":
        rows = n if budget is None else max(1, int(budget) // max(1, n * 8 * temps))
        for s in range(0, n, rows):
            D = X[s : min(s + rows, n), :]
            r = xp.arange(D.shape[0], device=_device(D))[:, None] + s
            c = xp.arange(n, device=_device(D))[None, :]
            yield s, xp.where(r == c, xp.zeros_like(D), D)
        return
    from ..ops.distance import pairwise_distances_chunked  # noqa: PLC0415

    # ``temps`` tiles within the budget; the engine's one prepared copy of X (n x (d+1))
    # comes on top of it (the engine counts it in its own). The engine takes MiB: to_mib
    # is exact, so it plans with these very bytes.
    itemsize = 8 if X.dtype == xp.float64 else 4
    ref = n * (int(X.shape[1]) + 1) * itemsize
    wm = None if budget is None else to_mib(ref + max(1, int(budget) // temps * 2))
    yield from pairwise_distances_chunked(X, metric=metric, working_memory=wm)


def _prepare(X: Any, metric: str) -> tuple[Any, Any]:
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X" if metric != "precomputed" else "D")
    if metric == "precomputed":
        if X.shape[0] != X.shape[1]:
            raise InvalidInputError(f"a precomputed distance matrix must be square, got {tuple(X.shape)}")
        if bool(xp.any(X < 0)):
            raise InvalidInputError("a precomputed distance matrix has negative entries")
    return X, xp


def _sum_scale(X: Any, xp: Any) -> float:
    """The power of two by which distance tiles are multiplied before their sums of squares
    and products: tiny data (distances of 1e-300) would square to 0 and leave Γ undefined
    (:func:`gpuknn.ops.limits.underflow_scale` of ``max |X|``, in float64, where the sums
    are taken; 1 for ordinary data)."""
    return underflow_scale(max_abs(X, xp), xp.float64, xp)


def _for_sums(D: Any, w: float, xp: Any) -> Any:
    """A distance tile in float64 (its pair sums: ``n²`` terms), times ``w``."""
    D = xp.astype(D, xp.float64)
    return D * w if w != 1.0 else D


# Float64 elements of one row chunk of the O(n d) indices (Davies–Bouldin, SD, Xie–Beni,
# the gap statistic's W): about 32 MiB.
_CHUNK64 = 1 << 22


class Shifted:
    """Rows of X in float64, shifted and scaled, chunk by chunk: the O(n d) indices' view.

    ``(x − m) · w`` with ``m`` the float64 mean of an evenly spread sample of at most 4096
    rows (any fixed vector leaves differences unchanged; one inside the data keeps cluster
    sums small whatever the data's offset: a float32 mean of values near 1e5 is off by more
    than a cluster's spread) and ``w`` the power of two that keeps squares of tiny data
    normal (:func:`gpuknn.ops.limits.underflow_scale`; 1 for ordinary data). Lengths come
    out times ``w``: ratios of them are unchanged.
    """

    def __init__(self, X: Any, xp: Any):
        d = int(X.shape[1])
        self.X, self.xp = X, xp
        self.m = sample_mean(X, xp)
        self.w = underflow_scale(max_abs(X, xp), xp.float64, xp)
        self.step = max(1, _CHUNK64 // max(1, d))

    def of(self, A: Any) -> Any:
        """``(A − m) · w`` in float64 (rows of the data's space: centres, say)."""
        B = self.xp.astype(A, self.xp.float64) - self.m[None, :]
        return B * self.w if self.w != 1.0 else B

    def chunks(self) -> Iterator[tuple[int, Any]]:
        """``(start, (X[start:stop] − m) · w)``, float64 chunks of about 32 MiB."""
        n = int(self.X.shape[0])
        for s in range(0, n, self.step):
            yield s, self.of(self.X[s : min(s + self.step, n), :])

    def centres(self, codes: Any, K: int) -> tuple[Any, Any]:
        """Cluster means (K, d) of the shifted rows, float64, and sizes (K,)."""
        xp = self.xp
        dev = _device(self.X)
        sums = xp.zeros((K, int(self.X.shape[1])), dtype=xp.float64, device=dev)
        counts = xp.zeros((K,), dtype=xp.float64, device=dev)
        for s, B in self.chunks():
            oh = xp.astype(codes[s : s + B.shape[0], None] == xp.arange(K, device=dev)[None, :], xp.float64)
            sums = sums + oh.T @ B
            counts = counts + xp.sum(oh, axis=0)
        return sums / counts[:, None], counts


def _pearson(sx, sy, sxx, syy, sxy, count) -> float | None:
    """Pearson correlation from sums; None when a variable is constant."""
    mx, my = sx / count, sy / count
    vx, vy = sxx / count - mx * mx, syy / count - my * my
    if vx <= 1e-300 * max(1.0, mx * mx) or vy <= 1e-300 * max(1.0, my * my):
        return None
    return (sxy / count - mx * my) / math.sqrt(vx * vy)


@on_input_device
def hubert_gamma(
    A: Any,
    labels: Any,
    *,
    metric: str = "euclidean",
    normalized: bool = True,
    working_memory: float | None = None,
) -> float:
    """Hubert's Γ statistic between distances (or a partition) and a partition.

    Parameters
    ----------
    A : array of shape (n, d), (n, n) or (n,)
        Data (distances from ``metric``), a distance matrix (``metric="precomputed"``), or —
        1-D — a second partition: then Γ compares the two partitions' same-cluster pair
        indicators (external use; see :mod:`gpuknn.metrics.external`).
    labels : array of shape (n,)
        The partition.
    metric : str
        An engine metric or ``"precomputed"``.
    normalized : bool
        Raw Γ is the mean over pairs of ``d(i, j) · Y(i, j)``, ``Y = 1`` for pairs in
        different clusters (for two partitions: the mean product of same-cluster indicators).
        Normalised Γ is the Pearson correlation of the two over pairs, in [-1, 1]
        (for two partitions: the Matthews correlation of the pair indicators).
        It is **0.0** by convention when either variable is constant (one cluster,
        all singletons, all distances equal).
    working_memory : float, optional
        MiB for the distance tiles (default: the engine's,
        :func:`gpuknn._memory.default_working_memory`).

    Returns
    -------
    float

    Complexity O(n² d) time, O(working_memory) memory.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> round(hubert_gamma(X, np.array([0, 0, 1, 1])), 4)
    0.9997
    """
    if getattr(A, "ndim", np.ndim(A)) == 1:
        return _hubert_gamma_partitions(A, labels, normalized=normalized)
    X, xp = _prepare(A, metric)
    n = int(X.shape[0])
    if n < 2:
        raise InvalidInputError("Hubert Γ needs at least 2 points")
    codes, _ = _label_codes(labels, X, n)
    budget = _budget(working_memory, xp)
    w = _sum_scale(X, xp)
    sx = sxx = sxy = 0.0
    for s, D in _distance_blocks(X, metric, budget):
        D = _for_sums(D, w, xp)
        diff = codes[s : s + D.shape[0], None] != codes[None, :]
        sx = sx + xp.sum(D)
        sxx = sxx + xp.sum(D * D)
        sxy = sxy + xp.sum(xp.where(diff, D, xp.zeros_like(D)))
    sx, sxx, sxy = float(sx), float(sxx), float(sxy)  # of w d: Pearson is scale invariant
    counts = to_numpy(xp.unique_counts(codes)[1]).astype(np.float64)
    count = float(n) * (n - 1)
    sy = float(n) * n - float(np.sum(counts * counts))  # ordered pairs in different clusters
    if not normalized:
        return sxy / w / count
    r = _pearson(sx, sy, sxx, sy, sxy, count)
    return 0.0 if r is None else r


# ---------------------------------------------------------------- cophenetic correlation
def _cophenetic_tables(Z: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Leaf positions, a sparse max-table over consecutive-leaf merge heights, log2 and 2^k.

    In dendrogram leaf order every cluster is a contiguous run, so the cophenetic distance
    of the leaves at positions p < q is the largest merge height between consecutive
    leaves in p..q (for monotone linkages): a range-maximum query, answered in O(1) with a
    sparse table of maxima over runs of 2^k gaps.
    """
    from scipy.cluster.hierarchy import leaves_list  # noqa: PLC0415

    order = leaves_list(Z)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    lo = np.concatenate([pos, np.zeros(n - 1, dtype=np.int64)])
    hi = lo.copy()
    gaps = np.zeros(n - 1, dtype=np.float64)
    for k in range(n - 1):  # each merge joins two adjacent runs: one gap gets its height
        c1, c2 = int(Z[k, 0]), int(Z[k, 1])
        gaps[min(hi[c1], hi[c2])] = Z[k, 2]
        lo[n + k], hi[n + k] = min(lo[c1], lo[c2]), max(hi[c1], hi[c2])
    levels = [gaps]
    step = 1
    while 2 * step <= n - 1:
        prev = levels[-1]
        nxt = prev.copy()
        nxt[: n - 1 - step] = np.maximum(prev[: n - 1 - step], prev[step:])
        levels.append(nxt)
        step *= 2
    lengths = np.arange(n, dtype=np.float64)
    log2 = np.zeros(n, dtype=np.int64)
    log2[1:] = np.frexp(lengths[1:])[1] - 1  # exact floor(log2 L) for integers
    return pos, np.concatenate(levels), log2, (1 << np.arange(len(levels))).astype(np.int64)


@on_input_device
def cophenetic_correlation(
    X: Any,
    *,
    method: str = "average",
    metric: str = "euclidean",
    Z: Any = None,
    working_memory: float | None = None,
) -> float:
    """Cophenetic correlation coefficient (CPCC) of a hierarchical clustering of X.

    The linkage is built on the host with :func:`scipy.cluster.hierarchy.linkage`
    (O(n²) memory there); the correlation between the engine's pairwise distances and the
    cophenetic distances is accumulated over distance tiles in X's namespace.

    Parameters
    ----------
    X : array of shape (n, d), n >= 3
    method : {"single", "complete", "average", "weighted", "ward"}
        Monotone linkages only (centroid/median can invert merge heights).
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation"}
    Z : array of shape (n - 1, 4), optional
        A precomputed monotone SciPy linkage matrix for X (then ``method`` is ignored).
    working_memory : float, optional
        MiB for the distance tiles (default: the engine's,
        :func:`gpuknn._memory.default_working_memory`).

    Returns
    -------
    float in [-1, 1]

    Complexity O(n² d) distances + O(n²) linkage on the host.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 0.0], [4.0, 1.5]])
    >>> round(cophenetic_correlation(X), 4)
    0.998
    """
    from scipy.cluster.hierarchy import is_monotonic, linkage  # noqa: PLC0415

    if metric not in ("euclidean", "sqeuclidean", "cosine", "correlation"):
        raise InvalidInputError(f"metric must be euclidean, sqeuclidean, cosine or correlation, got {metric!r}")
    X, xp = _prepare(X, metric)
    n = int(X.shape[0])
    if n < 3:
        raise InvalidInputError(f"CPCC needs at least 3 points, got {n}")
    budget = _budget(working_memory, xp)
    w = _sum_scale(X, xp)
    heights = w  # a given Z is in the data's units
    if Z is None:
        if method not in ("single", "complete", "average", "weighted", "ward"):
            raise InvalidInputError(f"method must be a monotone linkage, got {method!r}")
        if method == "ward" and metric != "euclidean":
            raise InvalidInputError("method='ward' needs metric='euclidean'")
        # Tiny data are scaled by w for SciPy too (its distances of 1e-300 data square to 0):
        # the merge heights then come in the units of the scaled tiles.
        Z = linkage(to_numpy(X) * w, method=method, metric=metric)
        heights = 1.0
    Z = np.asarray(to_numpy(Z), dtype=np.float64)
    if Z.shape != (n - 1, 4) or not is_monotonic(Z):
        raise InvalidInputError(f"Z must be a monotone linkage of shape ({n - 1}, 4), got {Z.shape}")
    pos_h, table_h, log2_h, pow2_h = _cophenetic_tables(Z, n)
    pos, table, log2, pow2 = (from_numpy(a, xp, device=_device(X)) for a in (pos_h, table_h, log2_h, pow2_h))
    m = n - 1
    sums = [0.0] * 5
    table = table * heights  # merge heights are distances: the tiles' scale (Pearson is invariant)
    for s, D in _distance_blocks(X, metric, budget):
        D = _for_sums(D, w, xp)
        pr = pos[s : s + D.shape[0]]
        lo = xp.reshape(xp.minimum(pr[:, None], pos[None, :]), (-1,))
        hi = xp.reshape(xp.maximum(pr[:, None], pos[None, :]), (-1,))
        k = xp.take(log2, hi - lo)
        i1 = k * m + xp.minimum(lo, m - 1)
        i2 = k * m + xp.clip(hi - xp.take(pow2, k), min=0)
        C = xp.maximum(xp.take(table, i1), xp.take(table, i2))
        C = xp.reshape(xp.where(hi == lo, xp.zeros_like(C), C), D.shape)
        for j, v in enumerate((D, C, D * D, C * C, D * C)):
            sums[j] = sums[j] + xp.sum(v)
    sx, sy, sxx, syy, sxy = (float(v) for v in sums)
    r = _pearson(sx, sy, sxx, syy, sxy, float(n) * (n - 1))
    if r is None:
        raise InvalidInputError("CPCC is undefined: all distances (or all merge heights) are equal")
    return r
