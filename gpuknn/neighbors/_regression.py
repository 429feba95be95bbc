"""Neighbour regression: the mean of the neighbours' targets, with scikit-learn's semantics
(``sklearn.neighbors._regression`` of scikit-learn 1.9).

:class:`KNeighborsRegressor` averages the targets of the k nearest training rows found by the
exact engine (the same lists on every backend, equal distances to the lower index);
:class:`RadiusNeighborsRegressor` those of every training row within a radius, walking the
queries in blocks under ``working_memory`` with exact membership (:func:`gpuknn.ops.radius.radius_tile`),
never the whole ``n_queries x n_train`` matrix; a query without neighbours predicts NaN with
a warning. Weights ``"uniform"``, ``"distance"`` (``1/d``; a query with neighbours at
distance 0 averages those alone: :func:`gpuknn.ops.weights.distance_weights`) or a
callable; ``y`` 1-D or 2-D (multi-output).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import RegressorMixin

from .._backend import (
    array_namespace,
    check_int,
    compat_numpy,
    device_of,
    from_numpy,
    to_numpy,
    validate_matrix,
)
from ..base import check_is_fitted, uses_dask
from ..errors import EmptyNeighborhoodWarning, InvalidInputError
from ..ops.limits import check_working_memory
from ..ops.radius import radius_pairs_kdtree, radius_rows, radius_tile, rescaled
from ..ops.weights import call_weights, check_weights, distance_weights, finish_mean, neighbour_mean
from . import _dask
from ._base import KNeighborsMixin, NeighborsBase, RadiusNeighborsMixin, check_radius_value

__all__ = ["KNeighborsRegressor", "RadiusNeighborsRegressor"]


class _NeighborsRegression(RegressorMixin, NeighborsBase):
    """fit-time validation and storage, query checks and R² shared by both regressors."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # 2-D y: one mean per output column
        return tags

    def _fit_targets(self, y: Any) -> None:
        """Validate the targets and keep them in ``_y``, in the training rows' namespace."""
        X = self._fit_X
        if y is None:
            raise InvalidInputError(f"{type(self).__name__} requires y to be passed, but the target y is None")
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
        self._y = y

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


