"""gpuknn.stats against its oracles: SciPy (friedmanchisquare, wilcoxon, ttest_rel, dunnett,
multivariate t), scikit-posthocs (Nemenyi, Demšar's many-to-one test), Demšar's (2006) tables
and worked example, Minitab's published Hsu MCB example, hand computations and Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from gpuknn.errors import InvalidInputError
from gpuknn.stats import (
    average_ranks,
    bonferroni_dunn_test,
    corrected_resampled_t_test,
    critical_difference,
    critical_value,
    dunnett_test,
    friedman_test,
    hsu_mcb,
    nemenyi_test,
    one_sided_dunnett_quantile,
    paired_t_test,
    rank_table,
    wilcoxon_signed_rank,
)

sp = pytest.importorskip("scikit_posthocs")


def _tables():
    """Random continuous tables and heavily tied ones (small integer scores, all-tied rows)."""
    rng = np.random.default_rng(34)
    out = []
    for n, k in ((5, 3), (14, 4), (30, 6), (8, 10)):
        out.append(rng.normal(size=(n, k)))
        tied = rng.integers(0, 3, size=(n, k)).astype(float)
        tied[0] = 1.0  # one data set ties every method
        out.append(tied)
    return out


TABLES = _tables()


# --- ranks and Friedman --------------------------------------------------------------------


def test_average_ranks_ties_and_direction():
    s = [[0.9, 0.8, 0.8, 0.7], [0.5, 0.5, 0.5, 0.6]]
    assert rank_table(s).tolist() == [[1.0, 2.5, 2.5, 4.0], [3.0, 3.0, 3.0, 1.0]]
    assert average_ranks(s).tolist() == [2.0, 2.75, 2.75, 2.5]
    # smaller is better: the ranks of the negated table
    assert average_ranks(s, greater_is_better=False).tolist() == average_ranks(-np.asarray(s)).tolist()
    for t in TABLES:
        r = rank_table(t)
        assert np.allclose(r.sum(axis=1), t.shape[1] * (t.shape[1] + 1) / 2)
        assert np.array_equal(r, stats.rankdata(-t, axis=1))


@pytest.mark.parametrize("i", range(len(TABLES)))
def test_friedman_equals_scipy(i):
    t = TABLES[i]
    res = friedman_test(t)
    ref = stats.friedmanchisquare(*t.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10, abs=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-12)
    n, k = t.shape
    ff = (n - 1) * ref.statistic / (n * (k - 1) - ref.statistic)
    assert res.iman_davenport == pytest.approx(ff, rel=1e-10)
    assert res.iman_davenport_pvalue == pytest.approx(stats.f.sf(ff, k - 1, (k - 1) * (n - 1)), rel=1e-10)
    assert (res.n_datasets, res.n_methods) == (n, k)
    # the direction of "better" changes the ranks, not the statistic
    flipped = friedman_test(t, greater_is_better=False)
    assert flipped.statistic == pytest.approx(res.statistic, rel=1e-12)
    assert np.allclose(flipped.average_ranks, k + 1 - res.average_ranks)


# Demšar (2006), section 3.2.2 / Table 6: four C4.5 variants on N = 14 data sets with average
# ranks 3.143, 2.000, 2.893, 1.964, giving chi2_F = 9.28 and F_F = 3.69 (critical F(3, 39) at
# 0.05: 2.85) and the Nemenyi CD = 2.569 sqrt(4 * 5 / (6 * 14)) = 1.25. Demšar's formula has no
# tie correction. The rank table below (1 = best) has exactly his rank sums 44, 28, 40.5, 27.5.
DEMSAR_RANKS = np.array(
    [
        [4.0, 1.0, 2.5, 2.5], [3.0, 1.0, 4.0, 2.0], [4.0, 1.0, 2.0, 3.0], [3.0, 2.0, 4.0, 1.0],
        [3.0, 4.0, 2.0, 1.0], [4.0, 2.0, 3.0, 1.0], [4.0, 1.0, 3.0, 2.0], [3.0, 2.0, 1.0, 4.0],
        [4.0, 2.0, 3.0, 1.0], [2.0, 3.0, 4.0, 1.0], [3.0, 1.0, 4.0, 2.0], [1.0, 3.0, 4.0, 2.0],
        [3.0, 4.0, 2.0, 1.0], [3.0, 1.0, 2.0, 4.0],
    ]
)  # fmt: skip


def test_iman_davenport_demsar_worked_example():
    res = friedman_test(DEMSAR_RANKS, greater_is_better=False, tie_correction=False)
    assert np.round(res.average_ranks, 3).tolist() == [3.143, 2.000, 2.893, 1.964]
    assert round(res.statistic, 2) == 9.28
    assert round(res.iman_davenport, 2) == 3.69
    assert round(float(stats.f.isf(0.05, 3, 39)), 2) == 2.85 and res.iman_davenport_pvalue < 0.05
    assert round(critical_difference(4, 14), 2) == 1.25
    # with the tie correction (SciPy's statistic), only the tied row changes it
    corrected = friedman_test(DEMSAR_RANKS, greater_is_better=False)
    assert corrected.statistic == pytest.approx(stats.friedmanchisquare(*DEMSAR_RANKS.T).statistic, rel=1e-12)
    assert corrected.statistic > res.statistic


def test_friedman_degenerate_tables():
    perfect = np.tile([3.0, 2.0, 1.0], (5, 1))  # every data set ranks alike: F_F infinite
    res = friedman_test(perfect)
    assert res.statistic == pytest.approx(10.0) and res.iman_davenport == math.inf
    assert res.iman_davenport_pvalue == 0.0
    res = friedman_test(np.ones((4, 3)))  # nothing to rank
    assert math.isnan(res.statistic) and math.isnan(res.pvalue)


# --- critical values: Demšar's Table 5 ------------------------------------------------------

# Table 5 (a) Nemenyi, (b) Bonferroni–Dunn; k = 2..10. Demšar divided tabulated (3-decimal)
# studentized ranges by sqrt(2), so three of his cells differ by 1 in the last digit from the
# exact quantile (k = 3 and 7 at 0.05: 2.343 / 2.949 vs 2.3437 / 2.9483; k = 5 at 0.10: 2.459
# vs 2.4595): every cell is within 1e-3 and the others agree to the three decimals. The
# Bonferroni–Dunn cell k = 9 at 0.05 (z(1 - 0.05/16) = 2.7344) is left out: its printed value
# could not be checked here.
DEMSAR_TABLE5 = {
    ("nemenyi", 0.05): [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
    ("nemenyi", 0.10): [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920],
    ("bonferroni-dunn", 0.05): [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690, None, 2.773],
    ("bonferroni-dunn", 0.10): [1.645, 1.960, 2.128, 2.241, 2.326, 2.394, 2.450, 2.498, 2.539],
}
ROUNDING_CELLS = {("nemenyi", 0.05, 3), ("nemenyi", 0.05, 7), ("nemenyi", 0.10, 5)}


@pytest.mark.parametrize("key", sorted(DEMSAR_TABLE5))
def test_critical_values_equal_demsar_table_5(key):
    test, alpha = key
    for k, q in zip(range(2, 11), DEMSAR_TABLE5[key]):
        if q is None:
            continue
        ours = critical_value(k, alpha=alpha, test=test)
        if (test, alpha, k) in ROUNDING_CELLS:
            assert abs(ours - q) <= 1.01e-3, (key, k, ours)
        else:
            assert round(ours, 3) == q, (key, k, ours)
    assert round(critical_value(5, alpha=0.05), 3) == 2.728


def test_critical_difference_formula():
    for k, n in ((2, 3), (5, 20), (10, 50)):
        for test in ("nemenyi", "bonferroni-dunn"):
            cd = critical_difference(k, n, alpha=0.1, test=test)
            assert cd == pytest.approx(critical_value(k, alpha=0.1, test=test) * math.sqrt(k * (k + 1) / (6 * n)))


# --- Nemenyi and Bonferroni–Dunn against scikit-posthocs ----------------------------------


@pytest.mark.parametrize("i", range(len(TABLES)))
def test_nemenyi_equals_scikit_posthocs(i):
    t = TABLES[i]
    res = nemenyi_test(t)
    # scikit-posthocs ranks ascending within rows (rank 1 = smallest); the p-values depend on
    # |R_i - R_j| only, which is the same for either direction
    ref = sp.posthoc_nemenyi_friedman(t).to_numpy()
    assert np.allclose(res.pvalue, ref, rtol=1e-10, atol=1e-10)
    assert np.allclose(nemenyi_test(t, greater_is_better=False).pvalue, ref, rtol=1e-10, atol=1e-10)
    n, k = t.shape
    assert res.critical_difference == pytest.approx(critical_difference(k, n))
    diff = np.abs(res.average_ranks[:, None] - res.average_ranks[None, :])
    assert np.array_equal(res.significant, diff > res.critical_difference)
    off = ~np.eye(k, dtype=bool)
    assert np.array_equal(res.significant[off], (res.pvalue < 0.05)[off])
    assert np.allclose(res.statistic, -res.statistic.T)


@pytest.mark.parametrize("i", range(len(TABLES)))
@pytest.mark.parametrize("control", [0, 2])
def test_bonferroni_dunn_equals_scikit_posthocs(i, control):
    t = TABLES[i]
    res = bonferroni_dunn_test(t, control=control)
    ref = sp.posthoc_demsar(t, control=control, p_adjust="bonferroni", to_matrix=False)
    ref_unadjusted = sp.posthoc_demsar(t, control=control, to_matrix=False)
    assert res.methods.tolist() == [j for j in range(t.shape[1]) if j != control]
    assert np.allclose(res.pvalue, ref.to_numpy(), rtol=1e-10, atol=1e-10)
    k = t.shape[1]
    assert np.allclose(res.pvalue, np.minimum(1, (k - 1) * ref_unadjusted.to_numpy()), rtol=1e-10, atol=1e-12)
    # scikit-posthocs' z = (R_j - R_control) on ascending ranks = ours on descending ranks
    z_ref = stats.norm.isf(ref_unadjusted.to_numpy() / 2)
    assert np.allclose(np.abs(res.statistic), z_ref, rtol=1e-8, atol=1e-8)
    assert np.array_equal(
        res.significant, np.abs(res.average_ranks[control] - res.average_ranks[res.methods]) > res.critical_difference
    )


# --- two methods -----------------------------------------------------------------------------


def _pairs():
    rng = np.random.default_rng(7)
    x = rng.normal(size=25)
    out = [(x, x + rng.normal(0.3, 1, size=25))]
    a = np.round(rng.normal(size=30), 1)
    b = np.round(a + rng.normal(0.1, 0.3, size=30), 1)  # ties and zero differences
    out.append((a, b))
    out.append((np.arange(8.0), np.arange(8.0)[::-1] + 0.5))
    return out


PAIRS = _pairs()


@pytest.mark.parametrize("i", range(len(PAIRS)))
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_equals_scipy(i, zero_method, alternative):
    x, y = PAIRS[i]
    for correction in (False, True):
        res = wilcoxon_signed_rank(x, y, zero_method=zero_method, alternative=alternative, correction=correction)
        ref = stats.wilcoxon(x, y, zero_method=zero_method, alternative=alternative, correction=correction)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-10, abs=1e-10)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("i", range(len(PAIRS)))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_t_equals_scipy(i, alternative):
    x, y = PAIRS[i]
    res = paired_t_test(x, y, alternative=alternative)
    ref = stats.ttest_rel(x, y, alternative=alternative)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-14)
    assert res.df == len(x) - 1 and res.mean_difference == pytest.approx(np.mean(x - y))


def test_nadeau_bengio_hand_computed():
    # Hand computation: d = (0.01, 0.02, 0.03, 0, 0.04), J = 5, n_test/n_train = 10/90:
    # mean 0.02, var(d, ddof=1) = 0.001/4 = 0.00025, (1/5 + 1/9) = 14/45, so
    # t = 0.02 / sqrt(0.00025 * 14 / 45) = sqrt(0.0004 * 45 / 0.0035) = 6 / sqrt(7) = 2.26779.
    x = np.array([0.81, 0.82, 0.83, 0.80, 0.84])
    res = corrected_resampled_t_test(x, np.full(5, 0.80), n_train=90, n_test=10)
    assert res.statistic == pytest.approx(6 / math.sqrt(7), rel=1e-10)
    assert res.df == 4.0
    assert res.pvalue == pytest.approx(2 * stats.t.sf(6 / math.sqrt(7), 4), rel=1e-10)
    one = corrected_resampled_t_test(x, np.full(5, 0.80), n_train=90, n_test=10, alternative="greater")
    assert one.pvalue == pytest.approx(stats.t.sf(6 / math.sqrt(7), 4), rel=1e-10)


@pytest.mark.parametrize("i", range(len(PAIRS)))
def test_nadeau_bengio_reduces_to_paired_t(i):
    x, y = PAIRS[i]
    j = len(x)
    ref = stats.ttest_rel(x, y)
    # the correction scales t by sqrt((1/J) / (1/J + n_test/n_train))
    res = corrected_resampled_t_test(x, y, n_train=9, n_test=1)
    assert res.statistic == pytest.approx(ref.statistic * math.sqrt((1 / j) / (1 / j + 1 / 9)), rel=1e-10)
    tiny = corrected_resampled_t_test(x, y, n_train=10**12, n_test=1)
    assert tiny.statistic == pytest.approx(ref.statistic, rel=1e-9)


# --- Dunnett and the one-sided Dunnett quantile ------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("control", [0, 3, -1])
def test_dunnett_equals_scipy(alternative, control):
    rng = np.random.default_rng(5)
    t = rng.normal(size=(12, 5)) + np.array([0, 0.5, 1.0, -0.3, 0.2])
    res = dunnett_test(t, control=control, alternative=alternative, random_state=11)
    c = control % 5
    others = [j for j in range(5) if j != c]
    ref = stats.dunnett(*(t[:, j] for j in others), control=t[:, c], alternative=alternative, random_state=11)
    assert res.control == c and res.methods.tolist() == others
    assert np.allclose(res.statistic, ref.statistic, rtol=1e-10)
    assert np.allclose(res.pvalue, ref.pvalue, atol=1e-4)
    ci = ref.confidence_interval(0.95)
    assert np.allclose(res.low, ci.low, atol=1e-4, equal_nan=True)
    assert np.allclose(res.high, ci.high, atol=1e-4, equal_nan=True)
    # smaller is better: the negated scores
    neg = dunnett_test(-t, control=control, alternative=alternative, greater_is_better=False, random_state=11)
    assert np.allclose(neg.statistic, res.statistic, rtol=1e-12)


@pytest.mark.parametrize(("p", "df"), [(2, math.inf), (3, 20.0), (5, 7.0), (9, 40.0)])
def test_one_sided_dunnett_quantile_against_multivariate_t(p, df):
    d = one_sided_dunnett_quantile(p, df, alpha=0.05)
    corr = np.full((p, p), 0.5) + 0.5 * np.eye(p)
    if math.isinf(df):
        prob = stats.multivariate_normal(cov=corr).cdf(np.full(p, d))
    else:
        prob = stats.multivariate_t(shape=corr, df=df).cdf(np.full(p, d), random_state=0)
    assert prob == pytest.approx(0.95, abs=3e-4)


def test_one_sided_dunnett_quantile_monte_carlo():
    """Brute force: P(max_i (Z_i - Z_0) / (sqrt(2) S) <= d) estimated from 400 000 draws."""
    p, df, alpha = 3, 12.0, 0.05
    d = one_sided_dunnett_quantile(p, df, alpha=alpha)
    rng = np.random.default_rng(2024)
    m = 400_000
    z = rng.standard_normal((m, p + 1))
    s = np.sqrt(rng.chisquare(df, size=m) / df)
    hit = np.mean(np.max(z[:, 1:] - z[:, :1], axis=1) / (math.sqrt(2) * s) <= d)
    assert abs(hit - (1 - alpha)) < 4 * math.sqrt(alpha * (1 - alpha) / m)
    assert one_sided_dunnett_quantile(1, df) == pytest.approx(stats.t.isf(0.05, df), rel=1e-12)


# --- Hsu's MCB ---------------------------------------------------------------------------------


def _one_way_table(means, pooled_sd, n):
    """An (n, k) one-way table with exactly these column means and pooled standard deviation."""
    base = np.linspace(-1.0, 1.0, n)
    base = base - base.mean()
    k = len(means)
    scale = pooled_sd * math.sqrt(k * (n - 1) / (k * np.sum(base**2)))
    return np.asarray(means)[None, :] + scale * base[:, None]


def test_hsu_mcb_minitab_paint_hardness():
    # Minitab's one-way ANOVA example (PaintHardness.MTW): 4 blends, 6 samples each, means
    # 14.733, 8.567, 12.983, 18.067 (sums 88.4, 51.4, 77.9, 108.4), pooled StDev 3.95012;
    # Hsu's MCB (largest is best), 95 %: Blend 2 - Blend 4 in (-14.5000, 0),
    # Blend 3 - Blend 4 in (-10.0833, 0); the intervals of Blends 1 and 4 do not end at 0.
    # MCB depends on the data only through these summaries. Both published endpoints sit
    # 2.7e-4 below ours: Minitab's margin is 5.0000, ours 4.99973 (its one-sided Dunnett
    # value 2.19244, ours 2.192283, which SciPy's multivariate t and a nested adaptive
    # quadrature confirm: P = 0.9500000 at ours, 0.9500150 at Minitab's), so the check is
    # to 5e-4.
    t = _one_way_table(np.array([88.4, 51.4, 77.9, 108.4]) / 6, 3.95012, 6)
    res = hsu_mcb(t, design="oneway", alpha=0.05)
    assert res.df == 20.0
    assert math.sqrt(res.mse) == pytest.approx(3.95012, rel=1e-12)
    assert res.lower[1] == pytest.approx(-14.5, abs=5e-4) and res.upper[1] == 0.0
    assert res.lower[2] == pytest.approx(-10.0833, abs=5e-4) and res.upper[2] == 0.0
    assert res.margin == pytest.approx(5.0, rel=1e-4)
    assert res.lower[0] < 0 < res.upper[0] and res.lower[3] < 0 < res.upper[3]
    assert res.best.tolist() == [True, False, False, True]


def test_hsu_mcb_smaller_is_better_mirrors():
    rng = np.random.default_rng(3)
    t = rng.normal(size=(10, 4)) + np.array([0.0, 0.4, 0.8, 0.1])
    up = hsu_mcb(t)
    down = hsu_mcb(-t, greater_is_better=False)
    assert np.allclose(down.means, -up.means)
    assert np.allclose(down.lower, -up.upper) and np.allclose(down.upper, -up.lower)
    assert np.array_equal(down.best, up.best)
    # block design: MSE of the two-way additive model, df (N - 1)(k - 1)
    resid = t - t.mean(1, keepdims=True) - t.mean(0) + t.mean()
    assert up.df == 27.0 and up.mse == pytest.approx(np.sum(resid**2) / 27.0)
    assert up.margin == pytest.approx(one_sided_dunnett_quantile(3, 27.0) * math.sqrt(2 * up.mse / 10))


def test_hsu_mcb_simultaneous_coverage_monte_carlo():
    """Simultaneous coverage of mu_i - max_{j != i} mu_j over 1500 simulated block designs
    (data-set effects, two methods tied for the best) is at least 1 - alpha."""
    rng = np.random.default_rng(99)
    mu = np.array([0.0, 0.5, 0.5, -0.2])
    target = np.array([mu[i] - np.max(np.delete(mu, i)) for i in range(4)])
    n_sim, covered = 1500, 0
    for _ in range(n_sim):
        t = mu + rng.normal(0, 2.0, size=(8, 1)) + rng.normal(size=(8, 4))
        res = hsu_mcb(t, alpha=0.1)
        covered += bool(np.all((res.lower <= target) & (target <= res.upper)))
    assert covered / n_sim >= 0.9 - 3 * math.sqrt(0.09 / n_sim)


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: friedman_test([[1.0, np.nan], [2.0, 3.0]]), r"scores of shape \(2, 2\) contains NaN"),
        (lambda: friedman_test([1.0, 2.0, 3.0]), r"must be 2-D .* got shape \(3,\)"),
        (lambda: nemenyi_test([[1.0], [2.0]]), r"at least 2 methods .* shape \(2, 1\)"),
        (lambda: nemenyi_test([[1.0, 2.0]]), r"at least 2 data sets .* shape \(1, 2\)"),
        (lambda: nemenyi_test([[1.0, 2.0], [2.0, 1.0]], alpha=1.5), r"alpha must be in the open interval"),
        (lambda: bonferroni_dunn_test([[1.0, 2.0], [2.0, 1.0]], control=2), r"control must be in \[-2, 1\], got 2"),
        (lambda: critical_value(1), r"n_methods must be in \[2, inf\], got 1"),
        (lambda: critical_value(4, test="tukey"), r"test must be one of"),
        (lambda: paired_t_test([1.0, 2.0], [1.0, 2.0, 3.0]), r"different lengths: 2 and 3"),
        (lambda: corrected_resampled_t_test([1.0, 2.0], [1.0, 3.0], n_train=0, n_test=1), r"n_train must be"),
        (lambda: wilcoxon_signed_rank([1.0, 2.0], [1.0, 3.0], zero_method="x"), r"zero_method must be one of"),
        (lambda: hsu_mcb([[1.0, 2.0], [2.0, 1.0]], design="latin"), r"design must be one of"),
        (lambda: dunnett_test([[1.0, 2.0], [2.0, 1.0]], control=1.5), r"control must be an integer, got 1.5"),
        (lambda: one_sided_dunnett_quantile(0, 10), r"n_comparisons must be in \[1, inf\], got 0"),
    ],
)
def test_errors_name_the_argument(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
