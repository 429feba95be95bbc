"""Post-hoc tests on average ranks: Nemenyi (all pairs) and Bonferroni–Dunn (against a control),
with Demšar's critical differences (Demšar 2006, section 3.2.2)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from .._backend import check_int
from ._ranks import rank_table
from ._validation import check_alpha, check_control, check_option, check_table

__all__ = [
    "BonferroniDunnResult",
    "NemenyiResult",
    "bonferroni_dunn_test",
    "critical_difference",
    "critical_value",
    "nemenyi_test",
]

_TESTS = ("nemenyi", "bonferroni-dunn")


def critical_value(n_methods: int, *, alpha: float = 0.05, test: str = "nemenyi") -> float:
    """Demšar's ``q_α``: the critical value of a rank difference in standard-error units (over √2).

    * ``"nemenyi"``: the studentized range quantile ``q(1 − α; k, ∞) / √2`` (Demšar's
      Table 5a; e.g. k = 5, α = 0.05: 2.728).
    * ``"bonferroni-dunn"``: the normal quantile ``z(1 − α / (2 (k − 1)))`` (Table 5b; e.g.
      k = 5, α = 0.05: 2.498).

    Parameters
    ----------
    n_methods : int
        Number of methods k ≥ 2.
    alpha : float, default 0.05
        Family-wise significance level, in (0, 1).
    test : {"nemenyi", "bonferroni-dunn"}, default "nemenyi"

    Returns
    -------
    float

    Complexity O(1) (one quantile; the studentized range's is a numerical integral).

    References
    ----------
    J. Demšar, JMLR 7:1–30, 2006, Table 5.

    Examples
    --------
    >>> round(critical_value(5), 3), round(critical_value(5, test="bonferroni-dunn"), 3)
    (2.728, 2.498)
    """
    k = check_int(n_methods, name="n_methods", low=2)
    a = check_alpha(alpha)
    check_option(test, "test", _TESTS)
    if test == "nemenyi":
        return float(stats.studentized_range.ppf(1.0 - a, k, np.inf) / math.sqrt(2.0))
    return float(stats.norm.isf(a / (2.0 * (k - 1))))


def critical_difference(n_methods: int, n_datasets: int, *, alpha: float = 0.05, test: str = "nemenyi") -> float:
    """Critical difference of average ranks: ``CD = q_α √(k (k + 1) / (6 N))``.

    Two methods (Nemenyi) or a method and the control (Bonferroni–Dunn) differ significantly
    when their average ranks differ by more than CD.

    Parameters
    ----------
    n_methods : int
        Number of methods k ≥ 2.
    n_datasets : int
        Number of data sets N ≥ 1.
    alpha : float, default 0.05
    test : {"nemenyi", "bonferroni-dunn"}, default "nemenyi"

    Returns
    -------
    float

    References
    ----------
    J. Demšar, JMLR 7:1–30, 2006, section 3.2.2.

    Examples
    --------
    >>> round(critical_difference(4, 14), 3)  # Demšar's example: 4 methods, 14 data sets
    1.254
    """
    q = critical_value(n_methods, alpha=alpha, test=test)
    n = check_int(n_datasets, name="n_datasets", low=1)
    k = int(n_methods)
    return q * math.sqrt(k * (k + 1.0) / (6.0 * n))


class NemenyiResult(NamedTuple):
    """Result of :func:`nemenyi_test` (host NumPy arrays and floats).

    Attributes
    ----------
    average_ranks : numpy.ndarray of shape (k,)
        1 = best, ties averaged.
    statistic : numpy.ndarray of shape (k, k)
        ``z_ij = (R_j − R_i) / √(k (k + 1) / (6 N))``: positive when method i ranks better
        (has the lower average rank) than method j.
    pvalue : numpy.ndarray of shape (k, k)
        Family-wise p-values ``P(Q ≥ √2 |z_ij|)`` of the studentized range Q(k, ∞); 1 on the
        diagonal (as ``scikit_posthocs.posthoc_nemenyi_friedman``).
    critical_value : float
        Demšar's q_α.
    critical_difference : float
        CD at ``alpha``.
    significant : numpy.ndarray of bool, shape (k, k)
        ``|R_i − R_j| > CD``.
    """

    average_ranks: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    critical_value: float
    critical_difference: float
    significant: np.ndarray


def _standard_error(n: int, k: int) -> float:
    return math.sqrt(k * (k + 1.0) / (6.0 * n))


def nemenyi_test(scores: Any, *, alpha: float = 0.05, greater_is_better: bool = True) -> NemenyiResult:
    """Nemenyi's all-pairs comparison of methods by their average ranks over data sets.

    Run it after :func:`friedman_test` rejects. The p-value of a pair is that of the largest
    of k standardised rank means reaching ``|R_i − R_j|``: ``P(Q(k, ∞) ≥ √2 |z_ij|)``.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite; N ≥ 2, k ≥ 2.
    alpha : float, default 0.05
        Family-wise level of ``critical_difference`` and ``significant``.
    greater_is_better : bool, default True

    Returns
    -------
    NemenyiResult

    Complexity O(N k log k + k²).

    References
    ----------
    P. Nemenyi, "Distribution-free multiple comparisons", PhD thesis, Princeton, 1963.
    J. Demšar, JMLR 7:1–30, 2006, section 3.2.2.

    Examples
    --------
    >>> res = nemenyi_test([[0.9, 0.8, 0.7], [0.8, 0.9, 0.6], [0.9, 0.7, 0.5], [0.95, 0.9, 0.8]])
    >>> res.average_ranks.tolist(), round(res.critical_difference, 4)
    ([1.25, 1.75, 3.0], 1.6572)
    >>> round(float(res.pvalue[0, 2]), 4), bool(res.significant[0, 2])
    (0.0356, True)
    """
    s = check_table(scores, greater_is_better=greater_is_better)
    n, k = s.shape
    a = check_alpha(alpha)
    avg = rank_table(s).mean(axis=0)
    se = _standard_error(n, k)
    z = (avg[None, :] - avg[:, None]) / se
    p = stats.studentized_range.sf(np.abs(z) * math.sqrt(2.0), k, np.inf)
    p = np.minimum(p, 1.0)
    np.fill_diagonal(p, 1.0)
    q = critical_value(k, alpha=a, test="nemenyi")
    cd = q * se
    sig = np.abs(avg[None, :] - avg[:, None]) > cd
    return NemenyiResult(avg, z, p, q, cd, sig)


class BonferroniDunnResult(NamedTuple):
    """Result of :func:`bonferroni_dunn_test` (host NumPy arrays and floats).

    Attributes
    ----------
    average_ranks : numpy.ndarray of shape (k,)
        1 = best, ties averaged.
    control : int
        The control's column.
    methods : numpy.ndarray of int, shape (k − 1,)
        The other methods' columns, in order; the arrays below follow it.
    statistic : numpy.ndarray of shape (k − 1,)
        ``z_j = (R_control − R_j) / √(k (k + 1) / (6 N))``: positive when method j ranks
        better than the control.
    pvalue : numpy.ndarray of shape (k − 1,)
        Bonferroni-adjusted two-sided p-values ``min(1, (k − 1) · 2 Φ(−|z_j|))``.
    critical_value : float
        Demšar's q_α (Table 5b).
    critical_difference : float
        CD at ``alpha``.
    significant : numpy.ndarray of bool, shape (k − 1,)
        ``|R_control − R_j| > CD``.
    """

    average_ranks: np.ndarray
    control: int
    methods: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    critical_value: float
    critical_difference: float
    significant: np.ndarray


def bonferroni_dunn_test(
    scores: Any, *, control: int = 0, alpha: float = 0.05, greater_is_better: bool = True
) -> BonferroniDunnResult:
    """Bonferroni–Dunn comparison of every method with a control by average ranks.

    Each of the k − 1 comparisons is a two-sided z test of ``R_control − R_j`` against its
    standard error ``√(k (k + 1) / (6 N))`` at level ``α / (k − 1)``.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite; N ≥ 2, k ≥ 2.
    control : int, default 0
        Column of the control method (negative counts from the end).
    alpha : float, default 0.05
        Family-wise level of ``critical_difference`` and ``significant``.
    greater_is_better : bool, default True

    Returns
    -------
    BonferroniDunnResult

    Complexity O(N k log k).

    References
    ----------
    O. J. Dunn, "Multiple comparisons among means", JASA 56:52–64, 1961.
    J. Demšar, JMLR 7:1–30, 2006, section 3.2.2.

    Examples
    --------
    >>> res = bonferroni_dunn_test([[0.9, 0.8, 0.7], [0.8, 0.9, 0.6], [0.9, 0.7, 0.5], [0.95, 0.9, 0.8]],
    ...                            control=2)
    >>> res.methods.tolist(), res.statistic.round(4).tolist(), res.pvalue.round(4).tolist()
    ([0, 1], [2.4749, 1.7678], [0.0267, 0.1542])
    """
    s = check_table(scores, greater_is_better=greater_is_better)
    n, k = s.shape
    c = check_control(control, k)
    a = check_alpha(alpha)
    avg = rank_table(s).mean(axis=0)
    se = _standard_error(n, k)
    others = np.array([j for j in range(k) if j != c], dtype=np.intp)
    z = (avg[c] - avg[others]) / se
    p = np.minimum((k - 1) * 2.0 * stats.norm.sf(np.abs(z)), 1.0)
    q = critical_value(k, alpha=a, test="bonferroni-dunn")
    cd = q * se
    sig = np.abs(avg[c] - avg[others]) > cd
    return BonferroniDunnResult(avg, c, others, z, p, q, cd, sig)
