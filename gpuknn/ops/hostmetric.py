"""Neighbours by distances the caller defines: ``metric="precomputed"`` and a callable metric.

* **precomputed**: the queries *are* distance rows, ``(n_queries, n_samples_fit)``; a
  training matrix ``(n_samples_fit, n_samples_fit)`` at ``fit`` (scikit-learn's rule,
  values finite and ``>= 0``).
* **callable**: ``metric(x, y, **metric_params)`` called on host NumPy 1-D rows, pair by
  pair, as scikit-learn's brute force calls it; its float answer is the distance.
* **named host metrics** (:data:`HOST_METRICS`: ``seuclidean``, ``mahalanobis``,
  ``haversine``, ``nan_euclidean``, the boolean metrics, weighted ``minkowski``) and
  scikit-learn ``DistanceMetric`` objects: a :class:`HostMetric`, whose ``pairwise``
  computes a whole tile on the host at once (SciPy's ``cdist``, or the formulas below for
  ``haversine`` and ``nan_euclidean``). They are rarely used and have no GEMM form; the
  engine's top-k merge still ranks them (ties -> lower index).

Both go through :func:`gpuknn.ops.differences.dense_search` (value tiles under the
``working_memory`` budget, the engine's top-k merge): ties -> lower index, distances as
given (cast to float64). A callable runs on the host: rows of device arrays move there
tile by tile and the tile's distances move back, so results stay in the input's
namespace and on its device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from ..errors import InvalidInputError

__all__ = [
    "BOOLEAN_METRICS",
    "HOST_METRICS",
    "HostMetric",
    "HostReference",
    "PreparedHost",
    "check_precomputed",
    "host_metric",
    "is_distance_metric_object",
]

#: scikit-learn's boolean metrics: rows are compared as ``x != 0`` (as scikit-learn does).
BOOLEAN_METRICS = ("dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule")
#: The metric names served on the host by :class:`HostMetric` (with ``"minkowski"`` when its
#: ``metric_params`` carry weights ``w``).
HOST_METRICS = ("seuclidean", "mahalanobis", "haversine", "nan_euclidean") + BOOLEAN_METRICS
_PARAMS = {"seuclidean": ("V",), "mahalanobis": ("V", "VI"), "minkowski": ("p", "w")}


def is_distance_metric_object(metric: Any) -> bool:
    """Whether ``metric`` is a scikit-learn ``DistanceMetric`` instance (``metric=`` takes
    them, as scikit-learn's estimators do)."""
    from sklearn.metrics import DistanceMetric  # noqa: PLC0415 - only when a non-string metric is met

    return isinstance(metric, DistanceMetric)


class HostMetric:
    """A metric computed tile by tile on host NumPy float64 rows.

    Parameters
    ----------
    name : str
        A name of :data:`HOST_METRICS`, ``"minkowski"`` (with ``params["w"]``) or
        ``"distance_metric"`` (``obj`` a scikit-learn ``DistanceMetric``).
    params : dict
        The metric's parameters (``V``, ``VI``, ``p``, ``w``), checked here.
    fit : numpy.ndarray, optional
        The training rows: ``seuclidean`` without ``V`` takes their variances and
        ``mahalanobis`` without ``V``/``VI`` their covariance (fixed at ``fit``, so that a
        query's distances do not depend on the other queries).
    obj : DistanceMetric, optional
    """

    def __init__(self, name: str, params: dict | None = None, fit: np.ndarray | None = None, obj: Any = None):
        self.name, self.obj = name, obj
        params = dict(params or {})
        allowed = _PARAMS.get(name, ())
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise InvalidInputError(
                f"metric_params {unknown} are not parameters of metric {name!r}"
                + (f" ({', '.join(allowed)})" if allowed else " (it takes none)")
            )
        self.kw: dict = {}
        if name == "seuclidean":
            V = params.get("V")
            if V is None and fit is not None:
                V = np.var(fit, axis=0, ddof=1)
            self.kw = {} if V is None else {"V": np.asarray(V, dtype=np.float64)}
        elif name == "mahalanobis":
            VI = params.get("VI")
            if VI is None and params.get("V") is not None:
                VI = np.linalg.inv(np.asarray(params["V"], dtype=np.float64))
            if VI is None and fit is not None:
                VI = np.linalg.pinv(np.atleast_2d(np.cov(fit, rowvar=False)))
            self.kw = {} if VI is None else {"VI": np.asarray(VI, dtype=np.float64)}
        elif name == "minkowski":
            p = float(params.get("p", 2.0))
            self.kw = {"p": p, "w": np.asarray(params["w"], dtype=np.float64)}
            if np.any(self.kw["w"] < 0):
                raise InvalidInputError("metric_params 'w' (Minkowski weights) must be >= 0")

    def check(self, X: np.ndarray, name: str = "X", *, fit: bool = False) -> None:
        """The metric's own requirement on the rows (haversine: 2 columns, checked on the
        queries as scikit-learn does, not at ``fit``; parameter sizes: the features)."""
        if self.name == "haversine" and X.shape[1] != 2 and not fit:
            raise InvalidInputError(f"Haversine distance only valid in 2 dimensions; {name} has {X.shape[1]} columns")
        if self.name in ("seuclidean", "minkowski") or (self.name == "mahalanobis" and "VI" in self.kw):
            key = {"seuclidean": "V", "minkowski": "w", "mahalanobis": "VI"}[self.name]
            size = self.kw[key].shape[0] if key in self.kw else X.shape[1]
            if size != X.shape[1]:
                raise InvalidInputError(
                    f"metric_params {key!r} has size {size}, expected the number of features {X.shape[1]}"
                )

    def pairwise(self, Q: np.ndarray, R: np.ndarray) -> np.ndarray:
        """Distances (float64) of every row of Q to every row of R."""
        from scipy.spatial.distance import cdist  # noqa: PLC0415 - scipy import is slow, only when used

        if self.obj is not None:
            return np.asarray(self.obj.pairwise(Q, R), dtype=np.float64)
        if self.name in BOOLEAN_METRICS:
            # 0/0 (NaN) arises for two all-false rows only: identical rows, distance 0
            return np.nan_to_num(cdist(Q != 0, R != 0, self.name), nan=0.0)
        if self.name == "haversine":
            lat1, lon1, lat2, lon2 = Q[:, :1], Q[:, 1:2], R[None, :, 0][0], R[None, :, 1][0]
            a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
            return 2 * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
        if self.name == "nan_euclidean":
            return _nan_euclidean(Q, R)
        return cdist(Q, R, self.name, **self.kw)

    def __call__(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(self.pairwise(x[None, :], y[None, :])[0, 0])

    @property
    def __name__(self) -> str:  # named in messages as a callable would be
        return self.name


def _nan_euclidean(Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    """scikit-learn's ``nan_euclidean_distances``: the euclidean distance over the
    coordinates present in both rows, scaled by ``n_features / n_present``; a pair with no
    common coordinate is infinitely far (scikit-learn: NaN), so that it ranks last."""
    mq, mr = np.isnan(Q), np.isnan(R)
    q, r = np.where(mq, 0.0, Q), np.where(mr, 0.0, R)
    pq, pr = (~mq).astype(np.float64), (~mr).astype(np.float64)
    # sum over present pairs of (q - r)^2 = q^2 . pr + pq . r^2 - 2 q . r (q, r zero where missing)
    d2 = (q * q) @ pr.T + pq @ (r * r).T - 2.0 * (q @ r.T)
    present = pq @ pr.T
    with np.errstate(divide="ignore", invalid="ignore"):
        d2 = np.clip(d2, 0.0, None) * (Q.shape[1] / present)
    return np.where(present > 0, np.sqrt(d2), np.inf)


def host_metric(metric: Any, params: dict, fit: Any = None) -> HostMetric | None:
    """The :class:`HostMetric` of an estimator's ``metric`` / ``metric_params`` (``fit``
    the training rows, any namespace), or None when the engine serves the metric."""
    fit_np = None if fit is None else np.asarray(to_numpy(fit), dtype=np.float64)
    if is_distance_metric_object(metric):
        return HostMetric("distance_metric", {}, obj=metric)
    if not isinstance(metric, str):
        return None
    if metric in HOST_METRICS:
        return HostMetric(metric, params, fit_np)
    if metric == "minkowski" and params.get("w") is not None:
        return HostMetric("minkowski", params, fit_np)
    return None


def check_precomputed(D: Any, *, name: str = "X") -> None:
    """A precomputed distance matrix must be ``>= 0`` (scikit-learn's check; finite values
    were checked by the caller's validation)."""
    xp = array_namespace(D)
    if D.shape[0] and D.shape[1] and bool(xp.any(D < 0)):
        raise InvalidInputError(f"Negative values in data passed to precomputed distance matrix {name}.")


class HostReference:
    """The training side of a precomputed or callable metric search.

    Parameters
    ----------
    data : array (n_samples_fit, n_features), or the (n_samples_fit, n_samples_fit) training
        distance matrix (precomputed)
    metric : "precomputed" or a callable
    params : dict, optional
        Keyword arguments of the callable (scikit-learn's ``metric_params``).

    Attributes
    ----------
    metric : str
        ``"precomputed"`` or ``"callable"`` (the name :func:`gpuknn.ops.exact.keys_to_distances`
        knows: the keys are minus the distances).
    shape : (n_samples_fit, work)
        ``work`` the per-pair cost in feature steps (1 for precomputed), which sizes tiles.
    """

    def __init__(self, data: Any, metric: Any, params: dict | None = None):
        self.data = data
        self.func = metric if callable(metric) else None
        self.metric = "callable" if self.func is not None else "precomputed"
        if isinstance(metric, HostMetric):
            metric.check(to_numpy(data), fit=True)
        self.params = dict(params or {})
        n, d = int(data.shape[0]), int(data.shape[1])
        self.shape = (n, 1 if self.func is None else d)
        self.dtype = data.dtype
        self.stats = None

    def values(self, Qb: Any, c0: int, c1: int) -> Any:
        """Distances (float64) of the query block to training rows ``c0 .. c1 - 1``."""
        xp = array_namespace(Qb)
        if self.func is None:
            return xp.astype(Qb[:, c0:c1], xp.float64)
        return self._call(Qb, to_numpy(self.data[c0:c1, :]), None)

    def pair_values(self, Qb: Any, index: Any) -> Any:
        """Distances (float64) of ``(Qb[i], training row index[i, j])``."""
        xp = array_namespace(Qb)
        if self.func is None:
            return xp.astype(xp.take_along_axis(Qb, index, axis=1), xp.float64)
        return self._call(Qb, to_numpy(self.data), to_numpy(index))

    def distances(self, s: Any) -> Any:
        return s

    def _call(self, Qb: Any, R: np.ndarray, index: np.ndarray | None) -> Any:
        xp, dev = array_namespace(Qb), device_of(Qb)
        Q = to_numpy(Qb)
        f, kw = self.func, self.params
        if isinstance(f, HostMetric):  # a whole tile at once
            Q = np.asarray(Q, dtype=np.float64)
            f.check(Q)
            if index is None:
                out = f.pairwise(Q, np.asarray(R, dtype=np.float64))
            else:
                rows = [f.pairwise(Q[i : i + 1], R[row])[0] for i, row in enumerate(index)]
                out = np.stack(rows) if rows else np.zeros(index.shape)
            out = np.where(np.isnan(out), np.inf, out) if f.name == "nan_euclidean" else out
            if np.any(np.isnan(out)) or np.any(out < 0):
                raise InvalidInputError(f"metric {f.name!r} gave NaN or negative distances for these rows")
            return from_numpy(np.ascontiguousarray(out, dtype=np.float64), xp, device=dev)
        if index is None:
            out = np.array([[f(q, r, **kw) for r in R] for q in Q], dtype=np.float64).reshape(Q.shape[0], R.shape[0])
        else:
            out = np.array([[f(q, R[j], **kw) for j in row] for q, row in zip(Q, index)], dtype=np.float64)
            out = out.reshape(index.shape)
        if not np.all(np.isfinite(out)):
            raise InvalidInputError(f"metric {getattr(f, '__name__', f)!r} returned non-finite distances")
        return from_numpy(out, xp, device=dev)


class PreparedHost:
    """An estimator's fitted index for a host metric: ``reference`` (a :class:`HostReference`)
    where the engine's estimators keep a :class:`gpuknn.ops.kneighbors.PreparedReference`."""

    def __init__(self, data: Any, metric: Any, params: dict | None = None):
        self.reference = HostReference(data, metric, params)
        self.metric = self.reference.metric

    @property
    def data(self) -> Any:
        return self.reference.data
