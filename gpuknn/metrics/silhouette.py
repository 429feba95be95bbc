"""Silhouette and Calinski–Harabasz scores, scikit-learn's definitions on gpuknn's engine.

* :func:`silhouette_samples` / :func:`silhouette_score` — ``s_i = (b_i − a_i) / max(a_i, b_i)``
  with ``a_i`` the mean distance of i to the other points of its cluster and ``b_i`` the
  smallest mean distance of i to the points of another cluster; 0 for clusters of one point
  (and where ``a_i = b_i = 0``).
* :func:`calinski_harabasz_score` — between- over within-cluster dispersion, each divided
  by its degrees of freedom.

The silhouette is **tiled**: square tiles of the upper half of the (symmetric) distance
matrix, under ``working_memory``, are reduced at once to per-cluster distance sums by
``(block, block) @ (block, K)`` products with the one-hot cluster matrix -- each tile for its
rows and, transposed, for its columns -- so memory is O(block² + block · d + n · K): the n × n
matrix is never built and nothing of X's size is copied. A precomputed matrix is read in row
slices. Each tile's sums are in the distances' dtype, accumulated across tiles in float64;
the silhouettes come back in X's dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import array_namespace, check_int, from_numpy, validate_matrix
from .._backend import device_of as _device
from .._delegation import bincount, on_input_device
from ..errors import InvalidInputError
from ..ops.distance import DistanceWalk
from ..ops.limits import check_magnitude, check_working_memory
from .internal import _distance_blocks, _label_codes, _prepare

__all__ = ["silhouette_samples", "silhouette_score", "calinski_harabasz_score"]

_METRICS = ("euclidean", "sqeuclidean", "cosine", "correlation", "precomputed")
_TEMPS = 6  # tile-sized arrays alive at once when slicing a precomputed matrix
_TILES = 4  # b x b tiles alive at once in the symmetric walk (GEMM result, the distance formula's
# temporaries, the certification's screen and its row subset)


def _check_n_labels(k: int, n: int) -> None:
    if not 2 <= k <= n - 1:
        raise InvalidInputError(
            f"labels has {k} distinct value(s) for n_samples={n}; valid values are 2 to "
            f"n_samples - 1 = {n - 1} (inclusive)"
        )


def _validated(X: Any, labels: Any, metric: str) -> tuple[Any, Any, Any, int, float | None]:
    """``(X, xp, codes, K, top)``: X validated (a square, non-negative, zero-diagonal matrix
    for ``"precomputed"``), labels as int64 codes 0..K-1 on X's device, ``max |X|`` (None
    for ``"precomputed"``)."""
    if metric not in _METRICS:
        raise InvalidInputError(f"metric must be one of {_METRICS}, got {metric!r}")
    X, xp = _prepare(X, metric)
    n = int(X.shape[0])
    top = None
    if metric != "precomputed":
        top = check_magnitude(None, X, xp, names=("X", "X"))  # squares that overflow: no distances
    if metric == "precomputed":
        diag = xp.take(xp.reshape(X, (-1,)), xp.arange(0, n * n, n + 1, device=_device(X)))
        atol = 100 * float(xp.finfo(X.dtype).eps)
        if bool(xp.any(xp.abs(diag) > atol)):
            raise InvalidInputError("the precomputed distance matrix X has non-zero entries on its diagonal")
    codes, K = _label_codes(labels, X, n)
    return X, xp, codes, K, top


def _silhouette(X: Any, xp: Any, codes: Any, K: int, metric: str, working_memory: Any, top: Any = None) -> Any:
    """Silhouettes of the rows of X (codes may leave some of 0..K-1 empty)."""
    n = int(X.shape[0])
    dev = _device(X)
    counts = bincount(codes, K)
    _check_n_labels(int(xp.sum(xp.astype(counts > 0, xp.int64))), n)
    wm = check_working_memory(working_memory, xp)  # MiB in, bytes out
    onehot = xp.astype(codes[:, None] == xp.arange(K, dtype=xp.int64, device=dev)[None, :], X.dtype)
    if metric == "precomputed":
        sums = [(s, D @ onehot) for s, D in _distance_blocks(X, metric, wm, temps=_TEMPS)]
        S = xp.concat([xp.astype(b, xp.float64) for _, b in sums])
    else:
        S = _cluster_sums(X, xp, onehot, metric, wm, top)
    cnt = xp.astype(counts, xp.float64)
    own = xp.astype(onehot, xp.float64)
    intra_sum = xp.sum(S * own, axis=1)
    safe_cnt = xp.where(cnt > 0, cnt, xp.ones_like(cnt))[None, :]
    means = S / safe_cnt
    hide = (own > 0) | (cnt == 0)[None, :]
    b = xp.min(xp.where(hide, xp.full_like(means, math.inf), means), axis=1)
    own_cnt = xp.take(cnt, codes)
    shared = own_cnt > 1
    a = intra_sum / xp.where(shared, own_cnt - 1, xp.ones_like(own_cnt))
    den = xp.maximum(a, b)
    ok = shared & (den > 0)
    s = xp.where(ok, (b - a) / xp.where(ok, den, xp.ones_like(den)), xp.zeros_like(den))
    return xp.astype(s, X.dtype)


def _block_rows(n: int, d: int, itemsize: int, budget: int) -> int:
    """Rows b of a square tile: ``_TILES`` b × b tiles and two prepared b × d blocks fit in
    ``budget`` bytes."""
    a, half_b = _TILES * itemsize, d * itemsize  # a b² + 2 (d · itemsize) b <= budget
    b = int((math.sqrt(half_b * half_b + a * budget) - half_b) / a)
    return max(1, min(n, b))


def _cluster_sums(X: Any, xp: Any, onehot: Any, metric: str, budget: int, top: float | None = None) -> Any:
    """(n, K) float64 sums of each row's distances to the members of each cluster, in tiles
    under ``budget`` bytes.

    The distance matrix is symmetric, so only the tiles (I, J) with J >= I are computed: a
    tile adds ``D @ onehot[J]`` to the sums of rows I and ``D.T @ onehot[I]`` to those of
    rows J -- half the GEMMs and element-wise passes of a row-block walk. Rows are prepared
    block by block from views of X (no prepared copy of X, unlike the kNN engine, whose
    copy alone would exceed the budget on Fashion-MNIST); a tile's sums are taken in X's
    dtype (b terms) and accumulated across tiles in float64. Each tile is one
    :class:`gpuknn.ops.distance.DistanceWalk` tile: centred (euclidean family), scaled
    (tiny data), with the entries its certified bound cannot vouch for recomputed exactly
    -- the contract of :func:`gpuknn.pairwise_distances`.
    """
    n, d = int(X.shape[0]), int(X.shape[1])
    itemsize = 8 if X.dtype == xp.float64 else 4
    rows = _block_rows(n, d + 1, itemsize, budget)
    starts = list(range(0, n, rows))
    walk = DistanceWalk(X, metric, top)
    walk.note_rows(X, rows)  # the largest reference norm, for the bounds' per-row screen
    parts = [
        xp.zeros((min(s + rows, n) - s, int(onehot.shape[1])), dtype=xp.float64, device=_device(X)) for s in starts
    ]
    for i, si in enumerate(starts):
        ei = min(si + rows, n)
        Xi = X[si:ei, :]
        A = walk.prepare(Xi, "query")
        for j in range(i, len(starts)):
            sj = starts[j]
            ej = min(sj + rows, n)
            Xj = X[sj:ej, :]
            B = walk.prepare(Xj, "reference")
            # j == i: the block against itself, whose own column is exactly 0
            G = walk.tile(A, B, B.rows.T, Xi, Xj, diagonal=0 if j == i else None)
            del B
            parts[i] += xp.astype(G @ onehot[sj:ej, :], xp.float64)
            if j != i:
                parts[j] += xp.astype(G.T @ onehot[si:ei, :], xp.float64)
    return parts[0] if len(parts) == 1 else xp.concat(parts)


@on_input_device
def silhouette_samples(X: Any, labels: Any, *, metric: str = "euclidean", working_memory: float | None = None) -> Any:
    """Silhouette coefficient of every sample (scikit-learn's ``silhouette_samples``).

    ``s_i = (b_i − a_i) / max(a_i, b_i)``: ``a_i`` is the mean distance from i to the other
    members of its cluster, ``b_i`` the smallest mean distance from i to the members of
    another cluster. Samples of one-point clusters (and samples with ``a_i = b_i = 0``) get 0.

    Parameters
    ----------
    X : array of shape (n, d), or (n, n) with ``metric="precomputed"``
        Data, or a square distance matrix with zeros on the diagonal.
    labels : array of shape (n,)
        Cluster labels of any type (integers of any namespace, floats, host strings); the
        number of distinct labels must be between 2 and n − 1.
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "precomputed"}
        As :func:`gpuknn.pairwise_distances` defines them, with its contract: centred
        (an offset of the data costs no digits), a certified relative error with exact
        recomputation of the entries the bound cannot vouch for, tiny data rescaled.
    working_memory : float, optional
        MiB (as in scikit-learn) for the distance tiles and the two blocks of X each tile
        prepares (default :func:`gpuknn._memory.default_working_memory`: 256 MiB on the
        host).

    Returns
    -------
    array of shape (n,)
        In X's namespace, on its device, in X's floating dtype.

    Raises
    ------
    InvalidInputError
        Unknown metric, a precomputed matrix that is not square, has negative entries or a
        non-zero diagonal, fewer than 2 or more than n − 1 distinct labels.

    Notes
    -----
    Complexity O(n² d / 2 + n² K) time (the upper half of the distance matrix),
    O(working_memory + n K) memory: the n × n matrix is never built and X is not copied.
    Host syncs: input checks, label encoding and one count of the clusters; none in the loop
    over tiles.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [4.0], [6.0]])
    >>> silhouette_samples(X, np.array([0, 0, 1, 1])).round(4)
    array([0.8   , 0.75  , 0.4286, 0.6364])
    >>> silhouette_samples(X, np.array(["a", "b", "b", "b"])).round(4)  # singleton: 0
    array([ 0.    , -0.75  ,  0.375 ,  0.4167])
    """
    X, xp, codes, K, top = _validated(X, labels, metric)
    return _silhouette(X, xp, codes, K, metric, working_memory, top)


@on_input_device
def silhouette_score(
    X: Any,
    labels: Any,
    *,
    metric: str = "euclidean",
    sample_size: int | None = None,
    random_state: Any = None,
    working_memory: float | None = None,
) -> float:
    """Mean silhouette coefficient over all samples (scikit-learn's ``silhouette_score``).

    Parameters
    ----------
    X : array of shape (n, d), or (n, n) with ``metric="precomputed"``
    labels : array of shape (n,)
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "precomputed"}
    sample_size : int, optional
        Score a random subset of this many samples (all when it is at least n). The subset
        is ``numpy.random.RandomState(random_state).permutation(n)[:sample_size]``, the
        one scikit-learn draws for the same integer seed; labels are counted on it.
    random_state : int, numpy RandomState or Generator, or None
        Seed of the subset (only used with ``sample_size``).
    working_memory : float, optional
        MiB for the distance tiles, as for :func:`silhouette_samples`.

    Returns
    -------
    float in [-1, 1]

    Notes
    -----
    Complexity O(m² d + m² K) time with m = min(n, sample_size), O(working_memory + m K)
    memory.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [4.0], [6.0]])
    >>> round(silhouette_score(X, np.array([0, 0, 1, 1])), 6)
    0.653734
    >>> rng = np.random.default_rng(0)
    >>> Y = np.concatenate([rng.normal(0, 1, (50, 2)), rng.normal(8, 1, (50, 2))])
    >>> s = silhouette_score(Y, np.repeat([0, 1], 50), sample_size=40, random_state=0)
    >>> s == silhouette_score(Y, np.repeat([0, 1], 50), sample_size=40, random_state=0)
    True
    """
    X, xp, codes, K, top = _validated(X, labels, metric)
    if sample_size is not None:
        m = check_int(sample_size, name="sample_size", low=1)
        n = int(X.shape[0])
        rng = random_state if hasattr(random_state, "permutation") else np.random.RandomState(random_state)
        idx = from_numpy(np.asarray(rng.permutation(n)[:m], dtype=np.int64), xp, device=_device(X))
        X = xp.take(X, idx, axis=0)
        if metric == "precomputed":
            X = xp.take(X, idx, axis=1)
        codes = xp.take(codes, idx)
    return float(xp.mean(_silhouette(X, xp, codes, K, metric, working_memory, top)))


@on_input_device
def calinski_harabasz_score(X: Any, labels: Any) -> float:
    """Calinski–Harabasz score (variance ratio criterion; higher is better).

    ``CH = [Σ_k n_k ||c_k − c||² / (K − 1)] / [Σ_k Σ_{i∈k} ||x_i − c_k||² / (n − K)]``
    with ``c_k`` the cluster means and ``c`` the overall mean, accumulated in float64;
    1.0 when the within-cluster dispersion is 0 (scikit-learn's convention).

    Parameters
    ----------
    X : array of shape (n, d)
    labels : array of shape (n,)
        Labels of any type, between 2 and n − 1 distinct values.

    Returns
    -------
    float

    Notes
    -----
    Complexity O(n d K) time (one one-hot product), O(n d + n K) memory.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [4.0], [6.0]])
    >>> round(calinski_harabasz_score(X, np.array([0, 0, 1, 1])), 6)
    16.2
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X")
    n = int(X.shape[0])
    codes, K = _label_codes(labels, X, n)
    _check_n_labels(K, n)
    X = xp.astype(X, xp.float64)
    onehot = xp.astype(codes[:, None] == xp.arange(K, dtype=xp.int64, device=_device(X))[None, :], xp.float64)
    counts = xp.sum(onehot, axis=0)
    centres = (onehot.T @ X) / counts[:, None]
    between = centres - xp.mean(X, axis=0)[None, :]
    extra = float(xp.sum(counts * xp.sum(between * between, axis=1)))
    within = X - xp.take(centres, codes, axis=0)
    intra = float(xp.sum(within * within))
    return 1.0 if intra == 0.0 else extra * (n - K) / (intra * (K - 1.0))
