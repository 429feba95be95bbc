"""ItemEncoder: a table (nominal and numeric columns) to a boolean item matrix (issue 35)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import assert_xp
from sklearn.utils.estimator_checks import parametrize_with_checks

from gpuknn.errors import InvalidInputError
from gpuknn.rules import ItemEncoder

LENSES = """young myope no reduced none
young myope no normal soft
young myope yes reduced none
young myope yes normal hard
young hypermetrope no reduced none
young hypermetrope no normal soft
young hypermetrope yes reduced none
young hypermetrope yes normal hard
pre-presbyopic myope no reduced none
pre-presbyopic myope no normal soft
pre-presbyopic myope yes reduced none
pre-presbyopic myope yes normal hard
pre-presbyopic hypermetrope no reduced none
pre-presbyopic hypermetrope no normal soft
pre-presbyopic hypermetrope yes reduced none
pre-presbyopic hypermetrope yes normal none
presbyopic myope no reduced none
presbyopic myope no normal none
presbyopic myope yes reduced none
presbyopic myope yes normal hard
presbyopic hypermetrope no reduced none
presbyopic hypermetrope no normal soft
presbyopic hypermetrope yes reduced none
presbyopic hypermetrope yes normal none"""


def contact_lenses():
    """The 24 rows of the contact-lenses data set (Cendrowska 1987) as a DataFrame and labels."""
    rows = [r.split() for r in LENSES.splitlines()]
    cols = ["age", "spectacle-prescrip", "astigmatism", "tear-prod-rate"]
    return pd.DataFrame([r[:4] for r in rows], columns=cols), np.asarray([r[4] for r in rows])


def test_contact_lenses_items_one_per_attribute_value():
    X, y = contact_lenses()
    assert sorted(zip(*np.unique(y, return_counts=True))) == [("hard", 4), ("none", 15), ("soft", 5)]
    enc = ItemEncoder().fit(X)
    names = list(enc.get_feature_names_out())
    assert len(names) == 3 + 2 + 2 + 2
    assert "tear-prod-rate = normal" in names and "age = pre-presbyopic" in names
    B = enc.transform(X)
    assert B.dtype == bool and B.shape == (24, 9)
    for j in range(4):  # exactly one item of each attribute per row
        assert (B[:, np.asarray(enc.item_attribute_) == j].sum(axis=1) == 1).all()
    for i, name in enumerate(names):
        col, value = name.split(" = ")
        np.testing.assert_array_equal(B[:, i], X[col].to_numpy() == value)


def test_numeric_columns_equal_frequency_bins_named_readably():
    X = np.arange(12.0)[:, None]
    enc = ItemEncoder(n_bins=4).fit(X)
    assert enc.items_ == ["x0 <= 2", "2 < x0 <= 5", "5 < x0 <= 8", "x0 > 8"]
    B = enc.transform(X)
    np.testing.assert_array_equal(B.sum(axis=0), [3, 3, 3, 3])
    np.testing.assert_array_equal(np.argmax(B, axis=1), np.repeat(np.arange(4), 3))
    # ties merge thresholds: a column with two values is a flag, nominal by inference
    flags = ItemEncoder(n_bins=4).fit(np.array([[0.0], [1.0], [1.0]]))
    assert flags.items_ == ["x0 = 0", "x0 = 1"]


def test_unseen_and_missing_values_set_no_item():
    X = pd.DataFrame({"c": ["a", "b", "a"], "v": [1.0, 2.0, 3.0]})
    enc = ItemEncoder(n_bins=2).fit(X)
    B = enc.transform(pd.DataFrame({"c": ["z", None], "v": [np.nan, 2.5]}))
    c_items = np.asarray(enc.item_attribute_) == 0
    assert not B[:, c_items].any()  # unseen "z" and missing None
    assert not B[0, ~c_items].any() and B[1, ~c_items].sum() == 1


def test_nominal_option_by_name_and_position():
    X = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]})
    enc = ItemEncoder(n_bins=2, nominal=["a"]).fit(X)
    assert [n for n in enc.items_ if n.startswith("a")] == [f"a = {v}" for v in range(1, 7)]
    assert ItemEncoder(n_bins=2, nominal=[1]).fit(X).items_[-6:] == [f"b = {v}" for v in X["b"]]
    with pytest.raises(InvalidInputError, match="'zz' is not a column"):
        ItemEncoder(nominal=["zz"]).fit(X)
    with pytest.raises(InvalidInputError, match="n_bins"):
        ItemEncoder(n_bins=1).fit(X)


def test_items_on_every_backend(backend):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=40), rng.integers(0, 2, 40), rng.integers(0, 5, 40)]).astype(np.float64)
    want = ItemEncoder(n_bins=3).fit(X)
    got = ItemEncoder(n_bins=3).fit(backend.asarray(X))
    assert got.items_ == want.items_
    assert_xp(got.transform(backend.asarray(X)), want.transform(X), backend)


@parametrize_with_checks([ItemEncoder()])
def test_sklearn_compatible(estimator, check):
    check(estimator)
