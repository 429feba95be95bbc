"""Difference metrics, precomputed and callable metrics: exact neighbour lists on every
backend and tiling, scikit-learn's estimator API and answers (issue 33, item 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sklearn.neighbors as skn
from helpers import assert_xp, host
from scipy.spatial.distance import cdist

from gpuknn import (
    InvalidInputError,
    KNeighborsClassifier,
    KNeighborsRegressor,
    KNeighborsTransformer,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
    kneighbors,
    pairwise_distances,
)

# (gpuknn metric, its p, SciPy's name, SciPy's keywords)
METRICS = [
    ("manhattan", None, "cityblock", {}),
    ("chebyshev", None, "chebyshev", {}),
    ("minkowski", 3, "minkowski", {"p": 3}),
    ("minkowski", 2.5, "minkowski", {"p": 2.5}),
    ("canberra", None, "canberra", {}),
    ("braycurtis", None, "braycurtis", {}),
    ("hamming", None, "hamming", {}),
]
IDS = [f"{m}-{p}" if p is not None else m for m, p, _, _ in METRICS]
# Names that resolve to another metric: (name, p, the metric it runs)
ALIASES = [
    ("cityblock", None, "manhattan"),
    ("l1", None, "manhattan"),
    ("infinity", None, "chebyshev"),
    ("minkowski", 1, "manhattan"),
    ("minkowski", math.inf, "chebyshev"),
    ("minkowski", 2, "euclidean"),
    ("l2", None, "euclidean"),
]


def _tied_data(seed=0):
    """Small integers (many exact ties), duplicates within R and queries equal to rows of R;
    values 1..4 (Bray-Curtis: no zero rows, where SciPy gives NaN)."""
    rng = np.random.default_rng(seed)
    R = rng.integers(1, 5, size=(45, 4)).astype(np.float64)
    R[30:35] = R[3]  # a block of duplicates
    Q = np.concatenate([R[[0, 3, 17]], rng.integers(1, 5, size=(9, 4))]).astype(np.float64)
    return Q, R


def _oracle(Q, R, k, name, kw):
    """cdist in float64 and a stable argsort: ties -> lower index."""
    D = cdist(Q.astype(np.float64), R.astype(np.float64), name, **kw)
    idx = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, idx, axis=1), idx


@pytest.mark.parametrize(("metric", "p", "name", "kw"), METRICS, ids=IDS)
def test_lists_equal_float64_oracle(backend, metric, p, name, kw):
    """Indices and distances of float32 and float64 input, on two tilings (tiles of a few
    pairs, and the default)."""
    k = 7
    for dtype in ("float32", "float64"):
        Q, R = (a.astype(dtype) for a in _tied_data())
        ed, ei = _oracle(Q, R, k, name, kw)
        for wm in (None, 0.003):
            d, i = kneighbors(backend.asarray(Q), backend.asarray(R), k, metric=metric, p=p, working_memory=wm)
            assert_xp(i, ei, backend)
            # Float64 values rounded once to the input's dtype. Minkowski's root is NumPy's
            # pow of the exact sum (SciPy takes its own: an ulp apart at most); euclidean
            # (l2) of float32 input is the GEMM engine's, within its certified bound.
            exact = name != "minkowski"
            assert_xp(d, ed.astype(dtype), backend, exact=exact, rtol=4e-16 if dtype == "float64" else 1e-7)


@pytest.mark.parametrize(("alias", "p", "metric"), ALIASES)
def test_aliases_run_their_metric(backend, alias, p, metric):
    Q, R = (backend.asarray(a) for a in _tied_data(9))
    d, i = kneighbors(Q, R, 6, metric=alias, p=p, working_memory=0.003)
    ed, ei = kneighbors(Q, R, 6, metric=metric)
    assert_xp(i, host(ei), backend)
    assert_xp(d, host(ed), backend)


@pytest.mark.parametrize(("metric", "p", "name", "kw"), METRICS, ids=IDS)
def test_same_bits_on_every_tiling(backend, metric, p, name, kw):
    """Continuous data (no real ties): the distances are the same bits whatever the tiles,
    and the lists equal the oracle's."""
    rng = np.random.default_rng(3)
    R, Q = np.abs(rng.normal(size=(70, 9))), np.abs(rng.normal(size=(13, 9)))
    outs = [
        kneighbors(backend.asarray(Q), backend.asarray(R), 5, metric=metric, p=p, working_memory=wm)
        for wm in (None, 0.003)
    ]
    d0, i0 = host(outs[0][0]), host(outs[0][1])
    for d, i in outs[1:]:
        np.testing.assert_array_equal(host(i), i0)
        np.testing.assert_array_equal(host(d), d0)
    ed, ei = _oracle(Q, R, 5, name, kw)
    np.testing.assert_array_equal(i0, ei)
    np.testing.assert_allclose(d0, ed, rtol=1e-14)


