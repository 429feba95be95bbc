"""Issue 32: one contract for every distance the library returns -- translation invariant
(euclidean family), certified, exact where the GEMM formula cannot vouch for an entry, and
rescaled for tiny data -- checked against SciPy / scikit-learn in float64 on every backend."""

import numpy as np
import pytest
from helpers import assert_xp, host
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs
from sklearn.metrics import silhouette_samples as sk_silhouette_samples
from sklearn.metrics import silhouette_score as sk_silhouette_score

import gpuknn
from gpuknn import metrics

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation"]
# (dtype, offset, relative tolerance of every distance): the contract's tol is
# max(sqrt(u), 32 g) on squared distances; these inputs have d = 8.
OFFSETS = [("float32", 1e4, 1e-3), ("float32", 1e5, 1e-3), ("float64", 1e8, 1e-7), ("float64", 1e12, 1e-7)]


def _data(dtype, offset, n=60, d=8, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d)) + offset
    return X.astype(dtype)


def _rel_err(D, R):
    R = np.asarray(R, dtype=np.float64)
    off = R > 0
    return float(np.max(np.abs(np.asarray(D, dtype=np.float64)[off] - R[off]) / R[off]))


@pytest.mark.parametrize(("dtype", "offset", "tol"), OFFSETS)
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_offset_data_match_scipy(backend, dtype, offset, tol, metric):
    X, Y = _data(dtype, offset), _data(dtype, offset, n=23, seed=1)
    R = cdist(X.astype(np.float64), Y.astype(np.float64), metric)  # of the very input values
    D = gpuknn.pairwise_distances(backend.asarray(X), backend.asarray(Y), metric=metric)
    assert_xp(D, R, backend, dtype=backend.asarray(X).dtype, exact=False, rtol=tol)
    assert _rel_err(host(D), R) <= tol


def test_issue_reproducer_first_row(backend):
    X = (np.random.default_rng(0).normal(size=(50, 8)) + 1e4).astype("float32")
    R = cdist(X.astype(np.float64), X.astype(np.float64))
    D = host(gpuknn.pairwise_distances(backend.asarray(X)))
    assert D[0, 0] == 0.0
    assert np.all(D[0, 1:] > 1.0)  # was [0, 11.31, 0, 0]
    np.testing.assert_allclose(D, R, rtol=1e-4, atol=0)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("dtype", "scale"), [("float64", 1e-300), ("float32", 1e-25)])
