"""KMeans and NearestCentroid take scikit-learn 1.9's options (issue 33): KMeans init=
"random"/callable/array, n_init="auto", algorithm, copy_x, verbose, score and the warning
for fewer distinct clusters; NearestCentroid shrink_threshold and priors. scikit-learn is
the oracle where the result is deterministic."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.cluster import KMeans, kmeans_plusplus
from gpuknn.errors import ConvergenceWarning, FewerClustersWarning, InvalidInputError
from gpuknn.neighbors import NearestCentroid

sk_cluster = pytest.importorskip("sklearn.cluster")
sk_neighbors = pytest.importorskip("sklearn.neighbors")
sk_exceptions = pytest.importorskip("sklearn.exceptions")
sk_datasets = pytest.importorskip("sklearn.datasets")


def _blobs(seed=0, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 3] += 5.0
    X[n // 3 : 2 * n // 3, 0] -= 4.0
    return X


# --- KMeans -------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["lloyd", "elkan"])
def test_kmeans_array_init_and_algorithm_match_sklearn(backend, algorithm):
    X = _blobs(1)
    init = X[[0, 60, 120]]
    ref = sk_cluster.KMeans(3, init=init, n_init=1, algorithm=algorithm).fit(X)
    km = KMeans(3, init=backend.asarray(init), algorithm=algorithm).fit(backend.asarray(X))
    assert_xp(km.labels_, ref.labels_, backend)
    assert_xp(km.cluster_centers_, ref.cluster_centers_, backend, exact=False, rtol=1e-10, atol=1e-10)
    assert km.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(km.inertia_, ref.inertia_, rtol=1e-10)
    Q = _blobs(2, n=30)
    np.testing.assert_allclose(km.score(backend.asarray(Q)), ref.score(Q), rtol=1e-10)
    w = np.linspace(0.5, 2.0, 30)
    np.testing.assert_allclose(km.score(backend.asarray(Q), sample_weight=w), ref.score(Q, sample_weight=w), rtol=1e-10)


def test_kmeans_init_as_a_list_of_rows(backend):
    """A nested list is an array-like init, as in scikit-learn (it raised AttributeError)."""
    X = _blobs(4)
    init = X[[0, 60, 120]].tolist()
    ref = sk_cluster.KMeans(3, init=np.asarray(init), n_init=1).fit(X)
    km = KMeans(3, init=init, n_init=1).fit(backend.asarray(X))
    assert_xp(km.labels_, ref.labels_, backend)


def test_kmeans_elkan_identical_to_lloyd():
    X = _blobs(3)
    a = KMeans(4, algorithm="lloyd", random_state=0).fit(X)
    b = KMeans(4, algorithm="elkan", random_state=0).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_kmeans_callable_init_matches_sklearn():
    X = _blobs(4)

    def init(Xc, k, random_state):
        assert isinstance(random_state, np.random.Generator)
        np.testing.assert_allclose(Xc.mean(axis=0), 0.0, atol=1e-12)  # centred, as scikit-learn
        return np.array(Xc[[5, 70, 140]])

    ref = sk_cluster.KMeans(3, init=lambda Xc, k, random_state: np.array(Xc[[5, 70, 140]]), n_init=1).fit(X)
    km = KMeans(3, init=init, n_init=1).fit(X)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    np.testing.assert_allclose(km.cluster_centers_, ref.cluster_centers_, rtol=1e-10)


def test_kmeans_random_init(backend):
    X = _blobs(5)
    km = KMeans(3, init="random", random_state=0).fit(backend.asarray(X))
    ref = sk_cluster.KMeans(3, init="random", random_state=0).fit(X)
    # well-separated blobs: both find the same partition (up to label order)
    np.testing.assert_allclose(km.inertia_, ref.inertia_, rtol=1e-8)
    again = KMeans(3, init="random", random_state=0).fit(backend.asarray(X))
    assert_xp(again.labels_, host(km.labels_), backend)
    assert len(np.unique(host(km.labels_))) == 3


@pytest.mark.parametrize(
    ("init", "expected"),
    [("k-means++", 1), ("random", 10), ("callable", 10), ("array", 1)],
)
def test_kmeans_n_init_auto(monkeypatch, init, expected):
    X = _blobs(6)
    if init == "callable":
        init = lambda Xc, k, random_state: np.array(Xc[:k])  # noqa: E731
    elif init == "array":
        init = X[:3]
    calls = []
    import gpuknn.cluster.kmeans as mod

    real = mod._lloyd
    monkeypatch.setattr(mod, "_lloyd", lambda *a, **k: calls.append(1) or real(*a, **k))
    km = KMeans(3, init=init, random_state=0)
    assert km.n_init == "auto" and sk_cluster.KMeans().n_init == "auto"
    km.fit(X)
    assert len(calls) == expected
    assert km._n_init == expected  # scikit-learn's private attribute, read by its tests
    calls.clear()
    if isinstance(init, np.ndarray):  # scikit-learn warns, and makes one run
        with pytest.warns(RuntimeWarning, match="performing only one init in KMeans instead of n_init=4"):
            km = KMeans(3, init=init, n_init=4, random_state=0).fit(X)
    else:
        km = KMeans(3, init=init, n_init=4, random_state=0).fit(X)
    assert len(calls) == km._n_init == (1 if isinstance(init, np.ndarray) else 4)


def test_kmeans_copy_x_and_verbose_accepted(backend):
    X = _blobs(7)
    Xb = backend.asarray(X)
    a = KMeans(3, random_state=0, copy_x=False, verbose=1).fit(Xb)
    b = KMeans(3, random_state=0).fit(Xb)
    assert_xp(a.labels_, host(b.labels_), backend)
    assert_xp(Xb, X, backend)  # X untouched either way


def test_kmeans_fewer_distinct_clusters_warns():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 5, axis=0)
    with pytest.warns(FewerClustersWarning, match=r"distinct clusters \(2\) found smaller than n_clusters \(3\)"):
        KMeans(3, random_state=0).fit(X)
    with pytest.warns(sk_exceptions.ConvergenceWarning):
        KMeans(3, random_state=0).fit(X)
    with pytest.warns(ConvergenceWarning):
        KMeans(3, random_state=0).fit(X)
    with pytest.warns(sk_exceptions.ConvergenceWarning, match="distinct clusters"):
        sk_cluster.KMeans(3, random_state=0, n_init=1).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KMeans(2, random_state=0).fit(X)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(n_init="many"), "n_init"),
        (dict(n_init=0), "n_init"),
        (dict(algorithm="full"), "algorithm"),
        (dict(init="kmeans"), "init"),
        (dict(init=np.zeros((2, 3))), "init"),
        (dict(init=lambda X, k, random_state: X[:1]), "init"),
        (dict(max_iter=0), "max_iter"),
        (dict(tol=-1.0), "tol"),
    ],
)
def test_kmeans_argument_errors(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        KMeans(3, **kw).fit(_blobs(8))


@pytest.mark.parametrize("algorithm", ["lloyd", "elkan"])
def test_kmeans_sample_weight_matches_sklearn(backend, algorithm):
    X = _blobs(11)
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=X.shape[0])
    init = X[[0, 60, 120]]
    ref = sk_cluster.KMeans(3, init=init, n_init=1, algorithm=algorithm).fit(X, sample_weight=w)
    km = KMeans(3, init=backend.asarray(init), algorithm=algorithm).fit(backend.asarray(X), sample_weight=w)
    assert_xp(km.labels_, ref.labels_, backend)
    assert_xp(km.cluster_centers_, ref.cluster_centers_, backend, exact=False, rtol=1e-10)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    assert km.n_iter_ == ref.n_iter_
    # the hand-computed toy of scikit-learn's test_kmeans_results
    toy = KMeans(2, init=backend.asarray(np.array([[0.0, 0.0], [1.0, 1.0]]))).fit(
        backend.asarray(np.array([[0, 0], [0.5, 0], [0.5, 1], [1, 1]], dtype=np.float64)), sample_weight=[3, 1, 1, 3]
    )
    assert_xp(toy.cluster_centers_, np.array([[0.125, 0.0], [0.875, 1.0]]), backend, exact=False, rtol=1e-12)
    assert toy.inertia_ == pytest.approx(0.375) and toy.n_iter_ == 2


def test_kmeans_integer_weights_are_repeated_rows(backend):
    X = _blobs(12, n=60)
    w = np.random.default_rng(2).integers(1, 5, size=X.shape[0])
    init = X[[0, 25, 50]]
    a = KMeans(3, init=init).fit(backend.asarray(X), sample_weight=backend.asarray(w))
    b = KMeans(3, init=init).fit(backend.asarray(np.repeat(X, w, axis=0)))
    assert_xp(b.labels_, np.repeat(host(a.labels_), w), backend)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-9)
    assert_xp(a.cluster_centers_, host(b.cluster_centers_), backend, exact=False, rtol=1e-9)


def test_kmeans_weights_in_seeding(backend):
    X = _blobs(13, n=90)
    w = np.random.default_rng(3).uniform(size=X.shape[0])
    w[::2] = 0.0
    Xb = backend.asarray(X)
    for init in ("k-means++", "random"):
        C = host(KMeans(10)._init_centroids(Xb, None, init, np.random.RandomState(0), w))
        d = ((X[::2, None, :] - C[None, :, :]) ** 2).sum(-1)
        assert d.min() > 0  # a zero-weight row is never a starting centre
        # all-equal weights draw as no weights; a common scale changes nothing
        a = KMeans(3, init=init, n_init=1, random_state=0).fit(Xb)
        b = KMeans(3, init=init, n_init=1, random_state=0).fit(Xb, sample_weight=np.ones(X.shape[0]))
        assert_xp(a.labels_, host(b.labels_), backend)
        c = KMeans(3, init=init, n_init=1, random_state=0).fit(Xb, sample_weight=w + 0.5)
        e = KMeans(3, init=init, n_init=1, random_state=0).fit(Xb, sample_weight=2.0 * (w + 0.5))
        assert_xp(c.labels_, host(e.labels_), backend)
    C, idx = kmeans_plusplus(Xb, 10, sample_weight=w, random_state=0)
    assert (idx % 2 == 1).all()
    assert_xp(C, X[idx], backend)


def test_kmeans_weighted_empty_cluster_relocated(backend):
    km = KMeans(2, init=np.array([[-1.0], [10.0]])).fit(
        backend.asarray(np.array([[-1.0], [1.0]])), sample_weight=[1.9, 0.1]
    )
    assert_xp(km.cluster_centers_, np.array([[-1.0], [1.0]]), backend)
    assert sorted(host(km.labels_).tolist()) == [0, 1]


def test_kmeans_sample_weight_errors_and_unchanged():
    X = _blobs(14, n=30)
    w = np.linspace(0.5, 1.5, 30)
    KMeans(3, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(w, np.linspace(0.5, 1.5, 30))  # not modified in place
    for bad, match in ((np.ones(5), r"shape \(30,\)"), (-w, "non-negative"), (0 * w, "positive entry")):
        with pytest.raises(InvalidInputError, match=match):
            KMeans(3).fit(X, sample_weight=bad)


def test_kmeans_plusplus_x_squared_norms(backend):
    X = _blobs(15)
    Xb = backend.asarray(X)
    a, ia = kmeans_plusplus(Xb, 4, random_state=0)
    b, ib = kmeans_plusplus(Xb, 4, x_squared_norms=backend.asarray((X * X).sum(1)), random_state=0)
    np.testing.assert_array_equal(ia, ib)
    assert_xp(b, X[ib], backend)
    with pytest.raises(
        ValueError, match=r"The length of x_squared_norms .* should be equal to the length of n_samples"
    ):
        kmeans_plusplus(Xb, 4, x_squared_norms=backend.asarray((X * X).sum(1)[:2]))


def test_kmeans_runtime_warnings():
    X = _blobs(16)
    with pytest.warns(RuntimeWarning, match="algorithm='elkan' doesn't make sense for a single cluster"):
        KMeans(1, algorithm="elkan").fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KMeans(1).fit(X)
        KMeans(3, init=X[:3]).fit(X)  # n_init="auto" with an array: one run, no warning


def test_kmeans_transform_centres_at_distance_zero(backend):
    X = _blobs(17) + 100.0  # an offset makes the GEMM form's cancellation visible
    km = KMeans(3, random_state=0).fit(backend.asarray(X))
    Xt = host(km.transform(km.cluster_centers_))
    np.testing.assert_array_equal(np.diag(Xt), np.zeros(3))
    C = host(km.cluster_centers_)
    ref = np.sqrt(((C[:, None, :] - C[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(Xt, ref, rtol=1e-7)
    np.testing.assert_allclose(
        host(km.transform(backend.asarray(X))), np.sqrt(((X[:, None] - C[None]) ** 2).sum(-1)), rtol=1e-7
    )


# --- NearestCentroid ----------------------------------------------------------------------


def test_shrinkage_matches_pamr():
    # scikit-learn's reference, computed by R's pamr
    X = np.array([[0, 1], [1, 0], [1, 1], [2, 0], [6, 8]], dtype=np.float64)
    y = np.array([1, 1, 2, 2, 2])
    nc = NearestCentroid(shrink_threshold=0.1).fit(X, y)
    np.testing.assert_allclose(nc.centroids_, [[0.7787310, 0.8545292], [2.814179, 2.763647]], atol=1e-6)


@pytest.mark.parametrize(
    "kw",
    [
        dict(shrink_threshold=0.5),
        dict(priors="empirical"),
        dict(priors=[0.1, 0.3, 0.6]),
        dict(priors=[0.5, 0.2, 0.3], shrink_threshold=0.2),
    ],
)
def test_nearest_centroid_matches_sklearn(backend, kw):
    X, y = sk_datasets.load_iris(return_X_y=True)
    ref = sk_neighbors.NearestCentroid(**kw).fit(X, y)
    nc = NearestCentroid(**kw).fit(backend.asarray(X), backend.asarray(y))
    assert_xp(nc.centroids_, ref.centroids_, backend, exact=False, rtol=1e-10, atol=1e-12)
    assert_xp(nc.within_class_std_dev_, ref.within_class_std_dev_, backend, exact=False, rtol=1e-10)
    assert_xp(nc.deviations_, ref.deviations_, backend, exact=False, rtol=1e-9, atol=1e-12)
    assert_xp(nc.class_prior_, ref.class_prior_, backend, exact=False, rtol=1e-6)
    rng = np.random.default_rng(0)
    Q = X + rng.normal(scale=0.8, size=X.shape)
    assert_xp(nc.predict(backend.asarray(Q)), ref.predict(Q), backend)


def test_priors_change_predictions():
    X, y = sk_datasets.load_iris(return_X_y=True)
    skewed = [0.01, 0.01, 0.98]
    a = NearestCentroid().fit(X, y).predict(X)
    b = NearestCentroid(priors=skewed).fit(X, y).predict(X)
    assert (b == 2).sum() > (a == 2).sum()
    np.testing.assert_array_equal(b, sk_neighbors.NearestCentroid(priors=skewed).fit(X, y).predict(X))


def test_priors_errors_and_warning():
    X, y = sk_datasets.load_iris(return_X_y=True)
    with pytest.raises(InvalidInputError, match="priors must be non-negative"):
        NearestCentroid(priors=[-2, 2, 1]).fit(X, y)
    with pytest.raises(InvalidInputError, match="priors"):
        NearestCentroid(priors=[0.5, 0.5]).fit(X, y)
    with pytest.raises(InvalidInputError, match="priors"):
        NearestCentroid(priors="flat").fit(X, y)
    with pytest.raises(InvalidInputError, match="euclidean"):
        NearestCentroid(priors=[0.2, 0.3, 0.5], metric="cosine").fit(X, y)
    with pytest.warns(UserWarning, match="do not sum to 1"):
        nc = NearestCentroid(priors=[1.0, 1.0, 2.0]).fit(X, y)
    np.testing.assert_allclose(host(nc.class_prior_), [0.25, 0.25, 0.5])
    with pytest.raises(InvalidInputError, match="shrink_threshold"):
        NearestCentroid(shrink_threshold=-0.1).fit(X, y)


def test_all_features_zero_variance(backend):
    y = np.array([0, 0, 1, 1, 1])
    X = np.ones((5, 2))
    X[:, 1] *= 2
    for kw in (dict(), dict(shrink_threshold=0.1)):
        with pytest.raises(InvalidInputError, match="All features have zero variance"):
            with pytest.warns(UserWarning, match="zero standard deviation"):
                NearestCentroid(**kw).fit(backend.asarray(X), backend.asarray(y))
        with pytest.raises(ValueError, match="All features have zero variance"):
            with pytest.warns(UserWarning):
                sk_neighbors.NearestCentroid(**kw).fit(X, y)
