"""Two methods compared on paired scores: Wilcoxon's signed-rank test (over data sets), the
paired t-test and Nadeau and Bengio's corrected resampled t-test (over CV folds)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from .._backend import check_int
from ._validation import check_option, check_paired

__all__ = [
    "TTestResult",
    "WilcoxonResult",
    "corrected_resampled_t_test",
    "paired_t_test",
    "wilcoxon_signed_rank",
]

_ALTERNATIVES = ("two-sided", "greater", "less")


class WilcoxonResult(NamedTuple):
    """Result of :func:`wilcoxon_signed_rank`.

    Attributes
    ----------
    statistic : float
        SciPy's statistic: ``min(R+, R−)`` for a two-sided test, ``R+`` otherwise.
    pvalue : float
    """

    statistic: float
    pvalue: float


class TTestResult(NamedTuple):
    """Result of :func:`paired_t_test` and :func:`corrected_resampled_t_test`.

    Attributes
    ----------
    statistic : float
        t of the mean difference ``mean(x − y)``.
    pvalue : float
    df : float
        Degrees of freedom (n − 1).
    mean_difference : float
        ``mean(x − y)``.
    """

    statistic: float
    pvalue: float
    df: float
    mean_difference: float


def wilcoxon_signed_rank(
    x: Any,
    y: Any,
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    alternative: str = "two-sided",
    method: str = "auto",
) -> WilcoxonResult:
    """Wilcoxon's signed-rank test of two methods' scores over data sets (a thin wrapper of
    :func:`scipy.stats.wilcoxon` on ``d = x − y``, with gpuknn's input checks).

    Demšar (2006, section 3.1.3) recommends it over the paired t-test for comparing two
    classifiers over data sets; his treatment of zero differences (split evenly between the
    signs) is ``zero_method="zsplit"``.

    Parameters
    ----------
    x, y : array-like of shape (n_datasets,)
        Paired scores; finite; n ≥ 2.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        SciPy's treatment of zero differences.
    correction : bool, default False
        Continuity correction of the normal approximation.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        "greater": the differences ``x − y`` are centred above 0 (x better, for scores where
        larger is better).
    method : {"auto", "exact", "asymptotic"}, default "auto"
        SciPy's choice of null distribution.

    Returns
    -------
    WilcoxonResult
        A sample whose differences are all zero is undefined there: NaN statistic and p-value
        under ``"wilcox"``.

    Complexity O(n log n) (exact null distribution: O(n³) for small n).

    References
    ----------
    F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics 1:80–83, 1945.
    J. Demšar, JMLR 7:1–30, 2006, section 3.1.3.

    Examples
    --------
    >>> res = wilcoxon_signed_rank([0.9, 0.8, 0.85, 0.7, 0.95, 0.6], [0.8, 0.75, 0.8, 0.72, 0.9, 0.5])
    >>> float(res.statistic), round(res.pvalue, 4)
    (1.0, 0.0625)
    """
    a, b = check_paired(x, y, min_size=1)
    check_option(zero_method, "zero_method", ("wilcox", "pratt", "zsplit"))
    check_option(alternative, "alternative", _ALTERNATIVES)
    check_option(method, "method", ("auto", "exact", "asymptotic"))
    d = a - b
    if zero_method == "wilcox" and not np.any(d != 0):
        nan = float("nan")
        return WilcoxonResult(nan, nan)
    res = stats.wilcoxon(
        d, zero_method=zero_method, correction=bool(correction), alternative=alternative, method=method
    )
    return WilcoxonResult(float(res.statistic), float(res.pvalue))


def paired_t_test(x: Any, y: Any, *, alternative: str = "two-sided") -> TTestResult:
    """Student's paired t-test of ``mean(x − y) = 0`` (as :func:`scipy.stats.ttest_rel`).

    On CV folds it is anticonservative (the folds' training sets overlap): use
    :func:`corrected_resampled_t_test` there.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired scores; finite; n ≥ 2.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    TTestResult
        Differences without spread give an infinite t (p = 0), or NaN when they are all 0.

    Complexity O(n).

    Examples
    --------
    >>> res = paired_t_test([0.9, 0.8, 0.85, 0.7], [0.8, 0.75, 0.8, 0.72])
    >>> round(res.statistic, 4), round(res.pvalue, 4), res.df
    (1.8245, 0.1656, 3.0)
    """
    a, b = check_paired(x, y)
    check_option(alternative, "alternative", _ALTERNATIVES)
    d = a - b
    return _t_result(float(d.mean()), float(d.var(ddof=1)) / d.size, d.size - 1.0, alternative)


def _t_result(mean: float, var_of_mean: float, df: float, alternative: str) -> TTestResult:
    if var_of_mean > 0.0:
        t = mean / math.sqrt(var_of_mean)
    elif mean == 0.0:
        t = float("nan")
    else:
        t = math.copysign(float("inf"), mean)
    if math.isnan(t):
        p = float("nan")
    elif alternative == "two-sided":
        p = float(2.0 * stats.t.sf(abs(t), df))
    elif alternative == "greater":
        p = float(stats.t.sf(t, df))
    else:
        p = float(stats.t.cdf(t, df))
    return TTestResult(float(t), min(p, 1.0) if not math.isnan(p) else p, float(df), mean)


def corrected_resampled_t_test(
    x: Any, y: Any, *, n_train: int, n_test: int, alternative: str = "two-sided"
) -> TTestResult:
    """Nadeau and Bengio's corrected resampled t-test of two methods' scores on the same folds.

    With ``d = x − y`` over J train/test splits (folds × repetitions, e.g. J = 100 for
    10 × 10-fold CV),

        ``t = mean(d) / √((1/J + n_test/n_train) · var(d, ddof=1))``, df = J − 1.

    The term ``n_test / n_train`` accounts for the correlation between splits whose training
    sets overlap (Nadeau and Bengio 2003; Bouckaert and Frank 2004 for repeated CV). With
    ``n_test / n_train → 0`` it is :func:`paired_t_test`.

    Parameters
    ----------
    x, y : array-like of shape (J,)
        Paired scores of the two methods on the same J splits; finite; J ≥ 2.
    n_train, n_test : int
        Sizes of one split's training and test sets (for k-fold CV of n rows about
        ``n (k − 1) / k`` and ``n / k``: ``n_test / n_train = 1 / (k − 1)``).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    TTestResult

    Complexity O(J).

    References
    ----------
    C. Nadeau and Y. Bengio, "Inference for the generalization error", Machine Learning
    52:239–281, 2003.
    R. R. Bouckaert and E. Frank, "Evaluating the replicability of significance tests for
    comparing learning algorithms", PAKDD 2004, LNCS 3056:3–12.

    Examples
    --------
    >>> res = corrected_resampled_t_test([0.81, 0.82, 0.83, 0.80, 0.84], [0.80, 0.80, 0.80, 0.80, 0.80],
    ...                                  n_train=90, n_test=10)
    >>> round(res.statistic, 4), round(res.pvalue, 4), res.df
    (2.2678, 0.0859, 4.0)
    """
    a, b = check_paired(x, y)
    check_option(alternative, "alternative", _ALTERNATIVES)
    n_train, n_test = check_int(n_train, name="n_train"), check_int(n_test, name="n_test")
    d = a - b
    j = d.size
    var_of_mean = (1.0 / j + n_test / n_train) * float(d.var(ddof=1))
    return _t_result(float(d.mean()), var_of_mean, j - 1.0, alternative)
