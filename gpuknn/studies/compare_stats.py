"""The statistics of a comparison (:func:`gpuknn.studies.compare.run_compare`), as plain dicts.

From fold scores of shape (n_datasets, n_methods, n_folds), over the table of per-data-set
means (Demšar 2006): average ranks, Friedman's χ²_F with the Iman–Davenport F, the Nemenyi
test of every pair and Bonferroni–Dunn against the control with their critical differences;
per method against the control, Wilcoxon's signed-rank test over the data sets' means and,
on each data set, the Nadeau–Bengio corrected resampled t-test over its folds. A test that
the data cannot support (one data set, one method) is recorded with the reason instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import GpuknnError

__all__ = ["compare_statistics"]


def _f(x: Any) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def compare_statistics(
    fold_scores: np.ndarray,
    methods: Sequence[str],
    *,
    control: str,
    alpha: float = 0.05,
    fold_sizes: Sequence[tuple[float, float]] = (),
) -> dict:
    """Every test of the module docstring on one score (larger = better).

    Parameters
    ----------
    fold_scores : numpy.ndarray of shape (n_datasets, n_methods, n_folds)
    methods : sequence of str
        Method names, in column order.
    control : str
        One of ``methods``.
    alpha : float
    fold_sizes : sequence of (n_train, n_test)
        Mean training and test fold sizes of each data set (for Nadeau–Bengio).

    Returns
    -------
    dict
        ``average_ranks`` {method: rank}; ``friedman``; ``nemenyi``; ``bonferroni_dunn``;
        ``versus_control`` {method: {"wilcoxon", "nadeau_bengio": [per data set]}}. NaN
        statistics (all scores equal) are None.
    """
    from .. import stats  # noqa: PLC0415

    methods = list(methods)
    table = np.asarray(fold_scores, dtype=np.float64).mean(axis=2)
    n, k = table.shape
    c = methods.index(control)
    out: dict[str, Any] = {"n_datasets": n, "n_methods": k, "alpha": alpha, "control": control}
    try:
        ranks = stats.average_ranks(table) if n >= 1 else np.full(k, np.nan)
        out["average_ranks"] = dict(zip(methods, map(_f, ranks)))
    except GpuknnError as exc:
        out["average_ranks"] = {"skipped": str(exc)}
    try:
        fr = stats.friedman_test(table)
        out["friedman"] = {
            "statistic": _f(fr.statistic),
            "pvalue": _f(fr.pvalue),
            "iman_davenport": _f(fr.iman_davenport),
            "iman_davenport_pvalue": _f(fr.iman_davenport_pvalue),
            "df": k - 1,
            "significant": bool(fr.iman_davenport_pvalue < alpha) if np.isfinite(fr.iman_davenport_pvalue) else False,
        }
    except GpuknnError as exc:
        out["friedman"] = {"skipped": str(exc)}
    try:
        ne = stats.nemenyi_test(table, alpha=alpha)
        out["nemenyi"] = {
            "critical_value": _f(ne.critical_value),
            "critical_difference": _f(ne.critical_difference),
            "pvalue": [[_f(v) for v in row] for row in ne.pvalue],
            "significant": ne.significant.tolist(),
        }
    except GpuknnError as exc:
        out["nemenyi"] = {"skipped": str(exc)}
    try:
        bd = stats.bonferroni_dunn_test(table, control=c, alpha=alpha)
        out["bonferroni_dunn"] = {
            "control": control,
            "critical_value": _f(bd.critical_value),
            "critical_difference": _f(bd.critical_difference),
            "methods": {
                methods[int(j)]: {"statistic": _f(z), "pvalue": _f(p), "significant": bool(s)}
                for j, z, p, s in zip(bd.methods, bd.statistic, bd.pvalue, bd.significant)
            },
        }
    except GpuknnError as exc:
        out["bonferroni_dunn"] = {"skipped": str(exc)}
    vs: dict[str, Any] = {}
    for j, name in enumerate(methods):
        if j == c:
            continue
        entry: dict[str, Any] = {"mean_difference": _f(np.mean(table[:, j] - table[:, c]))}
        try:
            w = stats.wilcoxon_signed_rank(table[:, j], table[:, c])
            entry["wilcoxon"] = {"statistic": _f(w.statistic), "pvalue": _f(w.pvalue)}
        except (GpuknnError, ValueError) as exc:
            entry["wilcoxon"] = {"skipped": str(exc)}
        nb = []
        for d in range(n):
            n_train, n_test = fold_sizes[d] if d < len(fold_sizes) else (np.nan, np.nan)
            try:
                t = stats.corrected_resampled_t_test(
                    fold_scores[d, j], fold_scores[d, c], n_train=int(round(n_train)), n_test=int(round(n_test))
                )
                nb.append(
                    {"statistic": _f(t.statistic), "pvalue": _f(t.pvalue), "mean_difference": _f(t.mean_difference)}
                )
            except (GpuknnError, ValueError) as exc:
                nb.append({"skipped": str(exc)})
        entry["nadeau_bengio"] = nb
        vs[name] = entry
    out["versus_control"] = vs
    return out
