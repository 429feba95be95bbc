"""The k-nearest-neighbour classifier on the tiled engine."""

from __future__ import annotations

import operator
from typing import Any

from ..errors import InvalidInputError
from ..neighbors import kneighbors, vote_counts
from ..ops.distance import check_metric
from ._base import NeighborsClassifierMixin

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
    working_memory : int, optional
        Byte budget of a distance tile (see :func:`gpuknn.kneighbors`).

    Attributes
    ----------
    classes_ : array of shape (n_classes,)
        Sorted labels; in the input's namespace for numeric labels, NumPy for strings.
    n_features_in_, n_samples_fit_ : int

    Notes
    -----
    **Ties.** Equal distances: the lower training index is the nearer neighbour. Equal
    votes: the class that sorts first in ``classes_`` wins (scikit-learn's rule).
    Prediction costs O(n_queries · n_train · d) in GEMMs.

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
        working_memory: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weights = weights
        self.working_memory = working_memory

    def fit(self, X: Any, y: Any) -> "KNeighborsClassifier":
        """Store the training data (validated) and encode the labels."""
        check_metric(self.metric)
        if self.weights not in ("uniform", "distance"):
            raise InvalidInputError(f"weights must be 'uniform' or 'distance', got {self.weights!r}")
        if self.weights == "distance" and self.metric == "inner":
            raise InvalidInputError("weights='distance' is undefined for metric='inner'")
        try:
            k = operator.index(self.n_neighbors)
        except TypeError:
            raise InvalidInputError(f"n_neighbors must be an integer, got {self.n_neighbors!r}") from None
        self._fit_data(X, y)
        if not 1 <= k <= self.n_samples_fit_:
            raise InvalidInputError(
                f"n_neighbors must be in [1, n_samples={self.n_samples_fit_}], got {k}"
            )
        return self

    def kneighbors(self, X: Any, n_neighbors: int | None = None, return_distance: bool = True):
        """Neighbours of X among the training rows: ``(distances, indices)`` (n, k)."""
        X, _ = self._check_query(X)
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        return kneighbors(
            X, self._fit_X, k, metric=self.metric, working_memory=self.working_memory,
            return_distance=return_distance,
        )

    def _counts(self, X: Any) -> Any:
        X, xp = self._check_query(X)
        dist, idx = kneighbors(
            X, self._fit_X, self.n_neighbors, metric=self.metric,
            working_memory=self.working_memory,
        )
        labels = xp.take(self._y, xp.reshape(idx, (-1,)))
        labels = xp.reshape(labels, idx.shape)
        n_classes = int(self.classes_.shape[0])
        return vote_counts(
            labels, [self.n_neighbors], n_classes=n_classes, distances=dist, weights=self.weights
        )[0], xp

    def predict(self, X: Any) -> Any:
        """Predicted labels, shape (n_queries,)."""
        counts, xp = self._counts(X)
        return self._decode(xp.argmax(counts, axis=1))

    def predict_proba(self, X: Any) -> Any:
        """Vote shares per class, shape (n_queries, n_classes), columns in ``classes_`` order."""
        counts, xp = self._counts(X)
        counts = xp.astype(counts, xp.float64 if counts.dtype == xp.int64 else counts.dtype)
        return counts / xp.sum(counts, axis=1, keepdims=True)
