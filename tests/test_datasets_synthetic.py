"""Synthetic data generators."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.neighbors import KNeighborsClassifier

from gpuknn._backend import array_namespace, to_numpy
from gpuknn.datasets import make_classification_images, make_fashion_mnist_like, make_gaussian_classes
from gpuknn.errors import InvalidInputError


def test_images_shape_range_balance_and_seed():
    X, y = make_classification_images(503, random_state=3)
    assert X.shape == (503, 784) and X.dtype == np.float32 and y.dtype == np.int64
    assert X.min() >= 0 and X.max() <= 255 and np.array_equal(X, np.round(X))
    counts = np.bincount(y, minlength=10)
    assert counts.max() - counts.min() <= 1
    X2, y2 = make_classification_images(503, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = make_classification_images(503, random_state=4)
    assert not np.array_equal(X, X3)


def test_images_learnable_by_correlation_knn_but_not_trivially():
    Xtr, ytr, Xte, yte = make_fashion_mnist_like(2000, 500, random_state=0)
    clf = KNeighborsClassifier(5, metric="correlation", algorithm="brute").fit(Xtr, ytr)
    acc = clf.score(Xte, yte)
    assert 0.6 < acc < 0.99, acc  # chance is 0.1


def test_images_options_and_namespace(xp):
    X, y = make_classification_images(40, n_features=16, n_classes=4, dtype="float64", random_state=0, xp=xp)
    assert array_namespace(X).__name__ == xp.__name__
    assert X.dtype == xp.float64 and tuple(X.shape) == (40, 16) and y.dtype == xp.int64
    assert set(to_numpy(y).tolist()) == {0, 1, 2, 3}


def test_fashion_like_same_prototypes_for_both_splits():
    Xtr, ytr, Xte, yte = make_fashion_mnist_like(300, 100, n_classes=3, class_sep=0.3, random_state=1)
    means_tr = np.stack([Xtr[ytr == c].mean(0) for c in range(3)])
    means_te = np.stack([Xte[yte == c].mean(0) for c in range(3)])
    corr = np.corrcoef(means_tr, means_te)[:3, 3:]
    assert np.all(np.argmax(corr, axis=1) == np.arange(3))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_samples=5),
        dict(n_samples=0),
        dict(n_samples=50, n_classes=1),
        dict(n_samples=50, noise=-1.0),
        dict(n_samples=50, dtype="int8"),
        dict(n_samples=2.5),
    ],
)
def test_images_bad_arguments(kwargs):
    n = kwargs.pop("n_samples")
    with pytest.raises(InvalidInputError):
        make_classification_images(n, **kwargs)


def test_gaussian_classes_counts_means_and_bayes_error():
    n, d = 20000, 2.0
    X, y = make_gaussian_classes(n, n_features=3, centers_distance=d, positive_fraction=0.5, random_state=0)
    assert X.shape == (n, 3) and X.dtype == np.float64 and int(y.sum()) == n // 2
    np.testing.assert_allclose(X[y == 1].mean(0), [d, 0, 0], atol=0.05)
    np.testing.assert_allclose(X[y == 0].mean(0), [0, 0, 0], atol=0.05)
    np.testing.assert_allclose(X[y == 0].std(0), [1, 1, 1], atol=0.05)
    bayes_err = np.mean((X[:, 0] > d / 2) != (y == 1))
    assert abs(bayes_err - norm.cdf(-d / 2)) < 0.01


def test_gaussian_classes_imbalance_seed_namespace(xp):
    X, y = make_gaussian_classes(
        101, n_features=2, centers_distance=1.0, positive_fraction=0.1, random_state=5, xp=xp, dtype="float32"
    )
    assert int(xp.sum(y)) == 10 and X.dtype == xp.float32
    X2, y2 = make_gaussian_classes(101, n_features=2, centers_distance=1.0, positive_fraction=0.1, random_state=5)
    np.testing.assert_array_equal(to_numpy(y), y2)
    np.testing.assert_allclose(to_numpy(X), X2.astype(np.float32))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(positive_fraction=0.0),
        dict(positive_fraction=1.0),
        dict(positive_fraction=0.001),
        dict(centers_distance=-1.0),
        dict(centers_distance=float("nan")),
        dict(n_features=0),
    ],
)
def test_gaussian_classes_bad_arguments(kwargs):
    with pytest.raises(InvalidInputError):
        make_gaussian_classes(100, **{"n_features": 2, **kwargs})
