"""Real Fashion-MNIST, end to end (skipped with a message when the data is absent)."""

import numpy as np
import pytest

import gpuknn


@pytest.mark.slow
def test_correlation_knn_on_real_fashion_mnist(fashion_dir):
    Xtr, ytr, Xte, yte = gpuknn.load_fashion_mnist(data_dir=fashion_dir)
    clf = gpuknn.KNeighborsClassifier(5, metric="correlation").fit(Xtr[:10_000], ytr[:10_000])
    acc = clf.score(Xte[:2000], yte[:2000])
    assert acc >= 0.80
    # the tiled engine gives the same neighbours with a tiny budget
    d1, i1 = gpuknn.kneighbors(Xte[:50], Xtr[:10_000], 5, metric="correlation")
    d2, i2 = gpuknn.kneighbors(Xte[:50], Xtr[:10_000], 5, metric="correlation", working_memory=1)
    np.testing.assert_array_equal(i1, i2)
