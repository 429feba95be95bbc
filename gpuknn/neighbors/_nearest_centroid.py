"""Nearest-centroid classifier: one mean per class, then a 1-NN search among the means."""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, device_of
from ..base import BaseEstimator, check_query, validate_data
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..ops.kneighbors import PreparedReference, search_validated
from ..ops.limits import check_values, check_working_memory
from ._base import NeighborsClassifierMixin

__all__ = ["NearestCentroid", "class_means"]


def class_means(X: Any, y_enc: Any, n_classes: int) -> tuple[Any, Any]:
    """Per-class means and counts as one matrix product.

    Parameters
    ----------
    X : array of shape (n, d), floating
    y_enc : int array of shape (n,), values in ``0 .. n_classes-1``
    n_classes : int

    Returns
    -------
    means : array of shape (n_classes, d)
    counts : array of shape (n_classes,), X's dtype

    Complexity O(n · d · n_classes).
    """
    xp = array_namespace(X, y_enc)
    classes = xp.arange(n_classes, device=device_of(y_enc))
    onehot = xp.astype(y_enc[:, None] == classes[None, :], X.dtype)  # (n, C)
    counts = xp.sum(onehot, axis=0)
    sums = onehot.T @ X
    return sums / xp.where(counts > 0, counts, xp.ones_like(counts))[:, None], counts


class NearestCentroid(NeighborsClassifierMixin, BaseEstimator):
    """Predict the class whose training mean is nearest, like scikit-learn's (uniform priors).

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
        The centroid of a class is always the arithmetic mean of its rows (scikit-learn's
        centroid for ``"euclidean"``); the metric only decides "nearest" (``"inner"``:
        largest inner product). scikit-learn offers euclidean and manhattan; the results
        agree for ``"euclidean"`` and ``"sqeuclidean"``.

    Attributes
    ----------
    centroids_ : array of shape (n_classes, n_features)
    classes_ : array of shape (n_classes,)

    Notes
    -----
    Ties (a query equidistant to two centroids) -> the class first in ``classes_``.
    fit O(n · d · C), predict O(n_queries · C · d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]]); y = np.array([0, 0, 1, 1])
    >>> NearestCentroid().fit(X, y).predict(np.array([[4.0], [7.0]]))
    array([0, 1])
    """

    def __init__(self, *, metric: str = "euclidean"):
        self.metric = metric

    def fit(self, X: Any, y: Any) -> NearestCentroid:
        """Compute the class means."""
        check_metric(self.metric)
        self._fit_X, _ = validate_data(self, X, reset=True, return_magnitude=True)
        self.n_features_in_ = int(self._fit_X.shape[1])
        self._fit_labels(y)
        n_classes = int(self.classes_.shape[0])
        if n_classes < 2:
            raise InvalidInputError(f"NearestCentroid needs at least 2 classes, got {n_classes} class(es)")
        self.centroids_, _ = class_means(self._fit_X, self._y, n_classes)
        self._centroid_magnitude = check_values(self.centroids_, array_namespace(self.centroids_), name="centroids_")
        return self

    def predict(self, X: Any) -> Any:
        """Label of the nearest centroid for every row of X, shape (n_queries,)."""
        X, xp, mag = check_query(self, X, return_magnitude=True)
        ref = PreparedReference(self.centroids_, metric=self.metric, magnitude=self._centroid_magnitude)
        nb = search_validated(
            X, ref, 1, magnitude=max(mag, ref.magnitude), working_memory=check_working_memory(None, xp)
        )
        return self._decode(nb.indices[:, 0])
