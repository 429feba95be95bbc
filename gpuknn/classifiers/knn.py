"""The k-nearest-neighbour classifier on the tiled engine."""

from __future__ import annotations

from typing import Any

from ..base import uses_dask
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..votes import vote_counts, votes_for_many_k
from ._base import NeighborsClassifierMixin, check_n_neighbors

__all__ = ["KNeighborsClassifier"]


class KNeighborsClassifier(NeighborsClassifierMixin):
    """k-nearest-neighbour vote, exact, on NumPy, CuPy or any array-API namespace.

    Parameters
    ----------
    n_neighbors : int, default 5
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
    weights : {"uniform", "distance"}
        ``"distance"`` weighs each neighbour by ``1/d``; a query with zero-distance
        neighbours is decided by those alone (scikit-learn's rule).
    algorithm : {"auto", "brute", "kd_tree"}
        ``"brute"``: the tiled GEMM engine (any namespace, any metric). ``"kd_tree"``:
        SciPy's ``cKDTree`` (NumPy input, euclidean/sqeuclidean only). ``"auto"``: kd_tree
        when the input is NumPy, the metric euclidean or sqeuclidean and ``d <= 15``, else
        brute (see :mod:`gpuknn.ops.kdtree`). Both give the same neighbours and tie rule.
    working_memory : int, optional
        Byte budget of a distance tile (see :func:`gpuknn.kneighbors`); with dask data, of
        each task (see :func:`gpuknn.distributed.kneighbors`).

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
        metric: str = "euclidean",
        weights: str = "uniform",
        algorithm: str = "auto",
        working_memory: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weights = weights
        self.algorithm = algorithm
        self.working_memory = working_memory

    _accepts_dask = True  # dask X: gpuknn.distributed.estimators (see Notes)

    def fit(self, X: Any, y: Any) -> KNeighborsClassifier:
        """Store the training data (validated; a dask X stays lazy) and encode the labels."""
        check_metric(self.metric)
        if self.weights not in ("uniform", "distance"):
            raise InvalidInputError(f"weights must be 'uniform' or 'distance', got {self.weights!r}")
        if self.weights == "distance" and self.metric == "inner":
            raise InvalidInputError("weights='distance' is undefined for metric='inner'")
        self._fit_data(X, y)
        check_n_neighbors(self.n_neighbors, self.n_samples_fit_)
        self._setup_search(self.algorithm, self.metric)
        return self

    def kneighbors(self, X: Any, n_neighbors: int | None = None, return_distance: bool = True):
        """Neighbours of X among the training rows: ``(distances, indices)`` (n, k)."""
        X, _ = self._check_query(X)
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        k = check_n_neighbors(k, self.n_samples_fit_)
        if uses_dask(self, X):
            from ..distributed.estimators import kneighbors  # noqa: PLC0415 - Dask only with its arrays

            return kneighbors(self, X, k, return_distance)
        dist, idx = self._search(X, k)
        return (dist, idx) if return_distance else idx

    def _counts(self, X: Any) -> Any:
        X, xp = self._check_query(X)
        nb = self._neighbors(X, self.n_neighbors)
        labels = self._labels_of(nb.indices, xp)
        n_classes = int(self.classes_.shape[0])
        return vote_counts(
            labels, [self.n_neighbors], n_classes=n_classes, distances=nb.distances, weights=self.weights
        )[0, ...], xp

    def predict(self, X: Any) -> Any:
        """Predicted labels, shape (n_queries,).

        Distance-weighted votes are decided on the exact distances, even where the winner
        hinges on a difference below float rounding (:func:`gpuknn.votes_for_many_k`).
        """
        X, xp = self._check_query(X)
        if uses_dask(self, X):
            from ..distributed.estimators import predict  # noqa: PLC0415

            return predict(self, X)
        nb = self._neighbors(X, self.n_neighbors)
        labels = self._labels_of(nb.indices, xp)
        extra = nb.vote_args() if self.weights == "distance" else {}
        pred = votes_for_many_k(
            labels, [self.n_neighbors], n_classes=int(self.classes_.shape[0]), weights=self.weights, **extra
        )
        return self._decode(pred[0, :])

    def predict_proba(self, X: Any) -> Any:
        """Vote shares per class, shape (n_queries, n_classes), columns in ``classes_`` order."""
        if uses_dask(self, X):
            from ..distributed.estimators import predict_proba  # noqa: PLC0415

            return predict_proba(self, self._check_query(X)[0])
        counts, xp = self._counts(X)
        counts = xp.astype(counts, xp.float64 if counts.dtype == xp.int64 else counts.dtype)
        return counts / xp.sum(counts, axis=1, keepdims=True)
