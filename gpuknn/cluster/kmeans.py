"""k-means (Lloyd) with greedy k-means++ seeding, array-API generic.

The assignment step is one GEMM per iteration: ``argmin_k |c_k|² − 2 x·c_k`` (the
euclidean GEMM form; ``|x|²`` is constant per row and dropped). Ties go to the lower
cluster index. The iteration follows scikit-learn's ``lloyd`` exactly:

* stop when the labels no longer change ("strict convergence"), or when the total squared
  centre shift ``Σ_k |c_k^new − c_k|²`` is ``<= tol · mean_j var(X[:, j])``;
* if stopped by ``tol`` or ``max_iter``, relabel once with the final centres;
* an emptied cluster is moved to the point farthest from its centre (largest first).

Randomness (the k-means++ draws) comes from ``numpy.random.default_rng(random_state)``
on the host; the arrays stay in X's namespace.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from .._backend import array_namespace, device_of, from_numpy, into_namespace, to_numpy, validate_matrix
from .._delegation import on_input_device
from ..base import BaseEstimator, check_is_fitted, validate_data
from ..errors import FewerClustersWarning, InvalidInputError

__all__ = ["KMeans", "kmeans_plusplus"]


def _sq_dists(X: Any, x_sq: Any, C: Any, xp: Any) -> Any:
    """(n, K) squared euclidean distances by the GEMM form, clipped at 0."""
    c_sq = xp.sum(C * C, axis=1)
    return xp.clip(x_sq[:, None] - 2.0 * (X @ C.T) + c_sq[None, :], min=0.0)


@on_input_device
def kmeans_plusplus(X: Any, n_clusters: int, *, random_state: Any = None) -> tuple[Any, Any]:
    """Greedy k-means++ seeding (Arthur & Vassilvitskii; scikit-learn's variant).

    Each new centre is the best of ``2 + floor(ln K)`` candidates drawn with probability
    proportional to the squared distance to the nearest chosen centre.

    Parameters
    ----------
    X : array of shape (n, d)
    n_clusters : int, 1 <= K <= n
    random_state : int, numpy Generator or None

    Returns
    -------
    centers : array of shape (K, d) in X's namespace
    indices : int64 host array of shape (K,), rows of X chosen

    Complexity O(K · (2 + ln K) · n d).

    Examples
    --------
    >>> import numpy as np
    >>> C, idx = kmeans_plusplus(np.array([[0.0], [0.1], [9.0]]), 2, random_state=0)
    >>> sorted(C[:, 0].tolist())[-1]
    9.0
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp)
    n = int(X.shape[0])
    if not 1 <= int(n_clusters) <= n:
        raise InvalidInputError(f"n_clusters must be in [1, n_samples={n}], got {n_clusters}")
    rng = random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    K = int(n_clusters)
    trials = 2 + int(math.log(K))
    x_sq = xp.sum(X * X, axis=1)
    first = int(rng.integers(n))
    ids = [first]
    closest = _sq_dists(X, x_sq, X[first : first + 1, :], xp)[:, 0]
    pot = xp.sum(closest)
    for _ in range(1, K):
        cum = xp.cumulative_sum(closest)
        draws = from_numpy(rng.uniform(size=trials), xp, device=device_of(X)) * pot
        cand = xp.clip(xp.searchsorted(cum, draws), max=n - 1)
        if float(pot) == 0.0:  # fewer distinct points than K: any point is as good
            cand = from_numpy(rng.integers(n, size=trials), xp, device=device_of(X))
        d_cand = xp.minimum(_sq_dists(X, x_sq, xp.take(X, cand, axis=0), xp), closest[:, None])
        pots = xp.sum(d_cand, axis=0)
        best = int(xp.argmin(pots))
        pot = pots[best]
        closest = d_cand[:, best]
        ids.append(int(cand[best]))
    idx = np.asarray(ids, dtype=np.int64)
    return xp.take(X, from_numpy(idx, xp, device=device_of(X)), axis=0), idx


