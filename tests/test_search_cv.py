"""KNeighborsClassifierCV and PCAKNeighborsClassifierCV: the choices and scores of
scikit-learn's GridSearchCV over the same grid and folds, on every backend."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import assert_xp
from sklearn import datasets
from sklearn.decomposition import PCA as SkPCA
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier as SkKNN
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

import gpuknn
from gpuknn.errors import InvalidInputError
from gpuknn.model_selection.search_cv import KNeighborsClassifierCV, PCAKNeighborsClassifierCV

CV = StratifiedKFold(5, shuffle=True, random_state=0)
KS = list(range(1, 31))
WEIGHTS = ["uniform", "distance"]


@functools.cache
def _data(name, jitter=True):
    """A bundled data set in float64. scikit-learn's brute force orders *equal* distances as
    argpartition leaves them, not by training index, so on data with exact distance ties
    (iris' 0.1 cm grid, digits' integer pixels) its neighbour lists differ from any index
    rule; ``jitter`` adds noise of 1e-6 (far below the data's resolution, far above the
    ~1e-12 rounding of its distances) to remove those ties and nothing else."""
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    if jitter:
        X = X + 1e-6 * np.random.default_rng(0).standard_normal(X.shape)
    return X, y


@functools.cache
def _sk_search(name, scoring):
    """scikit-learn's GridSearchCV over k and weights (computed once, shared by backends)."""
    X, y = _data(name)
    # One thread: on a loaded 2-core machine scikit-learn's OpenMP pool mostly waits (7x).
    with threadpool_limits(1):
        return GridSearchCV(
            SkKNN(algorithm="brute"), {"n_neighbors": KS, "weights": WEIGHTS}, cv=CV, scoring=scoring
        ).fit(X, y)


def _same_results(ours, sk, tol=1e-12):
    assert ours.cv_results_["params"] == sk.cv_results_["params"]
    for key in ["mean_test_score", "std_test_score"] + [f"split{i}_test_score" for i in range(ours.n_splits_)]:
        np.testing.assert_allclose(ours.cv_results_[key], sk.cv_results_[key], rtol=0, atol=tol, err_msg=key)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], sk.cv_results_["rank_test_score"])
    assert ours.best_params_ == sk.best_params_
    assert ours.best_index_ == sk.best_index_
    assert ours.best_score_ == pytest.approx(sk.best_score_, abs=tol)


@pytest.mark.parametrize(
    "name,scoring",
    [
        ("iris", "accuracy"),
        ("wine", "accuracy"),
        ("digits", "accuracy"),
        ("wine", "f1_macro"),
        ("digits", "balanced_accuracy"),
    ],
)
def test_k_choice_is_gridsearchcv_choice(backend, name, scoring):
    X, y = _data(name)
    sk = _sk_search(name, scoring)
    clf = KNeighborsClassifierCV(n_neighbors=KS, cv=CV, scoring=scoring)
    clf.fit(backend.asarray(X), backend.asarray(y))
    assert clf.n_splits_ == 5
    _same_results(clf, sk)
    # the refit is GridSearchCV's best estimator: same predictions, in the input's namespace
    assert_xp(clf.predict(backend.asarray(X[::7])), sk.predict(X[::7]), backend)
    assert_xp(clf.classes_, np.unique(y), backend)
    proba = clf.predict_proba(backend.asarray(X[:5]))
    assert_xp(proba, sk.predict_proba(X[:5]), backend, exact=False, atol=1e-12)
    dist, idx = clf.kneighbors(backend.asarray(X[:3]), 2)
    assert_xp(idx[:, 0], np.arange(3), backend)
    assert clf.score(backend.asarray(X), backend.asarray(y)) == pytest.approx(sk.score(X, y), abs=1e-12)


