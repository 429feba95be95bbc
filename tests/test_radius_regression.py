"""RadiusNeighborsRegressor against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from helpers import assert_xp, host
from sklearn.metrics import r2_score
from sklearn.neighbors import RadiusNeighborsRegressor as SkRNR
from test_regression import TOL, WEIGHT_IDS, WEIGHTS, _data, _exact_distances

import gpuknn.neighbors._regression as radius_regression
from gpuknn.errors import EmptyNeighborhoodWarning, InvalidInputError, NotFittedError
from gpuknn.neighbors import RadiusNeighborsRegressor


def _sk_radius_predict(ref, Q):
    """scikit-learn's prediction, and whether it warned (it does for empty neighbourhoods)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pred = ref.predict(Q)
    return pred, any("no neighbors within specified radius" in str(w.message) for w in caught)


@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
@pytest.mark.parametrize("outputs", [1, 2])
def test_radius_regressor_equals_sklearn_with_empty_neighbourhoods(backend, weights, outputs):
    X, y, Q = _data(seed=1, outputs=outputs, spread=2.0)  # spread out: some queries are alone
    ours = RadiusNeighborsRegressor(1.0, weights=weights).fit(backend.asarray(X), backend.asarray(y))
    expected, sk_warned = _sk_radius_predict(SkRNR(radius=1.0, weights=weights, algorithm="brute").fit(X, y), Q)
    empty = np.isnan(expected).any(axis=1) if outputs > 1 else np.isnan(expected)
    assert sk_warned and 0 < empty.sum() < len(Q)  # the test exercises both cases
    with pytest.warns(EmptyNeighborhoodWarning, match="no neighbors within specified radius") as rec:
        pred = ours.predict(backend.asarray(Q))
    assert f"{int(empty.sum())} of {len(Q)} query rows" in str(rec[0].message)
    assert_xp(pred, expected, backend, dtype=backend.xp.float64, **TOL)  # NaN where sklearn's
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no empty neighbourhood: no warning
        assert_xp(ours.predict(backend.asarray(Q[~empty])), expected[~empty], backend, **TOL)


@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
def test_duplicates_and_zero_distances_follow_sklearn_rule(backend, weights):
    """Queries on training rows (some duplicated with other targets) average those alone."""
    X, y, Q = _data(seed=2, n=60, n_q=10, outputs=2)
    X = np.concatenate([X, X[:8]])  # duplicates, with targets of their own
    y = np.concatenate([y, y[:8] + 5.0])
    Q = np.concatenate([X[:6], X[40:43], Q])  # on duplicated rows, on single rows, elsewhere
    D_fit, D_q = _exact_distances(X, X), _exact_distances(Q, X)
    Xb, yb, Qb = backend.asarray(X), backend.asarray(y), backend.asarray(Q)
    ref_r = SkRNR(radius=1.5, weights=weights, metric="precomputed").fit(D_fit, y)
    expected, _ = _sk_radius_predict(ref_r, D_q)
    ours_r = RadiusNeighborsRegressor(1.5, weights=weights).fit(Xb, yb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyNeighborhoodWarning)
        assert_xp(ours_r.predict(Qb), expected, backend, **TOL)
    if weights == "distance":  # the zero-distance rule: the two duplicates' mean exactly
        np.testing.assert_array_equal(expected[:6], (y[:6] + y[60:66]) / 2)


