import numpy as np
import pytest

from gpuknn import InvalidInputError, KNeighborsClassifier, NotFittedError
from gpuknn.base import check_is_fitted


def test_get_set_params_and_repr():
    clf = KNeighborsClassifier(3, metric="cosine")
    assert clf.get_params() == {
        "n_neighbors": 3,
        "metric": "cosine",
        "weights": "uniform",
        "working_memory": None,
        "algorithm": "auto",
        "leaf_size": 30,
        "n_jobs": None,
        "p": 2,
        "metric_params": None,
    }
    assert clf.set_params(n_neighbors=7) is clf and clf.n_neighbors == 7
    assert repr(clf) == "KNeighborsClassifier(metric='cosine', n_neighbors=7)"
    with pytest.raises(InvalidInputError, match="Invalid parameter 'k'"):
        clf.set_params(k=3)


def test_init_stores_without_validation_and_fit_validates():
    clf = KNeighborsClassifier(n_neighbors=-4, metric="nope")  # no error yet
    with pytest.raises(InvalidInputError):
        clf.fit([[0.0], [1.0]], [0, 1])


def test_check_is_fitted():
    clf = KNeighborsClassifier()
    with pytest.raises(NotFittedError, match="not fitted"):
        check_is_fitted(clf)
    with pytest.raises(NotFittedError):
        clf.predict([[0.0]])


def test_scikit_learn_contract():
    # gpuknn's estimators are scikit-learn's: its clone, nested params, tags and errors
    import sklearn.base
    from sklearn.exceptions import NotFittedError as SkNotFitted
    from sklearn.pipeline import make_pipeline

    from gpuknn import PCA
    from gpuknn.base import clone

    clf = KNeighborsClassifier(3, metric="cosine")
    assert isinstance(clf, sklearn.base.BaseEstimator) and sklearn.base.is_classifier(clf)
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == clf.get_params()
    assert clf.__sklearn_tags__().array_api_support
    pipe = make_pipeline(PCA(n_components=1), clf)
    pipe.set_params(kneighborsclassifier__n_neighbors=1)
    assert clf.n_neighbors == 1
    with pytest.raises(SkNotFitted):  # our NotFittedError is scikit-learn's too
        KNeighborsClassifier().predict([[0.0]])


def test_the_issue_snippets_run_in_scikit_learn_tools():
    # issue 21's three snippets: cross_val_score, a Pipeline with gpuknn's PCA, GridSearchCV
    from sklearn.datasets import load_iris
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier as SkKNN
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gpuknn import PCA

    X, y = load_iris(return_X_y=True)
    ours = cross_val_score(KNeighborsClassifier(), X, y)
    assert ours == pytest.approx(cross_val_score(SkKNN(algorithm="brute"), X, y), abs=1e-12)
    pipe = make_pipeline(StandardScaler(), PCA(2), KNeighborsClassifier()).fit(X, y)
    assert pipe.score(X, y) > 0.9
    grid = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": [1, 3, 5]}).fit(X, y)
    sk = GridSearchCV(SkKNN(algorithm="brute"), {"n_neighbors": [1, 3, 5]}).fit(X, y)
    assert grid.best_params_ == sk.best_params_
    assert grid.cv_results_["mean_test_score"] == pytest.approx(sk.cv_results_["mean_test_score"])


def test_pandas_input_feature_names_and_set_output():
    pd = pytest.importorskip("pandas")
    import warnings

    from sklearn.datasets import load_wine

    from gpuknn import PCA

    data = load_wine(as_frame=True)
    X, y = data.data, data.target.map({0: "barolo", 1: "grignolino", 2: "barbera"})
    clf = KNeighborsClassifier(3).fit(X, y)
    assert list(clf.feature_names_in_) == list(X.columns) and clf.n_features_in_ == 13
    pred = clf.predict(X)
    assert pred.dtype.kind in "OU" and set(pred) <= {"barolo", "grignolino", "barbera"}
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        clf.predict(X.to_numpy())  # scikit-learn's warning, under filterwarnings=error here
    with pytest.raises(InvalidInputError, match="feature names"):
        clf.predict(X[list(reversed(X.columns))])
    pca = PCA(2).set_output(transform="pandas")
    Z = pca.fit_transform(X)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == ["pca0", "pca1"]
    assert list(Z.index) == list(X.index)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KNeighborsClassifier(3).fit(X.to_numpy(), y.to_numpy()).predict(X.to_numpy())


@pytest.mark.parametrize("name", ["strict", "torch"])
def test_array_api_dispatch_pipeline_keeps_the_namespace(name):
    # scikit-learn's array-API transformers and gpuknn's estimators in one Pipeline: the
    # input's namespace and device all the way through (strict on its second device)
    import sklearn
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gpuknn import PCA
    from gpuknn._backend import array_namespace, device_of, to_numpy

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] > 0).astype(np.int64)
    if name == "strict":
        xps = pytest.importorskip("array_api_strict")
        dev = xps.Device("device1")
        Xa, ya = xps.asarray(X, device=dev), xps.asarray(y, device=dev)
    else:
        torch = pytest.importorskip("torch")
        Xa, ya = torch.asarray(X), torch.asarray(y)
    # StandardScaler's first incremental step divides 0 by 0 on strict (scikit-learn's own
    # code; it silences that with np.errstate only for NumPy arrays)
    with sklearn.config_context(array_api_dispatch=True), np.errstate(invalid="ignore"):
        pipe = make_pipeline(StandardScaler(), PCA(3), KNeighborsClassifier(5)).fit(Xa, ya)
        Z = pipe[:-1].transform(Xa)
        pred = pipe.predict(Xa)
    for out in (Z, pred):
        assert array_namespace(out) is array_namespace(Xa) and device_of(out) == device_of(Xa)
    ref = make_pipeline(StandardScaler(), PCA(3), KNeighborsClassifier(5)).fit(X, y).predict(X)
    np.testing.assert_array_equal(to_numpy(pred), ref)