def _update(X: Any, labels: Any, d_own: Any, K: int, xp: Any) -> Any:
    """New centres as cluster means; empty clusters take the farthest points."""
    onehot = xp.astype(labels[:, None] == xp.arange(K, device=device_of(labels))[None, :], X.dtype)
    counts = xp.sum(onehot, axis=0)
    sums = onehot.T @ X
    empty = np.nonzero(to_numpy(counts) == 0)[0]
    if empty.size:  # rare: host bookkeeping on K x d arrays is fine
        lab = to_numpy(labels)
        s_h, c_h = to_numpy(sums).copy(), to_numpy(counts).copy()
        # The farthest points, in order, each from a cluster it does not empty (a point alone
        # in its cluster stays: moving it would leave that cluster empty, a 0/0 mean).
        far = []
        for i in np.argsort(-to_numpy(d_own), kind="stable"):
            if len(far) == empty.size:
                break
            if c_h[lab[i]] > 1:
                c_h[lab[i]] -= 1
                far.append(int(i))
        X_far = to_numpy(xp.take(X, from_numpy(np.asarray(far, dtype=np.int64), xp, device=device_of(X)), axis=0))
        for e, i, x in zip(empty, far, X_far):
            s_h[lab[i]] -= x
            s_h[e], c_h[e] = x, 1
        sums, counts = from_numpy(s_h, xp, device=device_of(X)), from_numpy(c_h, xp, device=device_of(X))
    return sums / counts[:, None]


def _lloyd(X: Any, x_sq: Any, centers: Any, max_iter: int, tol: float, xp: Any):
    n = int(X.shape[0])
    K = int(centers.shape[0])
    labels_old = xp.full((n,), -1, dtype=xp.int64, device=device_of(X))
    strict = False
    i = 0
    for i in range(max_iter):  # noqa: B007 - the count is read after the loop
        D = _sq_dists(X, x_sq, centers, xp)
        labels = xp.astype(xp.argmin(D, axis=1), xp.int64)
        d_own = xp.take_along_axis(D, labels[:, None], axis=1)[:, 0]
        new = _update(X, labels, d_own, K, xp)
        shift = float(xp.sum((new - centers) ** 2))
        centers = new
        if bool(xp.all(labels == labels_old)):
            strict = True
            break
        if shift <= tol:
            break
        labels_old = labels
    if not strict:
        labels = xp.astype(xp.argmin(_sq_dists(X, x_sq, centers, xp), axis=1), xp.int64)
    R = X - xp.take(centers, labels, axis=0)  # exact residuals for the reported inertia
    return labels, float(xp.sum(R * R)), centers, i + 1


