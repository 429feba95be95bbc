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
from .._delegation import on_input_device, sqdist64
from ..base import BaseEstimator, check_is_fitted, validate_data
from ..errors import FewerClustersWarning, InvalidInputError

__all__ = ["KMeans", "kmeans_plusplus"]


def _sq_dists(X: Any, x_sq: Any, C: Any, xp: Any) -> Any:
    """(n, K) squared euclidean distances by the GEMM form, clipped at 0."""
    c_sq = xp.sum(C * C, axis=1)
    return xp.clip(x_sq[:, None] - 2.0 * (X @ C.T) + c_sq[None, :], min=0.0)


def _as_rng(random_state: Any) -> np.random.Generator:
    """``random_state`` as a numpy Generator: a Generator is used as is; a legacy
    ``RandomState`` (what scikit-learn passes its private helpers) seeds a new Generator from
    its stream, so a seeded ``RandomState`` still gives reproducible draws."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(np.iinfo(np.int32).max)))
    return np.random.default_rng(random_state)


def _check_sample_weight(sample_weight: Any, n: int, X: Any, xp: Any) -> Any:
    """``sample_weight`` as a 1-D array of X's dtype in X's namespace (None stays None);
    :class:`InvalidInputError` for another length, NaN/infinity, a negative weight or an
    all-zero vector (nothing to cluster), as scikit-learn's ``_check_sample_weight``."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        w = np.full(n, float(sample_weight))
    else:  # never a view of the caller's array: the weights are not modified in place
        w = np.array(to_numpy(into_namespace(sample_weight, np)), dtype=np.float64)
    if w.shape != (n,):
        raise InvalidInputError(f"sample_weight must be of shape ({n},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InvalidInputError("sample_weight contains NaN or infinity")
    if np.any(w < 0):
        raise InvalidInputError(f"sample_weight must be non-negative, got a minimum of {float(w.min())}")
    if not np.any(w > 0):
        raise InvalidInputError("sample_weight must have a positive entry, got all zeros")
    return from_numpy(w.astype(to_numpy(X[:1, :1]).dtype), xp, device=device_of(X))


@on_input_device
def kmeans_plusplus(
    X: Any,
    n_clusters: int,
    *,
    sample_weight: Any = None,
    x_squared_norms: Any = None,
    random_state: Any = None,
    n_local_trials: int | None = None,
) -> tuple[Any, Any]:
    """Greedy k-means++ seeding (Arthur & Vassilvitskii; scikit-learn's variant).

    Each new centre is the best of ``n_local_trials`` candidates drawn with probability
    proportional to the (weighted) squared distance to the nearest chosen centre.

    Parameters
    ----------
    X : array of shape (n, d)
    n_clusters : int, 1 <= K <= n
    sample_weight : array of shape (n,), optional
        Non-negative weights: the first centre is drawn with probability proportional to
        the weight, the others proportional to weight times squared distance (a zero-weight
        row is never chosen while a positive-weight row is left). None: all ones.
    x_squared_norms : array of shape (n,), optional
        Precomputed ``|x_i|^2`` (scikit-learn's argument); computed when None.
    random_state : int, numpy Generator, numpy RandomState or None
    n_local_trials : int, optional
        Candidates per centre; default ``2 + floor(ln K)``.

    Returns
    -------
    centers : array of shape (K, d) in X's namespace
    indices : int64 host array of shape (K,), rows of X chosen

    Complexity O(K · n_local_trials · n d).

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
    if x_squared_norms is None:
        x_sq = xp.sum(X * X, axis=1)
    else:
        x_sq = into_namespace(x_squared_norms, xp, device=device_of(X))
        # scikit-learn's wording, which its tests match
        if x_sq.ndim != 1 or int(x_sq.shape[0]) != n:
            raise InvalidInputError(
                f"The length of x_squared_norms {int(x_sq.shape[0]) if x_sq.ndim else 0} should be equal to "
                f"the length of n_samples {n}."
            )
        x_sq = xp.astype(x_sq, X.dtype)
    w = _check_sample_weight(sample_weight, n, X, xp)
    return _plusplus(X, x_sq, int(n_clusters), w, _as_rng(random_state), n_local_trials, xp)


def _seeding_weights(w: Any) -> Any:
    """None for equal weights, which draw as no weights (the same stream): weights all one
    give the result of no weights, as scikit-learn's tests require; else ``w``."""
    if w is None:
        return None
    p = to_numpy(w)
    return None if p.min() == p.max() else w


def _plusplus(X: Any, x_sq: Any, K: int, w: Any, rng: np.random.Generator, trials: Any, xp: Any):
    """k-means++ on validated inputs (``w`` None: unweighted, the historical stream)."""
    n = int(X.shape[0])
    w = _seeding_weights(w)
    trials = 2 + int(math.log(K)) if trials is None else int(trials)
    dev = device_of(X)
    if w is None:
        first = int(rng.integers(n))
    else:
        p = np.asarray(to_numpy(w), dtype=np.float64)
        first = int(rng.choice(n, p=p / p.sum()))
    ids = [first]
    closest = _sq_dists(X, x_sq, X[first : first + 1, :], xp)[:, 0]
    wc = closest if w is None else w * closest
    pot = xp.sum(wc)
    for _ in range(1, K):
        cum = xp.cumulative_sum(wc)
        draws = from_numpy(rng.uniform(size=trials), xp, device=dev) * pot
        cand = xp.clip(xp.searchsorted(cum, xp.astype(draws, cum.dtype)), max=n - 1)
        if float(pot) == 0.0:  # fewer distinct points than K: any (weighted) point is as good
            if w is None:
                cand = from_numpy(rng.integers(n, size=trials), xp, device=dev)
            else:
                cand = from_numpy(rng.choice(n, size=trials, p=p / p.sum()).astype(np.int64), xp, device=dev)
        d_cand = xp.minimum(_sq_dists(X, x_sq, xp.take(X, cand, axis=0), xp), closest[:, None])
        pots = xp.sum(d_cand if w is None else w[:, None] * d_cand, axis=0)
        best = int(xp.argmin(pots))
        pot = pots[best]
        closest = d_cand[:, best]
        wc = closest if w is None else w * closest
        ids.append(int(cand[best]))
    idx = np.asarray(ids, dtype=np.int64)
    return xp.take(X, from_numpy(idx, xp, device=dev), axis=0), idx


def _update(X: Any, labels: Any, d_own: Any, K: int, xp: Any, w: Any = None) -> Any:
    """New centres as (weighted) cluster means; empty clusters take the farthest points.

    A cluster is empty when its total weight is 0 (scikit-learn's rule, so a cluster holding
    only zero-weight rows is relocated too)."""
    onehot = xp.astype(labels[:, None] == xp.arange(K, device=device_of(labels))[None, :], X.dtype)
    if w is None:
        counts = xp.sum(onehot, axis=0)
        sums = onehot.T @ X
    else:
        counts = w @ onehot
        sums = onehot.T @ (w[:, None] * X)
    empty = np.nonzero(to_numpy(counts) == 0)[0]
    if empty.size:  # rare: host bookkeeping on K x d arrays is fine
        lab = to_numpy(labels)
        s_h, c_h = to_numpy(sums).copy(), to_numpy(counts).copy()
        w_h = np.ones(lab.shape[0]) if w is None else to_numpy(w)
        members = np.bincount(lab, minlength=K)
        # The farthest points, in order, each from a cluster it does not empty (a point alone
        # in its cluster stays: moving it would leave that cluster empty, a 0/0 mean).
        far = []
        for i in np.argsort(-to_numpy(d_own), kind="stable"):
            if len(far) == empty.size:
                break
            if members[lab[i]] > 1:
                members[lab[i]] -= 1
                far.append(int(i))
        X_far = to_numpy(xp.take(X, from_numpy(np.asarray(far, dtype=np.int64), xp, device=device_of(X)), axis=0))
        for e, i, x in zip(empty, far, X_far):
            s_h[lab[i]] -= w_h[i] * x
            c_h[lab[i]] -= w_h[i]
            s_h[e], c_h[e] = w_h[i] * x, w_h[i]
        sums, counts = from_numpy(s_h, xp, device=device_of(X)), from_numpy(c_h, xp, device=device_of(X))
    # A cluster left with weight 0 (its relocated point weighs 0) keeps a zero sum: divide by 1.
    return sums / xp.where(counts > 0, counts, xp.ones_like(counts))[:, None]


def _lloyd(X: Any, x_sq: Any, centers: Any, max_iter: int, tol: float, xp: Any, w: Any = None):
    n = int(X.shape[0])
    K = int(centers.shape[0])
    labels_old = xp.full((n,), -1, dtype=xp.int64, device=device_of(X))
    strict = False
    i = 0
    for i in range(max_iter):  # noqa: B007 - the count is read after the loop
        D = _sq_dists(X, x_sq, centers, xp)
        labels = xp.astype(xp.argmin(D, axis=1), xp.int64)
        d_own = xp.take_along_axis(D, labels[:, None], axis=1)[:, 0]
        new = _update(X, labels, d_own, K, xp, w)
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
    r2 = xp.sum(R * R, axis=1)
    return labels, float(xp.sum(r2 if w is None else w * r2)), centers, i + 1


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
        callable. With an array only one run is made whatever ``n_init`` (an explicit
        ``n_init`` other than 1 warns, ``RuntimeWarning``, as scikit-learn).
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
    RuntimeWarning
        ``init`` an array with ``n_init`` other than 1 or "auto"; ``algorithm="elkan"`` with
        one cluster (scikit-learn's warnings).
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

    def _resolve_n_init(self) -> int:
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
        # scikit-learn's private attribute, which its tests read: the number of runs made.
        self._n_init = self._resolve_n_init()
        if not isinstance(self.init, str) and not callable(self.init) and self._n_init != 1:
            warnings.warn(
                "Explicit initial center position passed: performing only one init in "
                f"{type(self).__name__} instead of n_init={self._n_init}.",
                RuntimeWarning,
                stacklevel=3,
            )
            self._n_init = 1
        if self.algorithm == "elkan" and int(self.n_clusters) == 1:
            # scikit-learn's warning; both algorithms run the same Lloyd iterations here
            warnings.warn(
                "algorithm='elkan' doesn't make sense for a single cluster. Using 'lloyd' instead.",
                RuntimeWarning,
                stacklevel=3,
            )
        return X, xp

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> KMeans:
        """Cluster X (n, d); returns self.

        Parameters
        ----------
        X : array of shape (n, d)
        y : ignored
        sample_weight : array of shape (n,), optional
            Non-negative weight of each row (scikit-learn's semantics): the centres are
            weighted means, ``inertia_`` the weighted sum of squared distances, and the
            seeding draws proportionally to the weights. A weight of ``m`` gives the same
            clustering as ``m`` copies of the row (with array ``init``). None: all ones.
        """
        X, xp = self._check(X)
        K = int(self.n_clusters)
        n = int(X.shape[0])
        w = _check_sample_weight(sample_weight, n, X, xp)
        mean = xp.mean(X, axis=0)
        Xc = X - mean  # centring keeps the GEMM form accurate, as scikit-learn does
        x_sq = xp.sum(Xc * Xc, axis=1)
        tol = float(xp.mean(xp.var(X, axis=0))) * float(self.tol)
        init = self.init
        rng = np.random.default_rng(self.random_state)
        if isinstance(init, str) and init not in ("k-means++", "random"):
            raise InvalidInputError(f"init must be 'k-means++', 'random', a callable or an array, got {init!r}")
        C0 = None if isinstance(init, str) or callable(init) else self._centres(init, X, K, xp) - mean
        best = None
        # Each run is seeded and iterated before the next is drawn, so only one set of
        # starting centres is held at a time.
        for _ in range(self._n_init):
            C = C0 if C0 is not None else self._seed(Xc, x_sq, init, rng, w, K, X, xp)
            run = _lloyd(Xc, x_sq, C, int(self.max_iter), tol, xp, w)
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

    def _seed(self, Xc: Any, x_sq: Any, init: Any, rng: np.random.Generator, w: Any, K: int, X: Any, xp: Any) -> Any:
        """One run's starting centres from a string or callable ``init`` (on centred X)."""
        n = int(Xc.shape[0])
        if callable(init):
            return self._centres(init(Xc, K, random_state=rng), X, K, xp)
        if init == "k-means++":
            return _plusplus(Xc, x_sq, K, w, rng, None, xp)[0]
        w = _seeding_weights(w)
        if w is None:  # a permutation's first rows: K distinct rows, uniformly
            pick = rng.permutation(n)[:K]
        else:  # distinct rows drawn proportionally to the weights, as scikit-learn
            p = np.asarray(to_numpy(w), dtype=np.float64)
            pick = rng.choice(n, size=K, replace=False, p=p / p.sum())
        return xp.take(Xc, from_numpy(pick.astype(np.int64), xp, device=device_of(X)), axis=0)

    def _init_centroids(
        self,
        X: Any,
        x_squared_norms: Any,
        init: Any,
        random_state: Any,
        sample_weight: Any,
        init_size: Any = None,
        n_centroids: Any = None,
    ) -> Any:
        """Starting centres as scikit-learn's private ``_BaseKMeans._init_centroids``
        (its tests call it): ``init`` as the estimator's, on X as given (not centred).
        ``init_size`` (MiniBatchKMeans' subsample) is not supported."""
        if init_size is not None:
            raise InvalidInputError(f"init_size is not supported, got {init_size!r}")
        xp = array_namespace(X)
        X = validate_matrix(X, xp)
        n = int(X.shape[0])
        K = int(self.n_clusters if n_centroids is None else n_centroids)
        x_sq = (
            xp.sum(X * X, axis=1)
            if x_squared_norms is None
            else into_namespace(x_squared_norms, xp, device=device_of(X))
        )
        w = _check_sample_weight(sample_weight, n, X, xp)
        if isinstance(init, str) and init not in ("k-means++", "random"):
            raise InvalidInputError(f"init must be 'k-means++', 'random', a callable or an array, got {init!r}")
        if isinstance(init, str) or callable(init):
            return self._seed(X, xp.astype(x_sq, X.dtype), init, _as_rng(random_state), w, K, X, xp)
        return self._centres(init, X, K, xp)

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
        C = self.cluster_centers_
        x_sq = xp.sum(X * X, axis=1)
        D = _sq_dists(X, x_sq, C, xp)
        # The GEMM form's rounding is ~eps (|x|^2 + |c|^2): a row at (or very near) a centre
        # gets a distance of that size instead of ~0. Those rows (few: at most the rows lying
        # on a centre) are recomputed from the differences, so a centre is at distance 0.
        eps = float(np.finfo(to_numpy(D[:1, :1]).dtype).eps)
        near = D <= math.sqrt(eps) * (x_sq[:, None] + xp.sum(C * C, axis=1)[None, :])
        rows = np.nonzero(to_numpy(xp.any(near, axis=1)))[0]
        if rows.size:
            dev = device_of(X)
            Xr = xp.take(X, from_numpy(rows.astype(np.int64), xp, device=dev), axis=0)
            exact = xp.astype(sqdist64(Xr[:, None, :], C[None, :, :]), D.dtype)
            idx = np.arange(int(X.shape[0]), dtype=np.int64)
            idx[rows] = int(X.shape[0]) + np.arange(rows.size)
            D = xp.take(xp.concat([D, exact], axis=0), from_numpy(idx, xp, device=dev), axis=0)
        return xp.sqrt(D)

    def predict(self, X: Any) -> Any:
        """Index of the nearest centre for each row of X (ties -> lower index)."""
        X, xp = self._checked_input(X)
        return xp.astype(xp.argmin(_sq_dists(X, xp.sum(X * X, axis=1), self.cluster_centers_, xp), axis=1), xp.int64)

    def fit_predict(self, X: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """Fit (with optional ``sample_weight``, as :meth:`fit`) and return ``labels_``."""
        return self.fit(X, sample_weight=sample_weight).labels_