def test_same_bits_on_every_backend(backend):
    """The numpy answer, bit for bit, on every backend (distances of float64 input)."""
    rng = np.random.default_rng(4)
    R, Q = rng.normal(size=(50, 6)), rng.normal(size=(8, 6))
    for metric, p in [("manhattan", None), ("minkowski", 3), ("minkowski", 1.5), ("canberra", None)]:
        d, i = kneighbors(backend.asarray(Q), backend.asarray(R), 6, metric=metric, p=p, working_memory=0.002)
        nd, ni = kneighbors(Q, R, 6, metric=metric, p=p)
        assert_xp(i, ni, backend)
        assert_xp(d, nd, backend)


@pytest.mark.parametrize(("metric", "p", "name", "kw"), METRICS, ids=IDS)
def test_pairwise_distances_equal_cdist(backend, metric, p, name, kw):
    Q, R = _tied_data(1)
    D = pairwise_distances(backend.asarray(Q), backend.asarray(R), metric=metric, p=p)
    assert_xp(D, cdist(Q, R, name, **kw), backend, exact=name != "minkowski", rtol=4e-16)
    # Self distances: an exact zero diagonal, whatever the row blocks.
    Dx = pairwise_distances(backend.asarray(R), metric=metric, p=p)
    np.testing.assert_array_equal(np.diag(host(Dx)), np.zeros(R.shape[0]))


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "canberra", "hamming"])
def test_radius_neighbors_are_exact(backend, metric):
    Q, R = _tied_data(2)
    radius = {"manhattan": 3.0, "chebyshev": 1.0, "canberra": 0.8, "hamming": 0.5}[metric]
    nn = NearestNeighbors(radius=radius, metric=metric).fit(backend.asarray(R))
    dist, ind = nn.radius_neighbors(backend.asarray(Q), sort_results=True)
    D = cdist(Q, R, {"manhattan": "cityblock"}.get(metric, metric))
    for row in range(Q.shape[0]):
        members = np.flatnonzero(D[row] <= radius)  # pairs exactly at the radius included
        want = members[np.lexsort((members, D[row, members]))]
        np.testing.assert_array_equal(ind[row], want)
        np.testing.assert_array_equal(dist[row], D[row, want])
    graph = nn.radius_neighbors_graph(backend.asarray(Q), mode="distance")
    dense = graph.get() if hasattr(graph, "get") else graph
    assert dense.nnz == int((D <= radius).sum())


def _continuous(seed=5, n=60, d=4):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, d))) + 0.1  # Bray-Curtis: non-negative (see the docs)
    Q = np.abs(rng.normal(size=(15, d))) + 0.1
    y = (X[:, 0] + X[:, 1] > 1.6).astype(int) + (X[:, 2] > 1.0)
    return X, Q, y


ESTIMATOR_METRICS = ["manhattan", "chebyshev", "canberra", "braycurtis", "cityblock", "l1", "hamming"]


