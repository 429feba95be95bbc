"""KNeighborsClassifier against scikit-learn, on every backend and both search algorithms."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier as SkKNN

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import KNeighborsClassifier


def _data(seed=0, n=150, d=4, n_classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.8
    Q = rng.normal(size=(60, d)) + rng.integers(0, n_classes, 60)[:, None] * 0.8
    return X, y, Q


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_predict_equals_sklearn(xp, to_xp, weights, k):
    X, y, Q = _data()
    ours = KNeighborsClassifier(k, weights=weights).fit(to_xp(X), to_xp(y))
    ref = SkKNN(n_neighbors=k, weights=weights, algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(to_numpy(ours.predict(to_xp(Q))), ref.predict(Q))
    np.testing.assert_allclose(to_numpy(ours.predict_proba(to_xp(Q))), ref.predict_proba(Q), atol=1e-12)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "auto"])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_algorithms_agree_with_sklearn(algorithm, metric):
    X, y, Q = _data(seed=1)
    labels = np.array(["cat", "dog", "eel"])[y]
    ours = KNeighborsClassifier(5, metric=metric, algorithm=algorithm).fit(X, labels)
    ref = SkKNN(n_neighbors=5, metric=metric, algorithm="brute").fit(X, labels)
    np.testing.assert_array_equal(ours.predict(Q), ref.predict(Q))
    d, i = ours.kneighbors(Q, 3)
    d_ref, i_ref = ref.kneighbors(Q, 3)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_allclose(d, d_ref, rtol=1e-9, atol=1e-9)


def test_auto_picks_kd_tree_only_on_low_dim_numpy(xp, to_xp):
    X, y, _ = _data()
    clf = KNeighborsClassifier(3).fit(to_xp(X), to_xp(y))
    assert clf._fit_method == ("kd_tree" if xp.__name__.endswith("numpy") else "brute")
    assert KNeighborsClassifier(3, metric="cosine").fit(X, y)._fit_method == "brute"
    wide = np.random.default_rng(0).normal(size=(40, 16))
    assert KNeighborsClassifier(3).fit(wide, np.arange(40) % 2)._fit_method == "brute"


def test_kd_tree_rejected_where_unsupported(xp, to_xp):
    X, y, _ = _data()
    with pytest.raises(InvalidInputError, match="kd_tree"):
        KNeighborsClassifier(3, metric="cosine", algorithm="kd_tree").fit(X, y)
    with pytest.raises(InvalidInputError, match="algorithm"):
        KNeighborsClassifier(3, algorithm="cover_tree").fit(X, y)
    if not xp.__name__.endswith("numpy"):
        with pytest.raises(InvalidInputError, match="NumPy"):
            KNeighborsClassifier(3, algorithm="kd_tree").fit(to_xp(X), to_xp(y))


def test_bad_queries_and_not_fitted(xp, to_xp):
    X, y, Q = _data()
    with pytest.raises(NotFittedError):
        KNeighborsClassifier(3).predict(to_xp(Q))
    clf = KNeighborsClassifier(3).fit(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="features"):
        clf.predict(to_xp(Q[:, :3]))
    bad = Q.copy()
    bad[2, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        clf.predict(to_xp(bad))
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        KNeighborsClassifier(1000).fit(to_xp(X), to_xp(y))


@pytest.mark.parametrize("loader", ["load_iris", "load_wine", "load_breast_cancer", "load_digits"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_bundled_datasets_equal_sklearn(xp, to_xp, loader, weights):
    import sklearn.datasets

    X, y = getattr(sklearn.datasets, loader)(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(y))
    tr, te = perm[: int(0.7 * len(y))], perm[int(0.7 * len(y)) :]
    for k in (1, 5, 10):
        ours = KNeighborsClassifier(k, weights=weights, algorithm="brute").fit(to_xp(X[tr]), to_xp(y[tr]))
        ref = SkKNN(n_neighbors=k, weights=weights, algorithm="brute").fit(X[tr], y[tr])
        np.testing.assert_array_equal(to_numpy(ours.predict(to_xp(X[te]))), ref.predict(X[te]))


def test_labels_of_another_length(xp, to_xp):
    X, y, _ = _data()
    with pytest.raises(InvalidInputError, match="150 samples but y has 149"):
        KNeighborsClassifier(3).fit(to_xp(X), to_xp(y[:-1]))


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
@pytest.mark.parametrize("estimator", ["classifier", "regressor", "nearest"])
def test_messages_name_the_users_argument(algorithm, estimator):
    # issue 18: the engine's internal names (Q, R) never reach the user
    from gpuknn import KNeighborsRegressor, NearestNeighbors

    make = {"classifier": KNeighborsClassifier, "regressor": KNeighborsRegressor, "nearest": NearestNeighbors}[
        estimator
    ]
    X = np.random.default_rng(0).normal(size=(20, 3))
    bad = X.copy()
    bad[3, 1] = 1e200
    with pytest.raises(InvalidInputError, match=r"^X holds values up to 1e\+200"):
        make(3, algorithm=algorithm).fit(bad, np.arange(20) % 2)
    model = make(3, algorithm=algorithm).fit(X, np.arange(20) % 2)
    if estimator == "nearest":
        with pytest.raises(InvalidInputError, match=r"^X holds values up to 1e\+200"):
            model.kneighbors(bad)
        return
    with pytest.raises(InvalidInputError, match=r"^X holds values up to 1e\+200"):
        model.predict(bad)
