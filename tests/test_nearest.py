"""NearestNeighbors against scikit-learn, on every backend (KNeighborsTransformer, which
shares its search: tests/test_transformer.py)."""

import numpy as np
import pytest
import scipy.sparse
import sklearn.neighbors as skn
from helpers import assert_xp, host

from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import NearestNeighbors

TOL = dict(exact=False, rtol=1e-9, atol=1e-9)


def _data(seed=0, n=120, m=40, d=4):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d))


def _exact_d(Q, X, metric="euclidean"):
    """Exact float64 distances (differences first), for the tie-breaking oracle."""
    if metric in ("cosine", "correlation"):
        from sklearn.metrics import pairwise_distances

        return pairwise_distances(Q, X, metric=metric)
    D = np.concatenate([((Q[i : i + 50, None, :] - X[None]) ** 2).sum(-1) for i in range(0, len(Q), 50)])
    return D if metric == "sqeuclidean" else np.sqrt(D)


def _oracle_knn(Q, X, k, metric="euclidean", train=False):
    """The top k by (distance, index); X=None: scikit-learn's self-removal on k + 1."""
    D = _exact_d(X if train else Q, X, metric)
    order = np.lexsort((np.broadcast_to(np.arange(X.shape[0]), D.shape), D), axis=1)[:, : k + train]
    if train:
        keep = order != np.arange(len(X))[:, None]
        keep[np.all(keep, axis=1), 0] = False
        order = order[keep].reshape(len(X), k)
    return np.take_along_axis(D, order, axis=1), order


def _is_csr_of(G, backend):
    if backend.name == "cupy":
        import cupyx.scipy.sparse

        return isinstance(G, cupyx.scipy.sparse.csr_matrix)
    return isinstance(G, scipy.sparse.csr_matrix)


def _on_host(G):
    """A SciPy CSR matrix of G (CuPy's sparse matrices copied over)."""
    return G.get() if hasattr(G, "get") else G


def _dense(G):
    return _on_host(G).toarray()


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("algorithm", ["brute", "auto"])
def test_kneighbors_equals_sklearn(backend, metric, algorithm):
    X, Q = _data()
    if metric == "cosine" and algorithm == "auto":
        algorithm = "brute"
    nn = NearestNeighbors(n_neighbors=5, metric=metric, algorithm=algorithm).fit(backend.asarray(X))
    ref = skn.NearestNeighbors(n_neighbors=5, metric=metric, algorithm="brute").fit(X)
    for args, kw in [((backend.asarray(Q),), {}), ((), {}), ((backend.asarray(Q), 3), {}), ((), {"n_neighbors": 1})]:
        d, i = nn.kneighbors(*args, **kw)
        d_ref, i_ref = ref.kneighbors(*((Q,) + args[1:] if args else ()), **kw)
        assert_xp(i, i_ref, backend, dtype=backend.xp.int64)
        assert_xp(d, d_ref, backend, dtype=backend.xp.float64, **TOL)
        assert_xp(nn.kneighbors(*args, **kw, return_distance=False), i_ref, backend)