@pytest.mark.parametrize("metric", ESTIMATOR_METRICS)
def test_estimators_equal_sklearn(backend, metric):
    X, Q, y = _continuous()
    if metric == "hamming":  # a metric for discrete features
        X, Q = np.round(X * 2), np.round(Q * 2)
    Xb, Qb = backend.asarray(X), backend.asarray(Q)
    kw = {"metric": metric, "algorithm": "brute"}
    for ours, theirs, args in [
        (KNeighborsClassifier, skn.KNeighborsClassifier, {"n_neighbors": 5, "weights": "distance"}),
        (KNeighborsRegressor, skn.KNeighborsRegressor, {"n_neighbors": 4}),
        (RadiusNeighborsClassifier, skn.RadiusNeighborsClassifier, {"radius": 1.5, "outlier_label": 0}),
        (RadiusNeighborsRegressor, skn.RadiusNeighborsRegressor, {"radius": 1.5}),
    ]:
        if metric == "hamming":
            if "radius" not in args:  # every distance is a multiple of 1/d: ties at the k-th
                continue  # place, which scikit-learn breaks in no fixed order
            args = {**args, "radius": 0.75}
        target = y if "Classifier" in ours.__name__ else X[:, 3]
        got = host(ours(**args, **kw).fit(Xb, target).predict(Qb))
        want = theirs(**args, **kw).fit(X, target).predict(Q)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=ours.__name__)
    if metric == "hamming":
        return
    d, i = NearestNeighbors(n_neighbors=4, **kw).fit(Xb).kneighbors()
    ed, ei = skn.NearestNeighbors(n_neighbors=4, **kw).fit(X).kneighbors()
    assert_xp(i, ei, backend)
    assert_xp(d, ed, backend, exact=False, rtol=1e-14)


@pytest.mark.parametrize(("p", "want"), [(1, "manhattan"), (2, "euclidean"), (math.inf, "chebyshev"), (3, "minkowski")])
def test_minkowski_p_and_effective_metric(backend, p, want):
    X, Q, _ = _continuous(6)
    ours = NearestNeighbors(n_neighbors=3, p=p).fit(backend.asarray(X))
    theirs = skn.NearestNeighbors(n_neighbors=3, p=p, algorithm="brute").fit(X)
    assert ours.effective_metric_ == theirs.effective_metric_ == want
    assert ours.effective_metric_params_ == theirs.effective_metric_params_
    d, i = ours.kneighbors(backend.asarray(Q))
    ed, ei = theirs.kneighbors(Q)
    assert_xp(i, ei, backend)
    assert_xp(d, ed, backend, exact=False, rtol=1e-14)
    # p through metric_params, as scikit-learn allows it (p itself left None).
    via = NearestNeighbors(n_neighbors=3, p=None, metric_params={"p": p}).fit(backend.asarray(X))
    assert via.effective_metric_ == want
    assert_xp(via.kneighbors(backend.asarray(Q))[1], ei, backend)


def test_default_metric_is_minkowski():
    assert NearestNeighbors().metric == "minkowski" and NearestNeighbors().p == 2
    assert KNeighborsTransformer().get_params()["metric"] == "minkowski"


def _manhattan(a, b):
    assert a.ndim == 1 and b.ndim == 1  # scikit-learn's calling convention: pairs of rows
    return float(np.abs(a - b).sum())


