"""Radius neighbour regression: :class:`RadiusNeighborsRegressor`, the mean of the targets of
the training rows within a radius, with scikit-learn's semantics.

It walks the queries in blocks under ``working_memory`` and decides membership on the exact
distances where the tile cannot (:mod:`gpuknn.ops.radius`'s rule), so it never forms the
whole ``n_queries x n_train`` matrix. It follows scikit-learn 1.9's
``sklearn.neighbors._regression`` as :class:`~gpuknn.KNeighborsRegressor` does, whose fit-time
validation, R² and weighting rules it shares (:mod:`gpuknn.regression`); a query without
neighbours predicts NaN with a warning.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ._backend import array_namespace, default_working_memory, device_of, to_numpy
from ._delegation import sqdist64
from .errors import EmptyNeighborhoodWarning, InvalidInputError
from .ops.certify import reference_bound
from .ops.exact import exact_keys, keys_to_distances
from .ops.radius import radius_key
from .ops.rerank import take_stats
from .ops.search import prepare_queries, score_tile
from .regression import _call_weights, _finish, _NeighborsRegression, _zero_rule

__all__ = ["RadiusNeighborsRegressor"]

_EUCLID = ("euclidean", "sqeuclidean")


class RadiusNeighborsRegressor(_NeighborsRegression):
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
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation"}
        ``"inner"`` is rejected: an inner product is not a distance.
    algorithm : {"auto", "brute", "kd_tree"}
        ``"brute"``: masked distance tiles (any namespace). ``"kd_tree"``: SciPy ``cKDTree``
        (NumPy, euclidean family). ``"auto"``: kd_tree for NumPy, euclidean family, d <= 15.
    working_memory : int, optional
        Bytes for one block of queries: about ten float64 (rows, n_train) tiles. Default
        :func:`gpuknn._backend.default_working_memory`.

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
        metric: str = "euclidean",
        algorithm: str = "auto",
        working_memory: int | None = None,
    ):
        self.radius = radius
        self.weights = weights
        self.metric = metric
        self.algorithm = algorithm
        self.working_memory = working_memory

    def fit(self, X: Any, y: Any) -> RadiusNeighborsRegressor:
        """Store the validated training rows X (n, d) and targets y (n,) or (n, n_outputs)."""
        if self.metric == "inner":
            raise InvalidInputError("RadiusNeighborsRegressor needs a distance; metric='inner' is not one")
        try:
            radius = float(self.radius)
        except (TypeError, ValueError):
            raise InvalidInputError(f"radius must be a number, got {self.radius!r}") from None
        if not math.isfinite(radius) or radius < 0:
            raise InvalidInputError(f"radius must be finite and >= 0, got {self.radius!r}")
        self._fit_data(X, y)
        return self

    def _rows_per_block(self, n_queries: int, xp: Any) -> int:
        wm = self.working_memory if self.working_memory is not None else default_working_memory(xp)
        return max(1, min(n_queries, int(wm) // max(1, self.n_samples_fit_ * 80)))  # ~10 float64 tiles

    def _block_weights(self, d: Any, inside: Any, dtype: Any, xp: Any) -> Any:
        if self.weights in (None, "uniform"):
            return xp.astype(inside, xp.float64)
        if self.weights == "distance":
            return _zero_rule(d, inside, xp)
        w = _call_weights(self.weights, xp.astype(d, dtype), xp)
        return xp.where(inside, w, xp.zeros_like(w))  # non-members' values (even NaN) unused

    def predict(self, X: Any) -> Any:
        """Weighted mean target of each query's neighbours within the radius, (n_queries,) or
        (n_queries, n_outputs); NaN (and an :class:`EmptyNeighborhoodWarning`) for a query
        without any."""
        X, xp = self._check_query(X)
        Y = self._targets(xp)
        ones = xp.ones((Y.shape[0], 1), dtype=xp.float64, device=device_of(Y))
        Y1 = xp.concat([Y, ones], axis=1)  # one GEMM gives the weighted sums and the total weight
        rows, radius = self._rows_per_block(X.shape[0], xp), float(self.radius)
        parts = []
        for b0 in range(0, X.shape[0], rows):
            Xb = X[b0 : min(b0 + rows, X.shape[0]), :]
            if self._fit_method == "kd_tree":
                parts.append(self._sums_kdtree(Xb, to_numpy(Y1), radius))
            else:
                d, inside = _radius_block(Xb, self._ref.reference, radius, xp)
                parts.append(self._block_weights(d, inside, X.dtype, xp) @ Y1)
        S = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        pred = _finish(S[:, :-1], S[:, -1:], self._y.dtype, self._y.ndim, xp)
        empty = xp.isnan(pred) if pred.ndim == 1 else xp.any(xp.isnan(pred), axis=1)
        if bool(xp.any(empty)):
            bad = to_numpy(xp.nonzero(empty)[0])
            shown = ", ".join(str(int(r)) for r in bad[:10]) + (" ..." if bad.size > 10 else "")
            warnings.warn(
                "One or more samples have no neighbors within specified radius; predicting NaN "
                f"({bad.size} of {X.shape[0]} query rows, radius={self.radius}: {shown})",
                EmptyNeighborhoodWarning,
                stacklevel=3,
            )
        return pred

    def _sums_kdtree(self, Xb: Any, Y1: np.ndarray, radius: float) -> np.ndarray:
        """Weighted target sums and total weights (rows, n_outputs + 1) from SciPy's tree."""
        from scipy.spatial import cKDTree  # noqa: PLC0415 - scipy import is slow

        r_tree = math.sqrt(radius) if self.metric == "sqeuclidean" else radius
        Xh = np.asarray(Xb, dtype=np.float64)
        # A hair beyond the radius: membership is decided below on the exact distances.
        pairs = cKDTree(Xh).sparse_distance_matrix(self._tree, r_tree * (1 + 1e-9) + 1e-300, output_type="ndarray")
        qi, rj = pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)
        d = sqdist64(Xh[qi], self._tree.data[rj])  # the brute path's exact arithmetic
        if self.metric == "euclidean":
            d = np.sqrt(d)
        keep = d <= radius
        qi, rj, d = qi[keep], rj[keep], d[keep]
        n = Xh.shape[0]
        if self.weights in (None, "uniform"):
            w = np.ones_like(d)
        elif self.weights == "distance":
            has_zero = np.zeros(n, dtype=bool)
            has_zero[qi[d == 0]] = True
            w = np.where(has_zero[qi], (d == 0).astype(np.float64), 1.0 / np.where(d == 0, 1.0, d))
        else:
            w = to_numpy(_call_weights(self.weights, d.astype(Xb.dtype), array_namespace(d)))
        return np.stack([np.bincount(qi, weights=w * Y1[rj, j], minlength=n) for j in range(Y1.shape[1])], axis=1)


