"""Relative validity indices, used to compare partitions with different numbers of clusters.

============================  ============================================  ==============
index                         definition                                    best K
============================  ============================================  ==============
:func:`dunn_index`            min distance between points of different       max
                              clusters / max distance within a cluster
:func:`davies_bouldin_score`  mean_i max_{j≠i} (s_i + s_j) / ||c_i − c_j||,   min
                              s_i = mean distance of cluster i to its centre
:func:`sd_index`              α · Scat(K) + Dis(K) (Halkidi et al. 2000)      min
:func:`partition_coefficient` (1/n) Σ_i Σ_k u_ik²   (fuzzy)                  max
:func:`xie_beni_index`        Σ u_ik^m ||x_i − v_k||² / (n min ||v_k − v_l||²) min
============================  ============================================  ==============

Undefined cases raise :class:`InvalidInputError` (one cluster, coincident centres, zero
spread) instead of returning NaN; stated conventions are in each docstring.
"""

from __future__ import annotations

import math
from typing import Any

from .._backend import array_namespace, validate_matrix
from .._backend import device_of as _device
from .._delegation import on_input_device
from ..errors import InvalidInputError
from .internal import Shifted, _budget, _distance_blocks, _label_codes, _prepare

__all__ = [
    "dunn_index",
    "davies_bouldin_score",
    "sd_index",
    "sd_scat_dis",
    "partition_coefficient",
    "xie_beni_index",
]


def _data_and_codes(X: Any, labels: Any, *, min_clusters: int = 2) -> tuple[Any, Any, Any, int]:
    xp = array_namespace(X)
    X = validate_matrix(X, xp)
    codes, K = _label_codes(labels, X, int(X.shape[0]))
    if K < min_clusters:
        raise InvalidInputError(f"this index needs at least {min_clusters} clusters, got {K}")
    return X, xp, codes, K


def _centre_distances(C: Any, xp: Any) -> Any:
    """Distances between centres (K, d): direct differences (K is small), no GEMM formula,
    so no cancellation; the callers give float64 centres of shifted, scaled rows
    (:class:`.internal.Shifted`)."""
    diff = C[:, None, :] - C[None, :, :]
    return xp.sqrt(xp.sum(diff * diff, axis=2))


@on_input_device
def dunn_index(X: Any, labels: Any, *, metric: str = "euclidean", working_memory: float | None = None) -> float:
    """Dunn index: smallest between-cluster distance over largest cluster diameter.

    ``min_{c(i)≠c(j)} d(i, j) / max_{c(i)=c(j)} d(i, j)`` (single-linkage separation,
    complete diameter), accumulated over distance tiles of
    :func:`gpuknn.pairwise_distances_chunked`: translation invariant, each distance within
    its certified relative error (zero separations exact), so the min and max are too.

    Parameters
    ----------
    X : array of shape (n, d), or (n, n) with ``metric="precomputed"``
    labels : array of shape (n,), at least 2 clusters
    metric : str
    working_memory : float, optional
        MiB for the distance tiles (default: the engine's,
        :func:`gpuknn._memory.default_working_memory`).

    Returns
    -------
    float
        ``inf`` when every cluster has diameter 0 but clusters are apart; raises when
        both are 0 (duplicate points split across clusters, all clusters single points).

    Complexity O(n² d) time, O(working_memory) memory.

    Examples
    --------
    >>> import numpy as np
    >>> dunn_index(np.array([[0.0], [1.0], [5.0], [7.0]]), np.array([0, 0, 1, 1]))
    2.0
    """
    X, xp = _prepare(X, metric)
    codes, K = _label_codes(labels, X, int(X.shape[0]))
    if K < 2:
        raise InvalidInputError(f"the Dunn index needs at least 2 clusters, got {K}")
    inter, intra = math.inf, 0.0
    for s, D in _distance_blocks(X, metric, _budget(working_memory, xp), temps=4):
        same = codes[s : s + D.shape[0], None] == codes[None, :]
        inter = min(inter, float(xp.min(xp.where(same, xp.full_like(D, math.inf), D))))
        intra = max(intra, float(xp.max(xp.where(same, D, xp.zeros_like(D)))))
    if intra == 0.0:
        if inter == 0.0:
            raise InvalidInputError("the Dunn index is 0/0: zero diameters and zero separation")
        return math.inf
    return inter / intra


