"""gpuknn.metrics.internal: Hubert Γ, CPCC (vs SciPy), gap statistic (vs its formula)."""

import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import cophenet, linkage
from scipy.spatial.distance import pdist, squareform

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import GapResult, cophenetic_correlation, gap_statistic, hubert_gamma, within_dispersion
from gpuknn.metrics.gap import choose_gap_k

TOL = 1e-10


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0, 0.0], [6.0, 0.0, 1.0], [0.0, 7.0, 2.0]])
    X = np.concatenate([rng.normal(c, 1.0, (20, 3)) for c in centres])
    labels = np.repeat(np.arange(3), 20)
    labels[::7] = (labels[::7] + 1) % 3  # an imperfect partition
    return X, labels


def _gamma_by_pairs(d, labels):
    """Γ from the explicit list of pairs i < j: Y = 1 for pairs in different clusters."""
    n = labels.size
    y = np.array([labels[i] != labels[j] for i in range(n) for j in range(i + 1, n)], dtype=float)
    return np.mean(d * y), np.corrcoef(d, y)[0, 1]


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
def test_hubert_gamma_distances(xp, to_xp, blobs, metric):
    X, labels = blobs
    raw, norm = _gamma_by_pairs(pdist(X, metric), labels)
    assert hubert_gamma(to_xp(X), to_xp(labels), metric=metric) == pytest.approx(norm, abs=TOL)
    assert hubert_gamma(to_xp(X), to_xp(labels), metric=metric, normalized=False) == pytest.approx(raw, rel=TOL)


def test_hubert_gamma_precomputed_and_tiled(xp, to_xp, blobs):
    X, labels = blobs
    D = squareform(pdist(X))
    raw, norm = _gamma_by_pairs(pdist(X), labels)
    assert hubert_gamma(to_xp(D), to_xp(labels), metric="precomputed") == pytest.approx(norm, abs=TOL)
    assert hubert_gamma(to_xp(D), to_xp(labels), metric="precomputed", working_memory=1 / 2**20) == pytest.approx(
        norm, abs=TOL
    )
    full = hubert_gamma(to_xp(X), to_xp(labels))
    tiny = hubert_gamma(to_xp(X), to_xp(labels), working_memory=2000 / 2**20)  # a few rows per tile
    assert tiny == pytest.approx(full, abs=1e-12)
    with pytest.raises(InvalidInputError, match="square"):
        hubert_gamma(to_xp(D[:5]), to_xp(labels[:5]), metric="precomputed")
    with pytest.raises(InvalidInputError, match="labels"):
        hubert_gamma(to_xp(X), to_xp(labels[:-1]))


@pytest.mark.parametrize("method", ["single", "complete", "average", "weighted", "ward"])
def test_cpcc_matches_scipy(xp, to_xp, blobs, method):
    X, _ = blobs
    want = cophenet(linkage(X, method=method), pdist(X))[0]
    assert cophenetic_correlation(to_xp(X), method=method) == pytest.approx(want, abs=TOL)


def test_cpcc_tiled_precomputed_linkage_and_metric(xp, to_xp, blobs):
    X, _ = blobs
    Z = linkage(X, method="average", metric="cosine")
    want = cophenet(Z, pdist(X, "cosine"))[0]
    full = cophenetic_correlation(to_xp(X), Z=Z, metric="cosine")
    tiny = cophenetic_correlation(to_xp(X), Z=Z, metric="cosine", working_memory=3000 / 2**20)
    assert full == pytest.approx(want, abs=TOL)
    assert tiny == pytest.approx(full, abs=1e-12)
    with pytest.raises(InvalidInputError, match="monotone"):
        cophenetic_correlation(to_xp(X), method="centroid")
    with pytest.raises(InvalidInputError, match="at least 3"):
        cophenetic_correlation(to_xp(X[:2]))


def test_within_dispersion_formula(xp, to_xp, blobs):
    X, labels = blobs
    # Tibshirani: W = Σ_r D_r / (2 n_r), D_r = sum of squared distances over ordered pairs in r
    W = sum(np.sum(squareform(pdist(X[labels == r], "sqeuclidean"))) / (2 * np.sum(labels == r)) for r in range(3))
    assert within_dispersion(to_xp(X), to_xp(labels)) == pytest.approx(W, rel=1e-12)


def _first_coordinate_clusterer(X, k):
    """Deterministic clusterer for the hand check: k equal-size runs along the first feature."""
    x0 = to_numpy(X)[:, 0]
    order = np.argsort(x0, kind="stable")
    labels = np.empty(x0.size, dtype=np.int64)
    labels[order] = np.arange(x0.size) * k // x0.size
    return labels


