"""Dunnett's many-to-one comparison of methods with a control (a wrapper of
:func:`scipy.stats.dunnett`) and the deterministic one-sided Dunnett quantile used by MCB."""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np
from scipy import integrate, optimize, special, stats

from .._backend import check_int
from ..errors import InvalidInputError
from ._validation import check_alpha, check_control, check_option, check_table

__all__ = ["DunnettResult", "dunnett_test", "one_sided_dunnett_quantile"]


class DunnettResult(NamedTuple):
    """Result of :func:`dunnett_test` (host NumPy arrays).

    Attributes
    ----------
    control : int
        The control's column.
    methods : numpy.ndarray of int, shape (k − 1,)
        The other methods' columns, in order; the arrays below follow it.
    statistic : numpy.ndarray of shape (k − 1,)
        t statistics of ``mean_j − mean_control`` with the pooled standard deviation.
    pvalue : numpy.ndarray of shape (k − 1,)
        Family-wise adjusted p-values (SciPy's, randomised: they depend on ``random_state``
        to about 1e-4).
    low, high : numpy.ndarray of shape (k − 1,)
        Simultaneous ``1 − alpha`` confidence limits of ``mean_j − mean_control``.
    """

    control: int
    methods: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    low: np.ndarray
    high: np.ndarray


def dunnett_test(
    scores: Any,
    *,
    control: int = 0,
    alternative: str = "two-sided",
    alpha: float = 0.05,
    greater_is_better: bool = True,
    random_state: Any = None,
) -> DunnettResult:
    """Dunnett's test of each method's mean score against a control's.

    The columns of ``scores`` are the samples of :func:`scipy.stats.dunnett` (a one-way
    design: the pairing of the rows, data sets or folds, is not used). For scores where
    smaller is better (``greater_is_better=False``) the scores are negated first, so that a
    positive statistic always means "better than the control" and ``alternative="greater"``
    tests for improvements.

    Parameters
    ----------
    scores : array-like of shape (n_rows, n_methods)
        One column per method; finite; at least 2 rows and 2 methods.
    control : int, default 0
        Column of the control (negative counts from the end).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
    alpha : float, default 0.05
        1 − the confidence level of ``low`` and ``high``.
    greater_is_better : bool, default True
    random_state : None, int or numpy.random.Generator, optional
        Passed to SciPy, whose multivariate-t probabilities are quasi-Monte-Carlo estimates.

    Returns
    -------
    DunnettResult

    Complexity O(n k) plus SciPy's multivariate-t integration (k − 1 dimensions).

    References
    ----------
    C. W. Dunnett, "A multiple comparison procedure for comparing several treatments with a
    control", JASA 50:1096–1121, 1955.

    Examples
    --------
    >>> scores = [[0.80, 0.84, 0.79], [0.75, 0.80, 0.74], [0.90, 0.93, 0.90], [0.70, 0.76, 0.69]]
    >>> res = dunnett_test(scores, control=0, random_state=0)
    >>> res.methods.tolist(), res.statistic.round(3).tolist()
    ([1, 2], [0.767, -0.128])
    """
    s = check_table(scores, greater_is_better=greater_is_better)
    k = s.shape[1]
    c = check_control(control, k)
    check_option(alternative, "alternative", ("two-sided", "greater", "less"))
    a = check_alpha(alpha)
    others = np.array([j for j in range(k) if j != c], dtype=np.intp)
    res = stats.dunnett(*(s[:, j] for j in others), control=s[:, c], alternative=alternative, random_state=random_state)
    ci = res.confidence_interval(confidence_level=1.0 - a)
    return DunnettResult(
        c,
        others,
        np.asarray(res.statistic, dtype=np.float64),
        np.asarray(res.pvalue, dtype=np.float64),
        np.asarray(ci.low, dtype=np.float64),
        np.asarray(ci.high, dtype=np.float64),
    )


# Gauss–Hermite nodes for E[g(Z)], Z ~ N(0, 1): ∫ φ(z) g(z) dz ≈ Σ w_i g(√2 x_i) / √π.
_GH_X, _GH_W = np.polynomial.hermite.hermgauss(160)
_GH_Z, _GH_W = math.sqrt(2.0) * _GH_X, _GH_W / math.sqrt(math.pi)


def _prob_given_scale(c: float, p: int) -> float:
    """P(max_i (Z_i − Z_0) ≤ √2 c) for p + 1 independent standard normals."""
    return float(np.sum(_GH_W * special.ndtr(_GH_Z + math.sqrt(2.0) * c) ** p))


def _one_sided_cdf(d: float, p: int, df: float) -> float:
    """P(max_i T_i ≤ d), T_i = (Z_i − Z_0) / (√2 S), S² ~ χ²_df / df: p equicorrelated (ρ = ½)
    t variables (Dunnett's one-sided statistic for groups of equal size)."""
    if math.isinf(df):
        return _prob_given_scale(d, p)
    chi = stats.chi(df, scale=1.0 / math.sqrt(df))
    lo, hi = chi.ppf(1e-15), chi.isf(1e-15)
    val, _ = integrate.quad(
        lambda s: chi.pdf(s) * _prob_given_scale(d * s, p), lo, hi, epsabs=1e-13, epsrel=1e-12, limit=200, points=[1.0]
    )
    return val


def one_sided_dunnett_quantile(n_comparisons: int, df: float, *, alpha: float = 0.05) -> float:
    """Upper ``alpha`` quantile of the maximum of ``n_comparisons`` one-sided Dunnett t statistics.

    The critical value ``d`` with ``P(max_i T_i ≤ d) = 1 − alpha`` where the T_i are
    equicorrelated (ρ = ½) t variables on ``df`` degrees of freedom — the one-sided Dunnett
    quantile for groups of equal size, and the critical value of Hsu's MCB. Computed by
    deterministic quadrature (Gauss–Hermite inside, adaptive over the scale; about 1e-9
    accurate), not by Monte Carlo.

    Parameters
    ----------
    n_comparisons : int
        p ≥ 1 (k − 1 for k methods).
    df : float
        Degrees of freedom of the variance estimate (> 0, ``inf`` for a known variance).
    alpha : float, default 0.05

    Returns
    -------
    float

    References
    ----------
    C. W. Dunnett, JASA 50:1096–1121, 1955 (Table 1a).

    Examples
    --------
    >>> round(one_sided_dunnett_quantile(1, float("inf")), 4)  # one comparison: the normal quantile
    1.6449
    >>> round(one_sided_dunnett_quantile(3, 20), 2)  # Dunnett's table: 2.19
    2.19
    """
    p = check_int(n_comparisons, name="n_comparisons")
    df = float(df)
    if not df > 0:
        raise InvalidInputError(f"df must be positive, got {df}")
    return _quantile(p, df, check_alpha(alpha))


@functools.lru_cache(maxsize=256)
def _quantile(p: int, df: float, a: float) -> float:
    lo = float(stats.t.isf(a, df)) if not math.isinf(df) else float(stats.norm.isf(a))  # p = 1 bound
    hi = float(stats.t.isf(a / p, df)) if not math.isinf(df) else float(stats.norm.isf(a / p))  # Bonferroni
    if p == 1:
        return lo
    return float(optimize.brentq(lambda d: _one_sided_cdf(d, p, df) - (1.0 - a), lo - 1e-9, hi + 1e-9, xtol=1e-12))