@on_input_device
def davies_bouldin_score(X: Any, labels: Any) -> float:
    """Davies–Bouldin index (scikit-learn's definition; lower is better).

    ``s_i`` = mean euclidean distance of cluster i's points to its centroid;
    ``DB = mean_i max_{j≠i} (s_i + s_j) / ||c_i − c_j||``. Coincident centroids count as
    infinitely far apart, and the index is 0.0 when all ``s_i`` or all centroid distances
    are 0 (scikit-learn's conventions). Needs 2 <= K <= n − 1.

    Complexity O(n d + K² d).

    Examples
    --------
    >>> import numpy as np
    >>> davies_bouldin_score(np.array([[0.0], [2.0], [10.0], [12.0]]), np.array([0, 0, 1, 1]))
    0.2
    """
    X, xp, codes, K = _data_and_codes(X, labels)
    n = int(X.shape[0])
    if K > n - 1:
        raise InvalidInputError(f"Davies–Bouldin needs 2 <= K <= n - 1, got K={K}, n={n}")
    # Float64, shifted and scaled rows (:class:`.internal.Shifted`): offset or tiny data
    # keep their digits; the index is a ratio of lengths, unchanged by the scale.
    sh = Shifted(X, xp)
    C, counts = sh.centres(codes, K)
    s = xp.zeros((K,), dtype=xp.float64, device=_device(X))
    for r0, B in sh.chunks():
        cb = codes[r0 : r0 + B.shape[0]]
        R = B - xp.take(C, cb, axis=0)
        oh = xp.astype(cb[:, None] == xp.arange(K, device=_device(codes))[None, :], xp.float64)
        s = s + xp.sqrt(xp.sum(R * R, axis=1)) @ oh
    s = s / counts
    CD = _centre_distances(C, xp)
    if float(xp.max(s)) == 0.0 or float(xp.max(CD)) == 0.0:
        return 0.0
    ratio = (s[:, None] + s[None, :]) / xp.where(CD == 0, xp.full_like(CD, math.inf), CD)
    eye = xp.arange(K, device=_device(CD))[:, None] == xp.arange(K, device=_device(CD))[None, :]
    ratio = xp.where(eye, xp.full_like(ratio, -math.inf), ratio)
    return float(xp.mean(xp.max(ratio, axis=1)))


@on_input_device
def sd_scat_dis(X: Any, labels: Any) -> tuple[float, float]:
    """The two terms of Halkidi's SD index.

    ``Scat = (1/K) Σ_k ||σ(v_k)|| / ||σ(X)||`` with σ the vector of per-feature population
    variances (of cluster k, of all data), and
    ``Dis = (D_max / D_min) Σ_k (Σ_z ||v_k − v_z||)⁻¹`` with D_max, D_min the largest and
    smallest distance between centres v.

    Raises InvalidInputError for K < 2, coincident centres or constant data.
    Complexity O(n d + K² d).
    """
    X, xp, codes, K = _data_and_codes(X, labels)
    sh = Shifted(X, xp)  # float64, shifted and scaled: Scat is a ratio, Dis is scaled back
    C, counts = sh.centres(codes, K)
    d = int(X.shape[1])
    sq_k = xp.zeros((K, d), dtype=xp.float64, device=_device(X))
    total = xp.zeros((d,), dtype=xp.float64, device=_device(X))
    gm = xp.sum(C * counts[:, None], axis=0) / float(X.shape[0])  # the overall mean
    for r0, B in sh.chunks():
        cb = codes[r0 : r0 + B.shape[0]]
        R = B - xp.take(C, cb, axis=0)
        oh = xp.astype(cb[:, None] == xp.arange(K, device=_device(codes))[None, :], xp.float64)
        sq_k = sq_k + oh.T @ (R * R)
        G = B - gm[None, :]
        total = total + xp.sum(G * G, axis=0)
    var_k = sq_k / counts[:, None]  # (K, d)
    var_x = total / float(X.shape[0])
    norm_x = float(xp.sqrt(xp.sum(var_x * var_x)))
    if norm_x == 0.0:
        raise InvalidInputError("SD index undefined: the data have zero variance")
    scat = float(xp.mean(xp.sqrt(xp.sum(var_k * var_k, axis=1)))) / norm_x
    CD = _centre_distances(C, xp)
    eye = xp.arange(K, device=_device(CD))[:, None] == xp.arange(K, device=_device(CD))[None, :]
    d_min = float(xp.min(xp.where(eye, xp.full_like(CD, math.inf), CD)))
    if d_min == 0.0:
        raise InvalidInputError("SD index undefined: two cluster centres coincide")
    # Dis has the units of 1 / distance: the scaled centres' value times w.
    dis = float(xp.max(CD)) / d_min * float(xp.sum(1.0 / xp.sum(CD, axis=1))) * sh.w
    return scat, dis


@on_input_device
def sd_index(X: Any, labels: Any, *, alpha: float | None = None, labels_kmax: Any = None) -> float:
    """Halkidi's SD validity index ``α · Scat(K) + Dis(K)`` (lower is better).

    α weights the scattering against the separation and must be the **same for all
    partitions compared**: Halkidi et al. take α = Dis(K_max), the separation term of the
    partition with the largest K considered. Give it directly (``alpha``) or through that
    partition (``labels_kmax``).

    Parameters
    ----------
    X : array of shape (n, d)
    labels : array of shape (n,), at least 2 clusters
    alpha : float, optional
    labels_kmax : array of shape (n,), optional
        The K_max partition; α = Dis(labels_kmax).

    Returns
    -------
    float

    Complexity O(n d + K² d). See :func:`sd_scat_dis` for the terms.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]])
    >>> round(sd_index(X, np.array([0, 0, 1, 1]), alpha=1.0), 4)  # 1/26 + 0.2
    0.2385
    """
    if (alpha is None) == (labels_kmax is None):
        raise InvalidInputError("give exactly one of alpha or labels_kmax (alpha = Dis(K_max))")
    if alpha is None:
        alpha = sd_scat_dis(X, labels_kmax)[1]
    scat, dis = sd_scat_dis(X, labels)
    return float(alpha) * scat + dis