def test_ties_as_gridsearchcv_over_gpuknn_classifier():
    """On data with exact distance ties (raw iris), the choice and scores are those of
    GridSearchCV over gpuknn's own KNeighborsClassifier, which breaks ties by index too."""
    X, y = _data("iris", jitter=False)
    grid = {"n_neighbors": KS, "weights": WEIGHTS}
    ref = GridSearchCV(gpuknn.KNeighborsClassifier(algorithm="brute"), grid, cv=CV).fit(X, y)
    _same_results(KNeighborsClassifierCV(KS, cv=CV).fit(X, y), ref)


def test_int_cv_and_fixed_weights_are_gridsearchcv_defaults():
    """cv=5 means scikit-learn's StratifiedKFold(5), as GridSearchCV reads it; a str for
    weights is fixed, not searched (and so not in the params)."""
    X, y = _data("wine")
    with threadpool_limits(1):
        sk = GridSearchCV(SkKNN(algorithm="brute", weights="distance"), {"n_neighbors": [3, 1, 9]}, cv=5).fit(X, y)
    ours = KNeighborsClassifierCV([3, 1, 9], weights="distance").fit(X, y)
    _same_results(ours, sk)
    assert ours.best_estimator_.get_params()["weights"] == "distance"


def test_metric_search_and_nested_in_gridsearchcv():
    X, y = _data("iris")
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    grid = {"metric": ["euclidean", "cosine"], "n_neighbors": [1, 5, 9]}
    with threadpool_limits(1):
        sk = GridSearchCV(SkKNN(algorithm="brute"), grid, cv=cv).fit(X, y)
    ours = KNeighborsClassifierCV([1, 5, 9], metric=["euclidean", "cosine"], weights="uniform", cv=cv).fit(X, y)
    _same_results(ours, sk)
    # as an estimator inside GridSearchCV (over a parameter it does not search) and cross_val_score
    outer = GridSearchCV(
        KNeighborsClassifierCV([1, 5], weights="uniform", cv=3), {"metric": ["euclidean", "cosine"]}, cv=cv
    ).fit(X, y)
    assert outer.best_params_["metric"] in ("euclidean", "cosine")
    assert outer.best_estimator_.best_params_["n_neighbors"] in (1, 5)
    scores = cross_val_score(PCAKNeighborsClassifierCV([1, 2], [1, 5], weights="uniform", cv=3), X, y, cv=cv)
    assert scores.shape == (3,) and np.all(scores > 0.8)


@functools.cache
def _sk_pca_search(name):
    X, y = _data(name)
    pipe = Pipeline([("pca", SkPCA(svd_solver="full")), ("knn", SkKNN(algorithm="brute"))])
    grid = {"pca__n_components": [2, 5, 8], "knn__n_neighbors": [1, 4, 10, 20], "knn__weights": WEIGHTS}
    with threadpool_limits(1):
        return GridSearchCV(pipe, grid, cv=CV).fit(X, y)


