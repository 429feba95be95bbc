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
        lines += ["@relation toy", "@attribute a real [-5, 5]", "@attribute b real [-5, 5]",
                  "@attribute c real [-5, 5]", "@attribute Class {positive, negative}",
                  "@inputs a, b, c", "@outputs Class", "@data"]
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
    return {"tp": int(np.sum(t & p)), "fp": int(np.sum(~t & p)), "tn": int(np.sum(~t & ~p)),
            "fn": int(np.sum(t & ~p)), "precision": precision_score(yte, pred, pos_label=pos),
            "recall": recall_score(yte, pred, pos_label=pos),
            "macro_f1": f1_score(yte, pred, average="macro"), "accuracy": float(np.mean(yte == pred))}


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
