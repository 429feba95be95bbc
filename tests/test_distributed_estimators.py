"""Estimators fitted on dask arrays (issue 19): KNeighborsClassifier, KNeighborsRegressor and
NearestNeighbors answer as when fitted on the NumPy array (indices exactly, ties to the lower
index across chunk edges; predictions exactly), lazily for dask queries; fit computes nothing;
the other estimators refuse dask input with one message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dask.callbacks import Callback  # noqa: E402
from helpers import local_dask_cluster  # noqa: E402

import gpuknn  # noqa: E402
from gpuknn import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors  # noqa: E402
from gpuknn.errors import InvalidInputError  # noqa: E402
from gpuknn.resampling import ADASYN  # noqa: E402


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(seed=0, n=40, n_q=17, d=3, n_classes=3):
    """Small integer data: many duplicates and equal distances, some across chunk edges; the
    queries include copies of training rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 4, (n, d)).astype(np.float64)
    X[n // 2] = X[n // 2 - 1]  # a duplicate pair astride the middle edge
    X[8] = X[7]  # ... and astride the edge of 8-row chunks
    Q = np.concatenate([rng.integers(1, 4, (n_q - 3, d)).astype(np.float64), X[[0, n // 2, -1]]])
    return X, rng.integers(0, n_classes, n), Q


CHUNKS = [40, (20, 20), 8, 3, (1, 6, 0, 13, 20)]  # one chunk, 2, 5, smaller than k, uneven


def _dask(a, chunks):
    return da.from_array(a, chunks=(chunks if isinstance(chunks, tuple) else chunks, -1))


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("metric", ["euclidean", "cosine", "correlation"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_classifier_equals_numpy_fit(sync, chunks, metric, weights):
    X, y, Q = _data()
    ref = KNeighborsClassifier(7, metric=metric, weights=weights).fit(X, y)
    est = KNeighborsClassifier(7, metric=metric, weights=weights).fit(_dask(X, chunks), y)
    assert (est.n_features_in_, est.n_samples_fit_) == (3, 40)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    D0, I0 = ref.kneighbors(Q)
    D, ind = est.kneighbors(Q)  # a NumPy query: computed NumPy results
    assert isinstance(ind, np.ndarray) and ind.dtype == np.int64 and D.dtype == D0.dtype
    np.testing.assert_array_equal(ind, I0)
    np.testing.assert_allclose(D, D0, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.kneighbors(Q, 12, return_distance=False), ref.kneighbors(Q, 12)[1])
    pred = est.predict(Q)
    assert isinstance(pred, np.ndarray) and pred.dtype == ref.predict(Q).dtype
    np.testing.assert_array_equal(pred, ref.predict(Q))
    np.testing.assert_allclose(est.predict_proba(Q), ref.predict_proba(Q), rtol=1e-12, atol=0)
    # a dask query of the same rows, in other chunks
    np.testing.assert_array_equal(est.predict(_dask(Q, 5)).compute(), ref.predict(Q))


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_equals_scikit_learn_brute_force(sync, weights):
    from sklearn.neighbors import KNeighborsClassifier as SkClassifier  # noqa: PLC0415
    from sklearn.neighbors import KNeighborsRegressor as SkRegressor  # noqa: PLC0415
    from sklearn.neighbors import NearestNeighbors as SkNearest  # noqa: PLC0415

    rng = np.random.default_rng(5)
    X, Q = rng.normal(size=(90, 4)), rng.normal(size=(25, 4))  # continuous: no ties
    y = rng.integers(0, 4, 90)
    Xd = _dask(X, (30, 7, 53))
    sk = SkClassifier(6, weights=weights, algorithm="brute").fit(X, y)
    est = KNeighborsClassifier(6, weights=weights).fit(Xd, y)
    np.testing.assert_array_equal(est.predict(Q), sk.predict(Q))
    np.testing.assert_allclose(est.predict_proba(Q), sk.predict_proba(Q), rtol=1e-12, atol=1e-15)
    D0, I0 = sk.kneighbors(Q)
    D, ind = est.kneighbors(Q)
    np.testing.assert_array_equal(ind, I0)
    np.testing.assert_allclose(D, D0, rtol=1e-12)
    reg = KNeighborsRegressor(6, weights=weights).fit(Xd, X[:, 0])
    skr = SkRegressor(6, weights=weights, algorithm="brute").fit(X, X[:, 0])
    np.testing.assert_allclose(reg.predict(Q), skr.predict(Q), rtol=1e-12)
    np.testing.assert_array_equal(reg.kneighbors(Q, return_distance=False), I0)
    nn, skn = NearestNeighbors(n_neighbors=5).fit(Xd), SkNearest(n_neighbors=5, algorithm="brute").fit(X)
    for mode in ("connectivity", "distance"):
        G, G0 = nn.kneighbors_graph(Q, mode=mode), skn.kneighbors_graph(Q, mode=mode)
        np.testing.assert_array_equal(G.indices, G0.indices)
        np.testing.assert_allclose(G.toarray(), G0.toarray(), rtol=1e-12)
        np.testing.assert_allclose(nn.kneighbors_graph(mode=mode).toarray(), skn.kneighbors_graph(mode=mode).toarray())


def test_distance_vote_decided_exactly(sync):
    # class 1 at distance 1 against class 0 at 3, 3, 3: float64 totals tie (3 * fl(1/3) = 1.0)
    # but the exact total of class 0 is below 1 -- class 1 wins, in every chunking
    X = np.array([[3.0, 0.0], [0.0, 3.0], [-3.0, 0.0], [1.0, 0.0], [9.0, 9.0]])
    y = np.array([0, 0, 0, 1, 0])
    Q = np.zeros((1, 2))
    ref = KNeighborsClassifier(4, weights="distance").fit(X, y)
    assert ref.predict(Q)[0] == 1
    for chunks in (1, 2, 5):
        est = KNeighborsClassifier(4, weights="distance").fit(_dask(X, chunks), y)
        assert est.predict(Q)[0] == 1
        assert est.predict(_dask(Q, 1)).compute()[0] == 1
        # float32 training data: the vote still runs on exact float64 distances
        est32 = KNeighborsClassifier(4, weights="distance").fit(_dask(X.astype(np.float32), chunks), y)
        assert est32.predict(Q.astype(np.float32))[0] == 1


def test_labels_of_any_kind(sync):
    X, y, Q = _data(1)
    names = np.array(["ant", "bee", "cat"])[y]
    ref = KNeighborsClassifier(5).fit(X, names)
    for labels in (names, list(names), da.from_array(names, chunks=9)):
        est = KNeighborsClassifier(5).fit(_dask(X, 8), labels)
        np.testing.assert_array_equal(est.classes_, ["ant", "bee", "cat"])
        np.testing.assert_array_equal(est.predict(Q), ref.predict(Q))
        lazy = est.predict(_dask(Q, 6))
        assert lazy.dtype == ref.predict(Q).dtype
        np.testing.assert_array_equal(lazy.compute(), ref.predict(Q))
    pd = pytest.importorskip("pandas")
    est = KNeighborsClassifier(5).fit(_dask(X, 8), pd.Series(y + 10))
    np.testing.assert_array_equal(est.predict(Q), KNeighborsClassifier(5).fit(X, y + 10).predict(Q))
    reg = KNeighborsRegressor(4).fit(_dask(X, 8), da.from_array(y.astype(np.float64), chunks=10))
    np.testing.assert_allclose(reg.predict(Q), KNeighborsRegressor(4).fit(X, y.astype(np.float64)).predict(Q))


def test_lazy_outputs_for_dask_queries(sync):
    X, y, Q = _data(2)
    X32, Q32 = X.astype(np.float32), Q.astype(np.float32)
    Qd = _dask(Q32, (4, 0, 13))
    rows = (4, 13)  # empty query chunks leave no output chunk
    est = KNeighborsClassifier(6, weights="distance").fit(_dask(X32, 9), y)
    ref = KNeighborsClassifier(6, weights="distance").fit(X32, y)
    D, ind = est.kneighbors(Qd)
    for a, dtype, width in ((D, np.float32, 6), (ind, np.int64, 6)):
        assert isinstance(a, da.Array) and a.dtype == dtype and a.shape == (17, width) and a.chunks == (rows, (width,))
    np.testing.assert_array_equal(ind.compute(), ref.kneighbors(Q32)[1])
    pred, proba = est.predict(Qd), est.predict_proba(Qd)
    assert isinstance(pred, da.Array) and pred.chunks == (rows,) and pred.dtype == ref.predict(Q32).dtype
    assert isinstance(proba, da.Array) and proba.chunks == (rows, (3,)) and proba.dtype == np.float64
    np.testing.assert_array_equal(pred.compute(), ref.predict(Q32))
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(Q32), rtol=1e-6)
    # a float64 query of float32 training data is cast to float32, as for the NumPy fit
    assert est.kneighbors(Q)[0].dtype == ref.kneighbors(Q)[0].dtype == np.float32
    # regression: y's shape and dtype, 1-D and 2-D targets
    Y = np.stack([y, 2.0 * y + 1], axis=1).astype(np.float32)
    for w in ("uniform", "distance", lambda d: 1.0 / (1.0 + d)):
        for t in (Y[:, 0], Y):
            reg = KNeighborsRegressor(5, weights=w).fit(_dask(X32, 7), t)
            p, p0 = reg.predict(Qd), KNeighborsRegressor(5, weights=w).fit(X32, t).predict(Q32)
            assert isinstance(p, da.Array) and p.dtype == p0.dtype and p.shape == p0.shape and p.chunks[0] == rows
            np.testing.assert_allclose(p.compute(), p0, rtol=1e-6)
            np.testing.assert_allclose(reg.predict(Q32), p0, rtol=1e-6)
    # NearestNeighbors: a dask query or X=None (the training rows, each out of its own list)
    nn, nn0 = NearestNeighbors(n_neighbors=5).fit(_dask(X, (1, 6, 0, 13, 20))), NearestNeighbors(n_neighbors=5).fit(X)
    D, ind = nn.kneighbors()
    assert isinstance(ind, da.Array) and ind.chunks == ((1, 6, 13, 20), (5,))
    D0, I0 = nn0.kneighbors()
    np.testing.assert_array_equal(ind.compute(), I0)
    np.testing.assert_allclose(D.compute(), D0, rtol=1e-12, atol=1e-12)
    ind = nn.kneighbors(_dask(Q, 5), 8, return_distance=False)
    assert isinstance(ind, da.Array) and ind.chunks == ((5, 5, 5, 2), (8,))
    np.testing.assert_array_equal(ind.compute(), nn0.kneighbors(Q, 8)[1])
    # a dask query of a NumPy-fitted estimator is answered lazily too
    lazy = ref.predict(Qd)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), ref.predict(Q32))


@pytest.mark.parametrize("chunks", [40, 8, 3, (1, 6, 0, 13, 20)])
def test_nearest_neighbors_graph_and_duplicates(sync, chunks):
    X, _, Q = _data(3)
    X[25:30] = X[3]  # a run of duplicates: scikit-learn's X=None rule drops the first of them
    nn, nn0 = NearestNeighbors(n_neighbors=6).fit(_dask(X, chunks)), NearestNeighbors(n_neighbors=6).fit(X)
    for query in (None, Q, _dask(Q, 4)):
        for mode in ("connectivity", "distance"):
            G = nn.kneighbors_graph(query, mode=mode)
            G0 = nn0.kneighbors_graph(None if query is None else Q, mode=mode)
            np.testing.assert_array_equal(G.indptr, G0.indptr)
            np.testing.assert_array_equal(G.indices, G0.indices)
            np.testing.assert_allclose(G.data, G0.data, rtol=1e-12, atol=1e-12)
    D, ind = nn.kneighbors(n_neighbors=2)
    D0, I0 = nn0.kneighbors(n_neighbors=2)
    np.testing.assert_array_equal(ind.compute(), I0)


def test_validation_errors_at_fit_match_numpy(sync):
    X, y, _ = _data()
    Xd = _dask(X, 8)

    def message(make, *args):
        msgs = []
        for data in (X, Xd):
            with pytest.raises(InvalidInputError) as info:
                make().fit(data, *args)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
        return msgs[0]

    assert "n_neighbors <= n_samples_fit, but n_neighbors = 41" in message(lambda: KNeighborsClassifier(41), y)
    assert "metric" in message(lambda: KNeighborsClassifier(3, metric="l7"), y)
    with pytest.raises(InvalidInputError, match="inner-product metrics"):  # served for NumPy data only
        KNeighborsClassifier(3, metric="manhattan").fit(Xd, y)
    assert "40 samples but y has 39" in message(lambda: KNeighborsClassifier(3), y[:-1])
    message(lambda: KNeighborsRegressor(3), y[:-1])
    message(lambda: NearestNeighbors(metric="inner"))
    for est in (KNeighborsClassifier(3, algorithm="kd_tree"), NearestNeighbors(algorithm="kd_tree")):
        with pytest.raises(InvalidInputError, match="kd_tree"):
            est.fit(Xd, y)
    with pytest.raises(InvalidInputError, match="compute_chunk_sizes"):
        KNeighborsClassifier(3).fit(Xd[Xd[:, 0] > 1], y)
    with pytest.raises(InvalidInputError, match="2-D"):
        NearestNeighbors().fit(da.zeros((4, 2, 2)))
    # at query time: the number of features, and k against the training rows
    nn = NearestNeighbors().fit(Xd)
    with pytest.raises(InvalidInputError, match="3 features"):
        nn.kneighbors(np.zeros((2, 4)))
    with pytest.raises(InvalidInputError, match="n_neighbors < n_samples_fit"):
        nn.kneighbors(n_neighbors=40)


@pytest.mark.parametrize(
    "make",
    [
        lambda: gpuknn.RadiusNeighborsClassifier(),
        lambda: gpuknn.NearestCentroid(),
        lambda: gpuknn.CDNNClassifier(),
        lambda: gpuknn.KMeans(2),
        lambda: gpuknn.RadiusNeighborsRegressor(),
        lambda: ADASYN(),
    ],
)
def test_unsupported_estimators_refuse_dask(sync, make):
    X, y, _ = _data()
    est = make()
    with pytest.raises(InvalidInputError, match=f"^{type(est).__name__} does not accept dask arrays") as info:
        est.fit(_dask(X, 8), y)
    assert "KNeighborsClassifier, KNeighborsRegressor, KNeighborsTransformer, NearestNeighbors, PCA" in str(info.value)
    # ... and dask queries of a NumPy fit
    if not isinstance(est, ADASYN):
        est.fit(X, y)
        with pytest.raises(InvalidInputError, match="does not accept dask arrays"):
            est.predict(_dask(X, 8))


def test_radius_methods_refuse_dask(sync):
    X, _, Q = _data()
    for nn, q in ((NearestNeighbors().fit(_dask(X, 8)), Q), (NearestNeighbors().fit(X), _dask(Q, 4))):
        for method in (nn.radius_neighbors, nn.radius_neighbors_graph):
            with pytest.raises(InvalidInputError, match="radius methods do not accept dask arrays"):
                method(q)


class _CountComputes(Callback):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _start(self, dsk):
        self.n += 1


def _boom():
    raise AssertionError("the training data was computed")


def test_fit_computes_nothing(sync):
    n = 20_000_000  # 20 M rows: only the metadata is read
    X = da.from_delayed(dask.delayed(_boom)(), shape=(n, 8), dtype=np.float32)
    with _CountComputes() as counter:
        nn = NearestNeighbors(n_neighbors=3).fit(X)
        reg = KNeighborsRegressor(3).fit(X, np.zeros(n, dtype=np.float32))
        clf = KNeighborsClassifier(3).fit(X[:300_000], np.arange(300_000) % 3)
    assert counter.n == 0
    assert nn.n_samples_fit_ == reg.n_samples_fit_ == n and clf.n_samples_fit_ == 300_000
    assert nn.n_features_in_ == 8 and clf.classes_.tolist() == [0, 1, 2]
    # integer rows are cast lazily, as the NumPy fit casts them to float64
    assert KNeighborsClassifier(3).fit(
        da.zeros((50, 2), dtype=np.int32, chunks=10), np.arange(50) % 2
    )._fit_X.dtype == (np.float64)
    # a dask y is computed once (labels are small), X still not
    with _CountComputes() as counter:
        KNeighborsClassifier(3).fit(X[:1000], da.from_array(np.arange(1000) % 2, chunks=100))
    assert counter.n == 1


@pytest.fixture(scope="module")
def client():
    with local_dask_cluster() as (c, _, _):
        yield c


def test_estimators_on_a_local_cluster(client):
    assert len(client.scheduler_info()["workers"]) == 2
    n = 20_000
    # generated on the workers: no data in the graph
    Xd = da.random.default_rng(0).integers(0, 4, size=(n, 4), chunks=(7000, 4)).astype(np.float64)
    X = Xd.compute()
    y = np.arange(n) % 3  # 160 kB of labels (and targets): scattered, not put in the graph
    Q = np.random.default_rng(1).integers(0, 4, size=(40, 4)).astype(np.float64)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "64kB"}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for weights in ("uniform", "distance"):
                ref = KNeighborsClassifier(9, weights=weights).fit(X, y)
                est = KNeighborsClassifier(9, weights=weights).fit(Xd, y)
                np.testing.assert_array_equal(est.predict(Q), ref.predict(Q))
                np.testing.assert_allclose(est.predict_proba(Q), ref.predict_proba(Q), rtol=1e-12)
                lazy = est.predict(da.from_array(Q, chunks=15))
                np.testing.assert_array_equal(lazy.compute(), ref.predict(Q))
            np.testing.assert_array_equal(est.kneighbors(Q)[1], ref.kneighbors(Q)[1])
            reg = KNeighborsRegressor(9, weights="distance").fit(Xd, y.astype(np.float64))
            p0 = KNeighborsRegressor(9, weights="distance").fit(X, y.astype(np.float64)).predict(Q)
            np.testing.assert_allclose(reg.predict(Q), p0, rtol=1e-12)
            nn = NearestNeighbors(n_neighbors=4).fit(Xd)
            np.testing.assert_array_equal(
                nn.kneighbors()[1].compute(), NearestNeighbors(n_neighbors=4).fit(X).kneighbors()[1]
            )


@pytest.mark.parametrize("mode", ["distance", "connectivity"])
def test_transformer_on_dask_training_data(sync, mode):
    X, _, Q = _data()
    ref = gpuknn.KNeighborsTransformer(mode=mode, n_neighbors=4).fit(X)
    tr = gpuknn.KNeighborsTransformer(mode=mode, n_neighbors=4).fit(_dask(X, 8))
    for q in (Q, _dask(Q, 4)):
        np.testing.assert_allclose(tr.transform(q).toarray(), ref.transform(Q).toarray(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        tr.fit_transform(_dask(X, 8)).toarray(), ref.fit_transform(X).toarray(), rtol=1e-12, atol=1e-12
    )
