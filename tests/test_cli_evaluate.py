"""`gpuknn evaluate` on KEEL / CSV files written by the test, against a scikit-learn oracle."""

import json

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score
from sklearn.neighbors import KNeighborsClassifier as SkKNN

from gpuknn.cli import main
from gpuknn.model_selection import StratifiedKFold, train_test_split


def _make(seed=0, n=80):
    rng = np.random.default_rng(seed)
    pos = rng.random(n) < 0.3
    X = np.round(rng.normal(size=(n, 3)) + pos[:, None] * 1.2, 3)
    y = np.where(pos, "positive", "negative")
    return X, y


def _keel(path, X, y, *, header=True, missing=()):
    lines = []
    if header:
        lines += [
            "@relation toy",
            "@attribute a real [-5, 5]",
            "@attribute b real [-5, 5]",
            "@attribute c real [-5, 5]",
            "@attribute Class {positive, negative}",
            "@inputs a, b, c",
            "@outputs Class",
            "@data",
        ]
    for i, (row, lab) in enumerate(zip(X, y)):
        cells = [f"{v:.3f}" for v in row]
        if i in missing:
            cells[1] = "?"
        lines.append(", ".join(cells + [lab]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _expected(X, y, k=5, seed=0, pos="positive"):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    pred = SkKNN(k).fit(Xtr, ytr).predict(Xte)
    t, p = yte == pos, pred == pos
    return {
        "tp": int(np.sum(t & p)),
        "fp": int(np.sum(~t & p)),
        "tn": int(np.sum(~t & ~p)),
        "fn": int(np.sum(t & ~p)),
        "precision": precision_score(yte, pred, pos_label=pos),
        "recall": recall_score(yte, pred, pos_label=pos),
        "macro_f1": f1_score(yte, pred, average="macro"),
        "accuracy": float(np.mean(yte == pred)),
    }


@pytest.mark.parametrize("header", [True, False])
def test_holdout_counts_json(tmp_path, capsys, header):
    X, y = _make()
    # Without a header the first class in the file is the first label that appears.
    if not header and y[0] != "positive":
        first = int(np.flatnonzero(y == "positive")[0])
        X[[0, first]], y[[0, first]] = X[[first, 0]], y[[first, 0]]
    f = _keel(tmp_path / ("toy.dat" if header else "toy.csv"), X, y, header=header)
    assert main(["evaluate", str(f), "--k", "5", "--seed", "0", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    exp = _expected(X, y)
    assert row["positive_class"] == "positive"
    for key in ("tp", "fp", "tn", "fn"):
        assert row[key] == exp[key], key
    for key in ("precision", "recall", "macro_f1", "accuracy"):
        assert row[key] == pytest.approx(exp[key]), key
    assert row["n_test"] == 24 and row["n_samples"] == 80


def test_table_missing_values_and_two_files(tmp_path, capsys):
    X, y = _make(1)
    missing = {3, 10, 11}
    f1 = _keel(tmp_path / "gaps.dat", X, y, missing=missing)
    f2 = _keel(tmp_path / "full.dat", X, y)
    assert main(["evaluate", str(f1), str(f2), "--drop-missing", "--seed", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    keep = np.array([i not in missing for i in range(len(y))])
    for line, (Xs, ys) in zip(out[3:], [(X[keep], y[keep]), (X, y)]):
        exp = _expected(Xs, ys, seed=4)
        cells = line.split()
        assert cells[1] == str(len(ys)) and cells[2] == "positive"
        assert [int(c) for c in cells[3:7]] == [exp["tp"], exp["fp"], exp["tn"], exp["fn"]]
        assert float(cells[-1]) == pytest.approx(exp["macro_f1"], abs=5e-5)
    # Without --drop-missing the missing value is an error naming the line.
    assert main(["evaluate", str(f1)]) == 2
    err = capsys.readouterr().err
    assert "line 12" in err and "missing" in err


def test_cross_validation_sums_counts(tmp_path, capsys):
    X, y = _make(2)
    f = _keel(tmp_path / "toy.dat", X, y)
    assert main(["evaluate", str(f), "--cv", "4", "--k", "3", "--seed", "1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    f1s, tps = [], 0
    for tr, te in StratifiedKFold(4, shuffle=True, random_state=1).split(X, y):
        pred = SkKNN(3).fit(X[tr], y[tr]).predict(X[te])
        f1s.append(f1_score(y[te], pred, average="macro"))
        tps += int(np.sum((y[te] == "positive") & (pred == "positive")))
    assert row["tp"] == tps and row["tp"] + row["fp"] + row["tn"] + row["fn"] == len(y)
    assert row["macro_f1"] == pytest.approx(np.mean(f1s))
    assert "CV" in row["protocol"]


def test_errors_exit_2(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "nope.dat")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.dat"
    bad.write_text("@relation r\n@attribute a real\n@attribute Class {p, n}\n@data\n1.0, p\n2.0\n")
    assert main(["evaluate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 6" in err and "error" in err
    X, y = _make()
    f = _keel(tmp_path / "toy.dat", X, y)
    assert main(["evaluate", str(f), "--k", "500"]) == 2
    assert "--k 500" in capsys.readouterr().err


def _csv(path, X, y, *, header="a,b,c,label", target_col=3, delim=","):
    """CSV with the label quoted in column ``target_col`` (quotes and delimiters inside)."""
    lines = [header] if header else []
    for row, lab in zip(X, y):
        cells = [f"{v:.3f}" for v in row]
        cells.insert(target_col, f'"{lab}, really"')
        lines.append(delim.join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_csv_with_header_quotes_and_target_by_name(tmp_path, capsys):
    X, y = _make(3)
    f = _csv(tmp_path / "toy.csv", X, y, header='a,"the label",b,c', target_col=1)
    assert main(["evaluate", str(f), "--target", "the label", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    yq = np.char.add(y, ", really")
    exp = _expected(X, yq, pos=str(yq[0]))
    assert row["target"] == "the label" and row["n_features"] == 3 and row["n_dropped"] == 0
    assert row["positive_class"] == str(yq[0])  # first class of the file
    for key in ("tp", "fp", "tn", "fn"):
        assert row[key] == exp[key], key
    assert row["source"] == str(f.absolute())
    # by index, on a TSV with numeric column names
    g = _csv(tmp_path / "toy.tsv", X, y, header="1990\t1991\t1992\t2000", delim="\t")
    assert main(["evaluate", str(g), "--target", "3", "--json"]) == 0
    (row2,) = json.loads(capsys.readouterr().out)
    assert row2["target"] == "2000"
    assert [row2[k] for k in ("tp", "fp", "tn", "fn")] == [row[k] for k in ("tp", "fp", "tn", "fn")]
    assert main(["evaluate", str(g), "--target", "nope"]) == 2
    assert "no target column 'nope'; the columns are ['1990', '1991', '1992', '2000']" in (capsys.readouterr().err)


@pytest.mark.parametrize("tokens", [("nan", "inf", ""), ("?", "NA", "-inf")])
def test_drop_missing_csv_counts_rows(tmp_path, capsys, tokens):
    X, y = _make(5)
    lines = ["a,b,c,label"]
    missing = {2: tokens[0], 17: tokens[1], 40: tokens[2]}
    for i, (row, lab) in enumerate(zip(X, y)):
        cells = [f"{v:.3f}" for v in row] + [lab]
        if i in missing:
            cells[i % 3] = missing[i]
        lines.append(",".join(cells))
    f = tmp_path / "gaps.csv"
    f.write_text("\n".join(lines) + "\n")
    assert main(["evaluate", str(f), "--json"]) == 2
    err = capsys.readouterr().err
    assert "line 4" in err and "column 'c' (index 2)" in err and "3 row(s)" in err
    assert main(["evaluate", str(f), "--drop-missing", "--json"]) == 0
    cap = capsys.readouterr()
    assert f"{f}: dropped 3 row(s) with missing or non-finite values, 77 left" in cap.err
    (row,) = json.loads(cap.out)
    keep = np.array([i not in missing for i in range(len(y))])
    exp = _expected(X[keep], y[keep], pos=str(y[keep][0]))
    assert row["n_dropped"] == 3 and row["n_samples"] == 77
    assert [row[k] for k in ("tp", "fp", "tn", "fn")] == [exp[k] for k in ("tp", "fp", "tn", "fn")]


def test_keel_nan_values_dropped(tmp_path, capsys):
    X, y = _make(6)
    X[[5, 9], 1] = np.nan
    f = _keel(tmp_path / "nan.dat", X, y)
    assert main(["evaluate", str(f)]) == 2
    assert "data row index 5" in capsys.readouterr().err
    assert main(["evaluate", str(f), "--drop-missing", "--json"]) == 0
    cap = capsys.readouterr()
    assert "dropped 2 row(s)" in cap.err
    assert json.loads(cap.out)[0]["n_samples"] == 78


def test_other_sources(tmp_path, capsys):
    assert main(["evaluate", "iris", "--k", "3", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["n_samples"] == 150 and row["relation"] == "iris" and row["positive_class"] == "0"
    X, y = _make(7)
    np.savez(tmp_path / "toy.npz", X=X[:60], y=y[:60], X_test=X[60:], y_test=y[60:])
    assert main(["evaluate", str(tmp_path / "toy.npz"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["n_samples"] == 80  # the own test split is pooled
    exp = _expected(X, y, pos=str(y[0]))
    assert row["tp"] == exp["tp"] and row["positive_class"] == str(y[0])
    assert main(["evaluate", "no-such-set"]) == 2
    assert "named sets: fashion-mnist" in capsys.readouterr().err