def test_tiny_data_are_rescaled(backend, metric, dtype, scale):
    base = np.random.default_rng(2).normal(size=(30, 5))
    X = (base * scale).astype(dtype)
    D = host(gpuknn.pairwise_distances(backend.asarray(X), metric=metric))
    if metric in ("cosine", "correlation"):  # scale invariant: the distances of the base data
        R = cdist(base.astype(dtype).astype(np.float64), base.astype(dtype).astype(np.float64), metric)
        np.testing.assert_allclose(D, R, rtol=1e-5 if dtype == "float32" else 1e-10, atol=1e-6)
        return
    R = cdist(X.astype(np.float64), X.astype(np.float64), metric)
    if metric == "sqeuclidean":  # squares of 1e-300 / 1e-25 underflow the dtype: 0, not garbage
        np.testing.assert_array_equal(D, R.astype(dtype))
        return
    assert np.all(D[~np.eye(30, dtype=bool)] > 0)
    # SciPy's own distances of 1e-300 data underflow: compare in units of the scale
    R = cdist(X.astype(np.float64) / scale, X.astype(np.float64) / scale)
    assert _rel_err(D.astype(np.float64) / scale, R) <= (1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_duplicates_and_diagonal_are_exact_zeros(backend, metric):
    X = _data("float32", 1e4, n=20)
    X = np.concatenate([X, X[:5], X[3:4]])  # duplicates, some twice
    D = host(gpuknn.pairwise_distances(backend.asarray(X), metric=metric))
    np.testing.assert_array_equal(np.diag(D), 0.0)
    for i, j in [(0, 20), (4, 24), (3, 23), (3, 25), (23, 25)]:
        assert D[i, j] == 0.0 and D[j, i] == 0.0
    D2 = host(gpuknn.pairwise_distances(backend.asarray(X), backend.asarray(X[:5]), metric=metric))
    np.testing.assert_array_equal(D2[20:25, :], D2[:5, :])
    np.testing.assert_array_equal(np.diag(D2[:5]), 0.0)


@pytest.mark.parametrize("metric", METRICS)
def test_working_memory_does_not_change_the_distances(backend, metric):
    X, Y = _data("float32", 1e5, n=40), _data("float32", 1e5, n=17, seed=3)
    full = host(gpuknn.pairwise_distances(backend.asarray(X), backend.asarray(Y), metric=metric))
    for wm in (1e-3, 0.01, 1.0):
        blocks = list(
            gpuknn.pairwise_distances_chunked(backend.asarray(X), backend.asarray(Y), metric=metric, working_memory=wm)
        )
        for _, b in blocks:
            assert_xp(b, host(b), backend, dtype=backend.asarray(X).dtype)  # namespace, device, dtype
        np.testing.assert_array_equal(np.concatenate([host(b) for _, b in blocks]), full)
    assert len(list(gpuknn.pairwise_distances_chunked(backend.asarray(X), backend.asarray(Y), working_memory=1e-3))) > 1


def _blobs(offset, dtype):
    X, y = make_blobs(300, n_features=5, random_state=0)
    return X, (X + offset).astype(dtype), y


@pytest.mark.parametrize(("offset", "dtype"), [(1e5, "float32"), (1e4, "float32"), (1e8, "float64"), (1e12, "float64")])
def test_silhouette_of_offset_data(backend, offset, dtype):
    X0, X, y = _blobs(offset, dtype)
    # sklearn on the very input values, in float64 and un-offset (exact: sklearn's own
    # float64 GEMM formula cancels at an offset of 1e8 too)
    Xh = X.astype(np.float64) - offset
    assert metrics.silhouette_score(backend.asarray(X), y) == pytest.approx(sk_silhouette_score(Xh, y), abs=1e-3)
    s = metrics.silhouette_samples(backend.asarray(X), backend.asarray(y))
    assert_xp(s, sk_silhouette_samples(Xh, y), backend, dtype=backend.asarray(X).dtype, exact=False, atol=2e-3)
    # small tiles (many diagonal and off-diagonal tiles of the symmetric walk): same values
    s2 = metrics.silhouette_samples(backend.asarray(X), backend.asarray(y), working_memory=0.05)
    np.testing.assert_allclose(host(s2), host(s), atol=1e-5)


@pytest.mark.parametrize(("offset", "dtype", "tol"), [(1e5, "float32", 2e-3), (1e8, "float64", 1e-6)])
def test_dunn_and_hubert_of_offset_data(backend, offset, dtype, tol):
    X0, X, y = _blobs(offset, dtype)
    for f in (metrics.dunn_index, metrics.hubert_gamma):
        want = f(X0, y)  # gpuknn on the float64, un-offset data
        assert f(backend.asarray(X), backend.asarray(y)) == pytest.approx(want, rel=tol), f.__name__
    assert metrics.dunn_index(backend.asarray(X), y, working_memory=0.01) == metrics.dunn_index(backend.asarray(X), y)


@pytest.mark.parametrize(("scale", "dtype"), [(1e-300, "float64"), (1e-25, "float32")])
def test_indices_of_tiny_data(backend, scale, dtype):
    X0, _, y = _blobs(0.0, "float64")
    X = backend.asarray((X0 * scale).astype(dtype))
    tol = 1e-9 if dtype == "float64" else 1e-4
    assert metrics.silhouette_score(X, y) == pytest.approx(sk_silhouette_score(X0, y), rel=tol)
    for f in (metrics.dunn_index, metrics.hubert_gamma, metrics.davies_bouldin_score):
        assert f(X, y) == pytest.approx(f(X0, y), rel=tol), f.__name__
    assert metrics.cophenetic_correlation(X) == pytest.approx(metrics.cophenetic_correlation(X0), rel=tol)


@pytest.mark.parametrize(("offset", "dtype", "tol"), [(1e5, "float32", 1e-3), (1e12, "float64", 1e-5)])
def test_centre_based_indices_of_offset_data(backend, offset, dtype, tol):
    X0, X, y = _blobs(offset, dtype)
    Xh = X.astype(np.float64) - offset  # the input values, un-offset in float64
    u = np.eye(3)[y] * 0.9 + 0.1 / 3
    for name, f in [
        ("davies_bouldin", lambda A: metrics.davies_bouldin_score(A, y)),
        ("sd", lambda A: metrics.sd_index(A, y, alpha=1.0)),
        ("xie_beni", lambda A: metrics.xie_beni_index(A, backend.asarray(u) if A is not Xh else u)),
        ("within_dispersion", lambda A: metrics.within_dispersion(A, y)),
    ]:
        assert f(backend.asarray(X)) == pytest.approx(f(Xh), rel=tol), name


def test_float64_oracle_cdist_for_every_metric(backend):
    X = _data("float64", 1e8, n=25)
    for metric in METRICS:
        D = gpuknn.pairwise_distances(backend.asarray(X), metric=metric)
        R = cdist(X, X, metric)
        np.fill_diagonal(R, 0.0)
        assert_xp(D, R, backend, dtype=backend.asarray(X).dtype, exact=False, rtol=1e-6, atol=1e-12)