def test_kneighbors_ties_lower_index_first(backend):
    # Duplicates at several positions: 0, 1, 2 and 4 coincide, more of them than k + 1.
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [5.0, 1.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    nn = NearestNeighbors(n_neighbors=2, algorithm="brute").fit(backend.asarray(X))
    d, i = nn.kneighbors()
    # Row 4: its three lower-index duplicates fill its k + 1 = 3 list, so the first is dropped.
    assert_xp(i, [[1, 2], [0, 2], [0, 1], [5, 6], [1, 2], [6, 0], [5, 0]], backend)
    assert_xp(d, [[0, 0], [0, 0], [0, 0], [np.sqrt(17)] * 2, [0, 0], [0, 1], [0, 1]], backend, **TOL)
    _, i_q = nn.kneighbors(backend.asarray(np.array([[0.1, 0.0]])), 5)
    assert_xp(i_q, [[0, 1, 2, 4, 5]], backend)
    exp_d, exp_i = _oracle_knn(None, X, 3, train=True)
    assert_xp(nn.kneighbors(n_neighbors=3)[1], exp_i, backend)


@pytest.mark.parametrize("loader", ["load_iris", "load_digits"])
def test_bundled_data_against_exact_oracle_and_sklearn(backend, loader):
    import sklearn.datasets

    X, _ = getattr(sklearn.datasets, loader)(return_X_y=True)
    # Integer values (iris in mm): exact duplicates and many exactly equal distances.
    X = np.round(X[:400] * (10 if loader == "load_iris" else 1))
    nn = NearestNeighbors(n_neighbors=6, algorithm="brute").fit(backend.asarray(X))
    ref = skn.NearestNeighbors(n_neighbors=6, algorithm="brute").fit(X)
    for train in (False, True):
        d, i = nn.kneighbors(None if train else backend.asarray(X[::7]))
        exp_d, exp_i = _oracle_knn(X[::7], X, 6, train=train)
        assert_xp(i, exp_i, backend)
        assert_xp(d, exp_d, backend, exact=False, rtol=1e-12, atol=1e-12)
        assert_xp(d, ref.kneighbors(None if train else X[::7])[0], backend, **TOL)
    # A radius between distances (integer squares): scikit-learn's GEMM distances agree.
    radius = float(np.sqrt(np.round(np.median(exp_d[:, 3]) ** 2) + 0.5))
    G = nn.radius_neighbors_graph(radius=radius, mode="distance")
    np.testing.assert_allclose(
        _dense(G), ref.radius_neighbors_graph(radius=radius, mode="distance").toarray(), atol=1e-9
    )
    # A radius equal to distances: those pairs are in (exact distances, ``<=``), where
    # scikit-learn's rounded ones may leave them out.
    radius = float(np.median(exp_d[:, 3]))
    D = _exact_d(X[::7], X)
    G = nn.radius_neighbors_graph(backend.asarray(X[::7]), radius=radius)
    assert np.any(D == radius)
    np.testing.assert_array_equal(_dense(G), (D <= radius).astype(float))


def _check_ragged(ours, theirs, dtype):
    assert isinstance(ours, np.ndarray) and ours.dtype == object and ours.shape == theirs.shape
    for a, b in zip(ours, theirs):
        assert isinstance(a, np.ndarray) and a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine"])
@pytest.mark.parametrize("algorithm", ["brute", "auto"])
def test_radius_neighbors_equals_sklearn(backend, metric, algorithm):
    X, Q = _data(1)
    if metric == "cosine":
        algorithm = "brute"
    radius = {"euclidean": 1.3, "sqeuclidean": 1.7, "cosine": 0.2}[metric]
    ref = skn.NearestNeighbors(radius=radius, metric=metric, algorithm="brute").fit(X)
    # A budget of a few rows per block: the result does not depend on the tiling.
    for wm in (None, 80 * X.shape[0] * 7 / 2**20):  # MiB
        nn = NearestNeighbors(radius=radius, metric=metric, algorithm=algorithm, working_memory=wm)
        nn.fit(backend.asarray(X))
        for q in (Q, None):
            args = () if q is None else (backend.asarray(q),)
            rargs = () if q is None else (q,)
            d_ref, i_ref = ref.radius_neighbors(*rargs, sort_results=True)
            assert 0 < sum(map(len, i_ref)) < len(i_ref) * X.shape[0] / 2  # members and outliers
            d, i = nn.radius_neighbors(*args, sort_results=True)
            _check_ragged(i, i_ref, np.int64)
            _check_ragged(d, d_ref, np.float64)
            i_unsorted = nn.radius_neighbors(*args, return_distance=False)
            _check_ragged(i_unsorted, np.array([np.sort(a) for a in i_ref] + [None], dtype=object)[:-1], np.int64)


def test_radius_results_do_not_depend_on_the_budget(backend):
    X, Q = _data(6, n=40, m=12)
    Xb, Qb = backend.asarray(X), backend.asarray(Q)
    want = NearestNeighbors(radius=1.5, algorithm="brute").fit(Xb).radius_neighbors_graph(Qb, mode="distance")
    # One query row per block and one pair per exact-pass chunk: the same graph, bit for bit.
    nn = NearestNeighbors(radius=1.5, algorithm="brute", working_memory=1 / 2**20).fit(Xb)  # 1 byte
    G = nn.radius_neighbors_graph(Qb, mode="distance")
    for attr in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(_on_host(G), attr), getattr(_on_host(want), attr))
    ref = skn.NearestNeighbors(radius=1.5).fit(X).radius_neighbors_graph(Q, mode="distance")
    np.testing.assert_allclose(_dense(G), ref.toarray(), rtol=1e-12, atol=1e-12)
    # one byte is below one row of tiles for a k search: raised, with a warning (issue 18)
    from gpuknn import WorkingMemoryWarning

    with pytest.warns(WorkingMemoryWarning, match=r"working_memory=9.537e-07 MiB \(1 bytes\) is too small"):
        idx = nn.kneighbors(Qb, 4)[1]
    assert_xp(idx, skn.NearestNeighbors(n_neighbors=4).fit(X).kneighbors(Q)[1], backend)