def _radius_block(Xb: Any, ref: Any, radius: float, xp: Any) -> tuple[Any, Any]:
    """Float64 distances (rows, n_ref) of a query block and its membership mask ``d <= radius``.

    The tile (one GEMM) nominates; the pairs within its certified bound of the radius or of
    distance 0 get exact keys (:func:`gpuknn.ops.exact.exact_keys`), as
    :func:`gpuknn.ops.radius.radius_votes` decides them: exact membership and exact zeros
    (the ``"distance"`` rule), tile distances elsewhere.
    """
    metric = ref.metric
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Xb, ref, Xb.dtype)
    S = xp.astype(score_tile(q_rows, ref.block(0, ref.shape[0], Xb.dtype).T), xp.float64)
    e = reference_bound(ref, q_norm, q_stats, Xb.dtype)[:, None]
    euclid = metric in _EUCLID

    def units(key):  # a key in tile units, (rows, 1)
        return 0.5 * (q_sq[:, None] + key) if euclid else xp.full_like(e, key)

    at_radius, at_zero = units(radius_key(radius, metric)), units(radius_key(0.0, metric))
    unsure = (((S >= at_radius - e) & (S <= at_radius + e)) | (S >= at_zero - e)) & (e > 0)
    key_t = (S - 0.5 * q_sq[:, None]) / 0.5 if euclid else S
    flat_unsure = xp.reshape(unsure, (-1,))
    flat = xp.nonzero(flat_unsure)[0]
    if flat.shape[0]:
        n_ref = S.shape[1]
        r, c = flat // n_ref, flat % n_ref
        keys = exact_keys(
            xp.take(Xb, r, axis=0), ref.data, c[:, None], metric, ref.stats, q_stats=take_stats(q_stats, r)
        )[:, 0]
        # Scatter the exact keys back: position of each unsure entry among the unsure ones.
        pos = xp.clip(xp.cumulative_sum(xp.astype(flat_unsure, xp.int64)) - 1, min=0)
        key_t = xp.reshape(xp.where(flat_unsure, xp.take(keys, pos), xp.reshape(key_t, (-1,))), S.shape)
    dist = keys_to_distances(key_t, metric)
    return dist, xp.where(unsure, dist <= radius, S >= at_radius)
