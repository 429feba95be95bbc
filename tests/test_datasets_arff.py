"""ARFF sources of load_table/load_dataset, and encode_nominal on their nominal columns."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_xp
from sklearn.preprocessing import OneHotEncoder

from gpuknn.datasets import encode_nominal, load_dataset, load_table
from gpuknn.errors import CorruptDataError, InvalidInputError

DATA = Path(__file__).parent / "data"
LENSES = DATA / "contact-lenses.arff"
MIXED = DATA / "mixed.arff"
LENS_VALUES = {
    "age": ("young", "pre-presbyopic", "presbyopic"),
    "spectacle-prescrip": ("myope", "hypermetrope"),
    "astigmatism": ("no", "yes"),
    "tear-prod-rate": ("reduced", "normal"),
}


def _data_rows(path: Path) -> list[list[str]]:
    """The data rows of an ARFF file, split by hand (the oracle of the reader)."""
    text = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(text) if ln.strip().lower() == "@data") + 1
    return [[f.strip() for f in ln.split(",")] for ln in text[start:] if ln.strip() and not ln.startswith("%")]


def test_contact_lenses_nominal_attributes_as_declared_codes():
    t = load_table(LENSES)
    rows = _data_rows(LENSES)
    assert t.X.shape == (24, 4) and len(rows) == 24
    assert t.name == "contact-lenses" and t.target_name == "contact-lenses"
    assert t.feature_names == list(LENS_VALUES)
    assert t.categories == dict(enumerate(LENS_VALUES.values()))  # declared order
    assert t.class_order == ["soft", "hard", "none"]
    assert Counter(t.y.tolist()) == {"soft": 5, "hard": 4, "none": 15}
    expected = [[LENS_VALUES[n].index(r[j]) for j, n in enumerate(LENS_VALUES)] for r in rows]
    np.testing.assert_array_equal(t.X, expected)
    np.testing.assert_array_equal(t.y, [r[-1] for r in rows])
    # every combination of the four attributes appears once: the set's known design
    assert len({tuple(r) for r in t.X.tolist()}) == 24


def test_mixed_numeric_and_nominal_with_missing_values():
    with pytest.raises(CorruptDataError, match=r"mixed\.arff: data row index 3, attribute 'width' is missing.*2 row"):
        load_table(MIXED)
    t = load_table(MIXED, drop_missing=True)
    assert t.n_dropped == 2 and t.feature_names == ["width", "colour", "n legs", "shiny"]
    assert t.categories == {1: ("red", "green", "blue"), 3: ("no", "yes")}
    np.testing.assert_array_equal(t.X, [[1.5, 0, 4, 0], [2.0, 2, 4, 1], [0.5, 1, 2, 0], [1.0, 1, 4, 1]])
    np.testing.assert_array_equal(t.y, ["cat", "dog", "cat", "cat"])


def test_target_by_name_or_index():
    t = load_table(MIXED, target="colour", drop_missing=True)
    assert t.target_name == "colour" and t.feature_names == ["width", "n legs", "shiny", "class"]
    assert t.categories == {2: ("no", "yes"), 3: ("cat", "dog")}
    np.testing.assert_array_equal(t.y, ["red", "blue", "green", "green"])
    t = load_table(MIXED, target=2, drop_missing=True)  # numeric target: integer labels
    assert t.target_name == "n legs" and t.y.dtype == np.int64
    np.testing.assert_array_equal(t.y, [4, 4, 2, 4])
    with pytest.raises(InvalidInputError, match=r"no target attribute 'legs'.*'n legs'"):
        load_table(MIXED, target="legs")


@pytest.mark.parametrize(
    "body, match",
    [
        ("@attribute a numeric\n@attribute s string\n@attribute c {p,n}\n@data\n1,'x',p\n", "String attributes"),
        ("@attribute a numeric\n@attribute c {p,n}\n@data\n1,q\n", r"cannot read as ARFF \('?q'? value not in"),
        ("@attribute a numeric\n@attribute c {p,n}\n@data\n{0 1, 1 n}\n", "cannot read as ARFF.*sparse"),
        ("@attribute c {p,n}\n@data\np\n", r"1 attribute\(s\); need at least one feature"),
    ],
)
def test_unsupported_or_damaged_arff(tmp_path, body, match):
    p = tmp_path / "bad.arff"
    p.write_text("@relation bad\n" + body)
    with pytest.raises(CorruptDataError, match=match):
        load_table(p)


def test_load_dataset_keeps_categories_and_splits():
    ds = load_dataset(LENSES, test_size=8, random_state=0)
    assert ds.X_train.shape == (16, 4) and ds.X_test.shape == (8, 4)
    assert ds.categories == load_table(LENSES).categories
    assert ds.class_names == ["hard", "none", "soft"]


def test_onehot_matches_sklearn_and_round_trips(backend):
    t = load_table(MIXED, drop_missing=True)
    enc = encode_nominal(backend.asarray(t.X), t.categories, feature_names=t.feature_names)
    sk = OneHotEncoder(categories=[list(range(3)), list(range(2))], sparse_output=False)
    onehot = sk.fit_transform(t.X[:, [1, 3]].astype(np.int64))
    expected = np.column_stack([t.X[:, 0], onehot[:, :3], t.X[:, 2], onehot[:, 3:]])
    assert_xp(enc.X, expected, backend, dtype=backend.xp.float64)
    names = ["width", "colour=red", "colour=green", "colour=blue", "n legs", "shiny=no", "shiny=yes"]
    assert enc.feature_names == names
    assert enc.columns == [0, 1, 1, 1, 2, 3, 3] and enc.categorical_features == []
    # back to codes: the position of the 1 within each group of indicator columns
    X = np.asarray(expected)
    cols = np.asarray(enc.columns)
    for j in t.categories:
        np.testing.assert_array_equal(np.argmax(X[:, cols == j], axis=1), t.X[:, j])


def test_codes_and_strings_round_trip(backend):
    t = load_table(LENSES)
    codes = encode_nominal(backend.asarray(t.X), t.categories, encoding="codes", feature_names=t.feature_names)
    assert_xp(codes.X, t.X, backend)
    assert codes.categorical_features == [0, 1, 2, 3] and codes.feature_names == t.feature_names
    strings = t.encode_nominal("strings")
    assert isinstance(strings.X, np.ndarray) and strings.X.dtype == object
    np.testing.assert_array_equal(strings.X, np.array([r[:-1] for r in _data_rows(LENSES)], dtype=object))
    # strings -> codes again, by the categories
    back = [[strings.categories[j].index(v) for j, v in enumerate(row)] for row in strings.X.tolist()]
    np.testing.assert_array_equal(back, t.X)
    mixed = load_table(MIXED, drop_missing=True).encode_nominal("strings")
    assert mixed.X[1].tolist() == [2.0, "blue", 4.0, "yes"]


@pytest.mark.parametrize(
    "X, categories, kw, match",
    [
        ([[0.0, 1.5], [3.0, 0.5]], {0: ("a", "b", "c")}, {}, r"X\[1, 0\] = 3\.0 is no code of column 'x0'.*0\.\.2"),
        ([[0.5, 1.5]], {0: ("a", "b")}, {}, r"X\[0, 0\] = 0\.5 is no code"),
        ([[np.nan, 1.5]], {0: ("a", "b")}, {}, r"X\[0, 0\] = nan is no code"),
        ([[0.0, 1.5]], {2: ("a",)}, {}, r"key 2 is no column index of X in \[0, 1\]"),
        ([[0.0, 1.5]], {0: ("a", "a")}, {}, "repeats a value"),
        ([[0.0, 1.5]], {0: ()}, {}, "non-empty sequence"),
        ([[0.0, 1.5]], [("a",)], {}, "categories must be a mapping"),
        ([[0.0, 1.5]], {0: ("a",)}, {"encoding": "ordinal"}, "encoding must be one of"),
        ([[0.0, 1.5]], {0: ("a",)}, {"feature_names": ["a"]}, "feature_names has 1 names for the 2 columns"),
        ([0.0, 1.5], {0: ("a",)}, {}, "X must be a 2-D numeric array"),
    ],
)
def test_encode_nominal_refuses_bad_input(X, categories, kw, match):
    with pytest.raises(InvalidInputError, match=match):
        encode_nominal(np.asarray(X), categories, **kw)