def test_radius_neighbors_rules(backend):
    X = np.array([[0.0], [1.0], [1.0], [2.5], [3.0]])
    nn = NearestNeighbors(radius=1.0, algorithm="brute").fit(backend.asarray(X))
    d, i = nn.radius_neighbors(backend.asarray(np.array([[0.0], [10.0]])), sort_results=True)
    assert i[0].tolist() == [0, 1, 2] and d[0].tolist() == [0.0, 1.0, 1.0]  # radius inclusive
    assert i[1].tolist() == [] and i[1].dtype == np.int64 and d[1].dtype == np.float64
    d, i = nn.radius_neighbors(sort_results=True)  # X=None: itself out, its duplicate in
    assert [a.tolist() for a in i] == [[1, 2], [2, 0], [1, 0], [4], [3]]
    same = nn.radius_neighbors(radius=0.0, return_distance=False)
    assert [a.tolist() for a in same] == [[], [2], [1], [], []]
    with pytest.raises(InvalidInputError, match="return_distance must be True"):
        nn.radius_neighbors(return_distance=False, sort_results=True)


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
def test_graphs_equal_sklearn(backend, mode):
    X, Q = _data(2)
    nn = NearestNeighbors(n_neighbors=4, radius=1.2).fit(backend.asarray(X))
    ref = skn.NearestNeighbors(n_neighbors=4, radius=1.2).fit(X)
    for q in (Q, None):
        x = None if q is None else backend.asarray(q)
        srt = mode == "distance"
        for ours, theirs in [
            (nn.kneighbors_graph(x, mode=mode), ref.kneighbors_graph(q, mode=mode)),
            (nn.kneighbors_graph(x, 2, mode=mode), ref.kneighbors_graph(q, 2, mode=mode)),
            (nn.radius_neighbors_graph(x, mode=mode), ref.radius_neighbors_graph(q, mode=mode)),
            (
                nn.radius_neighbors_graph(x, 0.9, mode=mode, sort_results=srt),
                ref.radius_neighbors_graph(q, 0.9, mode=mode, sort_results=srt),
            ),
        ]:
            assert _is_csr_of(ours, backend) and ours.shape == theirs.shape
            np.testing.assert_array_equal(np.diff(_on_host(ours).indptr), np.diff(theirs.indptr))
            np.testing.assert_allclose(_dense(ours), theirs.toarray(), rtol=1e-9, atol=1e-9)
    G = _on_host(nn.radius_neighbors_graph(backend.asarray(Q), mode="distance", sort_results=True))
    for r in range(G.shape[0]):  # each row's stored distances ascending
        assert np.all(np.diff(G.data[G.indptr[r] : G.indptr[r + 1]]) >= 0)


def test_float32_stays_float32(backend):
    X, Q = _data(5)
    nn = NearestNeighbors(n_neighbors=3, radius=1.0).fit(backend.asarray(X.astype(np.float32)))
    d, i = nn.kneighbors(backend.asarray(Q.astype(np.float32)))
    assert d.dtype == backend.xp.float32
    _, i64 = (
        NearestNeighbors(n_neighbors=3)
        .fit(X.astype(np.float32).astype(np.float64))
        .kneighbors(Q.astype(np.float32).astype(np.float64))
    )
    assert_xp(i, i64, backend)
    dist, _ = nn.radius_neighbors(backend.asarray(Q.astype(np.float32)))
    assert all(a.dtype == np.float32 for a in dist)


