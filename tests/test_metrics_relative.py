"""gpuknn.metrics.relative: Dunn, Davies–Bouldin, SD, PC, Xie–Beni."""

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.metrics import davies_bouldin_score as sk_db

from gpuknn.errors import InvalidInputError
from gpuknn.metrics import (
    davies_bouldin_score,
    dunn_index,
    partition_coefficient,
    sd_index,
    sd_scat_dis,
    xie_beni_index,
)

TOL = 1e-10


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 1.0, (15, 2)) for c in ([0, 0], [5, 1], [1, 6])])
    return X, np.repeat([2, 0, 7], 15)


def test_dunn_hand_case(xp, to_xp):
    # clusters {0, 1} and {5, 7} on a line: separation 5 - 1 = 4, largest diameter 7 - 5 = 2
    X = to_xp(np.array([[0.0], [1.0], [5.0], [7.0]]))
    assert dunn_index(X, to_xp(np.array([0, 0, 1, 1]))) == 2.0


def test_dunn_formula_and_tiling(xp, to_xp, data):
    X, labels = data
    D = squareform(pdist(X))
    same = labels[:, None] == labels[None, :]
    want = D[~same].min() / D[same].max()  # min between-cluster distance / max diameter
    assert dunn_index(to_xp(X), to_xp(labels)) == pytest.approx(want, rel=1e-9)
    assert dunn_index(to_xp(D), to_xp(labels), metric="precomputed") == pytest.approx(want, abs=TOL)
    # Tiles of another shape: the same extreme pairs; their GEMM distances may round
    # differently (torch's matmul does, by shape), so equal to rounding, not bit for bit.
    tiled = dunn_index(to_xp(X), to_xp(labels), working_memory=500 / 2**20)  # 500 bytes, in MiB
    assert tiled == pytest.approx(dunn_index(to_xp(X), to_xp(labels)), rel=1e-13)


def test_dunn_undefined(xp, to_xp):
    X = to_xp(np.array([[0.0], [0.0], [3.0]]))
    with pytest.raises(InvalidInputError, match="2 clusters"):
        dunn_index(X, to_xp(np.zeros(3, dtype=np.int64)))
    assert dunn_index(X, to_xp(np.array([0, 0, 1]))) == math.inf  # zero diameters, apart
    with pytest.raises(InvalidInputError, match="0/0"):
        dunn_index(X, to_xp(np.array([0, 1, 2])))  # duplicates split: zero separation too


def test_davies_bouldin_matches_sklearn(xp, to_xp, data):
    X, labels = data
    assert davies_bouldin_score(to_xp(X), to_xp(labels)) == pytest.approx(sk_db(X, labels), abs=TOL)
    assert davies_bouldin_score(
        to_xp(np.array([[0.0], [2.0], [10.0], [12.0]])), to_xp(np.array([0, 0, 1, 1]))
    ) == pytest.approx(0.2, abs=TOL)
    with pytest.raises(InvalidInputError):
        davies_bouldin_score(to_xp(X), to_xp(np.zeros(len(X), dtype=np.int64)))
    with pytest.raises(InvalidInputError):
        davies_bouldin_score(to_xp(X), to_xp(np.arange(len(X))))


def test_sd_hand_case(xp, to_xp):
    # {0, 2} and {10, 12}: cluster variances 1, data variance 26; centres 1 and 11
    X = to_xp(np.array([[0.0], [2.0], [10.0], [12.0]]))
    scat, dis = sd_scat_dis(X, to_xp(np.array([0, 0, 1, 1])))
    assert scat == pytest.approx(1 / 26, abs=TOL)  # mean(|1|, |1|) / |26|
    assert dis == pytest.approx(10 / 10 * (1 / 10 + 1 / 10), abs=TOL)
    assert sd_index(X, to_xp(np.array([0, 0, 1, 1])), alpha=2.0) == pytest.approx(2 / 26 + 0.2, abs=TOL)


def test_sd_formula(xp, to_xp, data):
    X, labels = data
    cls = np.unique(labels)
    V = np.array([X[labels == c].mean(axis=0) for c in cls])
    scat = np.mean([np.linalg.norm(X[labels == c].var(axis=0)) for c in cls]) / np.linalg.norm(X.var(axis=0))
    CD = cdist(V, V)
    dis = CD.max() / CD[CD > 0].min() * np.sum(1 / CD.sum(axis=1))
    kmax_labels = np.arange(len(X)) % 6
    Vk = np.array([X[kmax_labels == c].mean(axis=0) for c in range(6)])
    CDk = cdist(Vk, Vk)
    alpha = CDk.max() / CDk[CDk > 0].min() * np.sum(1 / CDk.sum(axis=1))  # alpha = Dis(K_max)
    got = sd_index(to_xp(X), to_xp(labels), labels_kmax=to_xp(kmax_labels))
    assert got == pytest.approx(alpha * scat + dis, abs=TOL)
    with pytest.raises(InvalidInputError, match="alpha"):
        sd_index(to_xp(X), to_xp(labels))


def test_partition_coefficient(xp, to_xp):
    u = np.array([[1.0, 0.0], [0.5, 0.5], [0.25, 0.75]])
    assert partition_coefficient(to_xp(u)) == pytest.approx((1 + 0.5 + 0.0625 + 0.5625) / 3, abs=TOL)
    with pytest.raises(InvalidInputError, match="sum to 1"):
        partition_coefficient(to_xp(np.array([[0.5, 0.4]])))
    with pytest.raises(InvalidInputError, match="NaN"):
        partition_coefficient(to_xp(np.array([[np.nan, 1.0]])))


def test_xie_beni(xp, to_xp, data):
    X0 = np.array([[0.0], [2.0], [10.0], [12.0]])
    crisp = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    # within: 4 points at distance 1 from their centre; separation (11 - 1)² = 100
    assert xie_beni_index(to_xp(X0), to_xp(crisp)) == pytest.approx(4 / (4 * 100), abs=TOL)
    X, _ = data
    rng = np.random.default_rng(3)
    u = rng.random((len(X), 3))
    u /= u.sum(axis=1, keepdims=True)
    m = 2.0
    V = (u**m).T @ X / (u**m).sum(axis=0)[:, None]
    CD = cdist(V, V)
    want = np.sum(u**m * cdist(X, V, "sqeuclidean")) / (len(X) * CD[CD > 0].min() ** 2)
    assert xie_beni_index(to_xp(X), to_xp(u), m=m) == pytest.approx(want, abs=TOL)
    assert xie_beni_index(to_xp(X), to_xp(u), to_xp(V), m=m) == pytest.approx(want, abs=TOL)
    with pytest.raises(InvalidInputError, match="coincide"):
        xie_beni_index(to_xp(X0), to_xp(crisp), to_xp(np.array([[1.0], [1.0]])))
    with pytest.raises(InvalidInputError, match="rows"):
        xie_beni_index(to_xp(X), to_xp(u[:-1]))