@pytest.mark.parametrize("name", ["wine", "digits"])
def test_pca_k_choice_is_gridsearchcv_pipeline_choice(backend, name):
    X, y = _data(name)
    sk = _sk_pca_search(name)
    clf = PCAKNeighborsClassifierCV([2, 5, 8], [1, 4, 10, 20], cv=CV).fit(backend.asarray(X), backend.asarray(y))
    # scikit-learn's SVD and gpuknn's covariance eigh give the same components up to sign and
    # ~1e-13 relative rounding; Euclidean distances do not see the signs, and no distance of
    # these data is that close to a tie (checked: the fold scores agree to 1e-12), so the
    # scores must agree as for the raw kNN. The two grids list the settings in different
    # orders (pipeline step names sort differently), so settings are matched by value, and
    # ties between settings may be broken differently: the chosen score must be the best.
    sk_mean = {
        (p["pca__n_components"], p["knn__n_neighbors"], p["knn__weights"]): m
        for p, m in zip(sk.cv_results_["params"], sk.cv_results_["mean_test_score"])
    }
    ours = {
        (p["n_components"], p["n_neighbors"], p["weights"]): m
        for p, m in zip(clf.cv_results_["params"], clf.cv_results_["mean_test_score"])
    }
    assert ours.keys() == sk_mean.keys()
    np.testing.assert_allclose([ours[s] for s in sk_mean], list(sk_mean.values()), rtol=0, atol=1e-12)
    assert clf.best_score_ == pytest.approx(sk.best_score_, abs=1e-12)
    first = [p for p, m in zip(clf.cv_results_["params"], clf.cv_results_["mean_test_score"]) if m == clf.best_score_][
        0
    ]
    assert clf.best_params_ == first  # ties: first in this estimator's ParameterGrid order
    pipe = clf.best_estimator_
    assert isinstance(pipe[0], gpuknn.PCA) and isinstance(pipe[-1], gpuknn.KNeighborsClassifier)
    assert pipe[0].n_components == clf.best_params_["n_components"]
    ref = Pipeline(
        [
            ("pca", SkPCA(clf.best_params_["n_components"], svd_solver="full")),
            ("knn", SkKNN(clf.best_params_["n_neighbors"], weights=clf.best_params_["weights"], algorithm="brute")),
        ]
    ).fit(X, y)
    with threadpool_limits(1):
        want = ref.predict(X[::5])
    assert_xp(clf.predict(backend.asarray(X[::5])), want, backend)
    dist, idx = clf.kneighbors(backend.asarray(X[:3]), 1)
    assert_xp(idx[:, 0], np.arange(3), backend)


@pytest.mark.parametrize(
    "est,kwargs,match",
    [
        (KNeighborsClassifierCV, {"n_neighbors": []}, "n_neighbors is empty"),
        (KNeighborsClassifierCV, {"n_neighbors": [1, 200]}, "n_neighbors values must be at most 120"),
        (KNeighborsClassifierCV, {"n_neighbors": [0]}, "n_neighbors must be in"),
        (KNeighborsClassifierCV, {"n_neighbors": 2.5}, "n_neighbors must be a value or a sequence"),
        (KNeighborsClassifierCV, {"scoring": "roc_auc"}, "scoring must be one of .* got 'roc_auc'"),
        (KNeighborsClassifierCV, {"weights": ["uniform", "gaussian"]}, "weights must be .* 'gaussian'"),
        (KNeighborsClassifierCV, {"metric": ["euclidean", "l7"]}, "unknown metric 'l7'"),
        (KNeighborsClassifierCV, {"metric": "inner"}, "weights='distance' is undefined for metric='inner'"),
        (KNeighborsClassifierCV, {"cv": "abc"}, "cv must be"),
        (KNeighborsClassifierCV, {"cv": 1}, "cv must be in"),
        (PCAKNeighborsClassifierCV, {"n_components": [2, 5]}, "n_components values must be at most 4"),
        (PCAKNeighborsClassifierCV, {"n_components": ()}, "n_components is empty"),
    ],
)
def test_bad_settings_name_the_argument(est, kwargs, match):
    X, y = _data("iris")
    base = {"n_components": [1, 2]} if est is PCAKNeighborsClassifierCV else {}
    with pytest.raises(InvalidInputError, match=match):
        est(**{"n_neighbors": [1, 3], **base, **kwargs}).fit(X, y)
    with pytest.raises(gpuknn.NotFittedError):
        est().predict(X)


def test_random_state_shuffles_int_cv_and_string_labels():
    X, y = _data("iris")
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    ours = KNeighborsClassifierCV([1, 7], weights="uniform", cv=4, random_state=3).fit(X, labels)
    with threadpool_limits(1):
        sk = GridSearchCV(
            SkKNN(algorithm="brute"), {"n_neighbors": [1, 7]}, cv=StratifiedKFold(4, shuffle=True, random_state=3)
        ).fit(X, labels)
    _same_results(ours, sk)
    assert list(ours.predict(X[::50])) == list(labels[::50])
