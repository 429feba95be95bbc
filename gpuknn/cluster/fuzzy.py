"""Fuzzy c-means (Bezdek), array-API generic.

Alternates the two optimality conditions of ``J_m = Σ_i Σ_k u_ik^m |x_i − v_k|²``:

* centres ``v_k = Σ_i u_ik^m x_i / Σ_i u_ik^m``;
* memberships ``u_ik = 1 / Σ_j (|x_i − v_k|² / |x_i − v_j|²)^{1/(m−1)}``.

A point lying on one or more centres belongs to them only (equal shares), so no 0/0 arises.
The loop stops when the largest membership change is below ``tol``; reaching ``max_iter``
first emits a :class:`~gpuknn.errors.ConvergenceWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import ClusterMixin

from .._backend import array_namespace, device_of, from_numpy
from ..base import BaseEstimator, check_is_fitted, validate_data
from ..errors import ConvergenceWarning, InvalidInputError
from .kmeans import _sq_dists

__all__ = ["FuzzyCMeans"]


def _memberships(d2: Any, m: float, xp: Any) -> Any:
    """Membership rows from squared distances (n, K), scaled by the row minimum for range safety."""
    dmin = xp.min(d2, axis=1, keepdims=True)
    on_centre = d2 <= 0.0
    safe = xp.where(on_centre, xp.ones_like(d2), d2)
    w = xp.where(on_centre, xp.ones_like(d2), (dmin / safe) ** (1.0 / (m - 1.0)))
    # rows with a point on a centre: only the zero-distance entries keep weight
    any_zero = dmin <= 0.0
    w = xp.where(any_zero & ~on_centre, xp.zeros_like(w), w)
    return w / xp.sum(w, axis=1, keepdims=True)


class FuzzyCMeans(ClusterMixin, BaseEstimator):
    """Fuzzy c-means clustering.

    Parameters
    ----------
    n_clusters : int
    m : float
        Fuzzifier, > 1 (m → 1 approaches k-means; 2 is customary).
    max_iter : int
    tol : float
        Stop when ``max |u_new − u| < tol``.
    random_state : int, numpy Generator or None
        Seeds the random initial memberships (host NumPy).

    Attributes
    ----------
    u_ : array (n, n_clusters), rows summing to 1
    cluster_centers_ : array (n_clusters, d), the centres of ``u_``
    labels_ : int64 array (n,), ``argmax`` of ``u_`` (ties -> lower index)
    objective_ : float, J_m at ``u_`` and ``cluster_centers_``
    n_iter_ : int

    Complexity O(n_iter · n K d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2]])
    >>> fcm = FuzzyCMeans(2, random_state=0).fit(X)
    >>> sorted(np.round(fcm.cluster_centers_[:, 0], 1).tolist())
    [0.1, 5.1]
    """

    def __init__(self, n_clusters=3, *, m=2.0, max_iter=300, tol=1e-5, random_state=None):
        self.n_clusters = n_clusters
        self.m = m
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> FuzzyCMeans:
        """Cluster X (n, d); returns self."""
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)
        n = int(X.shape[0])
        K = self.n_clusters
        if not isinstance(K, (int, np.integer)) or not 1 <= K <= n:
            raise InvalidInputError(f"n_clusters must be an int in [1, n_samples={n}], got {K!r}")
        m = float(self.m)
        if not m > 1.0:
            raise InvalidInputError(f"m must be > 1, got {self.m}")
        if int(self.max_iter) < 1 or float(self.tol) <= 0:
            raise InvalidInputError(f"need max_iter >= 1 and tol > 0, got {self.max_iter}, {self.tol}")
        rng = np.random.default_rng(self.random_state)
        u0 = rng.random((n, int(K)))
        u = xp.astype(from_numpy(u0 / u0.sum(axis=1, keepdims=True), xp, device=device_of(X)), X.dtype)
        mean = xp.mean(X, axis=0)
        Xc = X - mean
        x_sq = xp.sum(Xc * Xc, axis=1)

        def centres(u: Any) -> Any:
            um = u**m
            return (um.T @ Xc) / xp.sum(um, axis=0)[:, None]

        converged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):  # noqa: B007 - the count is read after the loop
            u_new = _memberships(_sq_dists(Xc, x_sq, centres(u), xp), m, xp)
            change = float(xp.max(xp.abs(u_new - u)))
            u = u_new
            if change < float(self.tol):
                converged = True
                break
        if not converged:
            warnings.warn(
                f"FuzzyCMeans stopped at max_iter={self.max_iter} before the membership change fell "
                f"below tol={self.tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        V = centres(u)
        R2 = _sq_dists(Xc, x_sq, V, xp)
        self.u_ = u
        self.cluster_centers_ = V + mean
        self.labels_ = xp.astype(xp.argmax(u, axis=1), xp.int64)
        self.objective_ = float(xp.sum((u**m) * R2))
        self.n_iter_ = it
        self.n_features_in_ = int(X.shape[1])
        return self

    def predict_membership(self, X: Any) -> Any:
        """Memberships (n, n_clusters) of new rows with respect to the fitted centres."""
        check_is_fitted(self, "cluster_centers_")
        xp = array_namespace(self.cluster_centers_)
        X = validate_data(self, X, reset=False, xp=xp, device=device_of(self.cluster_centers_))
        C = self.cluster_centers_
        return _memberships(_sq_dists(X, xp.sum(X * X, axis=1), C, xp), float(self.m), xp)

    def predict(self, X: Any) -> Any:
        """Cluster of largest membership for each row of X."""
        xp = array_namespace(X)
        return xp.astype(xp.argmax(self.predict_membership(X), axis=1), xp.int64)

    def fit_predict(self, X: Any, y: Any = None) -> Any:
        """Fit and return ``labels_``."""
        return self.fit(X).labels_
