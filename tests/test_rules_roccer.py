"""ROCCERClassifier: rule lists selected by the ROC convex hull (issue 35)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, host
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_rules_items import contact_lenses

from gpuknn.errors import InvalidInputError
from gpuknn.rules import ROCCERClassifier


def tic_tac_toe_like(seed=0, n=300):
    """Nominal data: nine board cells x/o/b; positive when a row or a diagonal is all x."""
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array(["x", "o", "b"]), size=(n, 9), p=[0.45, 0.35, 0.2])
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 4, 8), (2, 4, 6)]
    y = np.where([any(all(r[i] == "x" for i in ln) for ln in lines) for r in X], "win", "other")
    return X.astype(object), y


def datasets():
    X, y = contact_lenses()
    yield "contact-lenses", X, y
    b = load_breast_cancer()
    yield "breast-cancer", b.data[:, :10], b.target
    w = load_wine()
    yield "wine", w.data, w.target
    yield "tic-tac-toe-like", *tic_tac_toe_like()
    Xs, ys = make_classification(n_samples=300, n_features=6, n_informative=3, weights=[0.7], random_state=1)
    yield "synthetic", Xs, ys


def first_rule(B, antecedents):
    """Plain NumPy: the first rule of the list each row matches (len(list) if none)."""
    f = np.full(B.shape[0], len(antecedents))
    for k in reversed(range(len(antecedents))):
        f[B[:, list(antecedents[k])].all(axis=1)] = k
    return f


@pytest.mark.parametrize(("name", "X", "y"), list(datasets()), ids=[d[0] for d in datasets()])
def test_rule_list_roc_curve_is_convex(name, X, y):
    clf = ROCCERClassifier(min_support=0.1, max_len=2).fit(X, y)
    B = clf.encoder_.transform(X)
    labels = np.asarray(clf.classes_)
    assert len(clf.models_) == (1 if len(labels) == 2 else len(labels))
    for m in clf.models_:
        pos = np.asarray(y) == labels[m["positive"]]
        f = first_rule(B, m["antecedents"])
        L = len(m["antecedents"])
        tp = np.bincount(f[pos], minlength=L + 1)
        fp = np.bincount(f[~pos], minlength=L + 1)
        # the model's counts are those of the list in order, the default rule last
        np.testing.assert_array_equal(m["tp"], tp)
        np.testing.assert_array_equal(m["fp"], fp)
        assert tp.sum() == pos.sum() and fp.sum() == (~pos).sum()
        # convex: the slopes tp_k / fp_k of consecutive segments never increase
        assert np.all(tp[:-1] * fp[1:] >= tp[1:] * fp[:-1]), (name, tp, fp)
        assert np.all(tp[:-1] + fp[:-1] > 0)  # no rule without rows of its own
        if len(labels) == 2:  # the positive class is the smaller one
            assert pos.sum() <= (~pos).sum()
    assert sum(len(m["antecedents"]) for m in clf.models_) >= 1


def test_auc_beats_the_majority_rule():
    b = load_breast_cancer()
    Xtr, Xte, ytr, yte = train_test_split(b.data, b.target, test_size=0.3, random_state=0, stratify=b.target)
    clf = ROCCERClassifier(min_support=0.1, max_len=2).fit(Xtr, ytr)
    auc = roc_auc_score(yte, clf.decision_function(Xte))
    assert auc > 0.9  # the majority rule ranks every row alike: AUC 0.5
    assert roc_auc_score(yte, clf.predict_proba(Xte)[:, 1]) == pytest.approx(auc)
    assert (clf.predict(Xte) == yte).mean() > 0.85
    np.testing.assert_array_equal(clf.predict(Xte), np.where(clf.decision_function(Xte) > 0, 1, 0))


def test_multiclass_one_vs_rest():
    iris = load_iris()
    clf = ROCCERClassifier(min_support=0.2, max_len=2).fit(iris.data, iris.target)
    P = clf.predict_proba(iris.data)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (clf.predict(iris.data) == iris.target).mean() > 0.85
    assert clf.decision_function(iris.data).shape == (150, 3)


def test_rules_print_readably():
    X, y = contact_lenses()
    clf = ROCCERClassifier(min_support=0.2, max_len=2).fit(X, y)
    text = "\n".join(clf.rules_)
    assert "if tear-prod-rate = normal" in text or "tear-prod-rate = normal" in text
    for line in clf.rules_:
        assert line.startswith(("if ", "else ")) and "[tp=" in line
    # every list ends with its default rule
    assert sum(line.startswith("else") for line in clf.rules_) == len(clf.models_)
    cancer = load_breast_cancer(as_frame=True)
    clf = ROCCERClassifier(min_support=0.2, max_len=2).fit(cancer.data.iloc[:, :4], cancer.target)
    assert any("mean radius" in line for line in clf.rules_)


def test_same_rules_on_every_backend(backend):
    X, y = make_classification(n_samples=200, n_features=5, n_informative=3, random_state=0)
    want = ROCCERClassifier(min_support=0.1, max_len=2).fit(X, y)
    got = ROCCERClassifier(min_support=0.1, max_len=2).fit(backend.asarray(X), backend.asarray(y))
    assert got.rules_ == want.rules_
    assert_xp(got.decision_function(backend.asarray(X)), want.decision_function(X), backend, exact=False, rtol=1e-12)
    assert_xp(got.predict(backend.asarray(X)), want.predict(X), backend)
    assert host(got.classes_).tolist() == [0, 1]


def test_parameters_are_checked():
    X, y = contact_lenses()
    with pytest.raises(InvalidInputError, match="min_support"):
        ROCCERClassifier(min_support=2.0).fit(X, y)
    with pytest.raises(InvalidInputError, match="max_len"):
        ROCCERClassifier(max_len=None).fit(X, y)


@parametrize_with_checks([ROCCERClassifier()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_score_is_weighted_accuracy():
    """ROCCER's own score (no scikit-learn cross-reference in its docs): accuracy, weighted."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.metrics import accuracy_score

    X, y = load_breast_cancer(return_X_y=True)
    clf = ROCCERClassifier().fit(X[::2], y[::2])
    w = np.linspace(0.5, 2.0, X[1::2].shape[0])
    pred = clf.predict(X[1::2])
    assert clf.score(X[1::2], y[1::2]) == pytest.approx(accuracy_score(y[1::2], pred), abs=1e-15)
    assert clf.score(X[1::2], y[1::2], sample_weight=w) == pytest.approx(
        accuracy_score(y[1::2], pred, sample_weight=w), abs=1e-12
    )
