"""KNeighborsRegressor against scikit-learn, on every backend, and the fit-time validation it
shares with RadiusNeighborsRegressor (whose own tests: tests/test_radius_regression.py)."""

import numpy as np
import pytest
from helpers import assert_xp
from sklearn.neighbors import KNeighborsRegressor as SkKNR

from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import KNeighborsRegressor, RadiusNeighborsRegressor

TOL = dict(exact=False, rtol=1e-12, atol=1e-12)


def _inverse_one_plus(d):
    """An elementwise weight function that works in any namespace."""
    return 1.0 / (1.0 + d)


WEIGHTS = ["uniform", "distance", _inverse_one_plus]
WEIGHT_IDS = ["uniform", "distance", "callable"]


def _data(seed=0, n=120, d=4, n_q=50, outputs=1, spread=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=(d, outputs)) + 0.1 * rng.normal(size=(n, outputs))
    Q = rng.normal(size=(n_q, d)) * spread
    return X, (y[:, 0] if outputs == 1 else y), Q


def _exact_distances(A, B):
    """Float64 distances from the differences (exact zeros for duplicates): the oracle's."""
    return np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("k", [1, 5])
def test_kneighbors_regressor_equals_sklearn(backend, weights, outputs, k):
    X, y, Q = _data(outputs=outputs)
    ours = KNeighborsRegressor(k, weights=weights).fit(backend.asarray(X), backend.asarray(y))
    ref = SkKNR(n_neighbors=k, weights=weights, algorithm="brute").fit(X, y)
    pred = ours.predict(backend.asarray(Q))
    assert_xp(pred, ref.predict(Q), backend, dtype=backend.xp.float64, **TOL)
    d, i = ours.kneighbors(backend.asarray(Q), 3)
    d_ref, i_ref = ref.kneighbors(Q, 3)
    assert_xp(i, i_ref, backend)
    assert_xp(d, d_ref, backend, exact=False, rtol=1e-9, atol=1e-9)
    assert_xp(
        ours.kneighbors(backend.asarray(Q), return_distance=False), ref.kneighbors(Q, return_distance=False), backend
    )


@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
def test_duplicates_and_zero_distances_follow_sklearn_rule(backend, weights):
    """Queries on training rows (some duplicated with other targets) average those alone."""
    X, y, Q = _data(seed=2, n=60, n_q=10, outputs=2)
    X = np.concatenate([X, X[:8]])  # duplicates, with targets of their own
    y = np.concatenate([y, y[:8] + 5.0])
    Q = np.concatenate([X[:6], X[40:43], Q])  # on duplicated rows, on single rows, elsewhere
    D_fit, D_q = _exact_distances(X, X), _exact_distances(Q, X)
    Xb, yb, Qb = backend.asarray(X), backend.asarray(y), backend.asarray(Q)
    # A tie across the k-th place is decided by index order (sklearn's is unspecified): a k
    # without one, so that the zero-distance rule alone is compared.
    ranked = np.sort(D_q, axis=1)
    k = next(k for k in (6, 5, 4, 7, 3) if np.all(ranked[:, k - 1] < ranked[:, k]))
    ref_k = SkKNR(n_neighbors=k, weights=weights, metric="precomputed").fit(D_fit, y)
    ours_k = KNeighborsRegressor(k, weights=weights).fit(Xb, yb)
    assert_xp(ours_k.predict(Qb), ref_k.predict(D_q), backend, **TOL)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
def test_kd_tree_and_brute_agree_with_sklearn(metric, weights):
    X, y, Q = _data(seed=4, outputs=2, spread=1.5)
    for algorithm in ("kd_tree", "brute", "auto"):
        k_ours = KNeighborsRegressor(4, weights=weights, metric=metric, algorithm=algorithm).fit(X, y)
        k_ref = SkKNR(n_neighbors=4, weights=weights, metric=metric, algorithm="brute").fit(X, y)
        np.testing.assert_allclose(k_ours.predict(Q), k_ref.predict(Q), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "correlation"])
def test_angular_metrics_equal_sklearn(backend, metric):
    X, y, Q = _data(seed=5, outputs=1)
    for weights in ("uniform", "distance"):
        ours = KNeighborsRegressor(5, weights=weights, metric=metric).fit(backend.asarray(X), backend.asarray(y))
        ref = SkKNR(n_neighbors=5, weights=weights, metric=metric, algorithm="brute").fit(X, y)
        assert_xp(ours.predict(backend.asarray(Q)), ref.predict(Q), backend, exact=False, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_diabetes_equals_sklearn_and_score_is_r2(backend, weights):
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)  # bundled with scikit-learn: no download
    perm = np.random.default_rng(0).permutation(len(y))
    tr, te = perm[:300], perm[300:]
    Y2 = np.stack([y, np.log(y)], axis=1)
    for target in (y, Y2):
        ours = KNeighborsRegressor(7, weights=weights).fit(backend.asarray(X[tr]), backend.asarray(target[tr]))
        ref = SkKNR(n_neighbors=7, weights=weights, algorithm="brute").fit(X[tr], target[tr])
        assert_xp(ours.predict(backend.asarray(X[te])), ref.predict(X[te]), backend, exact=False, rtol=1e-12)
        score = ours.score(backend.asarray(X[te]), backend.asarray(target[te]))
        assert isinstance(score, float) and score == pytest.approx(ref.score(X[te], target[te]), abs=1e-12)
    sw = np.linspace(0.5, 2.0, len(te))
    assert ours.score(backend.asarray(X[te]), backend.asarray(Y2[te]), backend.asarray(sw)) == pytest.approx(
        ref.score(X[te], Y2[te], sample_weight=sw), abs=1e-12
    )