def test_gap_statistic_against_formula(xp, to_xp):
    X = np.array([[0.0, 0.0], [0.5, 0.2], [1.0, 0.1], [8.0, 0.3], [8.5, 0.0], [9.0, 0.4]])
    B, ks = 4, [1, 2, 3]
    res = gap_statistic(to_xp(X), k_range=ks, B=B, random_state=7, clusterer=_first_coordinate_clusterer)

    def logW(data, k):
        lab = _first_coordinate_clusterer(data, k)
        W = 0.0
        for r in np.unique(lab):
            P = data[lab == r]
            W += np.sum((P[:, None, :] - P[None, :, :]) ** 2) / (2 * len(P))
        return math.log(W)

    rng = np.random.default_rng(7)
    lo, hi = X.min(axis=0), X.max(axis=0)
    refs = np.array([[logW(Z, k) for k in ks] for Z in (rng.uniform(lo, hi, X.shape) for _ in range(B))])
    gap = refs.mean(axis=0) - np.array([logW(X, k) for k in ks])
    s = refs.std(axis=0) * math.sqrt(1 + 1 / B)
    np.testing.assert_allclose(res.gap, gap, atol=TOL)
    np.testing.assert_allclose(res.s_k, s, atol=TOL)
    chosen = next((k for i, k in enumerate(ks[:-1]) if gap[i] >= gap[i + 1] - s[i + 1]), ks[-1])
    assert res.n_clusters == chosen == 2 and res.rule == "1se"
    by_max = gap_statistic(to_xp(X), k_range=ks, B=B, random_state=7, clusterer=_first_coordinate_clusterer, rule="max")
    np.testing.assert_allclose(by_max.gap, gap, atol=TOL)  # same draws: only the choice differs
    assert by_max.n_clusters == ks[int(np.argmax(gap))] and by_max.rule == "max"
    assert res.choose("max") == by_max.n_clusters and by_max.choose("1se") == res.n_clusters


# Hand-built gap tables: (k, gap, s_k, K by the 1-SE rule, K by the maximum), worked out by hand.
GAP_TABLES = [
    # 1-SE stops at the first local plateau (Gap(2) = 1.0 >= Gap(3) - s_3 = 0.8); the maximum is at K = 4.
    ([1, 2, 3, 4, 5], [0.2, 1.0, 0.9, 1.5, 1.4], [0.1, 0.1, 0.1, 0.1, 0.1], 2, 4),
    # The doc's caveat: Gap(1) ≈ Gap(2) within s_2, so 1-SE says K = 1 while the gap peaks at K = 5.
    ([1, 2, 3, 4, 5, 6], [-0.23, -0.20, 0.13, 0.76, 2.07, 1.95], [0.05, 0.04, 0.05, 0.04, 0.03, 0.04], 1, 5),
    # Gap still rising beyond every standard error: 1-SE falls back to the largest K, as does the maximum.
    ([2, 4, 6], [0.1, 0.5, 0.9], [0.01, 0.01, 0.01], 6, 6),
    # A tie for the maximum goes to the smaller K; 1-SE with a large s_K stops at once.
    ([1, 2, 3], [0.5, 1.0, 1.0], [0.6, 0.6, 0.6], 1, 2),
]


@pytest.mark.parametrize(("k", "gap", "s_k", "k_1se", "k_max"), GAP_TABLES)
def test_gap_rules_on_hand_built_tables(k, gap, s_k, k_1se, k_max):
    assert choose_gap_k(k, gap, s_k, rule="1se") == k_1se
    assert choose_gap_k(k, gap, s_k, rule="max") == k_max
    assert choose_gap_k(k, gap, s_k) == k_1se  # the default is Tibshirani's rule
    z = np.zeros(len(k))
    res = GapResult(np.asarray(k), np.asarray(gap), np.asarray(s_k), z, z, z, k_1se)
    assert (res.choose("1se"), res.choose("max")) == (k_1se, k_max)


def test_gap_rule_bad_input():
    with pytest.raises(InvalidInputError, match="rule"):
        choose_gap_k([1, 2], [0.0, 1.0], [0.1, 0.1], rule="first")
    with pytest.raises(InvalidInputError, match="one length"):
        choose_gap_k([1, 2], [0.0], [0.1, 0.1])
    with pytest.raises(InvalidInputError, match="rule"):
        gap_statistic(np.random.default_rng(0).normal(size=(6, 2)), k_range=[1, 2], rule="maximum")


@pytest.mark.parametrize("reference", ["uniform", "pca"])
def test_gap_statistic_finds_blobs(xp, to_xp, reference):
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(c, 0.3, (25, 2)) for c in ([0, 0], [6, 6], [0, 6])]) @ np.array(
        [[1.0, 0.5], [0.0, 1.0]]
    )
    res = gap_statistic(to_xp(X), k_range=range(1, 6), B=5, reference=reference, random_state=0)
    assert res.n_clusters == 3
    assert res.gap.shape == res.s_k.shape == (5,)


def test_gap_statistic_bad_input(xp, to_xp):
    X = to_xp(np.random.default_rng(0).normal(size=(5, 2)))
    with pytest.raises(InvalidInputError, match="k_range"):
        gap_statistic(X, k_range=[1, 6])
    with pytest.raises(InvalidInputError, match="B"):
        gap_statistic(X, k_range=[1, 2], B=0)
    with pytest.raises(InvalidInputError, match="reference"):
        gap_statistic(X, k_range=[1, 2], reference="gauss")
    with pytest.raises(InvalidInputError, match="NaN"):
        gap_statistic(to_xp(np.array([[0.0, np.nan], [1.0, 1.0]])), k_range=[1])
