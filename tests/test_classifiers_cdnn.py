"""CDNN / ECDNN against a plain per-sample reference and the published example."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split as sk_train_test_split

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import CDNNClassifier, ECDNNClassifier, KNeighborsClassifier, centroid_displacement_predict
from gpuknn.ops.kneighbors import kneighbors


def reference_cdnn(X, y, Q, k, n_confident=-1, space=lambda a: a):
    """Direct transcription of the rule, one query at a time (euclidean neighbours)."""
    out = []
    P, Pq = space(X), space(Q)
    for q, pq in zip(Q, Pq):
        d = np.sqrt(((X - q) ** 2).sum(axis=1))
        nn = np.lexsort((np.arange(len(X)), d))[:k]
        labels = y[nn]
        m = k if n_confident is None else n_confident
        if m != -1 and np.all(labels[:m] == labels[0]):
            out.append(labels[0])
            continue
        best, best_disp = None, np.inf
        for c in dict.fromkeys(labels.tolist()):  # classes in order of first occurrence
            members = P[nn][labels == c]
            disp = np.linalg.norm(pq - members.mean(axis=0)) / (len(members) + 1)
            if disp < best_disp:
                best, best_disp = c, disp
        out.append(best)
    return np.array(out)


def _data(seed=0, n=180, d=5, c=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.6
    return X, y, rng.normal(size=(90, d)) + 0.9


@pytest.mark.parametrize("k", [1, 6, 15])
def test_cdnn_and_ecdnn_equal_reference(xp, to_xp, k):
    X, y, Q = _data(k)
    cd = CDNNClassifier(k).fit(to_xp(X), to_xp(y)).predict(to_xp(Q))
    np.testing.assert_array_equal(to_numpy(cd), reference_cdnn(X, y, Q, k))
    for m in (1, 2, k, None):
        if m is not None and m > k:
            continue
        ec = ECDNNClassifier(k, n_confident=m).fit(to_xp(X), to_xp(y)).predict(to_xp(Q))
        np.testing.assert_array_equal(to_numpy(ec), reference_cdnn(X, y, Q, k, m))


def test_differs_from_knn_and_tie_goes_to_first_met_class():
    X = np.array([[0.0], [10.0], [15.0]])
    y = np.array([1, 1, 0])
    # Neighbours of 11: 10 (class 1), 15 (class 0), 0 (class 1). Displacements:
    # class 1: |11 - 5| / 3 = 2, class 0: |11 - 15| / 2 = 2 -> tie -> class met first (1).
    assert CDNNClassifier(3).fit(X, y).predict(np.array([[11.0]])).tolist() == [1]
    X2 = np.array([[0.0], [0.1], [1.0], [5.0], [6.0]])
    y2 = np.array([0, 0, 1, 1, 1])
    q = np.array([[0.8]])
    assert KNeighborsClassifier(3).fit(X2, y2).predict(q).tolist() == [0]
    assert CDNNClassifier(3).fit(X2, y2).predict(q).tolist() == [1]


def test_many_k_from_one_neighbour_list_and_string_labels(xp, to_xp):
    X, y, Q = _data(7)
    _, idx = kneighbors(to_xp(Q), to_xp(X), 11)
    ks = [3, 7, 11]
    many = to_numpy(centroid_displacement_predict(to_xp(Q), to_xp(X), to_xp(y), idx, n_classes=4, ks=ks, n_confident=2))
    for row, k in zip(many, ks):
        np.testing.assert_array_equal(row, reference_cdnn(X, y, Q, k, 2))
    names = np.array(["w", "x", "y", "z"])
    pred = CDNNClassifier(7).fit(to_xp(X), names[y]).predict(to_xp(Q))
    np.testing.assert_array_equal(pred, names[reference_cdnn(X, y, Q, 7)])


def test_cosine_displacement_in_unit_space():
    X, y, Q = _data(3)
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    # Neighbours under cosine == euclidean neighbours of the unit rows.
    pred = CDNNClassifier(9, metric="cosine").fit(X, y).predict(Q)
    np.testing.assert_array_equal(pred, reference_cdnn(unit(X), y, unit(Q), 9))


@pytest.mark.parametrize(
    "loader, ecdnn_acc, knn_acc",
    [(load_digits, 0.992, 0.978), (load_breast_cancer, 0.947, 0.912)],
)
def test_published_example(loader, ecdnn_acc, knn_acc):
    X, y = loader(return_X_y=True)
    Xtr, Xte, ytr, yte = sk_train_test_split(X, y, test_size=0.2, random_state=1)
    n = len(yte)
    ec = ECDNNClassifier(21).fit(Xtr, ytr).score(Xte, yte)
    kn = KNeighborsClassifier(21).fit(Xtr, ytr).score(Xte, yte)
    assert abs(ec - ecdnn_acc) * n <= 2, ec  # got 0.9917 / 0.9474
    assert abs(kn - knn_acc) * n <= 2, kn  # got 0.9778 / 0.9123
    assert ec > kn


def test_errors(xp, to_xp):
    X, y, Q = _data()
    for cls in (CDNNClassifier, ECDNNClassifier):
        with pytest.raises(NotFittedError):
            cls(3).predict(to_xp(Q))
        clf = cls(3).fit(to_xp(X), to_xp(y))
        with pytest.raises(InvalidInputError, match="features"):
            clf.predict(to_xp(Q[:, :4]))
        bad = Q.copy()
        bad[5, 2] = np.nan
        with pytest.raises(InvalidInputError, match="NaN"):
            clf.predict(to_xp(bad))
    with pytest.raises(InvalidInputError, match="n_confident"):
        ECDNNClassifier(3, n_confident=4).fit(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        CDNNClassifier(0).fit(to_xp(X), to_xp(y))
