"""Fixed-radius neighbour vote, batched as masked distance tiles times a one-hot matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, default_working_memory, device_of, from_numpy, to_numpy
from .._delegation import sqdist64
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..ops.radius import radius_votes
from ..votes import exact_winner
from ._base import NeighborsClassifierMixin

__all__ = ["RadiusNeighborsClassifier", "radius_vote_counts"]


def _onehot(y_enc: Any, n_classes: int, dtype: Any, xp: Any) -> Any:
    classes = xp.arange(n_classes, device=device_of(y_enc))
    return xp.astype(y_enc[:, None] == classes[None, :], dtype)


def radius_vote_counts(D: Any, onehot: Any, radius: float, weights: str = "uniform") -> Any:
    """Class votes of the references within ``radius`` for a block of distances.

    Parameters
    ----------
    D : array of shape (n_queries, n_ref)
        Distances (in the metric's units).
    onehot : array of shape (n_ref, n_classes)
        One-hot encoding of the reference labels, D's dtype.
    radius : float
        References with ``D <= radius`` vote (scikit-learn's inclusive rule).
    weights : {"uniform", "distance"}
        ``"distance"``: weight ``1/d``; a query with zero-distance references within the
        radius is decided by those alone (weight 1 each), as in scikit-learn.

    Returns
    -------
    counts : array of shape (n_queries, n_classes)
        All-zero rows are queries without any neighbour within the radius (outliers).

    Complexity: one GEMM, O(n_queries · n_ref · n_classes).
    """
    xp = array_namespace(D, onehot)
    inside = D <= radius
    if weights == "uniform":
        W = xp.astype(inside, D.dtype)
    else:
        zero = inside & (D == 0)
        has_zero = xp.any(zero, axis=1, keepdims=True)
        inv = 1.0 / xp.where(D == 0, xp.ones_like(D), D)
        W = xp.where(has_zero, xp.astype(zero, D.dtype), xp.where(inside, inv, xp.zeros_like(D)))
    return W @ onehot


class RadiusNeighborsClassifier(NeighborsClassifierMixin):
    """Vote of all training points within a fixed radius, like scikit-learn's.

    Parameters
    ----------
    radius : float, default 1.0
        In the metric's units (``sqeuclidean``: squared distance; ``cosine`` and
        ``correlation``: ``1 - similarity``). Points at distance ``<= radius`` vote.
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation"}
        ``"inner"`` is rejected: an inner product is not a distance.
    weights : {"uniform", "distance"}
    outlier_label : None, label or "most_frequent"
        What a query without any neighbour within the radius gets. ``None`` (default):
        :class:`InvalidInputError` naming those queries (scikit-learn raises too).
        ``"most_frequent"``: the most frequent training class (ties -> first in
        ``classes_``). A label not among the training classes is predicted as is and gives
        an all-zero row in :meth:`predict_proba`.
    algorithm : {"auto", "brute", "kd_tree"}
        ``"brute"``: masked distance tiles (any namespace). ``"kd_tree"``: SciPy
        ``cKDTree.sparse_distance_matrix`` (NumPy, euclidean/sqeuclidean). ``"auto"``:
        kd_tree when NumPy, euclidean family and ``d <= 15``.
    working_memory : int, optional
        Byte budget of one distance tile (brute).

    Notes
    -----
    Vote ties -> lowest class index. Membership and distance-weighted winners are decided
    on the exact distances (:mod:`gpuknn.ops.radius`): a point on the radius counts the same
    on every backend and tiling (scikit-learn's own GEMM distances may put it 1 ulp across).
    Cost O(n_queries · n_train · (d + n_classes)).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [10.0]]); y = np.array([0, 0, 1])
    >>> RadiusNeighborsClassifier(2.0, outlier_label=-1).fit(X, y).predict(np.array([[0.5], [5.0]]))
    array([ 0, -1])
    """

    def __init__(
        self,
        radius: float = 1.0,
        *,
        metric: str = "euclidean",
        weights: str = "uniform",
        outlier_label: Any = None,
        algorithm: str = "auto",
        working_memory: int | None = None,
    ):
        self.radius = radius
        self.metric = metric
        self.weights = weights
        self.outlier_label = outlier_label
        self.algorithm = algorithm
        self.working_memory = working_memory

    def fit(self, X: Any, y: Any) -> RadiusNeighborsClassifier:
        """Store the validated training data; resolve the outlier label."""
        check_metric(self.metric)
        if self.metric == "inner":
            raise InvalidInputError("RadiusNeighborsClassifier needs a distance; metric='inner' is not one")
        if self.weights not in ("uniform", "distance"):
            raise InvalidInputError(f"weights must be 'uniform' or 'distance', got {self.weights!r}")
        try:
            radius = float(self.radius)
        except (TypeError, ValueError):
            raise InvalidInputError(f"radius must be a number, got {self.radius!r}") from None
        if not np.isfinite(radius) or radius < 0:
            raise InvalidInputError(f"radius must be finite and >= 0, got {self.radius!r}")
        xp = self._fit_data(X, y)
        self._setup_search(self.algorithm, self.metric)
        self._onehot = _onehot(self._y, int(self.classes_.shape[0]), self._fit_X.dtype, xp)
        self.outlier_label_ = self._resolve_outlier_label()
        return self

    def _resolve_outlier_label(self) -> Any:
        label = self.outlier_label
        if label is None:
            return None
        classes = to_numpy(self.classes_)
        if isinstance(label, str) and label == "most_frequent":
            counts = np.bincount(to_numpy(self._y), minlength=classes.shape[0])
            return classes[int(np.argmax(counts))]
        if np.ndim(label) != 0:
            raise InvalidInputError(f"outlier_label must be a scalar, got {label!r}")
        numeric_classes = classes.dtype.kind in "biuf"
        numeric_label = isinstance(label, (int, float, np.number)) and not isinstance(label, bool)
        if numeric_classes != numeric_label:
            raise InvalidInputError(f"outlier_label {label!r} has a different type from the classes {classes[:5]!r}")
        return label

    def _votes(self, X: Any) -> tuple[Any, Any, Any]:
        """Vote totals (n, n_classes), exact winners (n,; -1 for outliers) and the namespace."""
        X, xp = self._check_query(X)
        radius = float(self.radius)
        if self._fit_method == "kd_tree":
            counts, winners = self._votes_kdtree(X)
            return counts, winners, xp
        n_fit = self.n_samples_fit_
        wm = self.working_memory if self.working_memory is not None else default_working_memory(xp)
        rows = max(1, min(X.shape[0], int(wm) // max(1, n_fit * 80)))  # ~10 float64 tiles
        counts, winners = radius_votes(X, self._ref.reference, self._onehot, radius, self.weights, rows_per_block=rows)
        return counts, winners, xp

    def _votes_kdtree(self, X: Any) -> tuple[Any, Any]:
        from scipy.spatial import cKDTree  # noqa: PLC0415

        r = float(self.radius)
        r_tree = np.sqrt(r) if self.metric == "sqeuclidean" else r
        Xh = np.asarray(X, dtype=np.float64)
        qtree = cKDTree(Xh)
        # A hair beyond the radius: membership is decided below on the exact distances.
        pairs = qtree.sparse_distance_matrix(self._tree, r_tree * (1 + 1e-9) + 1e-300, output_type="ndarray")
        qi, rj = pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)
        d = sqdist64(Xh[qi], self._tree.data[rj])  # the exact pass's own arithmetic
        if self.metric == "euclidean":
            d = np.sqrt(d)
        keep = d <= r
        qi, rj, d = qi[keep], rj[keep], d[keep]
        n, n_classes = X.shape[0], int(self.classes_.shape[0])
        y = np.asarray(self._y)[rj]
        if self.weights == "uniform":
            w = np.ones_like(d)
        else:
            has_zero = np.zeros(n, dtype=bool)
            has_zero[qi[d == 0]] = True
            w = np.where(has_zero[qi], (d == 0).astype(np.float64), 1.0 / np.where(d == 0, 1.0, d))
        counts = np.bincount(qi * n_classes + y, weights=w, minlength=n * n_classes).reshape(n, n_classes)
        members = np.bincount(qi, minlength=n)
        winners = np.where(members > 0, np.argmax(counts, axis=1), -1)
        if self.weights == "distance":  # totals that hinge on their rounding: decided exactly
            part = np.sort(counts, axis=1)
            hinge = (members > 0) & (part[:, -1] - part[:, -2] <= 4 * 2.0**-53 * members * part[:, -1])
            for r_ in np.flatnonzero(hinge):
                sel = qi == r_
                winners[r_] = exact_winner(y[sel], d[sel], n_classes)
        return counts.astype(X.dtype, copy=False), winners.astype(np.int64)

    def _outliers(self, winners: Any, xp: Any) -> Any:
        """Boolean (n,) mask of queries without neighbours; raises when they are not allowed."""
        outlier = winners < 0
        if self.outlier_label_ is None and bool(xp.any(outlier)):
            rows = to_numpy(xp.nonzero(outlier)[0])
            shown = ", ".join(str(int(r)) for r in rows[:10]) + (" ..." if rows.size > 10 else "")
            raise InvalidInputError(
                f"no neighbours within radius={self.radius} for {rows.size} query row(s): {shown}; "
                "use a larger radius, set outlier_label, or remove those samples"
            )
        return outlier

    def predict_proba(self, X: Any) -> Any:
        """Weighted vote shares, shape (n, n_classes); outliers: 1 at ``outlier_label_``
        when it is a training class, else a row of zeros."""
        counts, winners, xp = self._votes(X)
        outlier = self._outliers(winners, xp)
        if self.outlier_label_ is not None:
            classes = to_numpy(self.classes_)
            hit = np.flatnonzero(classes == self.outlier_label_)
            if hit.size:
                col = xp.arange(counts.shape[1], device=device_of(counts)) == int(hit[0])
                counts = xp.where(outlier[:, None], xp.astype(col[None, :], counts.dtype), counts)
        total = xp.sum(counts, axis=1, keepdims=True)
        return counts / xp.where(total > 0, total, xp.ones_like(total))

    def predict(self, X: Any) -> Any:
        """Predicted labels (n,); outliers get ``outlier_label_``."""
        counts, winners, xp = self._votes(X)
        outlier = self._outliers(winners, xp)
        pred = self._decode(xp.where(outlier, xp.zeros_like(winners), winners))
        if self.outlier_label_ is None or not bool(xp.any(outlier)):
            return pred
        if isinstance(pred, np.ndarray):
            out = pred.astype(np.result_type(pred.dtype, np.asarray(self.outlier_label_).dtype))
            out[to_numpy(outlier)] = self.outlier_label_
            return out
        pxp = array_namespace(pred)
        fill = from_numpy(np.asarray(self.outlier_label_), pxp, device=device_of(pred))
        dtype = pxp.result_type(pred.dtype, fill.dtype)
        return pxp.where(outlier, pxp.astype(fill, dtype), pxp.astype(pred, dtype))
