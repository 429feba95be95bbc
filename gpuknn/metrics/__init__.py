"""Evaluation metrics, array-API generic (NumPy, CuPy, array_api_strict give the same values).

* :mod:`~gpuknn.metrics.classification` — accuracy, confusion matrix, precision/recall/F.
* :mod:`~gpuknn.metrics.ranking` — ROC curve, ROC AUC, ROC convex hull, Borda ranks.
* :mod:`~gpuknn.metrics.external` — pair-counting agreement of two partitions.
* :mod:`~gpuknn.metrics.internal` — Hubert Γ, cophenetic correlation; :mod:`~gpuknn.metrics.gap` — the gap statistic.
* :mod:`~gpuknn.metrics.relative` — Dunn, Davies–Bouldin, SD, partition coefficient, Xie–Beni.
* :mod:`~gpuknn.metrics.agreement` — Matthews correlation, Cohen's kappa, top-k accuracy, log loss.
* :mod:`~gpuknn.metrics.report` — classification report, sensitivity/specificity, geometric mean.
* :mod:`~gpuknn.metrics.precision_recall` — precision-recall curve, average precision.
* :mod:`~gpuknn.metrics.silhouette` — silhouette (tiled), Calinski–Harabasz.
* :mod:`~gpuknn.metrics.information` — mutual information (adjusted, normalised), homogeneity,
  completeness, V-measure.

Names follow scikit-learn where it computes the same quantity. See ``docs/metrics.md``.
"""

from __future__ import annotations

from .agreement import cohen_kappa_score, log_loss, matthews_corrcoef, top_k_accuracy_score
from .classification import (
    UndefinedMetricWarning,
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    fbeta_score,
    positive_class_report,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)
from .external import (
    adjusted_rand_score,
    contingency_matrix,
    fowlkes_mallows_score,
    pair_counts,
    pair_jaccard_score,
    rand_score,
)
from .gap import GapResult, gap_statistic, within_dispersion
from .information import (
    adjusted_mutual_info_score,
    completeness_score,
    homogeneity_completeness_v_measure,
    homogeneity_score,
    mutual_info_score,
    normalized_mutual_info_score,
    v_measure_score,
)
from .internal import cophenetic_correlation, hubert_gamma
from .precision_recall import average_precision_score, precision_recall_curve
from .ranking import borda_rank, det_curve, roc_auc_score, roc_convex_hull, roc_curve
from .relative import (
    davies_bouldin_score,
    dunn_index,
    partition_coefficient,
    sd_index,
    sd_scat_dis,
    xie_beni_index,
)
from .report import classification_report, geometric_mean_score, sensitivity_specificity_support
from .silhouette import calinski_harabasz_score, silhouette_samples, silhouette_score

__all__ = [
    "UndefinedMetricWarning",
    "accuracy_score",
    "balanced_accuracy_score",
    "confusion_matrix",
    "f1_score",
    "fbeta_score",
    "precision_score",
    "recall_score",
    "positive_class_report",
    "precision_recall_fscore_support",
    "roc_curve",
    "det_curve",
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
    "matthews_corrcoef",
    "cohen_kappa_score",
    "top_k_accuracy_score",
    "log_loss",
    "classification_report",
    "sensitivity_specificity_support",
    "geometric_mean_score",
    "precision_recall_curve",
    "average_precision_score",
    "silhouette_samples",
    "silhouette_score",
    "calinski_harabasz_score",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "adjusted_mutual_info_score",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "completeness_score",
    "v_measure_score",
]
