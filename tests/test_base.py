import pytest

from gpuknn import InvalidInputError, KNeighborsClassifier, NotFittedError
from gpuknn.base import check_is_fitted


def test_get_set_params_and_repr():
    clf = KNeighborsClassifier(3, metric="cosine")
    assert clf.get_params() == {"n_neighbors": 3, "metric": "cosine", "weights": "uniform",
                                "working_memory": None, "algorithm": "auto"}
    assert clf.set_params(n_neighbors=7) is clf and clf.n_neighbors == 7
    assert repr(clf) == "KNeighborsClassifier(metric='cosine', n_neighbors=7)"
    with pytest.raises(InvalidInputError, match="invalid parameter 'k'"):
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