def _check_memberships(u: Any, xp: Any) -> Any:
    u = validate_matrix(u, xp, name="u")
    if bool(xp.any(u < 0)) or bool(xp.any(u > 1)):
        raise InvalidInputError("memberships u must lie in [0, 1]")
    rows = xp.sum(u, axis=1)
    if not bool(xp.all(xp.abs(rows - 1.0) <= 1e-8)):
        raise InvalidInputError("each row of memberships u must sum to 1")
    return u


@on_input_device
def partition_coefficient(u: Any) -> float:
    """Bezdek's partition coefficient ``PC = (1/n) Σ_i Σ_k u_ik²`` in [1/K, 1].

    Parameters
    ----------
    u : array of shape (n, K)
        Fuzzy memberships, rows summing to 1 (1e-8 tolerance). Crisp (one-hot) u gives 1.

    Complexity O(n K).

    Examples
    --------
    >>> import numpy as np
    >>> partition_coefficient(np.array([[1.0, 0.0], [0.5, 0.5]]))
    0.75
    """
    xp = array_namespace(u)
    u = _check_memberships(u, xp)
    return float(xp.sum(u * u)) / int(u.shape[0])


@on_input_device
def xie_beni_index(X: Any, u: Any, centers: Any = None, *, m: float = 2.0) -> float:
    """Xie–Beni index ``Σ_i Σ_k u_ik^m ||x_i − v_k||² / (n · min_{k≠l} ||v_k − v_l||²)``.

    Parameters
    ----------
    X : array of shape (n, d)
    u : array of shape (n, K), K >= 2, rows summing to 1
    centers : array of shape (K, d), optional
        Default: the fuzzy means ``v_k = Σ_i u_ik^m x_i / Σ_i u_ik^m``.
    m : float
        Fuzzifier (> 1); Xie & Beni's original uses m = 2.

    Raises InvalidInputError when two centres coincide (zero separation).
    Complexity O(n K d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]])
    >>> u = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> xie_beni_index(X, u)
    0.01
    """
    xp = array_namespace(X, u)
    X = validate_matrix(X, xp)
    u = _check_memberships(u, xp)
    n, K = int(X.shape[0]), int(u.shape[1])
    if int(u.shape[0]) != n:
        raise InvalidInputError(f"X has {n} rows but u has {int(u.shape[0])}")
    if K < 2:
        raise InvalidInputError(f"Xie–Beni needs at least 2 clusters, got {K}")
    if not m > 1:
        raise InvalidInputError(f"m must be > 1, got {m}")
    um = u**m
    sh = Shifted(X, xp)  # float64, shifted and scaled rows: the index is a ratio, unchanged
    if centers is None:
        wsum = xp.zeros((K, int(X.shape[1])), dtype=xp.float64, device=_device(X))
        for r0, B in sh.chunks():
            wsum = wsum + xp.astype(um[r0 : r0 + B.shape[0], :], xp.float64).T @ B
        centers = wsum / xp.astype(xp.sum(um, axis=0), xp.float64)[:, None]
    else:
        centers = validate_matrix(centers, xp, name="centers", device=_device(X))
        if tuple(centers.shape) != (K, int(X.shape[1])):
            raise InvalidInputError(f"centers must have shape {(K, int(X.shape[1]))}, got {tuple(centers.shape)}")
        centers = sh.of(centers)
    num = 0.0
    step = max(1, (1 << 22) // max(1, K * int(X.shape[1])))  # bounded (rows, K, d) temporaries
    for r0, B in sh.chunks():
        nb = int(B.shape[0])
        for s in range(0, nb, step):
            diff = B[s : min(s + step, nb), None, :] - centers[None, :, :]  # direct differences, float64
            um_b = xp.astype(um[r0 + s : r0 + min(s + step, nb), :], xp.float64)
            num = num + xp.sum(um_b * xp.sum(diff * diff, axis=2))
    CD = _centre_distances(centers, xp)
    eye = xp.arange(K, device=_device(CD))[:, None] == xp.arange(K, device=_device(CD))[None, :]
    sep = float(xp.min(xp.where(eye, xp.full_like(CD, math.inf), CD))) ** 2
    if sep == 0.0:
        raise InvalidInputError("Xie–Beni undefined: two cluster centres coincide")
    return float(num) / (n * sep)