def test_errors(backend):
    X, Q = _data()
    Xb, Qb = backend.asarray(X), backend.asarray(Q)
    for method in ("kneighbors", "radius_neighbors", "kneighbors_graph", "radius_neighbors_graph"):
        with pytest.raises(NotFittedError):
            getattr(NearestNeighbors(), method)(Qb)
    nn = NearestNeighbors().fit(Xb)
    with pytest.raises(InvalidInputError, match="X has 3 features, but NearestNeighbors is expecting 4"):
        nn.kneighbors(Qb[:, :3])
    with pytest.raises(InvalidInputError, match="X has 3 features"):
        nn.radius_neighbors(Qb[:, :3])
    for k, msg in [
        (0, r"n_neighbors must be in \[1, inf\], got 0"),
        (1.5, "n_neighbors must be an integer"),
        (121, "n_neighbors <= n_samples_fit, but n_neighbors = 121"),
    ]:
        with pytest.raises(InvalidInputError, match=msg):
            nn.kneighbors(Qb, k)
    with pytest.raises(InvalidInputError, match="n_neighbors < n_samples_fit .*n_neighbors = 120"):
        nn.kneighbors(n_neighbors=120)
    with pytest.raises(InvalidInputError, match="n_neighbors must be in"):
        NearestNeighbors(n_neighbors=0).fit(Xb)
    with pytest.raises(InvalidInputError, match="mode must be 'connectivity' or 'distance', got 'dist'"):
        nn.kneighbors_graph(Qb, mode="dist")
    with pytest.raises(InvalidInputError, match="mode must be"):
        nn.radius_neighbors_graph(Qb, mode="weights")
    for r in (-1.0, "a", float("nan")):  # inf is allowed: every training row (scikit-learn)
        with pytest.raises(InvalidInputError, match="radius must be"):
            nn.radius_neighbors(Qb, radius=r)
    with pytest.raises(InvalidInputError, match="metric='inner'"):
        NearestNeighbors(metric="inner").fit(Xb)
    with pytest.raises(InvalidInputError, match="working_memory must be a positive number of MiB, got -5"):
        NearestNeighbors(working_memory=-5).fit(Xb)
    if backend.name != "numpy":  # a model of one namespace asked about another's arrays
        with pytest.raises(InvalidInputError, match="namespace"):
            nn.kneighbors(Q)
    bad = Q.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        nn.radius_neighbors(backend.asarray(bad))


def test_pickle_round_trip():
    import pickle

    X, Q = _data()
    for algorithm in ("brute", "kd_tree"):
        nn = NearestNeighbors(n_neighbors=3, algorithm=algorithm).fit(X)
        back = pickle.loads(pickle.dumps(nn))
        np.testing.assert_array_equal(back.kneighbors(Q)[1], nn.kneighbors(Q)[1])
        assert back.radius_neighbors_graph(Q).nnz == nn.radius_neighbors_graph(Q).nnz


def test_every_neighbour_estimator_shares_the_search(backend):
    """One NeighborsBase: the classifiers and regressors answer kneighbors (X=None too) and the
    radius estimators radius_neighbors exactly as NearestNeighbors does, as in scikit-learn."""
    from gpuknn.neighbors import (
        KNeighborsClassifier,
        KNeighborsRegressor,
        RadiusNeighborsClassifier,
        RadiusNeighborsRegressor,
    )

    rng = np.random.default_rng(11)
    X, Q = rng.normal(size=(80, 3)), rng.normal(size=(9, 3))
    y = rng.integers(0, 3, 80)
    Xb, Qb, yb = backend.asarray(X), backend.asarray(Q), backend.asarray(y)
    nn = NearestNeighbors(n_neighbors=4, radius=0.9, algorithm="brute").fit(Xb)
    for est in (KNeighborsClassifier(4, algorithm="brute"), KNeighborsRegressor(4, algorithm="brute")):
        est.fit(Xb, yb)
        for query in (Qb, None):
            d, i = est.kneighbors(query)
            d_nn, i_nn = nn.kneighbors(query)
            assert_xp(i, host(i_nn), backend)
            assert_xp(d, host(d_nn), backend)
    sk = skn.NearestNeighbors(radius=0.9).fit(X)
    want_d, want_i = sk.radius_neighbors(Q, sort_results=True)
    for est in (RadiusNeighborsClassifier(0.9, outlier_label=-1), RadiusNeighborsRegressor(0.9)):
        d, i = est.fit(Xb, yb).radius_neighbors(Qb, sort_results=True)
        for got_i, got_d, w_i, w_d in zip(i, d, want_i, want_d):
            np.testing.assert_array_equal(got_i, w_i)
            np.testing.assert_allclose(got_d, w_d, rtol=1e-12, atol=1e-12)
