"""gpuknn.metrics.silhouette: silhouette samples/score and Calinski–Harabasz vs scikit-learn."""

import numpy as np
import pytest
from helpers import assert_xp, host
from scipy.spatial.distance import pdist, squareform
from sklearn.metrics import calinski_harabasz_score as sk_ch
from sklearn.metrics import silhouette_samples as sk_samples
from sklearn.metrics import silhouette_score as sk_score

from gpuknn.errors import InvalidInputError
from gpuknn.metrics.silhouette import calinski_harabasz_score, silhouette_samples, silhouette_score

RTOL, ATOL = 1e-10, 1e-12
MIB = 2**20  # working_memory is in MiB: byte budgets below are divided by it
METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation"]


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 1.0, (15, 3)) for c in ([0, 0, 1], [4, 1, 2], [1, 5, -1])])
    labels = np.repeat([2, 0, 7], 15)
    labels[[3, 20]] = 7  # some misplaced points: negative silhouettes too
    return X, labels


@pytest.mark.parametrize("metric", METRICS)
def test_samples_match_sklearn(backend, data, metric):
    X, labels = data
    got = silhouette_samples(backend.asarray(X), backend.asarray(labels), metric=metric)
    want = sk_samples(X, labels, metric=metric)
    assert_xp(got, want, backend, dtype=backend.xp.float64, exact=False, rtol=RTOL, atol=ATOL)
    score = silhouette_score(backend.asarray(X), backend.asarray(labels), metric=metric)
    assert isinstance(score, float)
    assert score == pytest.approx(sk_score(X, labels, metric=metric), rel=RTOL, abs=ATOL)


def test_precomputed(backend, data):
    X, labels = data
    D = squareform(pdist(X))
    got = silhouette_samples(
        backend.asarray(D), backend.asarray(labels), metric="precomputed", working_memory=3000 / MIB
    )
    want = sk_samples(D, labels, metric="precomputed")
    assert_xp(got, want, backend, exact=False, rtol=RTOL, atol=ATOL)
    s = silhouette_score(
        backend.asarray(D), backend.asarray(labels), metric="precomputed", sample_size=30, random_state=3
    )
    assert s == pytest.approx(
        sk_score(D, labels, metric="precomputed", sample_size=30, random_state=3), rel=RTOL, abs=ATOL
    )


def test_precomputed_errors(backend, data):
    X, labels = data
    D = squareform(pdist(X))
    y = backend.asarray(labels)
    with pytest.raises(InvalidInputError, match="square"):
        silhouette_samples(backend.asarray(D[:, :10]), y, metric="precomputed")
    D[2, 2] = 0.5
    with pytest.raises(InvalidInputError, match="diagonal"):
        silhouette_samples(backend.asarray(D), y, metric="precomputed")
    D[2, 2] = 0.0
    D[1, 2] = -1.0
    with pytest.raises(InvalidInputError, match="negative"):
        silhouette_samples(backend.asarray(D), y, metric="precomputed")


@pytest.mark.parametrize("wm", [1 / MIB, 200 / MIB, 5000 / MIB, 10**9 / MIB, None])
def test_working_memory_blocks(backend, data, wm):
    X, labels = data
    full = silhouette_samples(backend.asarray(X), backend.asarray(labels), working_memory=10**9 / MIB)
    got = silhouette_samples(backend.asarray(X), backend.asarray(labels), working_memory=wm)
    # other tile shapes can round the GEMM differently (torch does): equal to rounding
    assert_xp(got, host(full), backend, exact=False, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("metric", METRICS)
def test_uneven_tiles_match_sklearn(backend, data, metric):
    # 45 rows in tiles of 4: ten off-diagonal tile columns, the last one row high
    X, labels = data
    wm = (4 * (4 * 4 * 8) + 2 * 4 * 3 * 8) / MIB
    got = silhouette_samples(backend.asarray(X), backend.asarray(labels), metric=metric, working_memory=wm)
    assert_xp(
        got, sk_samples(X, labels, metric=metric), backend, dtype=backend.xp.float64, exact=False, rtol=RTOL, atol=ATOL
    )


def test_memory_within_working_memory():
    # the symmetric walk holds its tiles, two prepared blocks and the (n, K) sums: no copy of X
    import tracemalloc

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 512)).astype(np.float32)  # 6 MiB: more than the budget
    labels = rng.integers(0, 10, 3000)
    wm = 4  # MiB
    for metric in METRICS:
        silhouette_score(X, labels, metric=metric, working_memory=wm)  # warm up
        tracemalloc.start()
        silhouette_score(X, labels, metric=metric, working_memory=wm)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak <= wm * MIB + 3000 * 10 * 8 * 4, (metric, peak, X.nbytes)


