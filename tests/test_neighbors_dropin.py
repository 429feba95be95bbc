"""The neighbour estimators take scikit-learn 1.9's options (issue 33): ``weights=None`` and
callables, X=None (leave-one-out) in ``predict``, fitting from a fitted estimator,
``radius=inf``, ``algorithm="ball_tree"``, ``leaf_size``/``n_jobs`` and the outlier-label
warning. scikit-learn in float64 is the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_xp, host
from sklearn import neighbors as skn

from gpuknn.errors import InvalidInputError
from gpuknn.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    KNeighborsTransformer,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
)


def _data(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 1)  # rounded: ties and duplicates occur
    X[5] = X[3]  # an exact duplicate: X=None drops the row's own index, not its twin
    y = rng.integers(0, 3, n)
    yr = rng.normal(size=n)
    Q = np.round(rng.normal(size=(15, d)), 1)
    return X, y, yr, Q


def _inv(d):
    return 1.0 / (d + 0.5)


@pytest.mark.parametrize("weights", [None, "uniform", "distance", _inv])
def test_kneighbors_classifier_weights(backend, weights):
    X, y, _, Q = _data()
    ref = skn.KNeighborsClassifier(4, weights=weights).fit(X, y)
    ours = KNeighborsClassifier(4, weights=weights).fit(backend.asarray(X), backend.asarray(y))
    assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend)
    assert_xp(ours.predict_proba(backend.asarray(Q)), ref.predict_proba(Q), backend, exact=False, rtol=1e-12)


@pytest.mark.parametrize("weights", [None, "distance", _inv])
def test_classifier_predict_without_x_leaves_each_row_out(backend, weights):
    X, y, _, _ = _data(1)
    ref = skn.KNeighborsClassifier(3, weights=weights).fit(X, y)
    ours = KNeighborsClassifier(3, weights=weights).fit(backend.asarray(X), backend.asarray(y))
    assert_xp(ours.predict(), ref.predict(None), backend)
    assert_xp(ours.predict_proba(None), ref.predict_proba(None), backend, exact=False, rtol=1e-12)
    # differs from predicting the training rows themselves (each its own nearest)
    assert not np.array_equal(host(ours.predict_proba()), host(ours.predict_proba(backend.asarray(X))))


def test_callable_weights_all_zero_refused():
    X, y, _, Q = _data()
    est = KNeighborsClassifier(3, weights=lambda d: np.zeros_like(d)).fit(X, y)
    with pytest.raises(InvalidInputError, match="zero weights"):
        est.predict(Q)
    with pytest.raises(ValueError, match="zero weights"):
        skn.KNeighborsClassifier(3, weights=lambda d: np.zeros_like(d)).fit(X, y).predict(Q)


@pytest.mark.parametrize("weights", [None, "distance", _inv])
def test_kneighbors_regressor_without_x(backend, weights):
    X, _, yr, Q = _data(2)
    ref = skn.KNeighborsRegressor(4, weights=weights).fit(X, yr)
    ours = KNeighborsRegressor(4, weights=weights).fit(backend.asarray(X), backend.asarray(yr))
    assert_xp(ours.predict(), ref.predict(None), backend, exact=False, rtol=1e-12)
    assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend, exact=False, rtol=1e-12)


def test_kneighbors_without_x_drops_own_index_not_duplicates(backend):
    X, y, _, _ = _data(3)
    ref = skn.KNeighborsClassifier(4).fit(X, y)
    ours = KNeighborsClassifier(4).fit(backend.asarray(X), backend.asarray(y))
    d_ref, i_ref = ref.kneighbors()
    d, i = ours.kneighbors()
    assert_xp(i, i_ref, backend)
    assert_xp(d, d_ref, backend, exact=False, atol=1e-12)
    assert host(i)[3, 0] == 5 and host(i)[5, 0] == 3  # the twin stays, at distance 0
    g_ref = ref.kneighbors_graph(mode="distance").toarray()
    np.testing.assert_allclose(ours.kneighbors_graph(mode="distance").toarray(), g_ref, atol=1e-12)
    reg = KNeighborsRegressor(4).fit(backend.asarray(X), backend.asarray(y * 1.0))
    np.testing.assert_array_equal(reg.kneighbors_graph().toarray(), ref.kneighbors_graph().toarray())


@pytest.mark.parametrize("weights", [None, "uniform", "distance", _inv])
def test_radius_classifier_weights_and_without_x(backend, weights):
    X, y, _, Q = _data(4)
    kw = dict(radius=1.2, weights=weights, outlier_label="most_frequent")
    ref = skn.RadiusNeighborsClassifier(**kw).fit(X, y)
    ours = RadiusNeighborsClassifier(**kw).fit(backend.asarray(X), backend.asarray(y))
    assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend)
    assert_xp(ours.predict_proba(backend.asarray(Q)), ref.predict_proba(Q), backend, exact=False, atol=1e-12)
    assert_xp(ours.predict(), ref.predict(None), backend)
    assert_xp(ours.predict_proba(), ref.predict_proba(None), backend, exact=False, atol=1e-12)


@pytest.mark.parametrize("weights", [None, "distance", _inv])
def test_radius_regressor_without_x(backend, weights):
    X, _, yr, _ = _data(5)
    ref = skn.RadiusNeighborsRegressor(radius=1.5, weights=weights).fit(X, yr)
    ours = RadiusNeighborsRegressor(radius=1.5, weights=weights).fit(backend.asarray(X), backend.asarray(yr))
    expected = ref.predict(None)
    assert not np.isnan(expected).any()
    assert_xp(ours.predict(), expected, backend, exact=False, rtol=1e-12)


def test_radius_neighbors_without_x_keeps_duplicates(backend):
    X, y, _, _ = _data(6)
    ref = skn.NearestNeighbors(radius=1.0).fit(X)
    ours = NearestNeighbors(radius=1.0).fit(backend.asarray(X))
    d_ref, i_ref = ref.radius_neighbors(sort_results=True)
    d, i = ours.radius_neighbors(sort_results=True)
    assert 5 in i[3] and 3 not in i[3]
    for a, b, da, db in zip(i, i_ref, d, d_ref, strict=True):
        np.testing.assert_array_equal(np.sort(a), np.sort(b))
        np.testing.assert_allclose(da, db, atol=1e-12)
    rc = RadiusNeighborsClassifier(radius=1.0).fit(backend.asarray(X), backend.asarray(y))
    g_ref = skn.RadiusNeighborsClassifier(radius=1.0).fit(X, y).radius_neighbors_graph(mode="distance")
    np.testing.assert_allclose(rc.radius_neighbors_graph(mode="distance").toarray(), g_ref.toarray(), atol=1e-12)


def test_radius_inf_every_row(backend):
    X, y, yr, Q = _data(7)
    nn = NearestNeighbors(radius=math.inf).fit(backend.asarray(X))
    ref = skn.NearestNeighbors(radius=np.inf).fit(X)
    d, i = nn.radius_neighbors(backend.asarray(Q), sort_results=True)
    d_ref, i_ref = ref.radius_neighbors(Q, sort_results=True)
    assert all(len(row) == X.shape[0] for row in i)
    for a, b in zip(d, d_ref, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert nn.radius_neighbors_graph().nnz == X.shape[0] * (X.shape[0] - 1)  # X=None: not itself
    rc = RadiusNeighborsClassifier(radius=np.inf, weights="distance").fit(backend.asarray(X), backend.asarray(y))
    ref_c = skn.RadiusNeighborsClassifier(radius=np.inf, weights="distance").fit(X, y)
    assert_xp(rc.predict_proba(backend.asarray(Q)), ref_c.predict_proba(Q), backend, exact=False, atol=1e-12)
    rr = RadiusNeighborsRegressor(radius=np.inf).fit(backend.asarray(X), backend.asarray(yr))
    ref_r = skn.RadiusNeighborsRegressor(radius=np.inf).fit(X, yr)
    assert_xp(rr.predict(backend.asarray(Q)), ref_r.predict(Q), backend, exact=False, rtol=1e-12)
    with pytest.raises(InvalidInputError, match="radius"):
        NearestNeighbors(radius=np.nan).fit(X)
    with pytest.raises(InvalidInputError, match="radius"):
        NearestNeighbors(radius=-1.0).fit(X)


def test_fit_from_fitted_estimator_or_sklearn_tree():
    X, y, _, Q = _data(8)
    base = NearestNeighbors().fit(X)
    ref = skn.KNeighborsClassifier(3).fit(skn.NearestNeighbors().fit(X), y)
    ours = KNeighborsClassifier(3).fit(base, y)
    np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
    assert ours.n_samples_fit_ == X.shape[0] and ours.n_features_in_ == X.shape[1]
    from_sklearn = KNeighborsClassifier(3).fit(skn.NearestNeighbors().fit(X), y)
    np.testing.assert_array_equal(from_sklearn.predict(Q), ref.predict(Q))
    for tree in (skn.KDTree(X), skn.BallTree(X)):
        nn = NearestNeighbors(n_neighbors=2).fit(tree)
        # distances: the rows 3 and 5 are twins, whose order scikit-learn's tree leaves open
        np.testing.assert_allclose(nn.kneighbors(Q)[0], skn.NearestNeighbors(n_neighbors=2).fit(X).kneighbors(Q)[0])
    with pytest.raises(Exception, match="not fitted"):
        KNeighborsClassifier().fit(NearestNeighbors(), y)


@pytest.mark.parametrize(
    "cls", [KNeighborsClassifier, KNeighborsRegressor, RadiusNeighborsClassifier, NearestNeighbors]
)
def test_ball_tree_leaf_size_n_jobs_accepted(cls):
    X, y, _, Q = _data(9)
    rad = cls in (RadiusNeighborsClassifier,)
    kw = dict(radius=2.5, outlier_label="most_frequent") if rad else {}
    fit = (lambda e: e.fit(X)) if cls is NearestNeighbors else (lambda e: e.fit(X, y))
    a = fit(cls(**kw, algorithm="ball_tree", leaf_size=5, n_jobs=-1))
    b = fit(cls(**kw, algorithm="brute"))
    assert a.get_params()["leaf_size"] == 5 and a.get_params()["n_jobs"] == -1
    if cls is NearestNeighbors:
        np.testing.assert_array_equal(a.kneighbors(Q)[1], b.kneighbors(Q)[1])
    else:
        np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
    with pytest.raises(InvalidInputError, match="leaf_size"):
        fit(cls(**kw, leaf_size=0))
    with pytest.raises(InvalidInputError, match="n_jobs"):
        fit(cls(**kw, n_jobs=1.5))
    KNeighborsTransformer(leaf_size=3, n_jobs=2, algorithm="ball_tree").fit(X)


def test_outlier_label_not_a_class_warns_as_sklearn():
    X, y, _, _ = _data(10)
    Q = np.array([[50.0, 50.0, 50.0], [0.0, 0.0, 0.0]])
    ref = skn.RadiusNeighborsClassifier(radius=1.0, outlier_label=7).fit(X, y)
    ours = RadiusNeighborsClassifier(radius=1.0, outlier_label=7).fit(X, y)
    with pytest.warns(UserWarning, match="Outlier label 7 is not in training classes"):
        expected = ref.predict_proba(Q)
    with pytest.warns(UserWarning, match="Outlier label 7 is not in training classes"):
        got = ours.predict_proba(Q)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    with pytest.warns(UserWarning, match="Outlier label 7"):
        np.testing.assert_array_equal(ours.predict(Q), [7, ref.predict(Q[1:])[0]])
    with pytest.raises(TypeError):
        RadiusNeighborsClassifier(outlier_label="x").fit(X, y)
    with pytest.raises(TypeError):
        skn.RadiusNeighborsClassifier(outlier_label="x").fit(X, y)


# -- scikit-learn's own tests, found by the conformance step (issue 33) -------------------------


def _multi(seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((40, 2)), 2)
    Y = rng.integers(0, 3, (40, 3))
    return X, Y, np.round(rng.random((12, 2)), 2)


@pytest.mark.parametrize("weights", [None, "distance", _inv])
def test_kneighbors_classifier_multioutput(backend, weights):
    X, Y, Q = _multi()
    ref = skn.KNeighborsClassifier(4, weights=weights).fit(X, Y)
    ours = KNeighborsClassifier(4, weights=weights).fit(backend.asarray(X), backend.asarray(Y))
    assert ours.outputs_2d_ and len(ours.classes_) == 3
    assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend)
    probas = ours.predict_proba(backend.asarray(Q))
    assert isinstance(probas, list) and len(probas) == 3
    for got, want in zip(probas, ref.predict_proba(Q)):
        assert_xp(got, want, backend, exact=False, rtol=1e-12)
    # each output as its own single-output fit
    for j in range(3):
        single = KNeighborsClassifier(4, weights=weights).fit(backend.asarray(X), backend.asarray(Y[:, j]))
        assert np.array_equal(host(single.predict(backend.asarray(Q))), host(ours.predict(backend.asarray(Q)))[:, j])


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_radius_classifier_multioutput_and_outlier_labels(backend, weights):
    X, Y, Q = _multi(1)
    ref = skn.RadiusNeighborsClassifier(radius=0.3, weights=weights, outlier_label="most_frequent").fit(X, Y)
    ours = RadiusNeighborsClassifier(radius=0.3, weights=weights, outlier_label="most_frequent")
    ours.fit(backend.asarray(X), backend.asarray(Y))
    Q = np.vstack([Q, [[5.0, 5.0]]])  # an outlier
    assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend)
    for got, want in zip(ours.predict_proba(backend.asarray(Q)), ref.predict_proba(Q)):
        assert_xp(got, want, backend, exact=False, rtol=1e-12)
    # one outlier label per output; a wrong count refused
    X1 = np.arange(10.0)[:, None]
    Y1 = np.array([[0, 0], [2, 2], [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], [3, 3], [3, 3], [3, 3]])
    clf = RadiusNeighborsClassifier(radius=1, outlier_label=[0, 1]).fit(backend.asarray(X1), backend.asarray(Y1))
    assert host(clf.predict(backend.asarray(np.array([[7.0], [15.0]])))).tolist() == [[3, 3], [0, 1]]
    with pytest.raises(InvalidInputError, match="length of outlier_label"):
        RadiusNeighborsClassifier(radius=1, outlier_label=[0, 1, 2]).fit(X1, Y1)


def test_radius_per_query_array(backend):
    rng = np.random.default_rng(2)
    X = rng.random((30, 3))
    radii = rng.random(30) * 0.6
    ref = skn.NearestNeighbors(algorithm="ball_tree").fit(X)
    ours = NearestNeighbors().fit(backend.asarray(X))
    want_d, want_i = ref.radius_neighbors(X, radius=radii, sort_results=True)
    got_d, got_i = ours.radius_neighbors(backend.asarray(X), radius=radii, sort_results=True)
    for a, b, c, d in zip(got_i, want_i, got_d, want_d):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(c, d, rtol=1e-12)
    with pytest.raises(InvalidInputError, match="one per query row"):
        ours.radius_neighbors(backend.asarray(X), radius=radii[:3])


def test_sklearn_mixins_auto_algorithm_and_pairwise_tag():
    from sklearn.base import is_classifier
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors._base import KNeighborsMixin as SkK
    from sklearn.neighbors._base import RadiusNeighborsMixin as SkR
    from sklearn.utils import get_tags

    assert issubclass(KNeighborsClassifier, SkK) and issubclass(KNeighborsRegressor, SkK)
    assert issubclass(RadiusNeighborsRegressor, SkR) and not issubclass(RadiusNeighborsRegressor, SkK)
    assert is_classifier(KNeighborsClassifier())
    # scikit-learn's "auto": brute force when k reaches half the rows; ball_tree for metrics
    # only its ball tree serves (gpuknn runs those brute force on the host)
    X = np.random.default_rng(0).normal(size=(8, 5))
    assert NearestNeighbors(n_neighbors=4).fit(X)._fit_method == "brute"
    assert NearestNeighbors(n_neighbors=3).fit(X)._fit_method == "kd_tree"
    nn = NearestNeighbors(n_neighbors=3, metric="seuclidean", metric_params={"V": [2] * 5}).fit(X)
    assert nn._fit_method == "ball_tree"
    # precomputed: cross-validation splits both axes of the distance matrix
    assert get_tags(KNeighborsClassifier(metric="precomputed")).input_tags.pairwise
    assert not get_tags(KNeighborsClassifier()).input_tags.pairwise
    rng = np.random.default_rng(1)
    Xc, y = rng.random((30, 2)), np.arange(30) % 3  # 10 a class: 5 folds stratify cleanly
    D = np.sqrt(((Xc[:, None, :] - Xc[None, :, :]) ** 2).sum(-1))
    on_rows = cross_val_score(KNeighborsClassifier(), Xc, y)
    np.testing.assert_array_equal(on_rows, cross_val_score(KNeighborsClassifier(metric="precomputed"), D, y))


@pytest.mark.parametrize("cls", [KNeighborsClassifier, RadiusNeighborsRegressor])
@pytest.mark.parametrize("algorithm", ["kd_tree", "ball_tree"])
def test_semimetric_p_refused_by_trees(cls, algorithm):
    X = np.random.default_rng(0).random((10, 2))
    with pytest.raises(ValueError, match=f'algorithm="{algorithm}" does not support 0 < p < 1'):
        cls(algorithm=algorithm, p=0.1).fit(X, np.ones(10))


def test_nan_euclidean_estimators(backend):
    X = np.array([[0, 1], [1, np.nan], [2, 3], [3, 5]], dtype=np.float64)
    y = np.array([0, 0, 1, 1])
    for cls, kw in ((KNeighborsClassifier, {"n_neighbors": 2}), (KNeighborsRegressor, {"n_neighbors": 2})):
        ref = getattr(skn, cls.__name__)(metric="nan_euclidean", **kw).fit(X, y)
        ours = cls(metric="nan_euclidean", **kw).fit(backend.asarray(X), backend.asarray(y))
        assert_xp(ours.predict(backend.asarray(X)), ref.predict(X), backend, exact=False, rtol=1e-12)


def test_empty_radius_warning_is_sklearns():
    X = np.random.default_rng(0).random((10, 2))
    reg = RadiusNeighborsRegressor(radius=0.1).fit(X, np.arange(10.0))
    msg = "One or more samples have no neighbors within specified radius; predicting NaN."
    with pytest.warns(UserWarning, match=msg.replace(".", r"\.")):
        pred = reg.predict(np.full((1, 2), -1.0))
    assert np.isnan(host(pred)).all()


def test_precomputed_sparse_graph_in_a_pipeline():
    # KNeighborsTransformer's sparse graph feeds metric="precomputed" (scikit-learn's
    # pipelines): only stored entries are neighbours, explicit zeros included
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(0)
    X, X2, y = 2 * rng.random((40, 5)) - 1, 2 * rng.random((30, 5)) - 1, rng.random(40)
    for reg, k_graph in ((KNeighborsRegressor(n_neighbors=6), 6), (RadiusNeighborsRegressor(radius=1.5), 30)):
        chain = make_pipeline(
            KNeighborsTransformer(n_neighbors=k_graph, mode="distance"), reg.set_params(metric="precomputed")
        )
        compact = type(reg)(**{**reg.get_params(), "metric": "minkowski"})
        np.testing.assert_allclose(chain.fit(X, y).predict(X2), compact.fit(X, y).predict(X2), rtol=1e-12)
    G = KNeighborsTransformer(n_neighbors=3, mode="distance").fit(X).transform(X2)
    nn = NearestNeighbors(n_neighbors=3, metric="precomputed").fit(
        KNeighborsTransformer(n_neighbors=3, mode="distance").fit_transform(X)
    )
    d, i = nn.kneighbors(G)
    d_ref, i_ref = skn.NearestNeighbors(n_neighbors=3).fit(X).kneighbors(X2)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_allclose(d, d_ref, rtol=1e-12)
    # the transformer stores n_neighbors + 1 entries a row (scikit-learn's convention)
    with pytest.raises(InvalidInputError, match="5 neighbors per samples are required, but some samples have only 4"):
        nn.kneighbors(G, n_neighbors=5)
