"""KMeans-SMOTE (Last, Douzas & Bacao 2017) with imbalanced-learn 0.14's semantics.

The whole data set is clustered once; for each class to over-sample, the clusters where the
class is frequent enough are kept, weighted by the sparsity of the class inside them, and
SMOTE runs inside each kept cluster (one :func:`gpuknn.ops.kneighbors.kneighbors` call per
cluster, every new point of the cluster built in one vectorised expression in X's namespace).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.random import default_rng

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy
from ..base import BaseEstimator, clone
from ..cluster import KMeans
from ..errors import InvalidInputError, ResamplingError
from ..ops.distance import pairwise_distances_chunked
from ..ops.limits import check_working_memory
from ._base import BaseSampler, Labels, fitted, neighbors_param, self_neighbors
from .smote import check_class_sizes, interpolate, record_segments

__all__ = ["KMeansSMOTE"]

_DEFAULT_N_CLUSTERS = 8  # scikit-learn's MiniBatchKMeans default, imbalanced-learn's default clusterer
# Seeded runs of the default KMeans: the best of 10 (KMeans's n_init="auto" makes one
# k-means++ run) so that the partition, which decides which clusters are kept, rarely
# depends on one unlucky seeding.
_DEFAULT_N_INIT = 10


def _real_or_auto(value: Any, name: str) -> Any:
    if isinstance(value, str):
        if value != "auto":
            raise InvalidInputError(f"{name} must be 'auto' or a real number, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(float(value)):
        raise InvalidInputError(f"{name} must be 'auto' or a real number, got {value!r}")
    return float(value)


class KMeansSMOTE(BaseSampler):
    """SMOTE inside the clusters of a k-means partition where the class is frequent.

    The whole data set is clustered. For each class ``c`` to over-sample by ``n`` samples, a
    cluster is **kept** when its share of class ``c`` is at least the balance threshold and it
    holds at least ``k_neighbors + 1`` members of ``c``. A kept cluster whose ``m`` members of
    ``c`` are at mean pairwise Euclidean distance ``D`` has the sparsity ``D ** e / m``; the
    cluster makes ``ceil(n * w)`` new points, ``w`` its sparsity over the sum of the kept
    clusters' (so the class may gain a little more than ``n``). Inside a cluster, a new
    point is ``x_i + u (x_nn - x_i)``, ``x_i`` a uniformly drawn member of ``c`` in the
    cluster, ``x_nn`` one of its ``k_neighbors`` nearest such members and ``u ~ U[0, 1)``.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        ``"auto"`` = every class but the majority is brought (about) to the majority's count.
    random_state : int, Generator or None
        Seeds :func:`numpy.random.default_rng` (see Notes) and the default clusterer.
    k_neighbors : int or NearestNeighbors-like object, default 2
        An object with ``fit`` and ``kneighbors`` is cloned and searches inside each kept
        cluster (its ``n_neighbors`` counts the sample itself: ``k = n_neighbors - 1``; its own
        metric), as in imbalanced-learn.
    kmeans_estimator : None, int or estimator, default None
        ``None``: gpuknn's :class:`~gpuknn.cluster.KMeans` with 8 clusters, ``n_init=10``
        (imbalanced-learn uses scikit-learn's ``MiniBatchKMeans`` with its defaults, 8
        clusters) and ``random_state``; an int: the same with that many clusters; an estimator with
        ``fit_predict`` (or ``fit`` and ``labels_``): a clone of it. Estimators from outside
        gpuknn get X as a host NumPy array.
    cluster_balance_threshold : "auto" or float, default "auto"
        Least share of class ``c`` in a kept cluster. ``"auto"``: ``n / N / 2``, ``N`` the
        samples to generate over all classes; with a single cluster every share passes.
    density_exponent : "auto" or float, default "auto"
        The exponent ``e``. ``"auto"``: ``0.16 * log_1.6(m) ** 1.8`` with ``m`` the number of
        members of ``c`` in the cluster (imbalanced-learn's formula; the paper uses the number
        of features).
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB; the sparsity is
        always Euclidean).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples asked}``
    kmeans_estimator_ : the fitted clusterer
    nn_k_ : NearestNeighbors-like
        The search object (``gpuknn.NearestNeighbors(k + 1)`` for an int), fitted on the last
        cluster searched.
    cluster_labels_ : int64 array (n,), the cluster of each input row (host)
    cluster_balance_threshold_ : "auto" or float (``-inf`` with a single cluster)
    valid_clusters_ : dict ``{label: int64 array}``, the kept clusters, ascending
    cluster_weights_ : dict ``{label: float64 array}``, their weights ``w``
    n_generated_ : dict ``{label: int64 array}``, the new points made in each kept cluster
    base_indices_, neighbor_indices_ : int64 arrays (n_new,)
        Indices into the input of each new point's base sample and chosen neighbour.

    Notes
    -----
    As in imbalanced-learn, the random stream is re-made with ``default_rng(random_state)``
    for **each** kept cluster (its ``check_random_state`` per ``_make_samples`` call: an int
    seed restarts the same stream, a Generator continues), drawing ``integers(0, m * k, n_k)``
    (base row ``// k``, neighbour column ``% k``) then ``random(n_k)``. imbalanced-learn
    re-fits the clusterer for every class; gpuknn clusters once (the same partition for a
    deterministic clusterer). The point itself is removed from its neighbour list by index
    (imbalanced-learn drops the first column), which only differs among exact duplicates.
    Output: X, then the new points class by class (sorted labels), cluster by cluster.

    Raises
    ------
    InvalidInputError
        A bad argument (named); a class to over-sample has fewer than ``k_neighbors + 1``
        samples.
    ResamplingError
        No cluster is kept for a class to over-sample (a ``RuntimeError``, as
        imbalanced-learn raises).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1], [0.05, 0.0], [0.0, 0.05],
    ...               [5.0, 5.0], [5.1, 5.0], [5.0, 5.1], [5.1, 5.1], [5.05, 5.05], [5.0, 5.05]])
    >>> y = np.array([0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0])
    >>> init = np.array([[0.0, 0.0], [5.0, 5.0]])
    >>> sm = KMeansSMOTE(kmeans_estimator=KMeans(2, init=init, n_init=1), k_neighbors=1,
    ...                  random_state=0)
    >>> Xr, yr = sm.fit_resample(X, y)
    >>> sm.valid_clusters_[1].tolist(), sm.n_generated_[1].tolist(), int((yr == 1).sum())
    ([1], [2], 7)
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 2,
        kmeans_estimator: Any = None,
        cluster_balance_threshold: Any = "auto",
        density_exponent: Any = "auto",
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.kmeans_estimator = kmeans_estimator
        self.cluster_balance_threshold = cluster_balance_threshold
        self.density_exponent = density_exponent
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _clusterer(self) -> Any:
        est = self.kmeans_estimator
        if est is None:
            return KMeans(_DEFAULT_N_CLUSTERS, n_init=_DEFAULT_N_INIT, random_state=self.random_state)
        if isinstance(est, (numbers.Integral, np.integer)) and not isinstance(est, bool):
            n = check_int(est, name="kmeans_estimator", low=1)
            return KMeans(n, n_init=_DEFAULT_N_INIT, random_state=self.random_state)
        if not (hasattr(est, "fit_predict") or hasattr(est, "fit")):
            raise InvalidInputError(
                f"kmeans_estimator must be None, an int >= 1 or a clusterer with fit_predict, got {est!r}"
            )
        return clone(est)

    def _cluster(self, X: Any) -> np.ndarray:
        est = self._clusterer()
        # gpuknn's estimators take X in its namespace; others get it on the host.
        Xin = X if isinstance(est, BaseEstimator) else to_numpy(X)
        labels = est.fit_predict(Xin) if hasattr(est, "fit_predict") else est.fit(Xin).labels_
        self.kmeans_estimator_ = est
        labels = np.asarray(to_numpy(labels)).astype(np.int64).reshape(-1)
        n_clusters = getattr(est, "n_clusters", None)
        self._n_clusters = int(n_clusters) if n_clusters is not None else int(labels.max()) + 1
        return labels

    def _sparsity(self, Xcc: Any, exponent: Any) -> float:
        xp_ = array_namespace(Xcc)
        m = int(Xcc.shape[0])
        total = 0.0
        for start, D in pairwise_distances_chunked(Xcc, metric="euclidean", working_memory=self.working_memory):
            r = int(D.shape[0])
            dev = device_of(D)
            diag = xp_.arange(r, device=dev)[:, None] + start == xp_.arange(m, device=dev)[None, :]
            total += float(xp_.sum(xp_.where(diag, xp_.zeros_like(D), D)))
        mean = total / (m * m - m)
        e = math.log(m, 1.6) ** 1.8 * 0.16 if exponent == "auto" else exponent
        return mean**e / m

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        k, self.nn_k_, est = neighbors_param(
            self.k_neighbors, "k_neighbors", metric=self.metric, working_memory=self.working_memory
        )
        if not isinstance(self.metric, str):
            raise InvalidInputError(f"metric must be a string, got {self.metric!r}")
        if self.working_memory is not None:
            check_working_memory(self.working_memory, None)  # refuses all but a positive number of MiB
        threshold = _real_or_auto(self.cluster_balance_threshold, "cluster_balance_threshold")
        exponent = _real_or_auto(self.density_exponent, "density_exponent")
        check_class_sizes(self._strategy, lab, k, f"KMeansSMOTE with k_neighbors={k}")
        self.valid_clusters_, self.cluster_weights_, self.n_generated_ = {}, {}, {}
        new_rows, new_codes, bases, nbrs = [], [], [], []
        if not any(self._strategy.values()):
            return record_segments(self, new_rows, new_codes, bases, nbrs, xp)
        clusters = self._cluster(X)
        self.cluster_labels_ = clusters
        self.cluster_balance_threshold_ = threshold if self._n_clusters != 1 else -np.inf
        total_new = sum(self._strategy.values())
        dev = device_of(X)
        kw = dict(metric=self.metric, working_memory=self.working_memory)
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            bar = (
                n_new / total_new / 2 if self.cluster_balance_threshold_ == "auto" else self.cluster_balance_threshold_
            )
            kept, sparsity, member_sets = [], [], []
            for j in range(self._n_clusters):
                in_j = clusters == j
                size = int(in_j.sum())
                members = np.flatnonzero(in_j & (lab.codes == c))
                if size == 0 or members.shape[0] / size < bar or members.shape[0] < k + 1:
                    continue
                Xcc = xp.take(X, from_numpy(members, xp, device=dev), axis=0)
                kept.append(j)
                member_sets.append((members, Xcc))
                sparsity.append(self._sparsity(Xcc, exponent))
            if not kept:
                raise ResamplingError(
                    f"KMeansSMOTE: no cluster has enough samples of class {lab.label(c)!r} "
                    f"(cluster_balance_threshold={self.cluster_balance_threshold!r}, k_neighbors={k}); "
                    "lower cluster_balance_threshold or use more clusters (kmeans_estimator)"
                )
            sparsity = np.asarray(sparsity, dtype=np.float64)
            weights = sparsity / sparsity.sum()
            if not np.all(np.isfinite(weights)):
                raise InvalidInputError(
                    f"KMeansSMOTE: the cluster sparsities of class {lab.label(c)!r} are {sparsity.tolist()} "
                    f"(duplicated samples or density_exponent={self.density_exponent!r}); cannot weight them"
                )
            counts = np.array([int(math.ceil(n_new * w)) for w in weights], dtype=np.int64)
            label = lab.label(c)
            self.valid_clusters_[label] = np.asarray(kept, dtype=np.int64)
            self.cluster_weights_[label] = weights
            self.n_generated_[label] = counts
            for (members, Xcc), n_k in zip(member_sets, counts):
                rng = default_rng(self.random_state)
                flat = np.asarray(rng.integers(0, members.shape[0] * k, size=int(n_k)), dtype=np.int64)
                steps = np.asarray(rng.random(int(n_k)), dtype=np.float64)
                if n_k == 0:
                    continue
                nn = self_neighbors(Xcc, k, estimator=est, **kw)
                fitted(self.nn_k_, est, Xcc)
                X_new, pick = interpolate(Xcc, Xcc, nn, flat // k, flat % k, steps)
                new_rows.append(X_new)
                new_codes.append(np.full(int(n_k), c, dtype=np.int64))
                bases.append(members[flat // k])
                nbrs.append(members[to_numpy(pick).astype(np.int64)])
        return record_segments(self, new_rows, new_codes, bases, nbrs, xp)
