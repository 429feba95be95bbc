"""Neighbours by distances the caller defines: ``metric="precomputed"`` and a callable metric.

* **precomputed**: the queries *are* distance rows, ``(n_queries, n_samples_fit)``; a
  training matrix ``(n_samples_fit, n_samples_fit)`` at ``fit`` (scikit-learn's rule,
  values finite and ``>= 0``).
* **callable**: ``metric(x, y, **metric_params)`` called on host NumPy 1-D rows, pair by
  pair, as scikit-learn's brute force calls it; its float answer is the distance.

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

__all__ = ["HostReference", "PreparedHost", "check_precomputed"]


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
