"""Resampling for imbalanced data: imbalanced-learn's samplers on the tiled kNN engine.

Every sampler has ``fit_resample(X, y) -> (X_res, y_res)``; X stays in its namespace (NumPy,
CuPy, any array-API library), y may be numeric in any namespace or host strings. Under-samplers
set ``sample_indices_`` (host int64). :mod:`~gpuknn.resampling.cv` applies a sampler inside
the training folds of a cross-validation. See ``docs/imbalanced.md``.
"""

from __future__ import annotations

from .adaptive import ADASYN, BorderlineSMOTE
from .categorical import SMOTEN, SMOTENC
from .centroids import ClusterCentroids
from .cleaning import EditedNearestNeighbours, NeighbourhoodCleaningRule, TomekLinks
from .condensed import CNNTomek, CondensedNearestNeighbour, OneSidedSelection
from .cv import KNNScorer, ResampledCVResult, cross_validate_resampled, default_knn_scorers, knn_positive_scores
from .hardness import InstanceHardnessThreshold
from .kmeans_smote import KMeansSMOTE
from .nearmiss import NearMiss
from .random import RandomOverSampler, RandomUnderSampler
from .repeated import AllKNN, RepeatedEditedNearestNeighbours
from .smote import SMOTE, SMOTEENN, SMOTETomek

__all__ = [
    "ADASYN",
    "AllKNN",
    "BorderlineSMOTE",
    "ClusterCentroids",
    "InstanceHardnessThreshold",
    "KMeansSMOTE",
    "NearMiss",
    "RepeatedEditedNearestNeighbours",
    "CNNTomek",
    "CondensedNearestNeighbour",
    "EditedNearestNeighbours",
    "KNNScorer",
    "NeighbourhoodCleaningRule",
    "OneSidedSelection",
    "RandomOverSampler",
    "RandomUnderSampler",
    "ResampledCVResult",
    "SMOTE",
    "SMOTEN",
    "SMOTENC",
    "SMOTEENN",
    "SMOTETomek",
    "TomekLinks",
    "cross_validate_resampled",
    "default_knn_scorers",
    "knn_positive_scores",
]