def test_singletons_and_duplicates(backend):
    X = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0], [5.0, 6.0], [9.0, 0.0]])
    labels = np.array([0, 0, 1, 1, 2])  # cluster 2 is one point; cluster 0 two equal points
    got = silhouette_samples(backend.asarray(X), backend.asarray(labels))
    want = sk_samples(X, labels)
    assert_xp(got, want, backend, exact=False, rtol=RTOL, atol=ATOL)
    assert float(host(got)[4]) == 0.0 and float(host(got)[0]) == 1.0
    # a = b = 0: two clusters of coincident points -> 0 for them, as scikit-learn
    Y = np.array([[1.0], [1.0], [1.0], [3.0], [3.0]])
    lab = np.array([0, 0, 1, 2, 2])
    assert_xp(
        silhouette_samples(backend.asarray(Y), backend.asarray(lab)),
        sk_samples(Y, lab),
        backend,
        exact=False,
        rtol=RTOL,
        atol=ATOL,
    )


@pytest.mark.parametrize(
    "labels",
    [np.array(["b", "a", "c"] * 15), np.repeat([-3, -1, 4], 15), np.repeat([0.5, -2.25, 1e6], 15)],
    ids=["strings", "negative-ints", "floats"],
)
def test_label_types(backend, data, labels):
    X, _ = data
    codes = np.unique(labels, return_inverse=True)[1]
    want = sk_samples(X, codes)
    y = labels if labels.dtype.kind == "U" else backend.asarray(labels)  # strings stay host
    got = silhouette_samples(backend.asarray(X), y)
    assert_xp(got, want, backend, exact=False, rtol=RTOL, atol=ATOL)
    assert calinski_harabasz_score(backend.asarray(X), y) == pytest.approx(sk_ch(X, codes), rel=RTOL)


def test_label_count_errors(backend, data):
    X, labels = data
    Xb = backend.asarray(X)
    with pytest.raises(InvalidInputError, match="1 distinct"):
        silhouette_samples(Xb, backend.asarray(np.zeros(45, dtype=np.int64)))
    with pytest.raises(InvalidInputError, match="45 distinct"):
        silhouette_score(Xb, backend.asarray(np.arange(45)))
    with pytest.raises(InvalidInputError, match="1 distinct"):
        calinski_harabasz_score(Xb, backend.asarray(np.ones(45, dtype=np.int64)))
    with pytest.raises(InvalidInputError, match="labels"):
        silhouette_samples(Xb, backend.asarray(labels[:10]))
    with pytest.raises(InvalidInputError, match="metric.*'manhattan'"):
        silhouette_samples(Xb, backend.asarray(labels), metric="manhattan")
    with pytest.raises(InvalidInputError, match="sample_size"):
        silhouette_score(Xb, backend.asarray(labels), sample_size=0)
    for bad in (0, -1.0, float("nan"), "1", True):
        with pytest.raises(InvalidInputError, match="working_memory must be a positive number of MiB"):
            silhouette_score(Xb, backend.asarray(labels), working_memory=bad)


def test_sample_size(backend, data):
    X, labels = data
    Xb, yb = backend.asarray(X), backend.asarray(labels)
    a = silhouette_score(Xb, yb, sample_size=20, random_state=7)
    assert a == silhouette_score(Xb, yb, sample_size=20, random_state=7)
    assert a == pytest.approx(sk_score(X, labels, sample_size=20, random_state=7), rel=RTOL, abs=ATOL)
    assert a != silhouette_score(Xb, yb, sample_size=20, random_state=8)
    rs = np.random.RandomState(7)
    assert silhouette_score(Xb, yb, sample_size=20, random_state=rs) == a
    full = silhouette_score(Xb, yb)
    assert silhouette_score(Xb, yb, sample_size=1000, random_state=0) == pytest.approx(full, rel=1e-12)
    with pytest.raises(InvalidInputError, match="distinct"):  # a subset of one cluster
        silhouette_score(Xb, backend.asarray(np.repeat([0, 1], [44, 1])), sample_size=2, random_state=0)


def test_float32(backend, data):
    X, labels = data
    X32 = X.astype(np.float32)
    got = silhouette_samples(backend.asarray(X32), backend.asarray(labels))
    assert_xp(got, sk_samples(X, labels), backend, dtype=backend.xp.float32, exact=False, rtol=1e-4, atol=1e-5)
    ch = calinski_harabasz_score(backend.asarray(X32), backend.asarray(labels))
    assert isinstance(ch, float) and ch == pytest.approx(sk_ch(X32.astype(np.float64), labels), rel=1e-6)


def test_calinski_harabasz(backend, data):
    X, labels = data
    got = calinski_harabasz_score(backend.asarray(X), backend.asarray(labels))
    assert isinstance(got, float)
    assert got == pytest.approx(sk_ch(X, labels), rel=RTOL)
    Y = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 0.0], [3.0, 0.0]])  # no within dispersion
    assert calinski_harabasz_score(backend.asarray(Y), backend.asarray(np.array([0, 0, 1, 1]))) == 1.0
