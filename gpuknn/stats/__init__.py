"""Statistical comparison of methods over many data sets (host NumPy/SciPy, scalar results).

A score table ``scores`` has shape (n_datasets, n_methods): one row per data set (or CV
fold), one column per method, larger = better unless ``greater_is_better=False``.

* Many methods over many data sets (Demšar 2006): :func:`friedman_test` (χ²_F and the
  Iman–Davenport F), then :func:`nemenyi_test` (all pairs) or :func:`bonferroni_dunn_test`
  (against a control), with :func:`critical_difference`; :func:`average_ranks`.
* Two methods: :func:`wilcoxon_signed_rank` over data sets, :func:`paired_t_test`, and
  :func:`corrected_resampled_t_test` (Nadeau–Bengio) over CV folds.
* Means: :func:`dunnett_test` against a control, :func:`hsu_mcb` (multiple comparisons with
  the best).

Everything runs on the host; inputs are converted with ``numpy.asarray(..., float64)``.
"""

from __future__ import annotations

from ._dunnett import DunnettResult, dunnett_test, one_sided_dunnett_quantile
from ._friedman import FriedmanResult, friedman_test
from ._mcb import MCBResult, hsu_mcb
from ._paired import TTestResult, WilcoxonResult, corrected_resampled_t_test, paired_t_test, wilcoxon_signed_rank
from ._posthoc import (
    BonferroniDunnResult,
    NemenyiResult,
    bonferroni_dunn_test,
    critical_difference,
    critical_value,
    nemenyi_test,
)
from ._ranks import average_ranks, rank_table

__all__ = [
    "BonferroniDunnResult",
    "DunnettResult",
    "FriedmanResult",
    "MCBResult",
    "NemenyiResult",
    "TTestResult",
    "WilcoxonResult",
    "average_ranks",
    "bonferroni_dunn_test",
    "corrected_resampled_t_test",
    "critical_difference",
    "critical_value",
    "dunnett_test",
    "friedman_test",
    "hsu_mcb",
    "nemenyi_test",
    "one_sided_dunnett_quantile",
    "paired_t_test",
    "rank_table",
    "wilcoxon_signed_rank",
]
