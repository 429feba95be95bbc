"""The Friedman test and the Iman–Davenport F statistic (Demšar 2006, section 3.2.2)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from ._ranks import rank_table
from ._validation import check_table

__all__ = ["FriedmanResult", "friedman_test"]


class FriedmanResult(NamedTuple):
    """Result of :func:`friedman_test` (host floats and NumPy arrays).

    Attributes
    ----------
    statistic : float
        Friedman's χ²_F, corrected for ties (equal to :func:`scipy.stats.friedmanchisquare`).
    pvalue : float
        P(χ²(k − 1) ≥ statistic).
    iman_davenport : float
        Iman–Davenport ``F_F = (N − 1) χ²_F / (N (k − 1) − χ²_F)`` (``inf`` when every
        data set ranks the methods identically).
    iman_davenport_pvalue : float
        P(F(k − 1, (k − 1)(N − 1)) ≥ F_F).
    average_ranks : numpy.ndarray of shape (n_methods,)
        1 = best, ties averaged.
    n_datasets, n_methods : int
    """

    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    average_ranks: np.ndarray
    n_datasets: int
    n_methods: int


def friedman_test(scores: Any, *, greater_is_better: bool = True, tie_correction: bool = True) -> FriedmanResult:
    """Friedman's rank test that all methods perform alike, with the Iman–Davenport F.

    ``χ²_F = [12 / (N k (k + 1)) Σ_j R_j² N² − 3 N (k + 1)] / C`` on the within-data-set ranks,
    where ``C = 1 − Σ (t³ − t) / (N k (k² − 1))`` corrects for tied groups of size ``t``
    (``C = 1`` without ties; as :func:`scipy.stats.friedmanchisquare`). Iman and Davenport's
    ``F_F = (N − 1) χ²_F / (N (k − 1) − χ²_F)`` follows F with (k − 1, (k − 1)(N − 1))
    degrees of freedom and is less conservative than χ²_F (Demšar recommends it).

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite; N ≥ 2, k ≥ 2.
    greater_is_better : bool, default True
        Whether a larger score is better (the statistics do not depend on it; the average
        ranks do).
    tie_correction : bool, default True
        Divide by ``C`` (SciPy's statistic). False gives the textbook formula of Demšar's
        paper, ``12 N / (k (k + 1)) [Σ_j R_j² − k (k + 1)² / 4]``, whatever the ties.

    Returns
    -------
    FriedmanResult
        A table in which every data set ties all methods has no ranks to compare:
        statistics and p-values are NaN.

    Complexity O(N k log k).

    References
    ----------
    M. Friedman, "The use of ranks to avoid the assumption of normality implicit in the
    analysis of variance", JASA 32:675–701, 1937.
    R. L. Iman and J. M. Davenport, "Approximations of the critical region of the Friedman
    statistic", Communications in Statistics A 9:571–595, 1980.
    J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
    JMLR 7:1–30, 2006 (section 3.2.2).

    Examples
    --------
    >>> res = friedman_test([[0.9, 0.8, 0.7], [0.8, 0.9, 0.6], [0.9, 0.7, 0.5], [0.95, 0.9, 0.8]])
    >>> round(res.statistic, 4), round(res.pvalue, 4), res.average_ranks.tolist()
    (6.5, 0.0388, [1.25, 1.75, 3.0])
    >>> round(res.iman_davenport, 4), round(res.iman_davenport_pvalue, 4)
    (13.0, 0.0066)
    """
    s = check_table(scores, greater_is_better=greater_is_better)
    n, k = s.shape
    ranks = rank_table(s)
    avg = ranks.mean(axis=0)
    ties = 0.0
    for row in s:  # Σ (t³ − t) over groups of equal scores in each row
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts.astype(np.float64) ** 3 - counts))
    c = 1.0 - ties / (n * k * (k * k - 1.0))
    ssbn = float(np.sum(ranks.sum(axis=0) ** 2))
    if not tie_correction:
        c = 1.0
    if c <= 0.0:  # every data set ties every method
        nan = float("nan")
        return FriedmanResult(nan, nan, nan, nan, avg, n, k)
    chi2 = (12.0 / (k * n * (k + 1.0)) * ssbn - 3.0 * n * (k + 1.0)) / c
    chi2 = max(chi2, 0.0)
    p = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1.0) - chi2
    df1, df2 = k - 1.0, (k - 1.0) * (n - 1.0)
    if denom <= 0.0:
        ff, pf = float("inf"), 0.0
    else:
        ff = (n - 1.0) * chi2 / denom
        pf = float(stats.f.sf(ff, df1, df2))
    return FriedmanResult(float(chi2), p, float(ff), pf, avg, n, k)
