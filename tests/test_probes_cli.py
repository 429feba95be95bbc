"""Probes of issue 32 on the CLI and the loaders: stale files of an earlier run, raw tracebacks
(negative seeds, damaged .npz files) and messages that misled (float32 overflow, --synthetic N
too small, an empty --out, Dask's log lines under --quiet, apt's dpkg lock in scripts/main.sh)."""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpuknn.cli import build_parser, main
from gpuknn.cli import rundir as rundir_mod
from gpuknn.cli import sweep as sweep_mod
from gpuknn.datasets import load_dataset, load_table
from gpuknn.errors import CorruptDataError, InvalidInputError

ROOT = Path(__file__).resolve().parents[1]

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


def _exit_code(argv):
    """``main(argv)``'s exit code, argparse's ``SystemExit`` included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


# --------------------------------------------------------------------------- --seed
@pytest.mark.parametrize("command", [TINY, ["evaluate", "iris"], ["power-study"], ["cluster-study"]])
@pytest.mark.parametrize("bad", ["-1", "4294967296", "1.5", "x"])
def test_a_seed_outside_32_bits_is_an_argument_error(command, bad, tmp_path, capsys):
    argv = command + ["--seed", bad]
    if command[0] != "evaluate":
        argv += ["--out", str(tmp_path / "out")]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert f"argument --seed: the seed must be an integer in [0, 2**32-1 = 4294967295], got '{bad}'" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["inf", "-inf", "nan", "1e400", "0", "2.5"])
def test_an_odd_test_size_is_an_argument_error(bad, tmp_path, capsys):
    """``--test-size inf`` raised OverflowError from ``int(inf)``: an argument error now."""
    argv = ["sweep", "--data", "iris", f"--test-size={bad}", "--out", str(tmp_path / "out")]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "argument --test-size: expected a fraction in (0, 1) or a row count" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_labels_beyond_exact_integers_stay_strings():
    """Integer-looking labels beyond 2**53 are no exact int64 (1e300 became int64's minimum
    with a RuntimeWarning; 2**53 + 1 read as 2**53): they stay strings."""
    from gpuknn.datasets.delimited import labels_from_strings

    assert labels_from_strings(["1", "2", "3.0"]).tolist() == [1, 2, 3]
    assert labels_from_strings(["1e300", "1"]).tolist() == ["1e300", "1"]
    assert labels_from_strings(["9007199254740993", "0"]).tolist() == ["9007199254740993", "0"]


def test_the_extreme_seeds_are_accepted():
    parser = build_parser()
    for command in (["sweep"], ["evaluate", "iris"], ["power-study"], ["cluster-study"]):
        assert parser.parse_args(command + ["--seed", "0"]).seed == 0
        assert parser.parse_args(command + ["--seed", "4294967295"]).seed == 2**32 - 1


def test_synthetic_with_a_large_seed_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_mod, "_figures", lambda res: {})
    out = tmp_path / "run"
    assert main(TINY + ["--seed", "4294967295", "--out", str(out)]) == 0
    assert json.loads((out / "results.json").read_text())["settings"]["seed"] == 2**32 - 1


# --------------------------------------------------------------------------- --out ''
@pytest.mark.parametrize("command", [TINY, ["power-study"], ["cluster-study"]])
@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_out_is_refused_not_the_current_directory(command, empty, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _exit_code(command + ["--out", empty]) == 2
    assert "argument --out: expected a directory name" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- --synthetic N
@pytest.mark.parametrize("n", ["5", "10"])
def test_synthetic_too_small_says_the_total_must_exceed_the_test_part(n, tmp_path, capsys):
    out = tmp_path / "run"
    argv = [a for a in TINY if a != "300"]
    argv[argv.index("--synthetic") + 1 : argv.index("--synthetic") + 1] = [n]
    assert main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--synthetic {n}: too few images; 10 of them form the test set" in err
    assert "N must be at least 11" in err and "n_train" not in err
    assert not out.exists()


# --------------------------------------------------------------------------- damaged files
def _npz_bytes(tmp_path, compressed=False):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    p = tmp_path / "ok.npz"
    (np.savez_compressed if compressed else np.savez)(p, X=X, y=y)
    return p.read_bytes()


def _idx(data: bytes, dims) -> bytes:
    return struct.pack(">HBB", 0, 0x08, len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + data


def _damaged(tmp_path, kind) -> Path:
    """A file (or IDX directory) of ``kind`` cut short or damaged."""
    if kind.startswith("npz"):
        b = _npz_bytes(tmp_path, compressed=kind.endswith("compressed"))
        p = tmp_path / f"{kind}.npz"
        if kind.startswith("npz-truncated"):
            p.write_bytes(b[: len(b) // 2])
        elif kind == "npz-bad-crc-compressed":
            bb = bytearray(b)
            bb[len(bb) // 3] ^= 0xFF
            p.write_bytes(bytes(bb))
        elif kind == "npz-not-a-zip":
            p.write_bytes(b"not a zip archive at all")
        elif kind == "npz-empty":
            p.write_bytes(b"")
        elif kind == "npz-an-npy":
            np.save(tmp_path / "a.npy", np.zeros((3, 2)))
            shutil.copy(tmp_path / "a.npy", p)
        return p
    if kind == "npy-truncated":
        np.save(tmp_path / "full.npy", np.column_stack([np.zeros((40, 3)), np.repeat([0, 1], 20)]))
        b = (tmp_path / "full.npy").read_bytes()
        p = tmp_path / "t.npy"
        p.write_bytes(b[: len(b) // 2])
        return p
    if kind == "csv-truncated":
        rows = "".join(f"{i}.25,{i % 5}.5,{i % 2}\n" for i in range(20))
        p = tmp_path / "t.csv"
        p.write_text("a,b,y\n" + rows + "20.25,0")  # the write stopped inside a line
        return p
    if kind == "dat-truncated":
        head = "@relation t\n@attribute a real\n@attribute b real\n@attribute c {p,n}\n@inputs a,b\n@outputs c\n@data\n"
        text = head + "".join(f"{i}.5,{i},{'p' if i % 2 else 'n'}\n" for i in range(20))
        p = tmp_path / "t.dat"
        p.write_text(text[:-7])
        return p
    if kind == "idx-gz-truncated":
        d = tmp_path / "idx"
        d.mkdir()
        imgs = (np.arange(20 * 16) % 251).astype(np.uint8).tobytes()
        labels = (np.arange(20) % 2).astype(np.uint8).tobytes()
        for pre in ("train", "t10k"):
            (d / f"{pre}-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(imgs, [20, 4, 4])))
            (d / f"{pre}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(_idx(labels, [20])))
        g = (d / "train-images-idx3-ubyte.gz").read_bytes()
        (d / "train-images-idx3-ubyte.gz").write_bytes(g[: len(g) // 2])
        return d
    raise AssertionError(kind)


KINDS = {
    "npz-truncated": "truncated or damaged",
    "npz-truncated-compressed": "truncated or damaged",
    "npz-bad-crc-compressed": "truncated or damaged",
    "npz-not-a-zip": "not a .npz file",
    "npz-empty": "not a .npz file",
    "npz-an-npy": "not a .npz file",
    "npy-truncated": "cannot read as .npy",
    "csv-truncated": r"line 22: 2 field\(s\), expected 3",
    "dat-truncated": r"line 27: 1 field\(s\), expected 3",
    "idx-gz-truncated": "truncated gzip data",
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_damaged_file_is_corrupt_data_naming_it(kind, tmp_path):
    path = _damaged(tmp_path, kind)
    with pytest.raises(CorruptDataError, match=KINDS[kind]) as e:
        load_table(str(path))
    assert str(path) in str(e.value)


def test_the_intact_npz_still_loads(tmp_path):
    (tmp_path / "c.npz").write_bytes(_npz_bytes(tmp_path, compressed=True))
    t = load_table(str(tmp_path / "c.npz"))
    assert t.X.shape == (40, 3) and t.y.tolist() == [0] * 20 + [1] * 20


@pytest.mark.parametrize("command", ["sweep", "evaluate"])
def test_the_cli_reports_a_truncated_npz_in_one_line(command, tmp_path, capsys):
    path = _damaged(tmp_path, "npz-truncated")
    out = tmp_path / "run"
    argv = (
        TINY[:1] + ["--data", str(path), "--out", str(out), "--quiet"] if command == "sweep" else [command, str(path)]
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpuknn {command}: error: {path}: cannot read as .npz, the zip archive is truncated")
    assert len(err.strip().splitlines()) == 1 and not out.exists()


# --------------------------------------------------------------------------- float32 overflow
def _huge_csv(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3)) * 1e300
    y = np.repeat([0, 1], 20)
    p = tmp_path / "huge.csv"
    p.write_text("a,b,c,label\n" + "".join(",".join(f"{v:.6e}" for v in r) + f",{c}\n" for r, c in zip(X, y)))
    return p


def test_values_beyond_float32_are_named_as_such(tmp_path):
    p = _huge_csv(tmp_path)
    with pytest.raises(InvalidInputError, match=r"120 value\(s\) too large for float32") as e:
        load_table(str(p), dtype="float32")
    msg = str(e.value)
    assert "data row index 0, column 'a'" in msg and "float64" in msg and "NaN" not in msg
    with pytest.raises(InvalidInputError, match="too large for float32"):
        load_dataset(str(p), dtype="float32")
    t = load_table(str(p), dtype="float64")  # float64 holds them, exactly as written
    assert t.X.dtype == np.float64 and np.all(np.isfinite(t.X)) and np.abs(t.X).max() > 1e299
    # values float32 can hold are still cast
    small = tmp_path / "small.csv"
    small.write_text("a,b,label\n1e38,2,0\n-3e38,4,1\n5,6,0\n7,8,1\n")
    assert load_table(str(small), dtype="float32").X.dtype == np.float32


def test_the_sweep_says_float32_overflows_not_nan(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(TINY[:1] + ["--data", str(_huge_csv(tmp_path)), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "too large for float32" in err and "--dtype float64" in err
    assert "NaN or infinity" not in err and not out.exists()


# --------------------------------------------------------------------------- stale outputs
class _Cheap:
    """A stand-in figure: ``savefig`` writes a few bytes naming the run (drawing takes seconds)."""

    def __init__(self, tag):
        self.tag = tag

    def savefig(self, buf, **kw):
        buf.write(self.tag.encode())


@pytest.fixture
def cheap_figures(monkeypatch):
    """The real figure names of each run, drawn as a tag ("run N") instead of a plot."""
    real = sweep_mod._figures
    state = {"run": 0}

    def figures(res):
        return {name: _Cheap(f"run {state['run']}") for name in real(res)}

    monkeypatch.setattr(sweep_mod, "_figures", figures)
    return state


def test_a_fresh_run_sets_the_earlier_runs_outputs_aside(tmp_path, capsys, cheap_figures):
    out = tmp_path / "run"
    cheap_figures["run"] = 1
    assert main(TINY + ["--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert set(sweep_mod.OUTPUT_NAMES) <= set(first)  # every name the sweep may write, this time
    (out / "notes.txt").write_text("mine")
    (out / "my_plot.png").write_bytes(b"mine too")
    capsys.readouterr()

    # a fresh run of other settings: no raw sweep, uniform votes only
    cheap_figures["run"] = 2
    assert main(TINY + ["--out", str(out), "--skip-raw", "--weights", "uniform", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    olds = sorted(p for p in out.iterdir() if p.name.startswith("old-"))
    assert len(olds) == 1 and olds[0].is_dir()
    assert f"files of an earlier run in {out} moved to {olds[0]}: results.json" in printed
    # the figures this run does not draw are gone from DIR, kept unchanged in old-*/
    for name in ("accuracy_vs_k.png", "heatmap_distance.png"):
        assert not (out / name).exists() and (olds[0] / name).read_bytes() == first[name]
    assert sorted(p.name for p in olds[0].iterdir()) == sorted(sweep_mod.OUTPUT_NAMES)
    assert (olds[0] / "results.json").read_bytes() == first["results.json"]
    # what is in DIR is this run's, and the user's files are untouched
    res = json.loads((out / "results.json").read_text())
    assert res["settings"]["weights"] == ["uniform"] and "raw" not in res
    for name in ("heatmap_uniform.png", "confusion_matrix.png", "variance_cumulative.png"):
        assert (out / name).read_bytes() == b"run 2"
    assert (out / "notes.txt").read_text() == "mine" and (out / "my_plot.png").read_bytes() == b"mine too"
    assert (out / "journal.jsonl.1").exists()  # the old journal is kept as before

    # resuming rewrites the same files: nothing set aside; a stray output is
    (out / "accuracy_vs_k.png").write_bytes(b"stale")
    cheap_figures["run"] = 3
    assert main(TINY + ["--out", str(out), "--skip-raw", "--weights", "uniform", "--seed", "1", "--resume"]) == 0
    printed = capsys.readouterr().out
    newer = sorted(p for p in out.iterdir() if p.name.startswith("old-") and p != olds[0])
    assert len(newer) == 1 and [p.name for p in newer[0].iterdir()] == ["accuracy_vs_k.png"]
    assert f"moved to {newer[0]}: accuracy_vs_k.png" in printed
    assert (out / "heatmap_uniform.png").read_bytes() == b"run 3"


def test_set_aside_moves_only_the_named_files(tmp_path):
    d = rundir_mod.RunDirectory(tmp_path / "d")
    with d:
        (d.path / "results.json").write_text("{}")
        (d.path / ".results.json.abc.tmp").write_text("torn")  # an interrupted atomic write
        (d.path / "other.png").write_text("user")
        (d.path / "link.png").symlink_to(d.path / "other.png")
        folder, moved = d.set_aside(["results.json", "absent.png", "link.png"])
        assert moved == ["results.json"] and folder.parent == d.path and folder.name.startswith("old-")
        assert (folder / "results.json").read_text() == "{}"
        assert not (d.path / ".results.json.abc.tmp").exists()
        assert (d.path / "other.png").read_text() == "user" and (d.path / "link.png").is_symlink()
        (d.path / "results.json").write_text("[]")
        second, moved = d.set_aside(["results.json"])  # within the same second: its own folder
        assert second != folder and moved == ["results.json"] and (folder / "results.json").read_text() == "{}"
        assert d.set_aside(["results.json"]) == (None, [])


# --------------------------------------------------------------------------- Dask under --quiet
def test_quiet_drops_dask_log_lines_while_the_cluster_lives():
    pytest.importorskip("distributed")
    from gpuknn.cli.dask_cluster import open_client

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__()
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    # A handler of our own on the nanny's logger sees what passes its (inherited) level: Dask's
    # stderr handler and pytest's capture hang elsewhere, but filter on the same level.
    nanny, keep = logging.getLogger("distributed.nanny"), Keep()
    names = ("distributed", "distributed.nanny", "distributed.client")
    before = {n: logging.getLogger(n).level for n in names}
    nanny.addHandler(keep)
    try:
        args = argparse.Namespace(scheduler=None, workers=1, quiet=True)
        with open_client(args) as client:
            assert len(client.scheduler_info()["workers"]) == 1
            nanny.warning("probe-inside: Worker process still alive after 4 seconds, killing")
            nanny.error("probe-error")  # errors still pass
        assert "probe-inside: Worker process still alive after 4 seconds, killing" not in keep.messages
        assert "probe-error" in keep.messages
        assert not [m for m in keep.messages if "probe" not in m]  # nor Dask's own warnings at close
        assert {n: logging.getLogger(n).level for n in names} == before
        nanny.warning("probe-after")  # the levels are back: Dask logs again (the check can fail)
        assert keep.messages[-1] == "probe-after"
    finally:
        nanny.removeHandler(keep)


# --------------------------------------------------------------------------- scripts/main.sh
def test_main_sh_waits_for_the_dpkg_lock_and_explains_a_failure(tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-get").write_text(
        '#!/bin/sh\necho "apt-get $*" >&2\necho "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2\nexit 100\n'
    )
    (fake / "apt-get").chmod(0o755)
    (fake / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (fake / "sudo").chmod(0o755)
    script = (ROOT / "scripts" / "main.sh").read_text()
    start = script.index("APT_LOCK_TIMEOUT_S=")
    end = script.index("\n}\n", start) + 3
    probe = tmp_path / "probe.sh"
    probe.write_text(script[start:end] + "apt_install_fashion_mnist\necho not-reached\n")
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", GPUKNN_APT_LOCK_TIMEOUT="7")
    r = subprocess.run([bash, "-euo", "pipefail", str(probe)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1 and "not-reached" not in r.stdout
    assert "apt-get -o DPkg::Lock::Timeout=7 update -qq" in r.stderr
    assert "scripts/main.sh: error: could not install the Debian package dataset-fashion-mnist" in r.stderr
    assert "GPUKNN_DATA" in r.stderr