def test_target_dtypes_and_host_targets(backend):
    X, y, Q = _data(seed=6)
    xp = backend.xp
    y32 = KNeighborsRegressor(3).fit(backend.asarray(X), backend.asarray(y.astype(np.float32)))
    assert_xp(
        y32.predict(backend.asarray(Q)),
        SkKNR(n_neighbors=3).fit(X, y.astype(np.float32)).predict(Q),
        backend,
        dtype=xp.float32,
        exact=False,
        rtol=1e-6,
    )
    y_int = np.round(y * 3).astype(np.int64)
    ours = KNeighborsRegressor(3).fit(backend.asarray(X), backend.asarray(y_int))
    assert_xp(
        ours.predict(backend.asarray(Q)),
        SkKNR(n_neighbors=3).fit(X, y_int).predict(Q),
        backend,
        dtype=xp.float64,
        **TOL,
    )
    # A host (NumPy) or list target goes with any X, onto X's device; a column y stays 2-D.
    col = KNeighborsRegressor(3).fit(backend.asarray(X), y[:, None]).predict(backend.asarray(Q))
    assert_xp(col, SkKNR(n_neighbors=3).fit(X, y[:, None]).predict(Q), backend, **TOL)
    listed = KNeighborsRegressor(3).fit(backend.asarray(X), y.tolist()).predict(backend.asarray(Q))
    assert_xp(listed, SkKNR(n_neighbors=3).fit(X, y).predict(Q), backend, **TOL)


def test_errors(backend):
    X, y, Q = _data(seed=7)
    Xb, yb, Qb = backend.asarray(X), backend.asarray(y), backend.asarray(Q)
    with pytest.raises(NotFittedError):
        KNeighborsRegressor().predict(Qb)
    cases = [
        (
            KNeighborsRegressor(weights="gaussian"),
            "weights must be 'uniform', 'distance' or a callable, got 'gaussian'",
        ),
        (KNeighborsRegressor(weights="distance", metric="inner"), "undefined for metric='inner'"),
        (KNeighborsRegressor(0), r"n_neighbors must be in \[1, inf\], got 0"),
        (KNeighborsRegressor(2.5), "n_neighbors must be an integer, got 2.5"),
        (KNeighborsRegressor(metric="l7"), "unknown metric 'l7'"),
        (KNeighborsRegressor(algorithm="cover_tree"), "algorithm must be one of"),
        (KNeighborsRegressor(working_memory=-5), "working_memory must be a positive number of MiB, got -5"),
    ]
    for est, msg in cases:
        with pytest.raises(InvalidInputError, match=msg):
            est.fit(Xb, yb)
    bad_y = y.copy()
    bad_y[3] = np.nan
    for est in (KNeighborsRegressor(3), RadiusNeighborsRegressor()):
        with pytest.raises(InvalidInputError, match="y contains NaN or infinity in 1 row"):
            est.fit(Xb, backend.asarray(bad_y))
        with pytest.raises(InvalidInputError, match="X has 120 samples but y has 119"):
            est.fit(Xb, backend.asarray(y[:-1]))
        with pytest.raises(InvalidInputError, match=r"y must be 1-D or 2-D, got shape \(120, 1, 1\)"):
            est.fit(Xb, backend.asarray(y[:, None, None]))
        with pytest.raises(InvalidInputError, match="requires y to be passed"):
            est.fit(Xb, None)
        est.fit(Xb, yb)
        with pytest.raises(InvalidInputError, match="X has 3 features, but .* is expecting 4 features"):
            est.predict(backend.asarray(Q[:, :3]))
    with pytest.raises(InvalidInputError, match="n_neighbors <= n_samples_fit, but n_neighbors = 200"):
        KNeighborsRegressor(200).fit(Xb, yb).predict(Qb)  # checked at query time, as in sklearn
    with pytest.raises(InvalidInputError, match=r"returned shape \(50,\) for distances of shape \(50, 3\)"):
        KNeighborsRegressor(3, weights=lambda d: d[:, 0]).fit(Xb, yb).predict(Qb)


def test_target_of_another_namespace_follows_X():
    # scikit-learn's array-API rule: y (and everything else) follows X's namespace and device
    torch = pytest.importorskip("torch")
    strict = pytest.importorskip("array_api_strict")
    X, y, Q = _data(seed=8)
    reg = KNeighborsRegressor().fit(torch.asarray(X), strict.asarray(y, device=strict.Device("device1")))
    pred = reg.predict(torch.asarray(Q))
    assert isinstance(pred, torch.Tensor)
    np.testing.assert_allclose(pred.numpy(), SkKNR().fit(X, y).predict(Q), rtol=1e-12)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_float32_rows_close_to_float64_sklearn(backend, weights):
    X, y, Q = _data(seed=9, outputs=2)
    X32, Q32 = backend.asarray(X.astype(np.float32)), backend.asarray(Q.astype(np.float32))
    X, Q = X.astype(np.float32).astype(np.float64), Q.astype(np.float32).astype(np.float64)
    k_pred = KNeighborsRegressor(4, weights=weights).fit(X32, backend.asarray(y)).predict(Q32)
    k_ref = SkKNR(n_neighbors=4, weights=weights).fit(X, y).predict(Q)
    assert_xp(k_pred, k_ref, backend, dtype=backend.xp.float64, exact=False, rtol=1e-5, atol=1e-5)