def test_precomputed_and_callable_equal_sklearn(backend):
    X, Q, y = _continuous(7)
    D_fit, D_q = cdist(X, X, "cityblock"), cdist(Q, X, "cityblock")
    for metric, fit_X, q_X in [("precomputed", D_fit, D_q), (_manhattan, X, Q)]:
        Xb, Qb = backend.asarray(fit_X), backend.asarray(q_X)
        for ours, theirs, args in [
            (KNeighborsClassifier, skn.KNeighborsClassifier, {"n_neighbors": 5}),
            (KNeighborsRegressor, skn.KNeighborsRegressor, {"n_neighbors": 3, "weights": "distance"}),
            (RadiusNeighborsClassifier, skn.RadiusNeighborsClassifier, {"radius": 4.0, "outlier_label": 0}),
            (RadiusNeighborsRegressor, skn.RadiusNeighborsRegressor, {"radius": 4.0}),
        ]:
            target = y if "Classifier" in ours.__name__ else X[:, 0]
            got = ours(**args, metric=metric).fit(Xb, target).predict(Qb)
            want = theirs(**args, metric=metric, algorithm="brute").fit(fit_X, target).predict(q_X)
            np.testing.assert_allclose(host(got), want, rtol=1e-12, err_msg=f"{ours.__name__} {metric}")
        nn = NearestNeighbors(n_neighbors=4, metric=metric).fit(Xb)
        sk = skn.NearestNeighbors(n_neighbors=4, metric=metric, algorithm="brute").fit(fit_X)
        for args in [(Qb,), ()]:  # queries, and the training rows each without itself
            d, i = nn.kneighbors(*args)
            ed, ei = sk.kneighbors(*([q_X] if args else []))
            assert_xp(i, ei, backend)
            assert_xp(d, ed, backend)
        rd, ri = nn.radius_neighbors(Qb, radius=1.2, sort_results=True)
        erd, eri = sk.radius_neighbors(q_X, radius=1.2, sort_results=True)
        for a, b, c, e in zip(ri, eri, rd, erd, strict=True):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(c, e)


def test_host_metrics_break_ties_by_lower_index(backend):
    R = np.array([[0.0], [2.0], [1.0], [1.0], [2.0]])
    D = cdist(np.array([[1.0]]), R, "cityblock")
    nn = NearestNeighbors(n_neighbors=4, metric="precomputed").fit(backend.asarray(cdist(R, R, "cityblock")))
    d, i = nn.kneighbors(backend.asarray(D))
    assert_xp(i, np.array([[2, 3, 0, 1]]), backend)
    nn = NearestNeighbors(n_neighbors=4, metric=_manhattan).fit(backend.asarray(R))
    assert_xp(nn.kneighbors(backend.asarray(np.array([[1.0]])))[1], np.array([[2, 3, 0, 1]]), backend)


def test_errors():
    X = np.arange(12.0).reshape(6, 2)
    for bad in (0, -1, "a", True, math.nan):
        with pytest.raises(InvalidInputError, match="p must be"):
            NearestNeighbors(p=bad).fit(X)
        with pytest.raises(InvalidInputError, match="p must be"):
            kneighbors(X, X, 2, metric="minkowski", p=bad)
    with pytest.raises(InvalidInputError, match="unknown metric 'l7'"):
        NearestNeighbors(metric="l7").fit(X)
    with pytest.raises(InvalidInputError, match="unknown metric 'l7'"):
        pairwise_distances(X, metric="l7")
    with pytest.raises(InvalidInputError, match=r"metric_params \['q'\]"):
        NearestNeighbors(metric_params={"q": 1}).fit(X)
    with pytest.raises(InvalidInputError, match="'w' has size 3"):  # weighted Minkowski: one weight a feature
        NearestNeighbors(metric_params={"w": np.ones(3)}).fit(X)
    with pytest.raises(InvalidInputError, match="not parameters of metric 'manhattan'"):
        NearestNeighbors(metric="manhattan", p=None, metric_params={"p": 3}).fit(X)
    with pytest.raises(InvalidInputError, match="kd_tree does not support callable"):
        NearestNeighbors(metric=_manhattan, algorithm="kd_tree").fit(X)
    with pytest.raises(InvalidInputError, match="square distance matrix"):
        NearestNeighbors(metric="precomputed").fit(X)
    with pytest.raises(InvalidInputError, match="Negative values"):
        NearestNeighbors(metric="precomputed").fit(-np.ones((3, 3)))
    with pytest.raises(InvalidInputError, match="does not support 0 < p < 1"):
        NearestNeighbors(p=0.5, algorithm="kd_tree").fit(X)
    # As scikit-learn: ValueError subclasses, and the same warnings.
    assert issubclass(InvalidInputError, ValueError)
    with pytest.warns(UserWarning, match="0 < p < 1"):
        nn = NearestNeighbors(n_neighbors=2, p=0.5).fit(X)
    np.testing.assert_array_equal(nn.kneighbors(X[:1])[1], [[0, 1]])
    with pytest.warns(SyntaxWarning, match="Parameter p is found in metric_params"):
        NearestNeighbors(p=2, metric_params={"p": 3}).fit(X)


