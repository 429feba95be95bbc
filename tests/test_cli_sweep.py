import json

import pytest

from gpuknn.cli import main
from gpuknn.cli.sweep import parse_int_list

FILES = ["results.json", "journal.jsonl", "accuracy_vs_k.png", "variance_cumulative.png",
         "variance_components.png", "heatmap_uniform.png", "heatmap_distance.png",
         "confusion_matrix.png"]
KEYS = ["k_best", "p_best", "weights_best", "cv_accuracy_best", "test_accuracy", "test_macro_f1",
        "seconds_total", "settings", "versions", "device"]


def _check_outputs(out):
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    res = json.loads((out / "results.json").read_text())
    for key in KEYS:
        assert key in res, key
    assert 0.0 <= res["test_accuracy"] <= 1.0
    return res


def test_sweep_on_synthetic_stand_in_writes_everything(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["sweep", "--synthetic", "700", "--folds", "3", "--k-raw", "1-10", "--k", "1-5",
            "--p", "1-8,20", "--out", str(out), "--quiet", "--device", "cpu"]
    assert main(args) == 0
    res = _check_outputs(out)
    assert res["settings"]["folds"] == 3 and res["heatmap"]["ps"] == [1, 2, 3, 4, 5, 6, 7, 8, 20]
    printed = capsys.readouterr()
    assert "test set: accuracy" in printed.out and printed.err == ""  # --quiet: no bars
    # resuming a finished run recomputes nothing and gives the same numbers
    assert main(args + ["--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["test_accuracy"] == res["test_accuracy"] and again["heatmap"] == res["heatmap"]


@pytest.mark.slow
def test_sweep_on_real_fashion_mnist(tmp_path, fashion_dir, capsys):
    out = tmp_path / "real"
    assert main(["sweep", "--subset", "2000", "--folds", "3", "--data-dir", str(fashion_dir),
                 "--out", str(out), "--device", "cpu"]) == 0
    res = _check_outputs(out)
    assert res["n_train"] == 2000 and res["n_test"] == 10000
    assert res["test_accuracy"] > 0.75
    assert "(k, p) sweep" in capsys.readouterr().err  # progress bars on stderr


@pytest.mark.parametrize("bad", [["--folds", "0"], ["--p", "0-3"], ["--k", "abc"],
                                 ["--metric", "manhattan"], ["--p", "1-900"], ["--folds", "400"]])
def test_bad_options_exit_2_with_a_message(tmp_path, capsys, bad):
    args = ["sweep", "--synthetic", "300", "--quiet", "--out", str(tmp_path / "x"), "--device", "cpu"]
    with pytest.raises(SystemExit) as exc:
        code = main(args + bad)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err.lower()


def test_resume_with_other_settings_is_refused(tmp_path, capsys):
    base = ["sweep", "--synthetic", "400", "--folds", "2", "--k-raw", "1-3", "--k", "1-3",
            "--p", "1-4", "--quiet", "--out", str(tmp_path), "--device", "cpu"]
    assert main(base) == 0
    assert main(base[:-2] + ["--seed", "5", "--resume", "--device", "cpu"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_parse_int_list():
    assert parse_int_list("1-3,10,115-315:100") == [1, 2, 3, 10, 115, 215, 315]
    for bad in ["", "a", "3-1", "0", "1-5:0"]:
        with pytest.raises(Exception):
            parse_int_list(bad)
