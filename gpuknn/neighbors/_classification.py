"""Neighbour classifiers: :class:`KNeighborsClassifier` (the vote of the k nearest) and
:class:`RadiusNeighborsClassifier` (the vote of everything within a radius), scikit-learn's
``sklearn.neighbors._classification`` on gpuknn's exact engine. Votes: :mod:`gpuknn.ops.votes`
and :mod:`gpuknn.ops.radius`, decided on the exact distances.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._backend import array_namespace, compat_numpy, device_of, from_numpy, to_numpy
from ..base import check_is_fitted, uses_dask
from ..errors import InvalidInputError, InvalidInputTypeError
from ..ops.limits import check_working_memory
from ..ops.radius import radius_pairs_kdtree, radius_rows, radius_votes, rescaled
from ..ops.votes import count_votes, exact_winner, predict_votes
from ..ops.weights import call_weights, check_weights, distance_weights
from . import _dask
from ._base import (
    KNeighborsMixin,
    NeighborsBase,
    NeighborsClassifierMixin,
    RadiusNeighborsMixin,
    check_radius_value,
)

__all__ = ["KNeighborsClassifier", "RadiusNeighborsClassifier"]


class KNeighborsClassifier(KNeighborsMixin, NeighborsClassifierMixin, NeighborsBase):
    """k-nearest-neighbour vote, exact, on NumPy, CuPy or any array-API namespace.

    Parameters
    ----------
    n_neighbors : int, default 5
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
    weights : {"uniform", "distance"}, callable or None
        ``"distance"`` weighs each neighbour by ``1/d``; a query with zero-distance
        neighbours is decided by those alone (scikit-learn's rule). A callable gets the
        (n_queries, k) distances as :meth:`kneighbors` returns them (the input's namespace)
        and returns weights of that shape; a query whose weights are all zero is refused
        (scikit-learn's rule). None = ``"uniform"``.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree"}
        ``"brute"``: the tiled GEMM engine (any namespace, any metric). ``"kd_tree"``:
        SciPy's ``cKDTree`` (NumPy input, euclidean/sqeuclidean only). ``"auto"``: kd_tree
        when the input is NumPy, the metric euclidean or sqeuclidean and ``d <= 15``, else
        brute (see :mod:`gpuknn.ops.kdtree`). ``"ball_tree"`` (scikit-learn's name) runs as
        ``"auto"``. All give the same neighbours and tie rule.
    working_memory : float, optional
        MiB for the distance tiles (see :func:`gpuknn.kneighbors`); with dask data, for
        each task (see :func:`gpuknn.distributed.kneighbors`).
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``); SciPy's k-d tree
        chooses its own leaves.
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the engine runs on the array library's
        own threads (NumPy's BLAS, torch's intra-op pool, the GPU).

    Attributes
    ----------
    classes_ : array of shape (n_classes,)
        Sorted labels; in the input's namespace for numeric labels, NumPy for strings
        (and for dask training data).
    n_features_in_, n_samples_fit_ : int

    Notes
    -----
    **Ties.** Equal distances: the lower training index is the nearer neighbour. Equal
    votes: the class that sorts first in ``classes_`` wins (scikit-learn's rule).
    Prediction costs O(n_queries · n_train · d) in GEMMs.

    **Dask training data.** ``fit`` takes a dask array X (NumPy or CuPy chunks) and keeps it
    lazy: nothing of X is computed (its values are checked by the search tasks), ``y`` (any
    array, list, Series, or a dask array, computed) is encoded on the host. Each query runs
    :func:`gpuknn.distributed.kneighbors` (brute force whatever ``algorithm`` resolves to;
    ``"kd_tree"`` is refused) and decides the votes chunk by chunk on exact float64
    distances: the same neighbours, probabilities and predictions as the NumPy fit. A dask
    query gives lazy dask arrays chunked by its rows; a NumPy or CuPy query, computed
    arrays in its namespace. A dask query of a NumPy-fitted model is answered the same way.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]]); y = np.array(["a", "a", "b", "b"])
    >>> KNeighborsClassifier(n_neighbors=3).fit(X, y).predict(np.array([[0.4], [10.2]]))
    array(['a', 'b'], dtype='<U1')
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        weights: Any = "uniform",
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.weights = weights
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    _accepts_dask = True  # dask X: gpuknn.neighbors._dask (see Notes)

    def _check_params(self) -> None:
        check_weights(self.weights, self.metric, callable_ok=True)

    def fit(self, X: Any, y: Any) -> KNeighborsClassifier:
        """Store the training data (validated; a dask X stays lazy) and encode the labels."""
        self._fit(X)
        self._fit_labels(y)
        self._check_n_neighbors()
        return self

    def _votes_listed(self, X: Any, proba: bool) -> Any:
        """Class indices (n,) or float vote totals (n, n_classes) from :meth:`kneighbors`'s
        lists: X=None (each training row without itself) and callable weights."""
        weights = "uniform" if self.weights is None else self.weights
        if isinstance(weights, str) and weights == "uniform":
            dist, idx = None, self.kneighbors(X, return_distance=False)
        else:
            dist, idx = self.kneighbors(X)
        xp, dev = array_namespace(idx), device_of(idx)
        labels = self._labels_of(idx, xp)
        n_classes = int(self.classes_.shape[0])
        if dist is None:
            w = xp.ones(labels.shape, dtype=xp.float64, device=dev)
        elif callable(weights):
            w = call_weights(weights, dist, xp)
        else:
            w = distance_weights(xp.astype(dist, xp.float64), xp)
        if bool(xp.any(xp.all(w == 0, axis=1))):
            raise InvalidInputError(
                "All neighbors of some sample is getting zero weights. Please modify 'weights' "
                "to avoid this case if you are using a user-defined function."
            )
        onehot = labels[:, :, None] == xp.arange(n_classes, dtype=labels.dtype, device=dev)[None, None, :]
        counts = xp.sum(xp.where(onehot, w[:, :, None], xp.zeros_like(w)[:, :, None]), axis=1)
        # Equal totals: the first class (argmax's first maximum, scikit-learn's weighted_mode).
        return counts if proba else xp.argmax(counts, axis=1)

    def _votes(self, X: Any, xp: Any, magnitude: float, proba: bool) -> Any:
        """Class indices (n,) or vote totals (n, n_classes) of validated X."""
        nb = self._neighbors(X, self.n_neighbors, magnitude)
        labels = self._labels_of(nb.indices, xp)
        n_classes = int(self.classes_.shape[0])
        # The engine's own labels and distances: the votes' internal entries check nothing again.
        if proba:
            weights = "uniform" if self.weights is None else self.weights
            return count_votes(labels, [self.n_neighbors], n_classes, nb.distances, weights, xp)[0, ...]
        if self.weights in (None, "uniform"):
            return predict_votes(labels, [self.n_neighbors], n_classes, None, "uniform", xp)[0, :]
        va = nb.vote_args()  # exact decisions on the distances: their bounds and refinement
        ks, dist = [self.n_neighbors], va["distances"]
        return predict_votes(labels, ks, n_classes, dist, "distance", xp, bounds=va["bounds"], refine=va["refine"])[
            0, :
        ]

    def predict(self, X: Any = None) -> Any:
        """Predicted labels, shape (n_queries,).

        Distance-weighted votes are decided on the exact distances, even where the winner
        hinges on a difference below float rounding (:func:`gpuknn.votes_for_many_k`).
        X=None: each training row's prediction without itself among its neighbours
        (:meth:`kneighbors`' rule).
        """
        if getattr(self, "outputs_2d_", False):
            return self._stack_outputs([KNeighborsClassifier.predict(v, X) for v in self._output_views()])
        if X is None or callable(self.weights):
            check_is_fitted(self, "_fit_X")
            return self._decode(self._votes_listed(X, proba=False))
        X, xp, mag = self._query(X)
        if uses_dask(self, X):
            return _dask.predict(self, X)
        return self._decode(self._votes(X, xp, mag, proba=False))

    def predict_proba(self, X: Any = None) -> Any:
        """Vote shares per class, shape (n_queries, n_classes), columns in ``classes_`` order
        (X=None: as in :meth:`predict`)."""
        if getattr(self, "outputs_2d_", False):  # a list: one array per output (scikit-learn's)
            return [KNeighborsClassifier.predict_proba(v, X) for v in self._output_views()]
        if X is None or callable(self.weights):
            check_is_fitted(self, "_fit_X")
            counts = self._votes_listed(X, proba=True)
            xp = array_namespace(counts)
            return counts / xp.sum(counts, axis=1, keepdims=True)
        X, xp, mag = self._query(X)
        if uses_dask(self, X):
            return _dask.predict_proba(self, X)
        counts = self._votes(X, xp, mag, proba=True)
        counts = xp.astype(counts, xp.float64 if counts.dtype == xp.int64 else counts.dtype)
        return counts / xp.sum(counts, axis=1, keepdims=True)


class RadiusNeighborsClassifier(RadiusNeighborsMixin, NeighborsClassifierMixin, NeighborsBase):
    """Vote of all training points within a fixed radius, like scikit-learn's.

    Parameters
    ----------
    radius : float, default 1.0
        In the metric's units (``sqeuclidean``: squared distance; ``cosine`` and
        ``correlation``: ``1 - similarity``). Points at distance ``<= radius`` vote;
        ``math.inf``: every training row.
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
    weights : {"uniform", "distance"}, callable or None
        A callable must work elementwise: it gets the 1-D distances of the (query,
        neighbour) pairs in the input's namespace. None = ``"uniform"``.
    outlier_label : None, label or "most_frequent"
        What a query without any neighbour within the radius gets. ``None`` (default):
        :class:`InvalidInputError` naming those queries (scikit-learn raises too).
        ``"most_frequent"``: the most frequent training class (ties -> first in
        ``classes_``). A label not among the training classes is predicted as is and gives
        an all-zero row in :meth:`predict_proba`.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree"}
        ``"brute"``: masked distance tiles (any namespace). ``"kd_tree"``: SciPy
        ``cKDTree.sparse_distance_matrix`` (NumPy, euclidean/sqeuclidean). ``"auto"``:
        kd_tree when NumPy, euclidean family and ``d <= 15``. ``"ball_tree"``: as ``"auto"``.
    working_memory : float, optional
        MiB for one block of distance tiles (brute).
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``).
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the array library's threads do the work.

    Warns
    -----
    UserWarning
        When outliers are met and ``outlier_label`` is not a training class (their
        probabilities are all zero), with scikit-learn's message.

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
    >>> RadiusNeighborsClassifier(2.0, outlier_label=1).fit(X, y).predict(np.array([[0.5], [5.0]]))
    array([0, 1])

    A label that is not a class (``outlier_label=-1``) is predicted too, with scikit-learn's
    ``UserWarning`` (its probabilities are all zero).
    """

    def __init__(
        self,
        radius: float = 1.0,
        *,
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        weights: str = "uniform",
        outlier_label: Any = None,
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.radius = radius
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.weights = weights
        self.outlier_label = outlier_label
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    _needs_distance = True

    def _check_params(self) -> None:
        check_weights(self.weights, self.metric, callable_ok=True)
        check_radius_value(self.radius)

    def fit(self, X: Any, y: Any) -> RadiusNeighborsClassifier:
        """Store the validated training data; resolve the outlier label."""
        self._fit(X)
        self._fit_labels(y)
        if not self.outputs_2d_:
            self._onehot = self._onehot_of(self._y, int(self.classes_.shape[0]))
            self.outlier_label_ = self._resolve_outlier_label()
            return self
        self._onehot = None  # per output, in its view
        n_out, label = len(self.classes_), self.outlier_label
        if label is None or (isinstance(label, str) and label == "most_frequent") or np.ndim(label) == 0:
            labels = [label] * n_out
        else:
            labels = list(label)
            if len(labels) != n_out:
                raise InvalidInputError(
                    f"The length of outlier_label: {label} is inconsistent with the output length: {n_out}"
                )
        self.outlier_label_ = (
            None
            if label is None
            else [self._resolve_outlier_label(lab, self.classes_[j], self._y[:, j]) for j, lab in enumerate(labels)]
        )
        return self

    def _onehot_of(self, codes: Any, n_classes: int) -> Any:
        """(n_samples, n_classes) one-hot rows of the class codes, in the data's dtype."""
        xp = array_namespace(codes)
        classes = xp.arange(n_classes, device=device_of(codes))
        return xp.astype(codes[:, None] == classes[None, :], self._fit_X.dtype)

    def _output_view(self, view: Any, j: int) -> None:
        view._onehot = self._onehot_of(view._y, int(view.classes_.shape[0]))
        view.outlier_label_ = None if self.outlier_label_ is None else self.outlier_label_[j]

    def _resolve_outlier_label(self, label: Any = "__own__", classes: Any = None, codes: Any = None) -> Any:
        """``outlier_label_`` of one output (default: the estimator's own label and classes)."""
        if isinstance(label, str) and label == "__own__":
            label, classes, codes = self.outlier_label, self.classes_, self._y
        if label is None:
            return None
        classes = to_numpy(classes)
        if isinstance(label, str) and label == "most_frequent":
            counts = np.bincount(to_numpy(codes), minlength=classes.shape[0])
            return classes[int(np.argmax(counts))]
        if np.ndim(label) != 0:  # TypeErrors as scikit-learn's
            raise InvalidInputTypeError(f"outlier_label must be a scalar, got {label!r}")
        numeric_classes = classes.dtype.kind in "biuf"
        numeric_label = isinstance(label, (int, float, np.number)) and not isinstance(label, bool)
        if numeric_classes != numeric_label:
            raise InvalidInputTypeError(
                f"outlier_label {label!r} has a different type from the classes {classes[:5]!r}"
            )
        return label

    def _votes_listed(self, X: Any) -> tuple[Any, Any, Any]:
        """:meth:`_votes` from :meth:`radius_neighbors`' pairs: X=None (each training row
        without itself), callable weights and ``radius=inf``."""
        indptr, cols, dist = self._radius_pairs(X, None, False)
        xp, dev = array_namespace(cols), device_of(cols)
        ptr = to_numpy(indptr)
        n, n_classes = ptr.shape[0] - 1, int(self.classes_.shape[0])
        members = np.diff(ptr)
        rows = np.repeat(np.arange(n), members)
        if self.weights in (None, "uniform"):
            w = np.ones(rows.shape[0])
        elif callable(self.weights):
            w = to_numpy(call_weights(self.weights, dist, xp))
        else:
            w = distance_weights(np.asarray(to_numpy(dist), dtype=np.float64), compat_numpy, rows=rows, n_rows=n)
        y = to_numpy(self._y)[to_numpy(cols)]
        counts = np.bincount(rows * n_classes + y, weights=w, minlength=n * n_classes).reshape(n, n_classes)
        winners = np.where(members > 0, np.argmax(counts, axis=1), -1).astype(np.int64)
        counts = counts.astype(to_numpy(self._fit_X[:0, :]).dtype, copy=False)
        return from_numpy(counts, xp, device=dev), from_numpy(winners, xp, device=dev), xp

    def _votes(self, X: Any) -> tuple[Any, Any, Any]:
        """Vote totals (n, n_classes), exact winners (n,; -1 for outliers) and the namespace."""
        if X is None or callable(self.weights) or float(self.radius) == np.inf:
            check_is_fitted(self, "_fit_X")
            return self._votes_listed(X)
        X, xp, mag = self._query(X)
        radius = float(self.radius)
        tiny = rescaled(X, self._fit_X, self._metric, max(mag or 0.0, self._fit_magnitude or 0.0), radius)
        if self._fit_method == "kd_tree" and tiny is None:
            counts, winners = self._votes_kdtree(X, radius)
            return counts, winners, xp
        rows = radius_rows(X.shape[0], self.n_samples_fit_, check_working_memory(self.working_memory, xp))
        weights = "uniform" if self.weights is None else self.weights
        if tiny is not None:  # squares that underflow: scaled (distance totals scaled back)
            counts, winners = radius_votes(tiny.X, tiny.ref, self._onehot, tiny.radius, weights, rows_per_block=rows)
            return (counts * tiny.scale if weights == "distance" else counts), winners, xp
        counts, winners = radius_votes(X, self._ref.reference, self._onehot, radius, weights, rows_per_block=rows)
        return counts, winners, xp

    def _votes_kdtree(self, X: Any, radius: float) -> tuple[Any, Any]:
        qi, rj, d = radius_pairs_kdtree(X, self._tree, radius, self._metric)
        n, n_classes = X.shape[0], int(self.classes_.shape[0])
        y = np.asarray(self._y)[rj]
        w = (
            np.ones_like(d)
            if self.weights in (None, "uniform")
            else distance_weights(d, compat_numpy, rows=qi, n_rows=n)
        )
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
        if self.outlier_label_ is not None and bool(xp.any(outlier)):
            if not np.any(to_numpy(self.classes_) == self.outlier_label_):
                warnings.warn(
                    f"Outlier label {self.outlier_label_} is not in training classes. All class "
                    "probabilities of outliers will be assigned with 0.",
                    UserWarning,
                    stacklevel=3,
                )
        return outlier

    def predict_proba(self, X: Any = None) -> Any:
        """Weighted vote shares, shape (n, n_classes); outliers: 1 at ``outlier_label_``
        when it is a training class, else a row of zeros. X=None: each training row
        without itself among its neighbours."""
        if getattr(self, "outputs_2d_", False):  # a list: one array per output (scikit-learn's)
            return [RadiusNeighborsClassifier.predict_proba(v, X) for v in self._output_views()]
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

    def predict(self, X: Any = None) -> Any:
        """Predicted labels (n,); outliers get ``outlier_label_`` (X=None: as in
        :meth:`predict_proba`)."""
        if getattr(self, "outputs_2d_", False):
            return self._stack_outputs([RadiusNeighborsClassifier.predict(v, X) for v in self._output_views()])
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
