"""gpuknn.metrics.internal: Hubert Γ, CPCC (vs SciPy), gap statistic (vs its formula)."""

import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import cophenet, linkage
from scipy.spatial.distance import pdist, squareform

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import cophenetic_correlation, gap_statistic, hubert_gamma, within_dispersion

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
    assert hubert_gamma(to_xp(D), to_xp(labels), metric="precomputed", working_memory=1) == pytest.approx(norm, abs=TOL)
    full = hubert_gamma(to_xp(X), to_xp(labels))
    tiny = hubert_gamma(to_xp(X), to_xp(labels), working_memory=2000)  # a few rows per tile
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
    tiny = cophenetic_correlation(to_xp(X), Z=Z, metric="cosine", working_memory=3000)
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
    assert res.n_clusters == chosen == 2


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
