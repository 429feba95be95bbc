import argparse
import json

import pytest

from gpuknn.cli import main
from gpuknn.cli.sweep import parse_int_list

FILES = [
    "results.json",
    "journal.jsonl",
    "accuracy_vs_k.png",
    "variance_cumulative.png",
    "variance_components.png",
    "heatmap_uniform.png",
    "heatmap_distance.png",
    "confusion_matrix.png",
]
KEYS = [
    "k_best",
    "p_best",
    "weights_best",
    "cv_accuracy_best",
    "test_accuracy",
    "test_macro_f1",
    "seconds_total",
    "settings",
    "versions",
    "device",
]


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
    args = [
        "sweep",
        "--synthetic",
        "700",
        "--folds",
        "3",
        "--k-raw",
        "1-10",
        "--k",
        "1-5",
        "--p",
        "1-8,20",
        "--out",
        str(out),
        "--quiet",
        "--device",
        "cpu",
    ]
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
    assert (
        main(
            [
                "sweep",
                "--subset",
                "2000",
                "--folds",
                "3",
                "--data-dir",
                str(fashion_dir),
                "--out",
                str(out),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    res = _check_outputs(out)
    assert res["n_train"] == 2000 and res["n_test"] == 10000
    assert res["test_accuracy"] > 0.75
    assert "cross-validation" in capsys.readouterr().err  # progress bars on stderr


@pytest.mark.parametrize(
    "bad",
    [["--folds", "0"], ["--p", "0-3"], ["--k", "abc"], ["--metric", "manhattan"], ["--p", "1-900"], ["--folds", "400"]],
)
def test_bad_options_exit_2_with_a_message(tmp_path, capsys, bad):
    args = ["sweep", "--synthetic", "300", "--quiet", "--out", str(tmp_path / "x"), "--device", "cpu"]
    with pytest.raises(SystemExit) as exc:
        code = main(args + bad)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err.lower()


def test_resume_with_other_settings_is_refused(tmp_path, capsys):
    base = [
        "sweep",
        "--synthetic",
        "400",
        "--folds",
        "2",
        "--k-raw",
        "1-3",
        "--k",
        "1-3",
        "--p",
        "1-4",
        "--quiet",
        "--out",
        str(tmp_path),
        "--device",
        "cpu",
    ]
    assert main(base) == 0
    assert main(base[:-2] + ["--seed", "5", "--resume", "--device", "cpu"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_parse_int_list():
    assert parse_int_list("1-3,10,115-315:100") == [1, 2, 3, 10, 115, 215, 315]
    for bad in ["", "a", "3-1", "0", "1-5:0"]:
        with pytest.raises(argparse.ArgumentTypeError):
            parse_int_list(bad)


# -- issue 18: a run directory that can be trusted -------------------------------------------------

import errno  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

from gpuknn import datasets  # noqa: E402
from gpuknn.cli import build_parser  # noqa: E402
from gpuknn.cli import rundir as rundir_mod  # noqa: E402
from gpuknn.cli import sweep as sweep_mod  # noqa: E402
from gpuknn.model_selection import journal as journal_mod  # noqa: E402

TINY = [
    "sweep",
    "--synthetic",
    "300",
    "--k",
    "1-3",
    "--p",
    "2,3",
    "--k-raw",
    "1-3",
    "--folds",
    "2",
    "--quiet",
    "--device",
    "cpu",
]
IDX = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]


def _snapshot(d):
    """Every file under d with its bytes (the run directory byte for byte)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def no_figures(monkeypatch):
    """Skip drawing (seconds each) where the figures are not what is tested."""
    monkeypatch.setattr(sweep_mod, "_figures", lambda res: {})


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny run (with figures): copy it before changing it."""
    out = tmp_path_factory.mktemp("finished") / "run"
    assert main(TINY + ["--out", str(out)]) == 0
    return out


@pytest.fixture
def run_dir(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    return out


def _fake_fashion_dirs(tmp_path, monkeypatch):
    """Two --data-dir directories with the four file names, whose (fake) loader returns
    different small data sets: A and B."""
    dirs = {}
    for name, seed in (("A", 0), ("B", 1)):
        d = tmp_path / name
        d.mkdir()
        for stem in IDX:
            (d / (stem + ".gz")).write_bytes(b"")
        dirs[name] = (d, seed)
    calls = []

    def load(*, data_dir, dtype="float32", **kw):
        calls.append(data_dir)
        seed = {str(d.absolute()): s for d, s in dirs.values()}[str(data_dir)]
        return datasets.make_fashion_mnist_like(258, 42, random_state=seed, dtype=dtype)

    monkeypatch.setattr(datasets, "load_fashion_mnist", load)
    return dirs["A"][0], dirs["B"][0], calls


REAL = [a for a in TINY if a not in ("--synthetic", "300")]


def test_a_resume_with_other_data_is_refused(tmp_path, monkeypatch, capsys, no_figures):
    """Fault (a): --data-dir A, then --data-dir B --resume mixed the data sets."""
    a, b, calls = _fake_fashion_dirs(tmp_path, monkeypatch)
    out = tmp_path / "run"
    assert main(REAL + ["--data-dir", str(a), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["data"]["source"] == f"Fashion-MNIST from {a.absolute()}"
    assert res["data"]["shapes"]["X_train"] == [258, 784] and len(res["data"]["sha256"]) == 64
    before = _snapshot(out)
    capsys.readouterr()
    assert main(REAL + ["--data-dir", str(b), "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "other data" in err and "sha256" in err and str(a.absolute()) in err and str(b.absolute()) in err
    assert len(err.strip().splitlines()) == 1
    assert _snapshot(out) == before
    # the same data resume fine (nothing recomputed: same numbers)
    assert main(REAL + ["--data-dir", str(a), "--out", str(out), "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["heatmap"] == res["heatmap"] and again["test"]["accuracy"] == res["test"]["accuracy"]


@pytest.mark.parametrize("case", ["missing", "incomplete", "file"])
def test_a_bad_data_dir_is_an_error_never_a_fallback(tmp_path, monkeypatch, capsys, case):
    _, _, calls = _fake_fashion_dirs(tmp_path, monkeypatch)
    d = tmp_path / "data"
    if case == "incomplete":
        d.mkdir()
        (d / "train-images-idx3-ubyte.gz").write_bytes(b"")
    elif case == "file":
        d.write_text("x")
    monkeypatch.setenv("GPUKNN_DATA", str(tmp_path / "A"))  # a complete directory on the search path
    out = tmp_path / "run"
    assert main(REAL + ["--data-dir", str(d), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--data-dir {d}" in err and len(err.strip().splitlines()) == 1
    if case == "incomplete":
        assert "missing train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte" in err
    assert calls == [] and not out.exists()


def test_b_a_second_run_on_the_same_out_is_refused(run_dir, capsys):
    """Fault (b): two sweeps on one --out both wrote the journal."""
    before = _snapshot(run_dir)
    holder = textwrap.dedent("""
        import fcntl, os, sys
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\\n".encode())
        print("locked", flush=True)
        sys.stdin.read()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, str(run_dir / ".lock")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        capsys.readouterr()
        for extra in ([], ["--resume"]):
            assert main(TINY + ["--out", str(run_dir)] + extra) == 3
            err = capsys.readouterr().err
            assert f"{run_dir} is in use by another gpuknn run (pid {proc.pid})" in err
            assert len(err.strip().splitlines()) == 1
        after = _snapshot(run_dir)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
    after.pop(".lock"), before.pop(".lock")
    assert after == before  # journal, results, figures untouched
    assert main(TINY + ["--out", str(run_dir), "--resume"]) == 0  # free again


@pytest.mark.parametrize(
    "bad",
    [
        ["--folds", "1"],
        ["--folds", "0"],
        ["--p", "1-900"],
        ["--k", "1-200"],
        ["--k-raw", "1-500"],
        ["--metric", "manhattan"],
        ["--data", "my.csv"],
    ],
)
def test_c_rejected_arguments_leave_the_run_directory_byte_for_byte(run_dir, capsys, bad):
    """Fault (c): a rejected re-run rotated (and lost) the journal before validation."""
    before = _snapshot(run_dir)
    code = None
    try:
        code = main(TINY + ["--out", str(run_dir)] + bad)
    except SystemExit as exc:  # argparse
        code = exc.code
    assert code == 2
    assert "error" in capsys.readouterr().err
    assert _snapshot(run_dir) == before
    assert not (run_dir / "journal.jsonl.1").exists()


def test_c_rejected_data_leave_the_run_directory_byte_for_byte(run_dir, tmp_path, capsys):
    before = _snapshot(run_dir)
    args = [a for a in TINY if a not in ("--synthetic", "300")]
    assert main(args + ["--data-dir", str(tmp_path / "nowhere"), "--out", str(run_dir)]) == 2
    assert _snapshot(run_dir) == before


def test_c_fresh_runs_keep_every_old_journal(run_dir, capsys, no_figures):
    first = (run_dir / "journal.jsonl").read_bytes()
    assert len(first.splitlines()) > 5
    assert main(TINY + ["--out", str(run_dir), "--seed", "1"]) == 0
    assert "previous journal kept as" in capsys.readouterr().out
    second = (run_dir / "journal.jsonl").read_bytes()
    assert main(TINY + ["--out", str(run_dir), "--seed", "2"]) == 0
    assert (run_dir / "journal.jsonl.1").read_bytes() == first
    assert (run_dir / "journal.jsonl.2").read_bytes() == second
    assert not (run_dir / "journal.jsonl.3").exists() and not (run_dir / "journal.jsonl.old").exists()


@pytest.mark.parametrize("where", ["file", "under_file"])
def test_d_out_that_is_or_is_under_a_file_exits_3(tmp_path, capsys, where):
    f = tmp_path / "taken"
    f.write_text("keep")
    out = f if where == "file" else f / "sub" / "run"
    assert main(TINY + ["--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(f) in err and "not a directory" in err
    assert "Traceback" not in err and f.read_text() == "keep"


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root bypasses permissions (simulated in the next test)"
)
def test_d_read_only_out_exits_3(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(TINY + ["--out", str(ro / "run")]) == 3
        assert "Permission denied" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)


def test_d_not_writable_out_exits_3_simulated(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rundir_mod.os, "access", lambda *a, **k: False)
    assert main(TINY + ["--out", str(tmp_path / "run")]) == 3
    err = capsys.readouterr().err
    assert f"{tmp_path}: Permission denied" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_d_full_disk_for_results_exits_3_naming_path_and_cause(tmp_path, monkeypatch, capsys, no_figures):
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("results.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst)

    monkeypatch.setattr(rundir_mod.os, "replace", replace)
    out = tmp_path / "run"
    assert main(TINY + ["--out", str(out)]) == 3
    err = capsys.readouterr().err.strip()
    assert err == f"gpuknn sweep: error: {out / 'results.json'}: No space left on device"
    assert not (out / "results.json").exists() and not list(out.glob(".results.json*"))
    monkeypatch.setattr(rundir_mod.os, "replace", real)
    assert main(TINY + ["--out", str(out), "--resume"]) == 0  # the journal kept every part


def test_d_full_disk_for_the_journal_exits_3(tmp_path, monkeypatch, capsys, no_figures):
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(journal_mod.os, "fsync", fsync)
    out = tmp_path / "run"
    assert main(TINY + ["--out", str(out)]) == 3
    err = capsys.readouterr().err.strip()
    assert err == f"gpuknn sweep: error: {out / 'journal.jsonl'}: No space left on device"


def test_d_an_unwrapped_file_system_error_exits_3(tmp_path, monkeypatch, capsys):
    def boom(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/some/file")

    monkeypatch.setattr(sweep_mod, "_load", boom)
    assert main(TINY + ["--out", str(tmp_path / "run")]) == 3
    assert capsys.readouterr().err.strip() == "gpuknn sweep: error: /some/file: Read-only file system"


def test_d_internal_errors_still_propagate(tmp_path, monkeypatch):
    def bug(*a, **k):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(sweep_mod, "_load", bug)
    with pytest.raises(ZeroDivisionError):
        main(TINY + ["--out", str(tmp_path / "run")])


def test_d_a_failed_figure_keeps_the_results_and_exits_4(tmp_path, monkeypatch, capsys):
    from gpuknn.plots import sweep as sweep_plots

    def broken(*a, **k):
        raise RuntimeError("cannot draw the heatmap")

    monkeypatch.setattr(sweep_plots, "plot_heatmap", broken)
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("confusion_matrix.png"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst)

    monkeypatch.setattr(rundir_mod.os, "replace", replace)
    out = tmp_path / "run"
    assert main(TINY + ["--out", str(out)]) == sweep_mod.EXIT_FIGURES == 4
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "3 figure(s) not written" in err[0]
    assert "heatmap_uniform.png (cannot draw the heatmap)" in err[0]
    assert f"confusion_matrix.png ({out / 'confusion_matrix.png'}: No space left on device)" in err[0]
    res = json.loads((out / "results.json").read_text())
    assert 0 <= res["test_accuracy"] <= 1 and "test set: accuracy" in captured.out
    for name in ("accuracy_vs_k.png", "variance_cumulative.png", "variance_components.png"):
        assert (out / name).stat().st_size > 0
    assert not (out / "heatmap_uniform.png").exists()


def test_e_a_tampered_journal_number_is_refused_on_resume(run_dir, capsys):
    """Fault (e): an edited number was accepted."""
    path = run_dir / "journal.jsonl"
    lines = path.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if '"key": "final"' in line)
    rec = json.loads(lines[n])
    rec["accuracy"] = 0.999
    lines[n] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    before = _snapshot(run_dir)
    assert main(TINY + ["--out", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line {n + 1} (final) has a bad checksum" in err
    assert _snapshot(run_dir) == before


@pytest.mark.parametrize("line", ['{"foo": 1}', '{"key": "raw/fold=0", "scores": {}}'])
def test_e_a_foreign_journal_line_is_corrupt_data_not_a_key_error(run_dir, capsys, line):
    path = run_dir / "journal.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3] + [line] + lines[3:]) + "\n")
    assert main(TINY + ["--out", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: line 4 " in err and "KeyError" not in err and len(err.strip().splitlines()) == 1


def test_e_a_torn_last_line_is_redone(run_dir, capsys, no_figures):
    res = json.loads((run_dir / "results.json").read_text())
    path = run_dir / "journal.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["key"] == "final"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    assert main(TINY + ["--out", str(run_dir), "--resume"]) == 0
    again = json.loads((run_dir / "results.json").read_text())
    assert again["test"]["accuracy"] == res["test"]["accuracy"] and again["heatmap"] == res["heatmap"]
    assert json.loads(path.read_text().splitlines()[-1])["key"] == "final"


def test_resume_ignores_settings_that_do_not_change_results(run_dir, capsys, no_figures):
    res = json.loads((run_dir / "results.json").read_text())
    assert main(TINY + ["--out", str(run_dir), "--resume", "--working-memory", "7"]) == 0
    again = json.loads((run_dir / "results.json").read_text())
    assert again["heatmap"] == res["heatmap"] and again["settings"]["working_memory"] == 7  # MiB
    assert main(TINY + ["--out", str(run_dir), "--resume", "--dtype", "float64"]) == 2
    assert 'dtype (journal: "float32", now: "float64")' in capsys.readouterr().err


def test_f_options_cannot_be_abbreviated(tmp_path, capsys):
    """Fault (f): --data was taken as --data-dir (now --data is an option of its own, and
    no prefix stands for another option)."""
    for abbrev in (["--data-d", "x"], ["--targ", "y"], ["--res"], ["--synth", "300"], ["--working", "5"]):
        with pytest.raises(SystemExit) as exc:
            main(TINY + ["--out", str(tmp_path / "run")] + abbrev)
        assert exc.value.code == 2
        assert "unrecognized arguments" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    parser = build_parser()
    assert parser.allow_abbrev is False
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert subs.choices and all(p.allow_abbrev is False for p in subs.choices.values())


def test_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code in ("0", "1", "2", "3", "4"):
        assert f"\n  {code} " in out
    assert "run-directory or file-system fault" in out
