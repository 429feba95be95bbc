"""NearestCentroid against scikit-learn's."""

import numpy as np
import pytest
from sklearn.neighbors import NearestCentroid as SkNC

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import NearestCentroid


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 200)
    X = rng.normal(size=(200, 6)) + y[:, None] * 0.5
    return X, y, rng.normal(size=(80, 6)) + 0.7


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_equals_sklearn(xp, to_xp, metric):
    X, y, Q = _data()
    ours = NearestCentroid(metric=metric).fit(to_xp(X), to_xp(y))
    ref = SkNC().fit(X, y)
    np.testing.assert_allclose(to_numpy(ours.centroids_), ref.centroids_, rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(ours.predict(to_xp(Q))), ref.predict(Q))
    assert ours.score(to_xp(Q), to_xp(ref.predict(Q))) == 1.0


def test_string_labels_and_other_metrics():
    X, y, Q = _data(1)
    labels = np.array(["a", "b", "c", "d"])[y]
    pred = NearestCentroid(metric="cosine").fit(X, labels).predict(Q)
    cent = np.stack([X[y == c].mean(axis=0) for c in range(4)])
    cos = 1 - (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (cent / np.linalg.norm(cent, axis=1, keepdims=True)).T
    np.testing.assert_array_equal(pred, np.array(["a", "b", "c", "d"])[np.argmin(cos, axis=1)])
    inner = NearestCentroid(metric="inner").fit(X, y).predict(Q)
    np.testing.assert_array_equal(inner, np.argmax(Q @ cent.T, axis=1))


def test_errors(xp, to_xp):
    X, y, Q = _data()
    with pytest.raises(NotFittedError):
        NearestCentroid().predict(to_xp(Q))
    clf = NearestCentroid().fit(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="features"):
        clf.predict(to_xp(Q[:, :2]))
    bad = Q.copy()
    bad[0, 0] = np.inf
    with pytest.raises(InvalidInputError, match="row"):
        clf.predict(to_xp(bad))
    with pytest.raises(InvalidInputError, match="2 classes"):
        NearestCentroid().fit(to_xp(X), to_xp(np.zeros(200, dtype=np.int64)))
    with pytest.raises(InvalidInputError, match="metric"):
        NearestCentroid(metric="chebyshev").fit(to_xp(X), to_xp(y))


@pytest.mark.parametrize("shrink_threshold", [None, 0.3])
@pytest.mark.parametrize("metric", ["manhattan", "cityblock"])
def test_manhattan_median_centroids_equal_sklearn(xp, to_xp, metric, shrink_threshold):
    # scikit-learn: metric="manhattan" takes each class's feature-wise median as centroid
    X, y, Q = _data(2)
    X = X[:-1]  # an odd class size somewhere and even elsewhere: both median rules
    y = y[:-1]
    ours = NearestCentroid(metric=metric, shrink_threshold=shrink_threshold).fit(to_xp(X), to_xp(y))
    ref = SkNC(metric="manhattan", shrink_threshold=shrink_threshold).fit(X, y)
    np.testing.assert_allclose(to_numpy(ours.centroids_), ref.centroids_, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.deviations_), ref.deviations_, rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(ours.predict(to_xp(Q))), ref.predict(Q))
    # the medians differ from the means: not the euclidean centroids
    assert not np.allclose(to_numpy(ours.centroids_), SkNC().fit(X, y).centroids_)
