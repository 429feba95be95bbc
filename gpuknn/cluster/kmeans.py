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
from typing import Any

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin

from .._backend import array_namespace, device_of, from_numpy, to_numpy, validate_matrix
from .._delegation import on_input_device
from ..base import BaseEstimator, check_is_fitted, validate_data
from ..errors import InvalidInputError

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
    n_clusters : int
    init : "k-means++" or array of shape (n_clusters, d)
        With an array, a single run is made (``n_init`` is ignored).
    n_init : int
        Number of seeded runs; the one with the lowest inertia is kept.
    max_iter : int
    tol : float
        Relative tolerance on the total squared centre shift, scaled by the mean feature
        variance of X (scikit-learn's semantics).
    random_state : int, numpy Generator or None

    Attributes
    ----------
    cluster_centers_ : array (n_clusters, d)
    labels_ : int64 array (n,)
    inertia_ : float, sum of squared distances to the assigned centre
    n_iter_ : int, iterations of the kept run

    Complexity O(n_init · n_iter · n K d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> km = KMeans(2, random_state=0).fit(X)
    >>> round(km.inertia_, 6)
    0.01
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init=10, max_iter=300, tol=1e-4, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _check(self, X: Any) -> tuple[Any, Any]:
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)
        n = int(X.shape[0])
        if not isinstance(self.n_clusters, (int, np.integer)) or not 1 <= self.n_clusters <= n:
            raise InvalidInputError(f"n_clusters must be an int in [1, n_samples={n}], got {self.n_clusters!r}")
        if int(self.max_iter) < 1 or int(self.n_init) < 1 or float(self.tol) < 0:
            raise InvalidInputError(
                f"need max_iter >= 1, n_init >= 1, tol >= 0; got {self.max_iter}, {self.n_init}, {self.tol}"
            )
        return X, xp

    def fit(self, X: Any, y: Any = None) -> KMeans:
        """Cluster X (n, d); returns self."""
        X, xp = self._check(X)
        K = int(self.n_clusters)
        mean = xp.mean(X, axis=0)
        Xc = X - mean  # centring keeps the GEMM form accurate, as scikit-learn does
        x_sq = xp.sum(Xc * Xc, axis=1)
        tol = float(xp.mean(xp.var(X, axis=0))) * float(self.tol)
        if isinstance(self.init, str):
            if self.init != "k-means++":
                raise InvalidInputError(f"init must be 'k-means++' or an array, got {self.init!r}")
            rng = np.random.default_rng(self.random_state)
            starts = [kmeans_plusplus(Xc, K, random_state=rng)[0] for _ in range(int(self.n_init))]
        else:
            C0 = (
                self.init if hasattr(self.init, "shape") else from_numpy(np.asarray(self.init), xp, device=device_of(X))
            )
            C0 = validate_matrix(C0, xp, name="init", dtype=X.dtype, device=device_of(X))
            if tuple(C0.shape) != (K, int(X.shape[1])):
                raise InvalidInputError(f"init must have shape {(K, int(X.shape[1]))}, got {tuple(C0.shape)}")
            starts = [C0 - mean]
        best = None
        for C in starts:
            run = _lloyd(Xc, x_sq, C, int(self.max_iter), tol, xp)
            if best is None or run[1] < best[1]:
                best = run
        labels, inertia, centers, n_iter = best
        self.labels_, self.inertia_, self.n_iter_ = labels, inertia, n_iter
        self.cluster_centers_ = centers + mean
        self.n_features_in_ = int(X.shape[1])
        return self

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