class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """k-means clustering (Lloyd's algorithm, k-means++ seeding), scikit-learn compatible.

    Parameters
    ----------
    n_clusters : int, default 8
    init : "k-means++", "random", callable or array of shape (n_clusters, d)
        ``"k-means++"``: greedy k-means++ seeding; ``"random"``: ``n_clusters`` distinct rows
        drawn uniformly (a permutation's first rows, as scikit-learn); a callable
        ``init(X, n_clusters, random_state)`` returns the initial centres, called as
        scikit-learn does with X **centred** on its column means (``random_state`` is the
        run's ``numpy.random.Generator``); an array gives the centres (a single run is made).
    n_init : "auto" or int, default "auto"
        Number of seeded runs; the one with the lowest inertia is kept. ``"auto"`` (as
        scikit-learn 1.4+): 1 for ``"k-means++"`` and an array, 10 for ``"random"`` and a
        callable. With an array only one run is made whatever ``n_init``.
    max_iter : int, default 300
    tol : float, default 1e-4
        Relative tolerance on the total squared centre shift, scaled by the mean feature
        variance of X (scikit-learn's semantics).
    verbose : int, default 0
        Accepted for scikit-learn compatibility; the library never prints.
    random_state : int, numpy Generator or None
    copy_x : bool, default True
        Accepted for scikit-learn compatibility: X is never modified (the centred copy the
        iterations run on is always a new array), so ``True`` and ``False`` behave alike.
    algorithm : {"lloyd", "elkan"}, default "lloyd"
        ``"elkan"`` is accepted and runs the same Lloyd iterations (one GEMM per
        iteration, no triangle-inequality bounds): the result is identical to ``"lloyd"``,
        as scikit-learn's two algorithms converge to the same partition.

    Attributes
    ----------
    cluster_centers_ : array (n_clusters, d)
    labels_ : int64 array (n,)
    inertia_ : float, sum of squared distances to the assigned centre
    n_iter_ : int, iterations of the kept run

    Warns
    -----
    FewerClustersWarning
        Fewer distinct labels than ``n_clusters`` were found (duplicate points); also
        scikit-learn's ``ConvergenceWarning``.

    Complexity O(n_init · n_iter · n K d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> km = KMeans(2, random_state=0).fit(X)
    >>> round(km.inertia_, 6)
    0.01
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        verbose=0,
        random_state=None,
        copy_x=True,
        algorithm="lloyd",
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm

    def _n_init(self) -> int:
        """``n_init`` resolved as scikit-learn 1.9 does ("auto": 1 or 10 by ``init``)."""
        n_init = self.n_init
        if isinstance(n_init, str):
            if n_init != "auto":
                raise InvalidInputError(f"n_init must be 'auto' or an int >= 1, got {n_init!r}")
            return 10 if (isinstance(self.init, str) and self.init == "random") or callable(self.init) else 1
        if isinstance(n_init, bool) or not isinstance(n_init, numbers.Integral) or int(n_init) < 1:
            raise InvalidInputError(f"n_init must be 'auto' or an int >= 1, got {n_init!r}")
        return int(n_init)

    def _check(self, X: Any) -> tuple[Any, Any]:
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)
        n = int(X.shape[0])
        if not isinstance(self.n_clusters, (int, np.integer)) or not 1 <= self.n_clusters <= n:
            raise InvalidInputError(f"n_clusters must be an int in [1, n_samples={n}], got {self.n_clusters!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise InvalidInputError(f"max_iter must be an int >= 1, got {self.max_iter!r}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or not float(self.tol) >= 0:
            raise InvalidInputError(f"tol must be a float >= 0, got {self.tol!r}")
        if not isinstance(self.algorithm, str) or self.algorithm not in ("lloyd", "elkan"):
            raise InvalidInputError(f"algorithm must be 'lloyd' or 'elkan', got {self.algorithm!r}")
        self._n_init()  # validated here, used in fit
        return X, xp

    def fit(self, X: Any, y: Any = None) -> KMeans:
        """Cluster X (n, d); returns self."""
        X, xp = self._check(X)
        K = int(self.n_clusters)
        mean = xp.mean(X, axis=0)
        Xc = X - mean  # centring keeps the GEMM form accurate, as scikit-learn does
        x_sq = xp.sum(Xc * Xc, axis=1)
        tol = float(xp.mean(xp.var(X, axis=0))) * float(self.tol)
        n = int(X.shape[0])
        init = self.init
        rng = np.random.default_rng(self.random_state)
        if isinstance(init, str):
            if init not in ("k-means++", "random"):
                raise InvalidInputError(f"init must be 'k-means++', 'random', a callable or an array, got {init!r}")
            n_runs = self._n_init()
        elif callable(init):
            n_runs = self._n_init()
        else:
            C0 = self._centres(init, X, K, xp)
            n_runs = 1
        kind = init if isinstance(init, str) else "callable" if callable(init) else "array"
        best = None
        # Each run is seeded and iterated before the next is drawn, so only one set of
        # starting centres is held at a time.
        for _ in range(n_runs):
            if kind == "k-means++":
                C = kmeans_plusplus(Xc, K, random_state=rng)[0]
            elif kind == "random":
                pick = from_numpy(rng.permutation(n)[:K].astype(np.int64), xp, device=device_of(X))
                C = xp.take(Xc, pick, axis=0)
            elif kind == "callable":
                C = self._centres(init(Xc, K, random_state=rng), X, K, xp)
            else:
                C = C0 - mean
            run = _lloyd(Xc, x_sq, C, int(self.max_iter), tol, xp)
            if best is None or run[1] < best[1]:
                best = run
        labels, inertia, centers, n_iter = best
        distinct = int(np.unique(to_numpy(labels)).shape[0])
        if distinct < K:
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than n_clusters ({K}). "
                "Possibly due to duplicate points in X.",
                FewerClustersWarning,
                stacklevel=2,
            )
        self.labels_, self.inertia_, self.n_iter_ = labels, inertia, n_iter
        self.cluster_centers_ = centers + mean
        self.n_features_in_ = int(X.shape[1])
        return self

    @staticmethod
    def _centres(C0: Any, X: Any, K: int, xp: Any) -> Any:
        """An ``init`` array (or a callable's answer) as (K, d) centres in X's namespace."""
        dev = device_of(X)
        C0 = into_namespace(C0, xp, device=dev)
        C0 = validate_matrix(C0, xp, name="init", dtype=X.dtype, device=dev)
        if tuple(C0.shape) != (K, int(X.shape[1])):
            raise InvalidInputError(f"init must have shape {(K, int(X.shape[1]))}, got {tuple(C0.shape)}")
        return C0

    def score(self, X: Any, y: Any = None, sample_weight: Any = None) -> float:
        """Opposite of the k-means objective of X on the fitted centres (scikit-learn's
        ``score``): ``-sum_i min_k |x_i - c_k|^2``, optionally weighted per row."""
        X, xp = self._checked_input(X)
        C = self.cluster_centers_
        labels = xp.argmin(_sq_dists(X, xp.sum(X * X, axis=1), C, xp), axis=1)
        R = X - xp.take(C, labels, axis=0)  # exact residuals, as the fitted inertia
        d = xp.sum(R * R, axis=1)
        if sample_weight is not None:
            w = from_numpy(np.asarray(to_numpy(sample_weight), dtype=np.float64), xp, device=device_of(X))
            if tuple(w.shape) != (int(X.shape[0]),):
                raise InvalidInputError(f"sample_weight must have shape ({int(X.shape[0])},), got {tuple(w.shape)}")
            d = d * xp.astype(w, d.dtype)
        return -float(xp.sum(d))

    @property
    def _n_features_out(self) -> int:
        """Output width of ``transform`` for ``get_feature_names_out`` (one per centre)."""
        return int(self.cluster_centers_.shape[0])

    def _checked_input(self, X: Any) -> tuple[Any, Any]:
        check_is_fitted(self, "cluster_centers_")
        xp = array_namespace(self.cluster_centers_)
        X = validate_data(self, X, reset=False, xp=xp, device=device_of(self.cluster_centers_))
        return X, xp

    def transform(self, X: Any) -> Any:
        """Euclidean distances (n, n_clusters) of X's rows to the centres."""
        X, xp = self._checked_input(X)
        return xp.sqrt(_sq_dists(X, xp.sum(X * X, axis=1), self.cluster_centers_, xp))

    def predict(self, X: Any) -> Any:
        """Index of the nearest centre for each row of X (ties -> lower index)."""
        X, xp = self._checked_input(X)
        return xp.astype(xp.argmin(_sq_dists(X, xp.sum(X * X, axis=1), self.cluster_centers_, xp), axis=1), xp.int64)

    def fit_predict(self, X: Any, y: Any = None) -> Any:
        """Fit and return ``labels_``."""
        return self.fit(X).labels_
