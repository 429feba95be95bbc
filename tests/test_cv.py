import numpy as np
import pytest

from gpuknn import InvalidInputError, KNeighborsClassifier
from gpuknn._backend import to_numpy
from gpuknn.decomposition import PCA
from gpuknn.metrics import f1_score
from gpuknn.model_selection import StratifiedKFold, cross_validate_k, cross_validate_kp


def _data(n=180, d=12, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.7
    return X, y


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_k_table_equals_one_classifier_per_k(xp, to_xp, weights):
    X, y = _data()
    cv = StratifiedKFold(3, shuffle=True, random_state=2)
    ks = [1, 4, 9]
    table = cross_validate_k(
        to_xp(X),
        to_xp(y),
        ks,
        cv=cv,
        metric="correlation",
        weights=[weights],
        scoring={
            "accuracy": lambda t, p: float(np.mean(to_numpy(t) == to_numpy(p))),
            "macro_f1": lambda t, p: f1_score(t, p, average="macro"),
        },
    )
    assert len(table.rows) == 3 * len(ks)
    for row in table.rows:
        tr, te = list(cv.split(X, y))[row["fold"]]
        clf = KNeighborsClassifier(row["k"], metric="correlation", weights=weights).fit(X[tr], y[tr])
        pred = clf.predict(X[te])
        assert row["accuracy"] == pytest.approx(np.mean(pred == y[te]), abs=1e-12)
        assert row["macro_f1"] == pytest.approx(f1_score(y[te], pred, average="macro"), abs=1e-12)
    summary = {r["k"]: r for r in table.summary()}
    acc = table.column("accuracy").reshape(3, len(ks))
    np.testing.assert_allclose([summary[k]["accuracy_mean"] for k in ks], acc.mean(0))
    np.testing.assert_allclose([summary[k]["accuracy_std"] for k in ks], acc.std(0))
    assert table.best()["accuracy_mean"] == max(r["accuracy_mean"] for r in table.summary())


def test_kp_table_equals_refitting_pca_per_p(xp, to_xp):
    X, y = _data(n=150, d=10, seed=3)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    table = cross_validate_kp(
        to_xp(X), to_xp(y), [1, 5], [3, 6, 10], cv=cv, metric="correlation", weights=["uniform", "distance"]
    )
    assert len(table.rows) == 3 * 3 * 2 * 2
    for row in table.rows[::5]:
        tr, te = list(cv.split(X, y))[row["fold"]]
        pca = PCA(row["p"], solver="eigh").fit(X[tr])  # refit with exactly p components
        clf = KNeighborsClassifier(row["k"], metric="correlation", weights=row["weights"])
        acc = clf.fit(pca.transform(X[tr]), y[tr]).score(pca.transform(X[te]), y[te])
        assert row["accuracy"] == pytest.approx(acc, abs=1e-12)


def test_bad_input():
    X, y = _data(n=30)
    with pytest.raises(InvalidInputError, match="samples"):
        cross_validate_k(X, y[:-1], [1])
    with pytest.raises(InvalidInputError, match="k values"):
        cross_validate_k(X, y, [0, 2])
    with pytest.raises(InvalidInputError, match="unknown scoring"):
        cross_validate_k(X, y, [1], scoring=["auc"])
    with pytest.raises(InvalidInputError, match="p values"):
        cross_validate_kp(X, y, [1], [20])


def test_cv_argument_as_scikit_learn_reads_it():
    """cv= accepts None, an int, gpuknn's or scikit-learn's splitters, or (train, test)
    pairs -- the same folds give the same table -- and refuses anything else by name."""
    from sklearn.datasets import load_iris
    from sklearn.model_selection import StratifiedKFold as SkStratified

    from gpuknn.errors import InvalidInputError
    from gpuknn.model_selection import StratifiedKFold, cross_validate_k

    X, y = load_iris(return_X_y=True)
    folds = list(StratifiedKFold(3).split(X, y))
    want = cross_validate_k(X, y, [1, 3], cv=StratifiedKFold(3)).rows
    for cv in (3, folds, iter(folds)):
        assert cross_validate_k(X, y, [1, 3], cv=cv).rows == want
    sk = SkStratified(3, shuffle=True, random_state=1)  # scikit-learn's own splitter
    assert cross_validate_k(X, y, [1, 3], cv=sk).rows == cross_validate_k(X, y, [1, 3], cv=list(sk.split(X, y))).rows
    assert len(cross_validate_k(X, y, [1], cv=None).rows) == 5
    for bad, match in (
        ("abc", "cv must be"),
        ([(np.arange(3), np.array([1.5]))], "integer"),
        ([(np.arange(3), np.array([150]))], r"\[0, 150\)"),
        ([], "no folds"),
        ([(1, 2, 3)], "not a \\(train, test\\) pair"),
    ):
        with pytest.raises(InvalidInputError, match=match):
            cross_validate_k(X, y, [1], cv=bad)


def test_k_grid_must_be_integers_and_weights_may_be_one_name():
    """Issue 18: ks=[2.999] ran k=2; every non-integer k is refused naming ks, and
    weights="distance" (one name) is weights=["distance"], not its characters."""
    X, y = _data(n=30)
    for bad, shown in (([2.999], "2.999"), ([3, 2.0], "2.0"), ([True], "True"), (["3"], "'3'")):
        with pytest.raises(InvalidInputError, match=f"ks must hold integers.*{shown}"):
            cross_validate_k(X, y, bad)
        with pytest.raises(InvalidInputError, match=f"ks must hold integers.*{shown}"):
            cross_validate_kp(X, y, bad, [1])
    with pytest.raises(InvalidInputError, match="ps must hold integers.*1.5"):
        cross_validate_kp(X, y, [1], [1.5])
    one = cross_validate_k(X, y, [1, 3], weights="distance", scoring="accuracy")
    seq = cross_validate_k(X, y, [1, 3], weights=["distance"], scoring=["accuracy"])
    assert one.rows == seq.rows and {r["weights"] for r in one.rows} == {"distance"}
    assert cross_validate_k(X, y, 3).rows == cross_validate_k(X, y, [3]).rows
    with pytest.raises(InvalidInputError, match="weights entries"):
        cross_validate_k(X, y, [1], weights=["uniform", 5])
    with pytest.raises(InvalidInputError, match="cv must be"):
        cross_validate_k(X, y, [1], cv=3.5)
    with pytest.raises(InvalidInputError, match="random_state"):
        cross_validate_kp(X, y, [1], [1], pca_solver="block", random_state="x")
