"""Evaluation metrics, array-API generic (NumPy, CuPy, array_api_strict give the same values).

* :mod:`~gpuknn.metrics.classification` — accuracy, confusion matrix, precision/recall/F.
* :mod:`~gpuknn.metrics.ranking` — ROC curve, ROC AUC, ROC convex hull, Borda ranks.
* :mod:`~gpuknn.metrics.external` — pair-counting agreement of two partitions.
* :mod:`~gpuknn.metrics.internal` — Hubert Γ, cophenetic correlation, gap statistic.
* :mod:`~gpuknn.metrics.relative` — Dunn, Davies–Bouldin, SD, partition coefficient, Xie–Beni.

Names follow scikit-learn where it computes the same quantity. See ``docs/metrics.md``.
"""

from __future__ import annotations

from .classification import (
    UndefinedMetricWarning,
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    positive_class_report,
    precision_recall_fscore_support,
)
from .external import (
    adjusted_rand_score,
    contingency_matrix,
    fowlkes_mallows_score,
    pair_counts,
    pair_jaccard_score,
    rand_score,
)
from .internal import GapResult, cophenetic_correlation, gap_statistic, hubert_gamma, within_dispersion
from .ranking import borda_rank, roc_auc_score, roc_convex_hull, roc_curve
from .relative import (
    davies_bouldin_score,
    dunn_index,
    partition_coefficient,
    sd_index,
    sd_scat_dis,
    xie_beni_index,
)

__all__ = [
    "UndefinedMetricWarning",
    "accuracy_score",
    "balanced_accuracy_score",
    "confusion_matrix",
    "f1_score",
    "positive_class_report",
    "precision_recall_fscore_support",
    "roc_curve",
    "roc_auc_score",
    "roc_convex_hull",
    "borda_rank",
    "contingency_matrix",
    "pair_counts",
    "rand_score",
    "adjusted_rand_score",
    "pair_jaccard_score",
    "fowlkes_mallows_score",
    "hubert_gamma",
    "cophenetic_correlation",
    "gap_statistic",
    "GapResult",
    "within_dispersion",
    "dunn_index",
    "davies_bouldin_score",
    "sd_index",
    "sd_scat_dis",
    "partition_coefficient",
    "xie_beni_index",
]
