"""RadiusNeighborsClassifier against scikit-learn, outlier rule included."""

import numpy as np
import pytest
from sklearn.neighbors import RadiusNeighborsClassifier as SkRNC

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import RadiusNeighborsClassifier


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 150)
    X = rng.normal(size=(150, 3)) + y[:, None]
    Q = rng.normal(size=(70, 3)) * 1.6 + 1.0  # spread out: some queries have no neighbour
    return X, y, Q


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("algorithm", ["brute", "auto"])
def test_equals_sklearn_with_most_frequent_outliers(xp, to_xp, weights, algorithm):
    X, y, Q = _data()
    kw = dict(radius=0.8, weights=weights, outlier_label="most_frequent")
    ours = RadiusNeighborsClassifier(**kw, algorithm=algorithm).fit(to_xp(X), to_xp(y))
    ref = SkRNC(**kw, algorithm="brute").fit(X, y)
    expected = ref.predict(Q)
    n_out = sum(len(i) == 0 for i in ref.radius_neighbors(Q, return_distance=False))
    assert 0 < n_out < len(Q)  # the test exercises both cases
    np.testing.assert_array_equal(to_numpy(ours.predict(to_xp(Q))), expected)
    np.testing.assert_allclose(to_numpy(ours.predict_proba(to_xp(Q))), ref.predict_proba(Q), atol=1e-12)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
def test_outlier_none_raises_like_sklearn(algorithm):
    X, y, Q = _data()
    ref = SkRNC(radius=0.8, algorithm="brute").fit(X, y)
    with pytest.raises(ValueError, match="No neighbors"):
        ref.predict(Q)
    ours = RadiusNeighborsClassifier(0.8, algorithm=algorithm).fit(X, y)
    with pytest.raises(InvalidInputError, match="no neighbours within radius"):
        ours.predict(Q)
    inliers = np.array([len(i) > 0 for i in ref.radius_neighbors(Q, return_distance=False)])
    np.testing.assert_array_equal(ours.predict(Q[inliers]), ref.predict(Q[inliers]))


@pytest.mark.filterwarnings("ignore:Outlier label:UserWarning")
def test_label_outside_classes_and_string_labels():
    X, y, Q = _data(1)
    names = np.array(["ant", "bee", "cow"])[y]
    ref = SkRNC(radius=0.7, outlier_label="zzz").fit(X, names)
    ours = RadiusNeighborsClassifier(0.7, outlier_label="zzz").fit(X, names)
    np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
    np.testing.assert_allclose(ours.predict_proba(Q), ref.predict_proba(Q), atol=1e-12)
    ref_i = SkRNC(radius=0.7, outlier_label=-1).fit(X, y)
    ours_i = RadiusNeighborsClassifier(0.7, outlier_label=-1, algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(ours_i.predict(Q), ref_i.predict(Q))


@pytest.mark.parametrize("metric", ["sqeuclidean", "cosine"])
def test_other_metrics_equal_sklearn(metric):
    X, y, Q = _data(2)
    r = 0.5 if metric == "sqeuclidean" else 0.02
    ours = RadiusNeighborsClassifier(r, metric=metric, outlier_label="most_frequent").fit(X, y)
    ref = SkRNC(radius=r, metric=metric, outlier_label="most_frequent", algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))


def test_zero_distance_rule_kd_and_brute_agree():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    y = np.array([0, 1, 1, 1, 1])
    Q = np.array([[0.0, 0.0], [0.9, 0.9]])
    for algo in ("brute", "kd_tree"):
        clf = RadiusNeighborsClassifier(1.5, weights="distance", algorithm=algo).fit(X, y)
        np.testing.assert_allclose(clf.predict_proba(Q)[0], [0.5, 0.5])
        assert clf.predict(Q).tolist() == [0, 1]


def test_errors(xp, to_xp):
    X, y, Q = _data()
    with pytest.raises(NotFittedError):
        RadiusNeighborsClassifier().predict(to_xp(Q))
    clf = RadiusNeighborsClassifier(outlier_label="most_frequent").fit(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="features"):
        clf.predict(to_xp(Q[:, :2]))
    bad = Q.copy()
    bad[3, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        clf.predict(to_xp(bad))
    for kw in ({"radius": -1.0}, {"metric": "inner"}, {"weights": "gauss"}, {"outlier_label": "x"}):
        with pytest.raises(InvalidInputError):
            RadiusNeighborsClassifier(**kw).fit(to_xp(X), to_xp(y))