def test_kd_tree_falls_back_to_brute_for_difference_metrics():
    X, Q, _ = _continuous(8)
    nn = NearestNeighbors(n_neighbors=3, metric="manhattan", algorithm="kd_tree").fit(X)
    assert nn._fit_method == "brute"
    np.testing.assert_array_equal(
        nn.kneighbors(Q)[1], skn.NearestNeighbors(n_neighbors=3, metric="manhattan").fit(X).kneighbors(Q)[1]
    )


def test_inner_product_only_paths_say_so():
    from gpuknn.ops.distance import check_metric

    with pytest.raises(InvalidInputError, match="runs on inner products"):
        check_metric("manhattan")


def test_k_sweep_passes_the_metric_through():
    """cross_validate_k with a difference metric scores what the classifier fitted per k
    scores; the p-sweep (PCA sizes, inner products) refuses it clearly."""
    from gpuknn.model_selection import cross_validate_k, cross_validate_kp

    X, Q, _ = _continuous(10, n=50)
    y = (X[:, 0] > X[:, 1]).astype(int)
    tr, te = np.arange(0, 50, 2), np.arange(1, 50, 2)
    for metric in ("manhattan", "minkowski:3", "canberra"):
        table = cross_validate_k(X, y, [1, 3, 5], cv=[(tr, te)], metric=metric)
        got = [r["accuracy_mean"] for r in table.summary()]
        want = [KNeighborsClassifier(k, metric=metric).fit(X[tr], y[tr]).score(X[te], y[te]) for k in (1, 3, 5)]
        np.testing.assert_allclose(got, want)
    with pytest.raises(InvalidInputError, match="runs on inner products"):
        cross_validate_kp(X, y, [1], [2], cv=[(tr, te)], metric="manhattan")


