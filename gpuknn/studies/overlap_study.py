"""Class overlap versus class imbalance (after Prati, Batista & Monard, 2004).

Artificial two-class domains: ``n_features`` independent unit Gaussians per class; the
positive centroid is moved ``distance`` standard deviations along **every** attribute
(centroid distance ``distance · sqrt(n_features)``), and the share of positives varies.
kNN scores (share of positive neighbours, or its distance-weighted version) are evaluated
by stratified 10-fold CV ROC AUC. The expected finding: imbalance costs AUC mainly when the
classes overlap; well-separated classes are learnt at any proportion.

The thesis' grid (``THESIS_DISTANCES``, ``THESIS_SHARES``: 10 domains, shifts 0-9, 14 minority
shares from 1 % to 45 % plus 50 %, 10 000 rows) sits beside the smaller default one, and
:func:`bayes_auc` gives the best AUC any scorer can reach on each domain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr

from .._backend import array_namespace, from_numpy
from ..errors import InvalidInputError
from ..model_selection import StratifiedKFold
from ..resampling.cv import KNNScorer, cross_validate_resampled

__all__ = [
    "make_overlap_domain",
    "bayes_auc",
    "OverlapStudyResult",
    "overlap_study",
    "THESIS_DISTANCES",
    "THESIS_SHARES",
]

DEFAULT_DISTANCES = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0)
DEFAULT_SHARES = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5)
# Prati, Batista & Monard (2004), as the thesis runs it: ten domains, the positive centroid
# shifted 0, 1, ..., 9 standard deviations; fourteen minority shares and the balanced one.
THESIS_DISTANCES = tuple(float(d) for d in range(10))
THESIS_SHARES = (0.01, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def bayes_auc(distance: float | Sequence[float], n_features: int = 5) -> np.ndarray:
    """The Bayes-optimal ROC AUC of a :func:`make_overlap_domain` domain.

    Both classes are N(mu, I) with centres ``distance`` apart on **each** of ``n_features``
    attributes, so the optimal score is the projection on the centre difference, normal in
    each class with unit variance and means ``delta = distance * sqrt(n_features)`` apart;
    the AUC is P(s+ > s-) = Phi(delta / sqrt(2)). It does not depend on the class shares.
    (Were ``distance`` the distance between the centroids, the AUC would be
    Phi(distance / sqrt(2)).)

    Parameters
    ----------
    distance : float or sequence of float
        Shift per attribute, in standard deviations.
    n_features : int, default 5

    Returns
    -------
    numpy.ndarray of float64, the shape of ``distance``

    Examples
    --------
    >>> round(float(bayes_auc(0.5)), 4)
    0.7854
    """
    d = np.asarray(distance, dtype=np.float64)
    return ndtr(d * np.sqrt(n_features) / np.sqrt(2.0))


def make_overlap_domain(
    n_samples: int,
    distance: float,
    positive_share: float,
    *,
    n_features: int = 5,
    random_state: Any = None,
    xp: Any = None,
) -> tuple[Any, Any]:
    """One artificial domain: X (n, n_features) float64 and y (n,) int64 (1 = positive).

    Negatives ~ N(0, I); positives ~ N(distance · 1, I). ``round(share · n)`` positives
    (at least 1). Rows are in class order (negatives first). Drawn with
    ``numpy.random.default_rng(random_state)``, then moved to ``xp`` (default NumPy).
    """
    if not 0.0 < positive_share < 1.0:
        raise InvalidInputError(f"positive_share must be in (0, 1), got {positive_share}")
    if n_samples < 2 or n_features < 1:
        raise InvalidInputError(f"need n_samples >= 2 and n_features >= 1, got {n_samples}, {n_features}")
    rng = np.random.default_rng(random_state)
    n_pos = max(1, int(round(positive_share * n_samples)))
    n_neg = n_samples - n_pos
    X = np.concatenate([rng.standard_normal((n_neg, n_features)), rng.standard_normal((n_pos, n_features)) + distance])
    y = np.r_[np.zeros(n_neg, dtype=np.int64), np.ones(n_pos, dtype=np.int64)]
    xp = array_namespace() if xp is None else xp
    return from_numpy(X, xp), from_numpy(y, xp)


@dataclass
class OverlapStudyResult:
    """``auc[i, j, s]``: mean CV AUC at ``distances[i]``, ``shares[j]``, scorer ``names[s]``
    (``std`` the fold standard deviation)."""

    distances: np.ndarray
    shares: np.ndarray
    names: list[str]
    auc: np.ndarray
    std: np.ndarray
    n_samples: int
    n_features: int = 5

    @property
    def bayes(self) -> np.ndarray:
        """(n_distances,) the Bayes-optimal AUC of each domain (:func:`bayes_auc`)."""
        return bayes_auc(self.distances, self.n_features)


def overlap_study(
    *,
    distances: Sequence[float] = DEFAULT_DISTANCES,
    shares: Sequence[float] = DEFAULT_SHARES,
    n_samples: int = 5000,
    scorers: Sequence[KNNScorer] = (KNNScorer(5), KNNScorer(11, "distance")),
    n_splits: int = 10,
    random_state: Any = 0,
    xp: Any = None,
    callback: Callable[[float, float], None] | None = None,
) -> OverlapStudyResult:
    """AUC of kNN scorers for every (distance, positive share) domain.

    Each domain is drawn from its own seed (``random_state``, i, j) so cells are independent
    and reproducible. ``callback(distance, share)`` is called before each cell.

    Complexity: len(distances)·len(shares)·n_splits neighbour searches of
    (n/n_splits) × n · (1 - 1/n_splits) · n_features.

    Examples
    --------
    >>> r = overlap_study(distances=(0.0, 3.0), shares=(0.1,), n_samples=300, n_splits=3)
    >>> r.auc.shape, bool(r.auc[1, 0, 0] > r.auc[0, 0, 0])
    ((2, 1, 2), True)
    """
    names = [s.name for s in scorers]
    auc = np.zeros((len(distances), len(shares), len(names)))
    std = np.zeros_like(auc)
    base = np.random.SeedSequence(random_state if isinstance(random_state, int) else None)
    for i, d in enumerate(distances):
        for j, p in enumerate(shares):
            if callback is not None:
                callback(float(d), float(p))
            seed = np.random.default_rng([base.entropy, i, j]).integers(2**32)
            X, y = make_overlap_domain(n_samples, float(d), float(p), random_state=int(seed), xp=xp)
            cv = StratifiedKFold(n_splits, shuffle=True, random_state=int(seed))
            r = cross_validate_resampled(X, y, scorers=list(scorers), cv=cv, pos_label=1, combine=False)
            auc[i, j] = np.nanmean(r.fold_auc, axis=0)
            std[i, j] = np.nanstd(r.fold_auc, axis=0)
    return OverlapStudyResult(np.asarray(distances, float), np.asarray(shares, float), names, auc, std, n_samples, 5)
