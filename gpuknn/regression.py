"""Neighbour regression: the mean of the neighbours' targets, with scikit-learn's semantics.

:class:`KNeighborsRegressor` averages the targets of the k nearest training rows found by the
exact engine (:func:`gpuknn.ops.kdtree.neighbors`: the same lists on every backend, equal
distances to the lower index). It follows scikit-learn 1.9's
``sklearn.neighbors._regression``: weights ``"uniform"``, ``"distance"`` (``1/d``; a query
with neighbours at distance 0 averages those alone) or a callable; ``y`` 1-D or 2-D
(multi-output). The fit-time validation, R² and weighting rules here are shared with
:class:`~gpuknn.RadiusNeighborsRegressor` (:mod:`gpuknn.radius_regression`) and, through
:func:`neighbour_mean`, with the dask tasks (:mod:`gpuknn.distributed.estimators`).
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import RegressorMixin

from ._backend import (
    array_namespace,
    check_int,
    compat_numpy,
    device_of,
    from_numpy,
    to_numpy,
    validate_matrix,
)
from .base import BaseEstimator, check_query, uses_dask, validate_data
from .errors import InvalidInputError
from .neighbors import PreparedReference
from .ops.distance import check_metric
from .ops.kdtree import build_tree, neighbors, resolve_algorithm
from .ops.limits import check_working_memory

__all__ = ["KNeighborsRegressor"]


def _zero_rule(d: Any, member: Any, xp: Any) -> Any:
    """``1/d`` weights of the members; a row with a member at distance 0 weighs those
    members 1 and the others 0 (scikit-learn's ``_get_weights``)."""
    zero = member & (d == 0)
    has_zero = xp.any(zero, axis=1, keepdims=True)
    inv = 1.0 / xp.where(d == 0, xp.ones_like(d), d)
    return xp.where(has_zero, xp.astype(zero, d.dtype), xp.where(member, inv, xp.zeros_like(d)))


def _finish(num: Any, den: Any, y_dtype: Any, y_ndim: int, xp: Any) -> Any:
    """``num / den`` (NaN where ``den`` is 0), in y's float dtype and y's ndim."""
    ok = den != 0
    pred = xp.where(ok, num / xp.where(ok, den, xp.ones_like(den)), xp.full_like(num, math.nan))
    pred = xp.astype(pred, y_dtype)
    return pred[:, 0] if y_ndim == 1 else pred


def neighbour_mean(Yn: Any, d: Any, weights: Any, q_dtype: Any, y_dtype: Any, y_ndim: int, xp: Any) -> Any:
    """:meth:`KNeighborsRegressor.predict` of the neighbours' float64 targets ``Yn`` (n, k,
    n_outputs) and their float64 distances ``d`` (n, k; unused by uniform weights); a
    callable gets them in the queries' dtype ``q_dtype``. Shared with the dask tasks."""
    n = Yn.shape[0]
    if weights in (None, "uniform"):
        return _finish(
            xp.mean(Yn, axis=1), xp.ones((n, 1), dtype=xp.float64, device=device_of(Yn)), y_dtype, y_ndim, xp
        )
    if weights == "distance":  # exact zeros for duplicates (exact pass)
        w = _zero_rule(d, xp.ones(d.shape, dtype=xp.bool, device=device_of(d)), xp)
    else:
        w = _call_weights(weights, xp.astype(d, q_dtype), xp)
    return _finish(xp.sum(Yn * w[:, :, None], axis=1), xp.sum(w, axis=1, keepdims=True), y_dtype, y_ndim, xp)


def _call_weights(fn: Any, d: Any, xp: Any) -> Any:
    """``fn(d)`` as float64 of ``d``'s namespace and shape, or :class:`InvalidInputError`."""
    w = fn(d)
    if not hasattr(w, "shape"):
        w = from_numpy(np.asarray(w, dtype=np.float64), xp, device=device_of(d))
    if tuple(w.shape) != tuple(d.shape):
        raise InvalidInputError(
            f"weights callable returned shape {tuple(w.shape)} for distances "
            f"of shape {tuple(d.shape)}; it must keep the shape"
        )
    return xp.astype(w, xp.float64)


class _NeighborsRegression(RegressorMixin, BaseEstimator):
    """fit-time validation and storage, query checks and R² shared by both regressors."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # 2-D y: one mean per output column
        return tags

    def _fit_data(self, X: Any, y: Any) -> None:
        check_metric(self.metric)
        w = self.weights
        if not (w is None or callable(w) or (isinstance(w, str) and w in ("uniform", "distance"))):
            raise InvalidInputError(f"weights must be 'uniform', 'distance' or a callable, got {w!r}")
        if w == "distance" and self.metric == "inner":
            raise InvalidInputError("weights='distance' is undefined for metric='inner'")
        if self.working_memory is not None:
            check_working_memory(self.working_memory, np)
        if y is None:
            raise InvalidInputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X = validate_data(self, X, reset=True, xp=array_namespace(X))  # a dask X (if accepted) stays lazy
        # y follows X (scikit-learn's array-API rule, as the classifiers' labels do): host
        # targets, or targets of another namespace or device, are moved to X's. Dask X: y on
        # the host (a dask y computed: targets are small), where the tasks gather them.
        xp, dev = (compat_numpy, None) if uses_dask(self, X) else (array_namespace(X), device_of(X))
        y = y.compute() if array_api_compat.is_dask_array(y) else y
        if isinstance(y, np.ndarray) or not array_api_compat.is_array_api_obj(y) or array_namespace(y) is not xp:
            y = from_numpy(to_numpy(y) if array_api_compat.is_array_api_obj(y) else np.asarray(y), xp, device=dev)
        elif device_of(y) != dev:
            y = from_numpy(to_numpy(y), xp, device=dev)
        if y.ndim not in (1, 2):
            raise InvalidInputError(f"y must be 1-D or 2-D, got shape {tuple(y.shape)}")
        y = validate_matrix(y, xp, name="y", ndim=y.ndim, device=dev)
        if y.shape[0] != X.shape[0]:
            raise InvalidInputError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")
        self._fit_X, self._y = X, y
        self.n_features_in_ = int(X.shape[1])
        self.n_samples_fit_ = int(X.shape[0])
        self._fit_method = resolve_algorithm(self.algorithm, array_namespace(X), self.metric, self.n_features_in_)
        local = not uses_dask(self)  # dask X: searched by gpuknn.distributed at each query
        self._tree = build_tree(X, name="X") if local and self._fit_method == "kd_tree" else None
        # Brute force: the training rows are prepared once here, not at every predict.
        self._ref = (
            PreparedReference(X, metric=self.metric, name="X") if local and self._fit_method == "brute" else None
        )

    def _check_query(self, X: Any) -> tuple[Any, Any]:
        return check_query(self, X)

    def _targets(self, xp: Any) -> Any:
        """The training targets as float64 (n_train, n_outputs)."""
        y = xp.astype(self._y, xp.float64)
        return y[:, None] if y.ndim == 1 else y

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """R² of ``predict(X)`` against ``y``: scikit-learn's ``r2_score`` (multi-output:
        ``"uniform_average"``), computed on the host -- ``RegressorMixin.score`` hands the
        arrays to NumPy as they are, which fails for GPU arrays and other devices."""
        from sklearn.metrics import r2_score  # noqa: PLC0415 - metrics import is slow

        pred = to_numpy(self.predict(X))
        y_host = to_numpy(y) if hasattr(y, "shape") else np.asarray(y)
        sw = None if sample_weight is None else to_numpy(sample_weight)
        return float(r2_score(y_host, pred, sample_weight=sw))


class KNeighborsRegressor(_NeighborsRegression):
    """Mean target of the k nearest training rows, exact, on NumPy, CuPy or any array-API namespace.

    Parameters
    ----------
    n_neighbors : int, default 5
        Checked against the training size at query time, as in scikit-learn.
    weights : {"uniform", "distance"}, callable or None
        ``"distance"``: ``1/d``; a query with zero-distance neighbours averages those alone.
        A callable gets the (n_queries, k) distances (as :meth:`kneighbors` returns them,
        in the input's namespace) and returns weights of that shape. None = uniform.
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
    algorithm : {"auto", "brute", "kd_tree"}
        As :class:`~gpuknn.classifiers.KNeighborsClassifier`'s; the same neighbours either way.
    working_memory : int, optional
        Byte budget of a distance tile (see :func:`gpuknn.kneighbors`); with dask data, of
        each task (:func:`gpuknn.distributed.kneighbors`).

    Attributes
    ----------
    n_features_in_, n_samples_fit_ : int

    Notes
    -----
    Predictions have y's shape (n_queries,) or (n_queries, n_outputs) and y's float dtype
    (float64 for integer y), in the input's namespace and on its device. Equal distances:
    the lower training index is the nearer neighbour. Cost O(n_queries · n_train · d) in
    GEMMs plus O(n_queries · k · n_outputs).

    **Dask training data.** ``fit`` keeps a dask X lazy (nothing computed) and brings y to
    the host (a dask y computed). Queries run :func:`gpuknn.distributed.kneighbors` (brute
    force; ``"kd_tree"`` refused) and average chunk by chunk on the exact float64
    distances: the NumPy fit's predictions, to rounding. A dask query gives lazy dask
    arrays chunked by its rows; a NumPy or CuPy query, computed arrays in its namespace.

    Examples
    --------
    >>> KNeighborsRegressor(n_neighbors=2).fit([[0], [1], [2], [3]], [0, 0, 1, 1]).predict([[1.5]])
    array([0.5])
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        weights: Any = "uniform",
        metric: str = "euclidean",
        algorithm: str = "auto",
        working_memory: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.algorithm = algorithm
        self.working_memory = working_memory

    _accepts_dask = True  # dask X: gpuknn.distributed.estimators (see Notes)

    def fit(self, X: Any, y: Any) -> KNeighborsRegressor:
        """Store the validated training rows X (n, d) and targets y (n,) or (n, n_outputs)."""
        check_int(self.n_neighbors, name="n_neighbors", low=1)
        self._fit_data(X, y)
        return self

    def _k(self, n_neighbors: Any, n_queries: int) -> int:
        k = check_int(self.n_neighbors if n_neighbors is None else n_neighbors, name="n_neighbors", low=1)
        if k > self.n_samples_fit_:
            raise InvalidInputError(
                f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {k}, "
                f"n_samples_fit = {self.n_samples_fit_}, n_samples = {n_queries}"
            )
        return k

    def _neighbors(self, X: Any, k: int) -> Any:
        return neighbors(
            X,
            self._ref if self._ref is not None else self._fit_X,
            k,
            metric=self.metric,
            algorithm=self._fit_method,
            working_memory=self.working_memory,
            tree=self._tree,
            names=("X", "X"),
        )

    def kneighbors(self, X: Any, n_neighbors: int | None = None, return_distance: bool = True):
        """``(distances, indices)`` of the nearest training rows, each (n_queries, k), or
        only ``indices`` (int64); distances ascending in X's dtype."""
        X, _ = self._check_query(X)
        k = self._k(n_neighbors, X.shape[0])
        if uses_dask(self, X):
            from .distributed.estimators import kneighbors  # noqa: PLC0415

            return kneighbors(self, X, k, return_distance)
        nb = self._neighbors(X, k)
        return (nb.output_distances(), nb.indices) if return_distance else nb.indices

    def predict(self, X: Any) -> Any:
        """Weighted mean target of each query's k neighbours: (n_queries,) or (n_queries, n_outputs)."""
        X, xp = self._check_query(X)
        k = self._k(None, X.shape[0])
        if uses_dask(self, X):
            from .distributed.estimators import regress  # noqa: PLC0415 - Dask only with its arrays

            return regress(self, X)
        nb = self._neighbors(X, k)
        Y = self._targets(xp)
        Yn = xp.reshape(xp.take(Y, xp.reshape(nb.indices, (-1,)), axis=0), (X.shape[0], k, Y.shape[1]))
        d = None if self.weights in (None, "uniform") else nb.distances
        return neighbour_mean(Yn, d, self.weights, X.dtype, self._y.dtype, self._y.ndim, xp)
