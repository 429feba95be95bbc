"""What every neighbour estimator shares: :class:`NeighborsBase` (the training rows stored
and indexed once at ``fit``, the one ``n_neighbors`` check, the one call of the engine),
:class:`KNeighborsMixin` (``kneighbors``, ``kneighbors_graph``), :class:`RadiusNeighborsMixin`
(``radius_neighbors``, ``radius_neighbors_graph``) and :class:`NeighborsClassifierMixin`
(labels encoded at ``fit``, decoded at ``predict``) -- the shape of scikit-learn's
``sklearn.neighbors._base``.

**Where the results live.** ``kneighbors`` answers in the input's namespace and on its
device. ``radius_neighbors`` returns host NumPy object arrays of per-query NumPy arrays, as
scikit-learn does (no array library has ragged arrays). Graphs are
``cupyx.scipy.sparse.csr_matrix`` on the input's GPU for CuPy input and
``scipy.sparse.csr_matrix`` on the host otherwise (torch, ``array_api_strict``).

**Dask training data** stays lazy: the query methods answer through
:mod:`gpuknn.neighbors._dask` (imported only when a dask array is met).
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.neighbors._base import KNeighborsMixin as _SkKNeighborsMixin
from sklearn.neighbors._base import RadiusNeighborsMixin as _SkRadiusNeighborsMixin

from .._backend import array_namespace, check_int, device_of, to_numpy
from .._delegation import bincount, csr_matrix, device_scope, order_rows
from .._labels import encode_labels
from ..base import BaseEstimator, check_is_fitted, check_query, prediction_accuracy, uses_dask, validate_data
from ..errors import InvalidInputError
from ..ops.hostmetric import (
    HOST_METRICS,
    HostMetric,
    PreparedHost,
    check_precomputed,
    host_metric,
    is_distance_metric_object,
)
from ..ops.kdtree import build_tree, neighbors, resolve_algorithm
from ..ops.kneighbors import PreparedReference, dense_neighbors, drop_self
from ..ops.limits import check_working_memory
from ..ops.metricspec import INNER_METRICS, check_p, resolve_metric
from ..ops.radius import check_radius, radius_pairs, radius_pairs_kdtree, radius_rows, ragged, rescaled
from . import _dask  # dask's own modules load only when it runs (distributed._dask)

__all__ = ["NeighborsBase", "KNeighborsMixin", "RadiusNeighborsMixin", "NeighborsClassifierMixin"]

_MODES = ("connectivity", "distance")
_KD_TREE_METRICS = ("euclidean", "l2", "minkowski", "p", "manhattan", "cityblock", "l1", "chebyshev", "infinity")


def check_radius_value(radius: Any) -> float:
    """``radius`` as a float ``>= 0``; ``math.inf`` (scikit-learn's ``np.inf``: every training
    row is a neighbour) allowed, NaN and negatives refused by
    :func:`~gpuknn.ops.radius.check_radius`."""
    if not isinstance(radius, bool) and isinstance(radius, (int, float, np.floating, np.integer)):
        if float(radius) == math.inf:
            return math.inf
    return check_radius(radius)


def _fitted_rows(X: Any) -> Any:
    """The training rows of ``X`` when X is a fitted neighbour estimator (gpuknn's or
    scikit-learn's) or a scikit-learn ``KDTree`` / ``BallTree`` (scikit-learn's ``fit``
    accepts those as X), else X itself."""
    if isinstance(X, NeighborsBase):
        check_is_fitted(X, "_fit_X")
        return X._fit_X
    module = type(X).__module__
    if type(X).__name__ in ("KDTree", "BallTree") and module.startswith("sklearn."):
        return np.asarray(X.data)
    if module.startswith("sklearn.neighbors") and hasattr(X, "_fit_method"):  # a fitted scikit-learn estimator
        return np.asarray(X._fit_X)
    return X


def _is_sparse(X: Any) -> bool:
    return hasattr(X, "tocoo") and hasattr(X, "nnz")


def densify_graph(G: Any, *, name: str = "X") -> np.ndarray:
    """A sparse precomputed distance graph (scikit-learn's ``metric="precomputed"`` input,
    e.g. a :class:`KNeighborsTransformer`'s output) as a dense host float64 matrix: stored
    entries (explicit zeros included) keep their distance, absent ones are infinitely far,
    so only stored entries can be neighbours, as in scikit-learn. Dense: O(n_queries ·
    n_samples_fit) memory (the graphs of these pipelines are modest)."""
    if hasattr(G, "get"):  # a CuPy sparse matrix: its entries to the host
        G = G.get()
    coo = G.tocoo()
    D = np.full(coo.shape, np.inf)
    data = np.asarray(coo.data, dtype=np.float64)
    if data.size and (np.isnan(data).any() or (data < 0).any()):
        raise InvalidInputError(f"Negative values in data passed to precomputed distance matrix {name}.")
    D[np.asarray(coo.row), np.asarray(coo.col)] = data
    return D


def check_mode(mode: Any) -> None:
    """``mode`` of a graph method: ``"connectivity"`` or ``"distance"``."""
    if mode not in _MODES:
        raise InvalidInputError(f"mode must be 'connectivity' or 'distance', got {mode!r}")


class NeighborsBase(BaseEstimator):
    """Fitted-data storage and search of every neighbour estimator.

    ``fit`` validates the training rows once, keeps them in ``_fit_X`` and builds the
    search structure once: the prepared rows of the brute-force engine
    (:class:`~gpuknn.ops.kneighbors.PreparedReference`) or a k-d tree. Subclasses set
    ``_needs_distance`` when ``metric="inner"`` (a similarity) makes no sense for them.

    **Metrics** (scikit-learn's ``metric``, ``p``, ``metric_params``; ``p`` and
    ``metric_params`` read where the estimator has them): every name of
    :mod:`gpuknn.ops.metricspec` (the engine's inner-product metrics and the difference
    metrics), ``"precomputed"`` (X holds distances: ``(n_samples, n_samples)`` at ``fit``,
    ``(n_queries, n_samples_fit_)`` at query time; a sparse graph such as a
    :class:`KNeighborsTransformer`'s is densified, its absent entries infinitely far), a
    callable ``metric(x, y, **params)`` on host NumPy rows, scikit-learn's other brute
    metrics (``seuclidean``, ``mahalanobis``, ``haversine``, ``nan_euclidean`` -- NaN
    accepted in X --, the boolean metrics, ``minkowski`` with weights ``w``) and
    scikit-learn ``DistanceMetric`` objects, computed tile by tile on the host
    (:mod:`gpuknn.ops.hostmetric`). A 2-D ``y`` of several columns makes the classifiers
    multi-output (``outputs_2d_``), as in scikit-learn. ``effective_metric_`` and
    ``effective_metric_params_`` are set as scikit-learn sets them; ``_metric`` is the
    engine's name.
    """

    _needs_distance = False

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # X holds distances to the training rows: cross-validation splits both axes
        # (scikit-learn's _safe_split), as for scikit-learn's neighbour estimators.
        tags.input_tags.pairwise = isinstance(self.metric, str) and self.metric == "precomputed"
        return tags

    def _check_params(self) -> None:
        """Estimator-specific parameter checks (run first in ``fit``)."""

    def _resolve_metric(self) -> None:
        """``effective_metric_``, ``effective_metric_params_`` (scikit-learn's rules) and the
        engine's ``_metric`` from ``metric``, ``p`` and ``metric_params``."""
        metric, p = self.metric, getattr(self, "p", None)
        params = getattr(self, "metric_params", None)
        if params is not None and not isinstance(params, dict):
            raise InvalidInputError(f"metric_params must be a dict or None, got {params!r}")
        params = dict(params or {})
        if "p" in params and p is not None:
            warnings.warn(
                "Parameter p is found in metric_params. The corresponding parameter from __init__ is ignored.",
                SyntaxWarning,
                stacklevel=4,
            )
        if is_distance_metric_object(metric) or (isinstance(metric, str) and metric in HOST_METRICS):
            # served on the host (gpuknn.ops.hostmetric), by any algorithm (brute force)
            self.effective_metric_, self.effective_metric_params_, self._metric = metric, params, "callable"
            if isinstance(metric, str):
                HostMetric(metric, params)  # parameter names checked before the data are read
            return
        if callable(metric):
            if self.algorithm == "kd_tree":
                raise InvalidInputError(f"kd_tree does not support callable metric {metric!r}")
            self.effective_metric_, self.effective_metric_params_, self._metric = metric, params, "callable"
            return
        if metric == "precomputed":
            self.effective_metric_, self.effective_metric_params_, self._metric = metric, params, "precomputed"
            return
        if metric != "minkowski":
            if params:
                raise InvalidInputError(
                    f"metric_params {sorted(params)} are not parameters of metric {metric!r} (it takes none)"
                )
            self._metric = resolve_metric(metric)  # unknown names raise here
            self.effective_metric_, self.effective_metric_params_ = metric, {}
            return
        unknown = sorted(set(params) - {"p", "w"})
        if unknown:
            raise InvalidInputError(f"metric_params {unknown} are not parameters of metric 'minkowski' (p, w)")
        eff_p = params.get("p", p)
        eff_p = 2.0 if eff_p is None else check_p(eff_p, name="p")
        if params.get("w") is not None:  # weighted Minkowski: on the host
            self.effective_metric_, self._metric = "minkowski", "callable"
            self.effective_metric_params_ = {"p": eff_p, "w": params["w"]}
            return
        self._metric = resolve_metric("minkowski", eff_p)
        names = {1.0: "manhattan", 2.0: "euclidean", math.inf: "chebyshev"}
        self.effective_metric_ = names.get(eff_p, "minkowski")
        self.effective_metric_params_ = {} if eff_p in names else {"p": params.get("p", p), "w": None}
        if eff_p < 1:
            if self.algorithm in ("kd_tree", "ball_tree"):
                raise InvalidInputError(
                    f'algorithm="{self.algorithm}" does not support 0 < p < 1 for the Minkowski metric. '
                    'To resolve this problem either set p >= 1 or algorithm="brute".'
                )
            warnings.warn(
                "Mind that for 0 < p < 1, Minkowski metrics are not distance metrics. "
                "Continuing the execution with `algorithm='brute'`.",
                UserWarning,
                stacklevel=4,
            )

    def _fit(self, X: Any) -> Any:
        """Validate and store X, build the index; returns X's namespace."""
        self._resolve_metric()
        if self._needs_distance and self._metric == "inner":
            raise InvalidInputError(
                f"{type(self).__name__} needs a distance; metric='inner' is not one "
                "(gpuknn.kneighbors(..., metric='inner') ranks by inner product)"
            )
        if self.working_memory is not None:
            check_working_memory(self.working_memory, np)
        self._check_params()
        # Accepted for scikit-learn compatibility: the k-d tree is SciPy's (its own leaves),
        # and the engine runs on the array library's threads.
        check_int(getattr(self, "leaf_size", 30), name="leaf_size", low=1)
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is not None:
            check_int(n_jobs, name="n_jobs", low=None)
        X = _fitted_rows(X)
        self._graph = self._metric == "precomputed" and _is_sparse(X)
        if self._graph:
            X = densify_graph(X, name="X")
        elif _is_sparse(X):  # scikit-learn's wording where it refuses too (e.g. haversine)
            raise InvalidInputError(
                f"Metric '{self.metric}' not valid for sparse input. gpuknn takes sparse X only as a "
                "precomputed distance graph (metric='precomputed'): pass a dense array, e.g. X.toarray()"
            )
        xp = array_namespace(X)
        # The one value check (finite, squares in range): its magnitude is kept for queries.
        X, self._fit_magnitude = self._validate(X, xp, reset=True, graph=self._graph)
        self._fit_X = X  # a dask X (if accepted) stays lazy
        if uses_dask(self) and self._metric not in INNER_METRICS:
            raise InvalidInputError(
                f"dask training data: metric {self.metric!r} is not served (the distributed search runs "
                f"the inner-product metrics {INNER_METRICS}); compute the arrays first"
            )
        self.n_features_in_ = int(X.shape[1])
        self.n_samples_fit_ = int(X.shape[0])
        if self._metric == "precomputed" and not uses_dask(self):
            if X.shape[0] != X.shape[1]:
                raise InvalidInputError(
                    "metric='precomputed' fits a square distance matrix X (n_samples, n_samples), "
                    f"got shape {tuple(X.shape)}"
                )
            check_precomputed(X)
        if isinstance(self.algorithm, str) and self.algorithm == "kd_tree" and not self._kd_tree_metric():
            # scikit-learn's KDTree serves the Minkowski family only; asking for it with another
            # metric is an error there, and so here (the answer would not be a k-d tree's)
            raise InvalidInputError(f"Metric '{self.metric}' not valid for algorithm 'kd_tree'")
        # "ball_tree" finds the same neighbours as "auto" (a k-d tree or brute force).
        algorithm = "auto" if isinstance(self.algorithm, str) and self.algorithm == "ball_tree" else self.algorithm
        k = getattr(self, "n_neighbors", None)
        if algorithm == "auto" and isinstance(k, int) and k >= self.n_samples_fit_ // 2:
            algorithm = "brute"  # scikit-learn's rule: a tree does not pay for half the rows
        self._fit_method = resolve_algorithm(algorithm, xp, self._metric, self.n_features_in_)
        if self._metric == "callable" and self.algorithm in ("auto", "ball_tree") and algorithm != "brute":
            # scikit-learn's label (its ball tree serves these metrics); gpuknn runs brute
            # force on the host either way (_build_index)
            self._fit_method = "ball_tree" if self.n_features_in_ <= 15 or self.algorithm == "ball_tree" else "brute"
        self._build_index()
        return xp

    def _kd_tree_metric(self) -> bool:
        """Whether scikit-learn's KDTree takes this metric (its ``VALID_METRICS["kd_tree"]``:
        the Minkowski family, unweighted; a ``DistanceMetric`` object too)."""
        if not isinstance(self.metric, str):
            return not callable(self.metric)
        if self.metric == "minkowski":
            return self.effective_metric_params_.get("w") is None
        return self.metric in _KD_TREE_METRICS or self.metric == "sqeuclidean"  # gpuknn's tree serves it too

    def _allows_nan(self) -> bool:
        return isinstance(self.metric, str) and self.metric == "nan_euclidean"

    def _validate(self, X: Any, xp: Any, *, reset: bool, graph: bool = False) -> tuple[Any, Any]:
        """``(X, max |X|)`` validated; ``metric="nan_euclidean"`` lets NaN through (its
        point), still refusing infinities, and has no magnitude (no squares are formed on
        the engine's path). ``graph``: a densified sparse precomputed graph, whose absent
        entries are infinite (NaN still refused)."""
        if graph:
            fit = None if reset else self._fit_X
            kw = {} if reset else {"dtype": fit.dtype, "device": device_of(fit)}
            X = validate_data(self, X, reset=reset, xp=xp, check_finite=False, **kw)
            if bool(xp.any(xp.isnan(X))):
                raise InvalidInputError("precomputed distance matrix X contains NaN")
            return X, 0.0
        if not self._allows_nan():
            if reset:
                return validate_data(self, X, reset=True, xp=xp, return_magnitude=True)
            X, _, mag = check_query(self, X, return_magnitude=True)
            return X, mag
        if reset:
            X = validate_data(self, X, reset=True, xp=xp, check_finite=False)
        else:
            fit = self._fit_X
            X = validate_data(self, X, reset=False, xp=xp, dtype=fit.dtype, device=device_of(fit), check_finite=False)
        if bool(xp.any(xp.isinf(X))):
            raise InvalidInputError("Input X contains infinity (metric='nan_euclidean' accepts NaN only)")
        return X, 0.0

    def _build_index(self) -> None:
        if uses_dask(self):  # searched by gpuknn.distributed at each query: nothing to build
            self._tree = self._ref = None
            return
        brute = self._fit_method == "brute"
        mag = self._fit_magnitude
        if self._metric in ("precomputed", "callable"):  # the host path (gpuknn.ops.hostmetric)
            self._tree = None
            func = host_metric(self.metric, self.effective_metric_params_, self._fit_X) or self.metric
            self._ref = PreparedHost(self._fit_X, func, self.effective_metric_params_)
            return
        self._tree = None if brute else build_tree(self._fit_X, name="X", magnitude=mag)
        # Prepared once here, not at every query (the engine's reference statistics and rows).
        self._ref = (
            PreparedReference(
                self._fit_X, metric=self._metric, name="X", magnitude=mag, working_memory=self.working_memory
            )
            if brute
            else None
        )

    def __getstate__(self) -> dict:
        # The prepared reference holds its array module, which does not pickle: rebuilt on load.
        return {k: v for k, v in super().__getstate__().items() if k not in ("_ref", "_tree")}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "_fit_X" in state:
            self._build_index()

    def _check_n_neighbors(
        self, n_neighbors: Any = None, *, query_is_train: bool = False, n_queries: int | None = None
    ) -> int:
        """``n_neighbors`` (default ``self.n_neighbors``) as an int in ``[1, n_samples_fit_]``
        (one less when the training rows query themselves, each left out of its own list);
        scikit-learn's message, ``n_queries`` (default: the training rows) its ``n_samples``."""
        k = check_int(self.n_neighbors if n_neighbors is None else n_neighbors, name="n_neighbors", low=1)
        n_fit = self.n_samples_fit_
        if k > n_fit - query_is_train:
            rule = "n_neighbors < n_samples_fit (X=None: each sample is left out of its own list)"
            raise InvalidInputError(
                f"Expected {rule if query_is_train else 'n_neighbors <= n_samples_fit'}, but "
                f"n_neighbors = {k}, n_samples_fit = {n_fit}, n_samples = {n_fit if n_queries is None else n_queries}"
            )
        return k

    def _neighbors(self, X: Any, k: int, magnitude: float) -> Any:
        """The :class:`~gpuknn.ops.kneighbors.Neighbors` of X validated by :meth:`_query` (its
        ``magnitude``): the one engine call, which checks nothing again."""
        if isinstance(self._ref, PreparedHost):
            if self._metric == "precomputed" and X is not self._fit_X:
                check_precomputed(X)
            xp = array_namespace(X)
            wm = check_working_memory(self.working_memory, xp, device_of(X))
            nb = dense_neighbors(X, self._ref.reference, k, wm)
            if self._metric == "precomputed" and bool(xp.any(xp.isinf(nb.keys))):
                # an absent entry of a sparse graph reached: too few stored neighbours (scikit-learn's error)
                stored = int(to_numpy(xp.min(xp.sum(xp.astype(xp.isfinite(X), xp.int64), axis=1))))
                raise InvalidInputError(
                    f"{k} neighbors per samples are required, but some samples have only {stored} "
                    "neighbors in precomputed graph matrix. Decrease number of neighbors used or "
                    "recompute the graph with more neighbors."
                )
            return nb
        return neighbors(
            X,
            self._ref if self._ref is not None else self._fit_X,
            k,
            metric=self._metric,
            algorithm=self._fit_method,
            working_memory=self.working_memory,
            tree=self._tree,
            names=("X", "X"),
            magnitude=max(magnitude, self._fit_magnitude),
        )

    def _query(self, X: Any) -> tuple[Any, Any, Any]:
        """``(X, xp, max |X|)``: the query validated once (values and magnitude in one pass),
        or the training rows for ``X=None`` (checked at ``fit``)."""
        if X is None:
            check_is_fitted(self, "_fit_X")
            return self._fit_X, array_namespace(self._fit_X), self._fit_magnitude
        check_is_fitted(self, "_fit_X")
        graph = self._metric == "precomputed" and _is_sparse(X)
        if graph:
            X = densify_graph(X, name="X")
        if self._allows_nan() or graph:
            xp = array_namespace(self._fit_X)
            X, mag = self._validate(X, xp, reset=False, graph=graph)
            return X, xp, mag
        return check_query(self, X, return_magnitude=True)


class KNeighborsMixin(_SkKNeighborsMixin):
    """``kneighbors`` and ``kneighbors_graph`` of a fitted :class:`NeighborsBase`.

    A subclass of scikit-learn's mixin (every method overridden here) so that code which
    asks ``issubclass(est, sklearn.neighbors._base.KNeighborsMixin)`` -- scikit-learn's
    own tests pick ``n_neighbors`` or ``radius`` that way -- treats the drop-in alike.
    """

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None, return_distance: bool = True):
        """The k nearest training rows of each query, nearest first.

        Parameters
        ----------
        X : array of shape (n_queries, n_features), optional
            None: the training rows, each left out of its own list (if more than
            ``n_neighbors`` duplicates of a row precede it, the first of them is left out
            instead -- scikit-learn's rule).
        n_neighbors : int, optional
            Default ``self.n_neighbors``; at most ``n_samples_fit_`` (one less with X=None).
        return_distance : bool, default True

        Returns
        -------
        distances : array of shape (n_queries, k), X's dtype, namespace and device
            Exact for float64 input (see :func:`gpuknn.kneighbors` for float32).
        indices : int64 array of shape (n_queries, k)
            Equal distances: lower training index first.

        Complexity: O(n_queries · n_samples_fit · n_features) in GEMMs (brute), far less
        with a k-d tree in low dimension.
        """
        check_is_fitted(self, "_fit_X")
        train = X is None
        k = self._check_n_neighbors(n_neighbors, query_is_train=train)
        X, xp, mag = self._query(X)
        if uses_dask(self, X):  # dask data: lazy for a dask query (or X=None), else computed
            return _dask.kneighbors(self, None if train else X, k, return_distance)
        # On the fitted data's device (CuPy creates on the current one; X=None names none).
        with device_scope(self._fit_X):
            nb = self._neighbors(X, k + train, mag)
            dist, idx = nb.output_distances(), nb.indices
            if train:
                dist, idx = drop_self(dist, idx, array_namespace(idx))
        return (dist, idx) if return_distance else idx

    def kneighbors_graph(self, X: Any = None, n_neighbors: int | None = None, mode: str = "connectivity"):
        """Sparse ``(n_queries, n_samples_fit_)`` graph of :meth:`kneighbors`.

        ``mode="connectivity"``: 1.0 (float64) at each neighbour; ``"distance"``: the
        distance (stored even when 0). k stored values per row. A CSR matrix on the input's
        GPU for CuPy input, ``scipy.sparse.csr_matrix`` on the host otherwise; computed for
        dask data too (a sparse matrix is no dask array).
        """
        check_is_fitted(self, "_fit_X")
        check_mode(mode)
        if mode == "connectivity":
            idx, data = self.kneighbors(X, n_neighbors, return_distance=False), None
        else:
            data, idx = self.kneighbors(X, n_neighbors)
        if uses_dask(self, idx):
            data, idx = _dask.computed(data, idx)
        xp, dev = array_namespace(idx), device_of(idx)
        n, k = int(idx.shape[0]), int(idx.shape[1])
        with device_scope(idx):
            data = xp.ones(n * k, dtype=xp.float64, device=dev) if data is None else xp.reshape(data, (-1,))
            indptr = xp.arange(0, n * k + 1, k, dtype=xp.int64, device=dev)
            return csr_matrix(data, xp.reshape(idx, (-1,)), indptr, (n, self.n_samples_fit_))


class RadiusNeighborsMixin(_SkRadiusNeighborsMixin):
    """``radius_neighbors`` and ``radius_neighbors_graph`` of a fitted :class:`NeighborsBase`
    (a subclass of scikit-learn's mixin, for ``issubclass`` checks, as
    :class:`KNeighborsMixin`)."""

    def radius_neighbors(
        self, X: Any = None, radius: float | None = None, return_distance: bool = True, sort_results: bool = False
    ):
        """Every training row within ``radius`` (distance ``<= radius``) of each query.

        Parameters
        ----------
        X : array of shape (n_queries, n_features), optional
            None: the training rows, each left out of its own list (its duplicates stay).
        radius : float, optional
            Default ``self.radius``.
        return_distance : bool, default True
        sort_results : bool, default False
            Nearest first (equal distances: lower index first); needs ``return_distance``.
            Otherwise each list is in ascending training index.

        Returns
        -------
        distances : NumPy object array of shape (n_queries,)
            Entry i: host NumPy array of the exact distances (the fitted dtype).
        indices : NumPy object array of shape (n_queries,)
            Entry i: host int64 NumPy array of the neighbours' training indices.

        Complexity: O(n_queries · n_samples_fit · n_features) in GEMMs over query blocks of
        ``working_memory``, O(n_features) float64 work per pair near or inside the radius.
        """
        check_is_fitted(self, "_fit_X")
        if sort_results and not return_distance:
            raise InvalidInputError("return_distance must be True if sort_results is True")
        indptr, cols, dist = self._radius_pairs(X, radius, sort_results)
        ptr = to_numpy(indptr)
        ind = ragged(to_numpy(cols), ptr)
        return (ragged(to_numpy(dist), ptr), ind) if return_distance else ind

    def radius_neighbors_graph(
        self, X: Any = None, radius: float | None = None, mode: str = "connectivity", sort_results: bool = False
    ):
        """Sparse ``(n_queries, n_samples_fit_)`` graph of :meth:`radius_neighbors`.

        ``mode`` as in :meth:`kneighbors_graph`; ``sort_results`` orders each row's stored
        values by distance (``mode="distance"`` only, as scikit-learn). Built on the input's
        device (CuPy: a CuPy CSR matrix, no host round trip).
        """
        check_is_fitted(self, "_fit_X")
        check_mode(mode)
        indptr, cols, dist = self._radius_pairs(X, radius, sort_results and mode == "distance")
        with device_scope(cols):
            if mode == "connectivity":
                xp = array_namespace(cols)
                dist = xp.ones(int(cols.shape[0]), dtype=xp.float64, device=device_of(cols))
            return csr_matrix(dist, cols, indptr, (int(indptr.shape[0]) - 1, self.n_samples_fit_))

    def _radius_pairs(self, X: Any, radius: Any, sort: bool) -> tuple[Any, Any, Any]:
        """``(indptr, columns, distances)`` of the CSR radius graph, in X's namespace."""
        if uses_dask(self, X):
            raise InvalidInputError(
                f"{type(self).__name__}'s radius methods do not accept dask arrays (fitted or queried): "
                "use kneighbors / kneighbors_graph, or compute the arrays first"
            )
        radius = self.radius if radius is None else radius
        if not isinstance(radius, (str, bytes)) and np.ndim(radius) == 1:
            return self._per_query_radius(X, np.asarray(to_numpy(radius) if hasattr(radius, "shape") else radius), sort)
        radius = check_radius_value(radius)
        train = X is None
        if radius == math.inf:
            if self._metric != "precomputed":
                return self._all_pairs(X, sort)
            # a sparse graph's absent entries are infinite: every stored entry, those not
            radius = float(np.finfo(np.float64).max)
        X, xp, mag = self._query(X)
        if self._metric == "precomputed" and not train:
            check_precomputed(X)
        with device_scope(self._fit_X):  # X=None names no device: the fitted data's
            n, dev = int(X.shape[0]), device_of(X)
            wm = check_working_memory(self.working_memory, xp, device_of(X))
            rows = radius_rows(n, self.n_samples_fit_, wm)
            tiny = rescaled(X, self._fit_X, self._metric, max(mag or 0.0, self._fit_magnitude or 0.0), radius)
            parts = []
            for b0 in range(0, n, rows):
                Xb = X[b0 : min(b0 + rows, n), :]
                if tiny is not None:  # squares that underflow: the brute engine, scaled
                    r, c, d = radius_pairs(tiny.X[b0 : min(b0 + rows, n), :], tiny.ref, tiny.radius, budget=wm)
                    d = tiny.distances(d, self._metric)
                elif self._ref is not None:
                    r, c, d = radius_pairs(Xb, self._ref.reference, radius, budget=wm)
                else:
                    r, c, d = radius_pairs_kdtree(Xb, self._tree, radius, self._metric, dtype=Xb.dtype)
                r = r + b0
                if train:  # each sample leaves its own list (its duplicates stay)
                    keep = xp.nonzero(r != c)[0]
                    r, c, d = xp.take(r, keep), xp.take(c, keep), xp.take(d, keep)
                if sort:
                    o = order_rows(r, -xp.astype(d, xp.float64), c)
                    r, c, d = xp.take(r, o), xp.take(c, o), xp.take(d, o)
                parts.append((r, c, d))
            r, c, d = (xp.concat([p[j] for p in parts]) if len(parts) > 1 else parts[0][j] for j in range(3))
            counts = bincount(r, n)
            indptr = xp.concat([xp.zeros(1, dtype=xp.int64, device=dev), xp.cumulative_sum(counts)])
            return indptr, c, d

    def _per_query_radius(self, X: Any, radii: np.ndarray, sort: bool) -> tuple[Any, Any, Any]:
        """One radius per query (scikit-learn's trees take an array): the pairs within the
        largest, each row then cut to its own radius."""
        n = self.n_samples_fit_ if X is None else int(X.shape[0])
        if radii.shape[0] != n:
            raise InvalidInputError(f"radius has {radii.shape[0]} values; expected one per query row ({n})")
        vals = [check_radius_value(float(r)) for r in radii]
        indptr, c, d = self._radius_pairs(X, max(vals, default=0.0), sort)
        xp, dev = array_namespace(c), device_of(c)
        counts = indptr[1:] - indptr[:-1]
        rows = xp.repeat(xp.arange(n, dtype=xp.int64, device=dev), counts)
        keep = xp.nonzero(xp.astype(d, xp.float64) <= xp.take(xp.asarray(vals, dtype=xp.float64, device=dev), rows))[0]
        rows, c, d = xp.take(rows, keep), xp.take(c, keep), xp.take(d, keep)
        indptr = xp.concat([xp.zeros(1, dtype=xp.int64, device=dev), xp.cumulative_sum(bincount(rows, n))])
        return indptr, c, d

    def _all_pairs(self, X: Any, sort: bool) -> tuple[Any, Any, Any]:
        """``radius=inf``: every training row (but the query's own with X=None), from the
        exact k-neighbour search with k = all of them (no radius arithmetic with infinity)."""
        train = X is None
        k = self.n_samples_fit_ - train
        if k == 0:  # one training row queried by itself: no neighbour
            xp = array_namespace(self._fit_X)
            dev = device_of(self._fit_X)
            z = xp.zeros(0, dtype=xp.int64, device=dev)
            return xp.zeros(2, dtype=xp.int64, device=dev), z, xp.zeros(0, dtype=self._fit_X.dtype, device=dev)
        dist, idx = KNeighborsMixin.kneighbors(self, X, k)
        xp, dev = array_namespace(idx), device_of(idx)
        n = int(idx.shape[0])
        if not sort:  # ascending training index, as the radius search lists them
            o = xp.argsort(idx, axis=1)
            idx, dist = xp.take_along_axis(idx, o, axis=1), xp.take_along_axis(dist, o, axis=1)
        indptr = xp.arange(0, n * k + 1, k, dtype=xp.int64, device=dev)
        return indptr, xp.reshape(idx, (-1,)), xp.reshape(dist, (-1,))


class NeighborsClassifierMixin(ClassifierMixin):
    """Labels of a neighbour classifier: encoded at ``fit`` (``classes_``, ``_y``), decoded
    at ``predict``, and scikit-learn's accuracy ``score`` on the host."""

    def _fit_labels(self, y: Any) -> None:
        """``classes_`` and the encoded ``_y``; a 2-D ``y`` with several columns is
        multi-output (scikit-learn's ``outputs_2d_``): ``classes_`` is then a list (one
        array per output) and ``_y`` the (n_samples, n_outputs) codes."""
        X = self._fit_X
        # dask training data: the labels on the host (the vote tasks gather them there)
        lxp, dev = (np, None) if array_api_compat.is_dask_array(X) else (array_namespace(X), device_of(X))
        y_host = y
        if y is not None and not array_api_compat.is_dask_array(y):
            y_host = to_numpy(y) if array_api_compat.is_array_api_obj(y) else np.asarray(y)
        self.outputs_2d_ = getattr(y_host, "ndim", 1) == 2 and y_host.shape[1] > 1
        if not self.outputs_2d_:
            self.classes_, self._y = encode_labels(y, X.shape[0], lxp, dev)
            return
        per = [encode_labels(y_host[:, j], X.shape[0], lxp, dev) for j in range(y_host.shape[1])]
        self.classes_ = [c for c, _ in per]
        self._y = lxp.stack([codes for _, codes in per], axis=1)

    def _output_views(self) -> list:
        """One single-output shallow copy of this fitted multi-output classifier per output
        (its ``classes_`` and ``_y``; the training rows and index shared): each output is
        predicted by the single-output code, as scikit-learn predicts each output alike."""
        views = []
        for j, classes in enumerate(self.classes_):
            view = copy.copy(self)
            view.outputs_2d_, view.classes_, view._y = False, classes, self._y[:, j]
            self._output_view(view, j)
            views.append(view)
        return views

    def _output_view(self, view: Any, j: int) -> None:
        """Per-output state a subclass derives from the labels (none here)."""

    def _stack_outputs(self, preds: list) -> Any:
        """(n_queries, n_outputs) predictions from one (n_queries,) array per output."""
        if all(not isinstance(p, np.ndarray) for p in preds):
            return array_namespace(preds[0]).stack(preds, axis=1)
        host = [to_numpy(p) for p in preds]
        return np.stack(host, axis=1) if len({h.dtype for h in host}) == 1 else np.stack(host, axis=1).astype(object)

    def _labels_of(self, idx: Any, xp: Any) -> Any:
        """Class indices of the training rows ``idx`` (any shape)."""
        flat = xp.take(self._y, xp.reshape(idx, (-1,)))
        return xp.reshape(flat, idx.shape)

    def _decode(self, class_index: Any) -> Any:
        """Class indices -> labels (xp for numeric labels, NumPy for strings)."""
        if isinstance(self.classes_, np.ndarray):
            return self.classes_[to_numpy(class_index)]
        return array_namespace(self.classes_).take(self.classes_, class_index)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y``, weighted by ``sample_weight``
        (several outputs: a sample counts when every output is right)."""
        return prediction_accuracy(self.predict(X), y, sample_weight)