def test_radius_is_tiled_under_working_memory(backend, monkeypatch):
    X, y, Q = _data(seed=3, n=200, n_q=70, outputs=2)
    full = RadiusNeighborsRegressor(2.0, weights="distance", algorithm="brute").fit(
        backend.asarray(X), backend.asarray(y)
    )
    expected = full.predict(backend.asarray(Q))
    shapes = []
    original = radius_regression.radius_tile

    def spy(Xb, ref, radius):
        t = original(Xb, ref, radius)
        shapes.append(tuple(t.dist.shape))
        return t

    monkeypatch.setattr(radius_regression, "radius_tile", spy)
    small = RadiusNeighborsRegressor(
        2.0, weights="distance", algorithm="brute", working_memory=200 * 80 * 9 / 2**20
    )  # MiB: 9 rows
    pred = small.fit(backend.asarray(X), backend.asarray(y)).predict(backend.asarray(Q))
    assert shapes and all(s == (9, 200) for s in shapes[:-1]) and shapes[-1] == (70 % 9, 200)
    assert_xp(pred, host(expected), backend, **TOL)  # same members; sums may round apart


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
def test_kd_tree_and_brute_agree_with_sklearn(metric, weights):
    X, y, Q = _data(seed=4, outputs=2, spread=1.5)
    radius = 1.1 if metric == "euclidean" else 1.21
    ref = SkRNR(radius=radius, weights=weights, metric=metric, algorithm="brute").fit(X, y)
    expected, _ = _sk_radius_predict(ref, Q)
    for algorithm in ("kd_tree", "brute", "auto"):
        ours = RadiusNeighborsRegressor(radius, weights=weights, metric=metric, algorithm=algorithm).fit(X, y)
        assert ours._fit_method == ("brute" if algorithm == "brute" else "kd_tree")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyNeighborhoodWarning)
            np.testing.assert_allclose(ours.predict(Q), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "correlation"])
def test_angular_metrics_equal_sklearn(backend, metric):
    X, y, Q = _data(seed=5, outputs=1)
    ours = RadiusNeighborsRegressor(0.3, metric=metric).fit(backend.asarray(X), backend.asarray(y))
    expected, warned = _sk_radius_predict(SkRNR(radius=0.3, metric=metric, algorithm="brute").fit(X, y), Q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyNeighborhoodWarning)
        assert_xp(ours.predict(backend.asarray(Q)), expected, backend, exact=False, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_diabetes_equals_sklearn_and_score_is_r2(backend, weights):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)  # bundled with scikit-learn: no download
    perm = np.random.default_rng(0).permutation(len(y))
    tr, te = perm[:300], perm[300:]
    Y2 = np.stack([y, np.log(y)], axis=1)
    for target in (y, Y2):
        r_ours = RadiusNeighborsRegressor(0.16, weights=weights).fit(
            backend.asarray(X[tr]), backend.asarray(target[tr])
        )
        r_ref = SkRNR(radius=0.16, weights=weights, algorithm="brute").fit(X[tr], target[tr])
        expected, warned = _sk_radius_predict(r_ref, X[te])
        assert not warned
        assert_xp(r_ours.predict(backend.asarray(X[te])), expected, backend, exact=False, rtol=1e-12)
        assert r_ours.score(backend.asarray(X[te]), backend.asarray(target[te])) == pytest.approx(
            r2_score(target[te], expected), abs=1e-12
        )


def test_errors(backend):
    X, y, Q = _data(seed=7)
    Xb, yb, Qb = backend.asarray(X), backend.asarray(y), backend.asarray(Q)
    with pytest.raises(NotFittedError):
        RadiusNeighborsRegressor().predict(Qb)
    cases = [
        (RadiusNeighborsRegressor(-1.0), "radius must be finite and >= 0, got -1.0"),
        (RadiusNeighborsRegressor(float("nan")), "radius must be finite"),
        (RadiusNeighborsRegressor("wide"), "radius must be a number, got 'wide'"),
        (RadiusNeighborsRegressor(metric="inner"), "metric='inner' is not one"),
    ]
    for est, msg in cases:
        with pytest.raises(InvalidInputError, match=msg):
            est.fit(Xb, yb)


def test_warning_class_is_a_user_warning():
    assert issubclass(EmptyNeighborhoodWarning, UserWarning)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_float32_rows_close_to_float64_sklearn(backend, weights):
    X, y, Q = _data(seed=9, outputs=2)
    X32, Q32 = backend.asarray(X.astype(np.float32)), backend.asarray(Q.astype(np.float32))
    X, Q = X.astype(np.float32).astype(np.float64), Q.astype(np.float32).astype(np.float64)
    r_ref, warned = _sk_radius_predict(SkRNR(radius=2.5, weights=weights).fit(X, y), Q)
    assert not warned
    r_pred = RadiusNeighborsRegressor(2.5, weights=weights).fit(X32, backend.asarray(y)).predict(Q32)
    assert_xp(r_pred, r_ref, backend, exact=False, rtol=1e-5, atol=1e-5)
