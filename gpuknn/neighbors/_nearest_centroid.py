"""Nearest-centroid classifier: one mean per class, then a 1-NN search among the means."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from ..base import BaseEstimator, check_query, validate_data
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..ops.kneighbors import PreparedReference, search_validated
from ..ops.limits import check_values, check_working_memory
from ._base import NeighborsClassifierMixin

__all__ = ["NearestCentroid", "class_means", "class_medians"]


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


def class_medians(X: Any, y_enc: Any, n_classes: int) -> Any:
    """Per-class feature-wise medians, shape (n_classes, d) (NumPy's median: the mean of
    the two middle values for an even count). One sort per class (classes are few).

    Complexity O(n · d · log n)."""
    xp = array_namespace(X, y_enc)
    rows = []
    for c in range(n_classes):
        members = xp.nonzero(y_enc == c)[0]
        part = xp.sort(xp.take(X, members, axis=0), axis=0)
        m = int(part.shape[0])
        if m == 0:  # a class without rows has no median (not reachable from fit: classes come from y)
            rows.append(xp.zeros(int(X.shape[1]), dtype=X.dtype, device=device_of(X)))
            continue
        rows.append((part[(m - 1) // 2, :] + part[m // 2, :]) / 2)
    return xp.stack(rows, axis=0)


class NearestCentroid(NeighborsClassifierMixin, BaseEstimator):
    """Predict the class whose training mean is nearest, like scikit-learn's.

    Parameters
    ----------
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner", "manhattan"}
        The centroid of a class is the arithmetic mean of its rows, or for ``"manhattan"``
        (also ``"cityblock"``, ``"l1"``) the feature-wise median, as in scikit-learn; the
        metric then decides "nearest" (``"inner"``: largest inner product). scikit-learn
        offers euclidean and manhattan; the results agree for those and ``"sqeuclidean"``.
    shrink_threshold : float or None, default None
        Nearest shrunken centroids (Tibshirani et al. 2002), scikit-learn's semantics: with
        ``s`` the pooled within-class standard deviation plus its median and
        ``m_c = sqrt(1/n_c - 1/n)``, each deviation ``(centroid_c - mean) / (m_c s)`` is
        soft-thresholded by ``shrink_threshold`` and the centroid rebuilt from it.
    priors : {"uniform", "empirical"} or array of shape (n_classes,), default "uniform"
        Class priors (scikit-learn's meaning): ``"empirical"`` = class frequencies; an array
        must be non-negative and is normalised (with a ``UserWarning``) when it does not sum
        to 1. With non-uniform priors, prediction maximises the discriminant
        ``-|x/σ - c/σ|^2 + 2 log prior`` (``σ`` = ``within_class_std_dev_`` where non-zero),
        which needs ``metric="euclidean"``.

    Attributes
    ----------
    centroids_ : array of shape (n_classes, n_features)
    classes_ : array of shape (n_classes,)
    class_prior_ : array of shape (n_classes,), X's namespace, device and dtype
    within_class_std_dev_ : array of shape (n_features,)
        Pooled within-class standard deviation (divisor ``n - n_classes``).
    deviations_ : array of shape (n_classes, n_features)
        Standardised deviations of the centroids from the overall mean (after shrinking).

    Raises
    ------
    InvalidInputError
        Fewer than 2 classes; every feature constant (``ptp == 0``, scikit-learn raises
        this whatever ``shrink_threshold``); negative priors; non-uniform priors with a
        metric other than ``"euclidean"``.

    Warns
    -----
    UserWarning
        A feature has zero within-class standard deviation, or the priors were normalised.

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

    def __init__(self, *, metric: str = "euclidean", shrink_threshold: float | None = None, priors: Any = "uniform"):
        self.metric = metric
        self.shrink_threshold = shrink_threshold
        self.priors = priors

    def _class_prior(self, counts: np.ndarray) -> np.ndarray:
        """``class_prior_`` from ``priors`` (host float64), checked as scikit-learn does."""
        p, n_classes = self.priors, counts.shape[0]
        if isinstance(p, str):
            if p == "uniform":
                return np.full(n_classes, 1.0 / n_classes)
            if p == "empirical":
                return counts / counts.sum()
            raise InvalidInputError(f"priors must be 'uniform', 'empirical' or an array, got {p!r}")
        prior = np.asarray(to_numpy(p) if hasattr(p, "shape") else p, dtype=np.float64)
        if prior.shape != (n_classes,):
            raise InvalidInputError(f"priors must have shape ({n_classes},) (one per class), got {prior.shape}")
        if (prior < 0).any() or not np.all(np.isfinite(prior)):
            raise InvalidInputError(f"priors must be non-negative, got {prior.tolist()}")
        if not np.isclose(prior.sum(), 1.0):
            warnings.warn(
                "The priors do not sum to 1. Normalizing such that it sums to one.", UserWarning, stacklevel=3
            )
            prior = prior / prior.sum()
        return prior

    def _metric_name(self) -> str:
        """The engine's metric: the inner-product ones, or ``"manhattan"`` (``cityblock``,
        ``l1``; scikit-learn's other metric, with median centroids)."""
        if isinstance(self.metric, str) and self.metric in ("manhattan", "cityblock", "l1"):
            return "manhattan"
        return check_metric(self.metric)

    def fit(self, X: Any, y: Any) -> NearestCentroid:
        """Compute the class centroids (means; feature-wise medians for ``"manhattan"``)."""
        manhattan = self._metric_name() == "manhattan"
        self._fit_X, _ = validate_data(self, X, reset=True, return_magnitude=True)
        self.n_features_in_ = int(self._fit_X.shape[1])
        self._fit_labels(y)
        n_classes = int(self.classes_.shape[0])
        if n_classes < 2:
            raise InvalidInputError(f"NearestCentroid needs at least 2 classes, got {n_classes} class(es)")
        st = self.shrink_threshold
        if st is not None and (isinstance(st, bool) or not isinstance(st, numbers.Real) or not st >= 0):
            raise InvalidInputError(f"shrink_threshold must be None or a float >= 0, got {st!r}")
        X = self._fit_X
        xp = array_namespace(X)
        self.centroids_, counts = class_means(X, self._y, n_classes)
        if manhattan:  # the point minimising the summed L1 distance: the median (scikit-learn's)
            self.centroids_ = class_medians(X, self._y, n_classes)
        nk = to_numpy(counts).astype(np.float64)
        prior = self._class_prior(nk)
        self.class_prior_ = xp.astype(from_numpy(prior, xp, device=device_of(X)), X.dtype)
        # The discriminant's constant term; -inf for a zero prior, a class never predicted.
        self._log_prior = from_numpy(
            np.log(np.where(prior > 0, prior, 1.0)) + np.where(prior > 0, 0.0, -np.inf), xp, device=device_of(X)
        )
        self._uniform = bool(np.isclose(prior, 1.0 / n_classes).all())
        if not self._uniform and self._metric_name() != "euclidean":
            raise InvalidInputError(f"priors other than uniform need metric='euclidean', got metric={self.metric!r}")
        n = int(X.shape[0])
        R = X - xp.take(self.centroids_, self._y, axis=0)
        # n == n_classes (one sample per class) gives 0/0 here, as in scikit-learn.
        denom = float(n - n_classes) if n > n_classes else math.nan
        self.within_class_std_dev_ = xp.sqrt(xp.sum(R * R, axis=0) / denom)
        sd = to_numpy(self.within_class_std_dev_)
        if np.any(sd == 0):
            warnings.warn(
                "self.within_class_std_dev_ has at least 1 zero standard deviation. "
                "Inputs within the same classes for at least 1 feature are identical.",
                UserWarning,
                stacklevel=2,
            )
        if bool(xp.all(xp.max(X, axis=0) == xp.min(X, axis=0))):
            raise InvalidInputError("All features have zero variance. Division by zero.")
        overall = xp.mean(X, axis=0)
        m = from_numpy(np.sqrt(1.0 / nk - 1.0 / n), xp, device=device_of(X))
        ms = xp.astype(m, X.dtype)[:, None] * (self.within_class_std_dev_ + float(np.median(sd)))[None, :]
        self.deviations_ = (self.centroids_ - overall[None, :]) / ms
        if st:
            dev = xp.abs(self.deviations_) - float(st)
            self.deviations_ = xp.sign(self.deviations_) * xp.clip(dev, min=0.0)
            self.centroids_ = overall[None, :] + ms * self.deviations_
        self._centroid_magnitude = check_values(self.centroids_, array_namespace(self.centroids_), name="centroids_")
        return self

    def predict(self, X: Any) -> Any:
        """Label of the nearest centroid for every row of X, shape (n_queries,)."""
        X, xp, mag = check_query(self, X, return_magnitude=True)
        if not self._uniform:
            return self._decode(xp.argmax(self._discriminant(X, xp), axis=1))
        ref = PreparedReference(self.centroids_, metric=self._metric_name(), magnitude=self._centroid_magnitude)
        nb = search_validated(
            X, ref, 1, magnitude=max(mag, ref.magnitude), working_memory=check_working_memory(None, xp)
        )
        return self._decode(nb.indices[:, 0])

    def _discriminant(self, X: Any, xp: Any) -> Any:
        """(n, n_classes) scores ``-|x/σ - c/σ|^2 + 2 log prior`` (ESL eq. 18.2, as
        scikit-learn), σ the non-zero within-class standard deviations (1 elsewhere)."""
        sd = self.within_class_std_dev_
        scale = xp.where(sd != 0, sd, xp.ones_like(sd))
        Xn, Cn = X / scale[None, :], self.centroids_ / scale[None, :]
        diff = Xn[:, None, :] - Cn[None, :, :]  # (n, C, d): C is small
        return -xp.sum(diff * diff, axis=2) + 2.0 * xp.astype(self._log_prior, X.dtype)[None, :]