class KNeighborsRegressor(KNeighborsMixin, _NeighborsRegression):
    """Mean target of the k nearest training rows, exact, on NumPy, CuPy or any array-API namespace.

    Parameters
    ----------
    n_neighbors : int, default 5
        Checked against the training size at query time, as in scikit-learn.
    weights : {"uniform", "distance"}, callable or None
        ``"distance"``: ``1/d``; a query with zero-distance neighbours averages those alone.
        A callable gets the (n_queries, k) distances (as :meth:`kneighbors` returns them,
        in the input's namespace) and returns weights of that shape. None = uniform.
    metric : str or callable, default "minkowski"
        ``"minkowski"`` (with ``p``), the engine's metrics ``"euclidean"`` (``"l2"``),
        ``"sqeuclidean"``, ``"cosine"``, ``"correlation"``, ``"inner"`` (a similarity), the difference metrics
        ``"manhattan"`` (``"cityblock"``, ``"l1"``), ``"chebyshev"`` (``"infinity"``),
        ``"canberra"``, ``"braycurtis"``, ``"hamming"``, ``"precomputed"`` (X holds
        distances) or a callable on two host NumPy rows (see
        :class:`~gpuknn.neighbors._base.NeighborsBase`).
    p : float, default 2
        Minkowski's p (``0 < p <= inf``; 1, 2, inf run manhattan, euclidean, chebyshev).
    metric_params : dict, optional
        Minkowski: ``{"p": ...}`` (``"w"`` is refused); a callable: its keyword arguments.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree"}
        As :class:`~gpuknn.KNeighborsClassifier`'s; the same neighbours either way.
    working_memory : float, optional
        MiB for the distance tiles (see :func:`gpuknn.kneighbors`); with dask data, for
        each task (:func:`gpuknn.distributed.kneighbors`).
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``); SciPy's k-d tree
        chooses its own leaves.
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the engine runs on the array library's
        own threads (NumPy's BLAS, torch's intra-op pool, the GPU).

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
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    _accepts_dask = True  # dask X: gpuknn.neighbors._dask (see Notes)

    def _check_params(self) -> None:
        check_int(self.n_neighbors, name="n_neighbors", low=1)
        check_weights(self.weights, self.metric, callable_ok=True)

    def fit(self, X: Any, y: Any) -> KNeighborsRegressor:
        """Store the validated training rows X (n, d) and targets y (n,) or (n, n_outputs)."""
        self._fit(X)
        self._fit_targets(y)
        return self

    def predict(self, X: Any = None) -> Any:
        """Weighted mean target of each query's k neighbours: (n_queries,) or (n_queries, n_outputs).

        X=None: each training row's prediction without itself among its neighbours
        (:meth:`kneighbors`' rule)."""
        if X is None:
            check_is_fitted(self, "_fit_X")
            k = self._check_n_neighbors(query_is_train=True)
            dist, idx = self.kneighbors(None, k)
            xp = array_namespace(idx)
            Y = self._targets(xp)
            Yn = xp.reshape(xp.take(Y, xp.reshape(idx, (-1,)), axis=0), (idx.shape[0], k, Y.shape[1]))
            d = xp.astype(dist, xp.float64)
            return neighbour_mean(Yn, d, self.weights, self._fit_X.dtype, self._y.dtype, self._y.ndim, xp)
        X, xp, mag = self._query(X)
        k = self._check_n_neighbors(n_queries=int(X.shape[0]))
        if uses_dask(self, X):
            return _dask.regress(self, X)
        nb = self._neighbors(X, k, mag)
        Y = self._targets(xp)
        Yn = xp.reshape(xp.take(Y, xp.reshape(nb.indices, (-1,)), axis=0), (X.shape[0], k, Y.shape[1]))
        d = None if self.weights in (None, "uniform") else nb.distances
        return neighbour_mean(Yn, d, self.weights, X.dtype, self._y.dtype, self._y.ndim, xp)


class RadiusNeighborsRegressor(RadiusNeighborsMixin, _NeighborsRegression):
    """Mean target of the training rows within a fixed radius, like scikit-learn's.

    Parameters
    ----------
    radius : float, default 1.0
        In the metric's units (``sqeuclidean``: squared distance; ``cosine``/``correlation``:
        ``1 - similarity``). Rows at distance ``<= radius`` are neighbours.
    weights : {"uniform", "distance"}, callable or None
        ``"distance"``: ``1/d``; a query with neighbours at distance 0 averages those alone.
        A callable must work elementwise: it gets a block of distances in X's dtype, (rows,
        n_train) in the input's namespace (brute) or 1-D NumPy (kd_tree), of which only the
        entries within the radius are used.
    metric : str or callable, default "minkowski"
        ``"minkowski"`` (with ``p``), the engine's metrics ``"euclidean"`` (``"l2"``),
        ``"sqeuclidean"``, ``"cosine"``, ``"correlation"``, the difference metrics
        ``"manhattan"`` (``"cityblock"``, ``"l1"``), ``"chebyshev"`` (``"infinity"``),
        ``"canberra"``, ``"braycurtis"``, ``"hamming"``, ``"precomputed"`` (X holds
        distances) or a callable on two host NumPy rows (see
        :class:`~gpuknn.neighbors._base.NeighborsBase`).
        ``"inner"`` is rejected: an inner product is not a distance.
    p : float, default 2
        Minkowski's p (``0 < p <= inf``; 1, 2, inf run manhattan, euclidean, chebyshev).
    metric_params : dict, optional
        Minkowski: ``{"p": ...}`` (``"w"`` is refused); a callable: its keyword arguments.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree"}
        ``"brute"``: masked distance tiles (any namespace). ``"kd_tree"``: SciPy ``cKDTree``
        (NumPy, euclidean family). ``"auto"``: kd_tree for NumPy, euclidean family, d <= 15.
        ``"ball_tree"``: as ``"auto"``.
    working_memory : float, optional
        MiB for one block of queries: about ten float64 (rows, n_train) tiles. Default
        :func:`gpuknn._memory.default_working_memory`.
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``); SciPy's k-d tree
        chooses its own leaves.
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the engine runs on the array library's
        own threads (NumPy's BLAS, torch's intra-op pool, the GPU).

    Attributes
    ----------
    n_features_in_, n_samples_fit_ : int

    Warns
    -----
    EmptyNeighborhoodWarning
        When a query has no neighbour within the radius: it is predicted as NaN
        (scikit-learn's behaviour, whose message it repeats).

    Notes
    -----
    Membership and zero distances are decided on the exact distances wherever the tile's
    certified bound cannot (:mod:`gpuknn.ops.radius`), so a point on the radius counts the
    same on every backend and tiling. Cost O(n_queries · n_train · (d + n_outputs)); memory
    O(rows · n_train) per block, never the whole matrix.

    Examples
    --------
    >>> RadiusNeighborsRegressor(radius=1.0).fit([[0], [1], [2], [3]], [0, 0, 1, 1]).predict([[1.5]])
    array([0.5])
    """

    def __init__(
        self,
        radius: float = 1.0,
        *,
        weights: Any = "uniform",
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.radius = radius
        self.weights = weights
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    _needs_distance = True

    def _check_params(self) -> None:
        check_weights(self.weights, self.metric, callable_ok=True)
        check_radius_value(self.radius)

    def fit(self, X: Any, y: Any) -> RadiusNeighborsRegressor:
        """Store the validated training rows X (n, d) and targets y (n,) or (n, n_outputs)."""
        self._fit(X)
        self._fit_targets(y)
        return self

    def _weights(self, d: Any, xp: Any, *, member: Any = None, rows: Any = None, n_rows: int = 0) -> Any:
        """Float64 weights of a block (dense with ``member``, or flat pairs with ``rows``)."""
        if self.weights in (None, "uniform"):
            return xp.ones_like(d) if member is None else xp.astype(member, xp.float64)
        if self.weights == "distance":
            return distance_weights(d, xp, member=member, rows=rows, n_rows=n_rows)
        w = call_weights(self.weights, xp.astype(d, self._fit_X.dtype), xp)
        return w if member is None else xp.where(member, w, xp.zeros_like(w))  # non-members' values unused

    def predict(self, X: Any = None) -> Any:
        """Weighted mean target of each query's neighbours within the radius, (n_queries,) or
        (n_queries, n_outputs); NaN (and an :class:`EmptyNeighborhoodWarning`) for a query
        without any. X=None: each training row without itself among its neighbours."""
        if X is None or float(self.radius) == math.inf:
            check_is_fitted(self, "_fit_X")
            return self._warn_empty(self._predict_listed(X))
        X, xp, mag = self._query(X)
        Y = self._targets(xp)
        ones = xp.ones((Y.shape[0], 1), dtype=xp.float64, device=device_of(Y))
        Y1 = xp.concat([Y, ones], axis=1)  # one GEMM gives the weighted sums and the total weight
        radius = float(self.radius)
        rows = radius_rows(X.shape[0], self.n_samples_fit_, check_working_memory(self.working_memory, xp))
        tiny = rescaled(X, self._fit_X, self._metric, max(mag or 0.0, self._fit_magnitude or 0.0), radius)
        parts = []
        for b0 in range(0, X.shape[0], rows):
            Xb = X[b0 : min(b0 + rows, X.shape[0]), :]
            if tiny is not None:  # squares that underflow: scaled, the weights of true distances
                t = radius_tile(tiny.X[b0 : min(b0 + rows, X.shape[0]), :], tiny.ref, tiny.radius)
                parts.append(self._weights(tiny.distances(t.dist, self._metric), xp, member=t.inside) @ Y1)
            elif self._fit_method == "kd_tree":
                parts.append(self._sums_kdtree(Xb, to_numpy(Y1), radius))
            else:
                t = radius_tile(Xb, self._ref.reference, radius)
                parts.append(self._weights(t.dist, xp, member=t.inside) @ Y1)
        S = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return self._warn_empty(finish_mean(S[:, :-1], S[:, -1:], self._y.dtype, self._y.ndim, xp))

    def _predict_listed(self, X: Any) -> Any:
        """:meth:`predict` from :meth:`radius_neighbors`' pairs (X=None, ``radius=inf``)."""
        indptr, cols, dist = self._radius_pairs(X, None, False)
        xp = array_namespace(cols)
        ptr = to_numpy(indptr)
        n = ptr.shape[0] - 1
        rows = np.repeat(np.arange(n), np.diff(ptr))
        w = to_numpy(self._weights(dist, xp, rows=from_numpy(rows, xp, device=device_of(cols)), n_rows=n))
        Y1 = to_numpy(self._targets(xp))
        Y1 = np.concatenate([Y1, np.ones((Y1.shape[0], 1))], axis=1)[to_numpy(cols)]
        S = np.stack([np.bincount(rows, weights=w * Y1[:, j], minlength=n) for j in range(Y1.shape[1])], axis=1)
        S = from_numpy(S.astype(np.float64), xp, device=device_of(cols))
        return finish_mean(S[:, :-1], S[:, -1:], self._y.dtype, self._y.ndim, xp)

    def _warn_empty(self, pred: Any) -> Any:
        """``pred`` after an :class:`EmptyNeighborhoodWarning` naming its NaN rows, if any."""
        xp = array_namespace(pred)
        empty = xp.isnan(pred) if pred.ndim == 1 else xp.any(xp.isnan(pred), axis=1)
        if bool(xp.any(empty)):
            bad = to_numpy(xp.nonzero(empty)[0])
            shown = ", ".join(str(int(r)) for r in bad[:10]) + (" ..." if bad.size > 10 else "")
            warnings.warn(
                "One or more samples have no neighbors within specified radius; predicting NaN. "
                f"({bad.size} of {pred.shape[0]} query rows, radius={self.radius}: {shown})",
                EmptyNeighborhoodWarning,
                stacklevel=4,
            )
        return pred

    def _sums_kdtree(self, Xb: Any, Y1: np.ndarray, radius: float) -> np.ndarray:
        """Weighted target sums and total weights (rows, n_outputs + 1) from SciPy's tree."""
        qi, rj, d = radius_pairs_kdtree(Xb, self._tree, radius, self._metric)
        n = Xb.shape[0]
        w = to_numpy(self._weights(d, compat_numpy, rows=qi, n_rows=n))
        # float64 always: NumPy's bincount of no pairs (no query with a neighbour) is int64
        # whatever the weights, and NaN cast to it became -9.2e18 instead of the NaN of an
        # empty neighbourhood (issue 32).
        sums = [np.bincount(qi, weights=w * Y1[rj, j], minlength=n).astype(np.float64) for j in range(Y1.shape[1])]
        return np.stack(sums, axis=1)