@pytest.mark.parametrize("metric", ["manhattan", "minkowski:3", "braycurtis"])
def test_search_stays_within_working_memory(metric):
    """Tiles under the budget: no (queries x references x features) temporary, nor a float64
    copy of a reference three times the budget (NumPy, traced)."""
    import tracemalloc

    rng = np.random.default_rng(11)
    R, Q = np.abs(rng.normal(size=(4000, 100))), np.abs(rng.normal(size=(3, 100)))  # R: 3.1 MiB
    kneighbors(Q, R, 5, metric=metric, working_memory=1)  # imports and caches outside the trace
    tracemalloc.start()
    try:
        d, i = kneighbors(Q, R, 5, metric=metric, working_memory=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"peak {peak / 2**20:.2f} MiB over a working_memory of 1 MiB"
    name, kw = ("minkowski", {"p": 3}) if metric.startswith("minkowski") else (metric, {})
    np.testing.assert_array_equal(i, _oracle(Q, R, 5, {"manhattan": "cityblock"}.get(name, name), kw)[1])


# -- host metrics (gpuknn.ops.hostmetric.HostMetric): scikit-learn's other brute metrics --------


def _host_metric_cases():
    rng = np.random.default_rng(7)
    A = rng.random((4, 4))
    return [
        ("seuclidean", {"V": rng.random(4) + 0.5}),
        ("mahalanobis", {"VI": A + A.T + 3 * np.eye(4)}),
        ("minkowski", {"w": rng.random(4)}),
        ("haversine", None),
        ("nan_euclidean", None),
        ("jaccard", None),
        ("rogerstanimoto", None),
        ("russellrao", None),
    ]


@pytest.mark.parametrize(("metric", "params"), _host_metric_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_host_metrics_equal_sklearn(backend, metric, params):
    rng = np.random.default_rng(3)
    X, Q = rng.random((50, 4)), rng.random((6, 4))
    if metric == "haversine":
        X, Q = X[:, :2], Q[:, :2]
    if metric == "nan_euclidean":
        X[rng.random(X.shape) < 0.2] = np.nan
    if metric in ("jaccard", "rogerstanimoto", "russellrao"):
        X, Q = (X > 0.5).astype(np.float64), (Q > 0.5).astype(np.float64)
        Q[0] = X[0]  # an exact match: distance 0 first
    p = 3 if metric == "minkowski" else 2
    boolean = metric in ("jaccard", "rogerstanimoto", "russellrao")
    Xs, Qs = (X > 0.5, Q > 0.5) if boolean else (X, Q)  # scikit-learn warns on non-boolean data
    ref = skn.NearestNeighbors(n_neighbors=4, metric=metric, p=p, metric_params=params, algorithm="brute").fit(Xs)
    ours = NearestNeighbors(n_neighbors=4, metric=metric, p=p, metric_params=params).fit(backend.asarray(X))
    d_ref, i_ref = ref.kneighbors(Qs)
    dist, idx = ours.kneighbors(backend.asarray(Q))
    assert_xp(dist, d_ref, backend, exact=False, rtol=1e-12, atol=1e-15)
    if not boolean:  # boolean distances tie often (scikit-learn's order among ties varies)
        assert_xp(idx, i_ref, backend)
    r = float(np.median(d_ref)) * (1 + 1e-9)
    got = ours.radius_neighbors(backend.asarray(Q), radius=r, return_distance=False)
    want = ref.radius_neighbors(Qs, radius=r, return_distance=False)
    assert all(set(a.tolist()) == set(b.tolist()) for a, b in zip(got, want))
    assert ours.effective_metric_ == ref.effective_metric_


def test_distance_metric_object_is_a_metric(backend):
    from sklearn.metrics import DistanceMetric

    rng = np.random.default_rng(4)
    X, Q, y = rng.random((40, 3)), rng.random((5, 3)), rng.random(40)
    for dm in (DistanceMetric.get_metric("euclidean"), DistanceMetric.get_metric("minkowski", p=3)):
        for algorithm in ("auto", "brute", "kd_tree", "ball_tree"):
            ref = skn.KNeighborsRegressor(3, metric=dm, algorithm="brute").fit(X, y)
            ours = KNeighborsRegressor(3, metric=dm, algorithm=algorithm).fit(backend.asarray(X), backend.asarray(y))
            assert ours.effective_metric_ is dm
            assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend, exact=False, rtol=1e-12)


def test_host_metric_checks():
    X = np.random.default_rng(0).random((10, 3))
    with pytest.raises(InvalidInputError, match="Haversine distance only valid in 2 dimensions"):
        NearestNeighbors(n_neighbors=2, metric="haversine").fit(X).kneighbors(X)  # at query time, as scikit-learn
    with pytest.raises(InvalidInputError, match="not parameters of metric 'seuclidean'"):
        NearestNeighbors(n_neighbors=2, metric="seuclidean", metric_params={"VI": np.eye(3)}).fit(X)
    with pytest.raises(InvalidInputError, match="has size 2"):
        NearestNeighbors(n_neighbors=2, metric="seuclidean", metric_params={"V": [1.0, 2.0]}).fit(X)
    # scikit-learn's KDTree takes the Minkowski family only
    for metric, params in (("canberra", None), ("seuclidean", {"V": np.ones(3)}), ("minkowski", {"w": np.ones(3)})):
        with pytest.raises(ValueError, match="not valid for algorithm 'kd_tree'"):
            NearestNeighbors(n_neighbors=2, metric=metric, metric_params=params, algorithm="kd_tree").fit(X)
    # nan_euclidean lets NaN through, not infinity; other metrics refuse NaN
    Xn = X.copy()
    Xn[0, 0] = np.nan
    NearestNeighbors(n_neighbors=2, metric="nan_euclidean").fit(Xn)
    with pytest.raises(InvalidInputError):
        NearestNeighbors(n_neighbors=2).fit(Xn)
    Xn[1, 1] = np.inf
    with pytest.raises(InvalidInputError, match="infinity"):
        NearestNeighbors(n_neighbors=2, metric="nan_euclidean").fit(Xn)
