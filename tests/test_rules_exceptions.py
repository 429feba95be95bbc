"""ExceptionRules: stable exceptions of ROCCER rules and of decision-tree leaves (issue 35)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from gpuknn.errors import InvalidInputError
from gpuknn.rules import ExceptionRules, ItemEncoder, ROCCERClassifier, tree_rules


def cleavage_like(seed=0, n=400):
    """Nominal data where "pos1 = A" predicts "cleavage" except where pos6 = E."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"pos{j}": rng.choice(list("ACDE"), size=n) for j in range(1, 7)})
    y = np.where(X["pos1"] == "A", "cleavage", "none")
    y = np.where((X["pos1"] == "A") & (X["pos6"] == "E"), "none", y)
    noise = rng.random(n) < 0.03  # a few flipped labels: exceptions that are not stable
    y = np.where(noise, np.where(y == "none", "cleavage", "none"), y)
    return X, y


def recount(X, y, items, cls, covered):
    """Plain pandas: rows of ``covered`` holding every ``"col = value"`` item, and of those the class."""
    hold = covered.copy()
    for it in items:
        col, value = it.split(" = ")
        hold &= X[col].to_numpy() == value
    return int(np.sum(hold & (y == cls))), int(np.sum(hold))


def test_exceptions_of_roccer_rules_are_found_stable_and_recounted():
    X, y = cleavage_like()
    clf = ROCCERClassifier(min_support=0.1, max_len=1).fit(X, y)
    ex = ExceptionRules(clf, min_support=0.3, min_confidence=0.8, max_len=1, n_splits=5).fit(X, y)
    text = "\n".join(ex.text_)
    assert "if pos1 = A then cleavage" in text
    assert "    except if pos6 = E then none" in text
    general = [line for line in ex.text_ if not line.startswith("    ")]
    assert general == [line.split("  [")[0] for line in clf.rules_]
    B = clf.encoder_.transform(X)
    names = clf.encoder_.items_
    for e in ex.exceptions_:
        assert e["stability"] >= 0.6 and e["confidence"] >= 0.8
        # the general rule's coverage in the list, then a plain recount of the exception
        g = general.index(e["general"])
        model = clf.models_[0]
        covered = np.ones(len(y), dtype=bool)
        for k, a in enumerate(model["antecedents"]):
            fires = B[:, list(a)].all(axis=1) & covered
            if k == g:
                covered = fires
                break
            covered &= ~fires
        hits, cover = recount(X, y, e["items"], e["cls"], covered)
        assert e["count"] == hits and e["confidence"] == pytest.approx(hits / cover)
        assert all(n in names for n in e["items"])


def test_unstable_exceptions_are_dropped():
    X, y = cleavage_like(seed=1)
    clf = ROCCERClassifier(min_support=0.1, max_len=2).fit(X, y)
    loose = ExceptionRules(clf, min_support=0.05, min_confidence=0.5, max_len=2, min_stability=0.0).fit(X, y)
    strict = ExceptionRules(clf, min_support=0.05, min_confidence=0.5, max_len=2, min_stability=1.0).fit(X, y)
    key = {(e["general"], tuple(e["items"]), e["cls"]) for e in strict.exceptions_}
    assert key < {(e["general"], tuple(e["items"]), e["cls"]) for e in loose.exceptions_}
    assert all(e["stability"] == 1.0 for e in strict.exceptions_)
    assert any(e["stability"] < 1.0 for e in loose.exceptions_)


def test_tree_leaves_as_general_rules():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(300, 4)).astype(float)
    y = ((X[:, 0] == 1) & ~((X[:, 2] == 1) & (X[:, 3] == 1))).astype(int)
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    leaves = tree_rules(tree)
    leaf_of = tree.apply(X)
    for node, cond, _c in leaves:  # each leaf's condition selects exactly its rows
        sel = np.ones(len(X), dtype=bool)
        for part in cond.split(" and "):
            name, op, thr = part.split()
            v = X[:, int(name[1:])]
            sel &= v <= float(thr) if op == "<=" else v > float(thr)
        np.testing.assert_array_equal(sel, leaf_of == node)
    ex = ExceptionRules(tree, max_len=2).fit(X, y)
    assert [(e["general"], e["items"], e["cls"]) for e in ex.exceptions_] == [
        ("if x0 > 0.5 then 1", ["x2 = 1", "x3 = 1"], 0)
    ]
    assert "    except if x2 = 1 and x3 = 1 then 0  [" in "\n".join(ex.text_)
    assert ItemEncoder().fit(X).items_[-2:] == ["x3 = 0", "x3 = 1"]


def test_arguments_are_checked():
    X, y = cleavage_like()
    with pytest.raises(InvalidInputError, match="general must be"):
        ExceptionRules(object()).fit(X, y)
    clf = ROCCERClassifier(min_support=0.1, max_len=2).fit(X, y)
    with pytest.raises(InvalidInputError, match="min_stability"):
        ExceptionRules(clf, min_stability=2).fit(X, y)


def test_same_exceptions_on_every_backend(backend):
    from sklearn.datasets import make_classification  # noqa: PLC0415

    X, y = make_classification(n_samples=200, n_features=4, n_informative=3, n_redundant=0, random_state=0)
    want = ExceptionRules(ROCCERClassifier(min_support=0.1, max_len=2).fit(X, y), min_confidence=0.6).fit(X, y)
    clf = ROCCERClassifier(min_support=0.1, max_len=2).fit(backend.asarray(X), backend.asarray(y))
    got = ExceptionRules(clf, min_confidence=0.6).fit(backend.asarray(X), backend.asarray(y))
    assert got.text_ == want.text_
    assert any(line.startswith("    except if") for line in got.text_)
