"""The one-command GPU check: ``scripts/bench_gpu.py --dry-run`` and the shell scripts' syntax.

The dry run is what CI can run of the GPU check: every part at tiny sizes on NumPy (the torch
parts only where torch sees a CUDA device). These tests check the reports' structure, not
speed: no figure is compared with a number.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"

# Parts that run on NumPy (a dry run always runs them); the torch ones need CUDA.
HOST_PARTS = ["copy", "gemm_fp32", "kneighbors", "sweep", "kneighbors_k1000", "kneighbors_large_ref"]
TORCH_PARTS = ["gemm_tf32", "gemm_bf16", "torch_topk"]
# The time each host part must report (seconds), besides any other figure.
TIMINGS = {
    "copy": "time per copy",
    "gemm_fp32": "time per GEMM",
    "kneighbors": "gpuknn",
    "sweep": "study",
    "kneighbors_k1000": "gpuknn",
    "kneighbors_large_ref": "gpuknn",
}


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """Run the dry run once in a subprocess; its output directory and completed process."""
    out = tmp_path_factory.mktemp("gpu_report")
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_gpu.py"), "--dry-run", "--out", str(out)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out, proc


def _report(out: Path) -> dict:
    return json.loads((out / "gpu_report.json").read_text(encoding="utf-8"))


def _check_parts(report: dict) -> None:
    parts = report["parts"]
    assert set(HOST_PARTS + TORCH_PARTS) <= set(parts)
    for name in HOST_PARTS:
        part = parts[name]
        assert part["status"] == "ok", (name, part.get("error"), part.get("traceback"))
        figures = part["figures"]
        assert TIMINGS[name] in figures, (name, sorted(figures))
        for fig_name, fig in figures.items():
            assert isinstance(fig["value"], float) and math.isfinite(fig["value"]), (name, fig_name)
            assert fig["unit"], (name, fig_name)
            if fig["unit"] == "s":
                assert fig["value"] > 0, (name, fig_name, fig)
    for name in TORCH_PARTS:
        assert parts[name]["status"] in ("ok", "skipped"), (name, parts[name].get("error"))
        if parts[name]["status"] == "skipped":
            assert parts[name]["notes"], name  # says why


def test_dry_run_writes_both_reports(dry_run):
    out, proc = dry_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "gpu_report.json").is_file()
    assert (out / "gpu_report.md").is_file()


def test_dry_run_json_has_every_part_with_timings(dry_run):
    out, proc = dry_run
    report = _report(out)
    meta = report["meta"]
    assert meta["dry_run"] is True and meta["on_gpu"] is False
    for key in ("device", "versions", "data", "data_load_seconds", "sizes", "started_utc"):
        assert key in meta, key
    assert meta["versions"]["numpy"]
    _check_parts(report)
    # The targets are listed beside the measurements but not judged in a dry run.
    assert len(report["targets"]) == 3
    assert all(t["met"] is None for t in report["targets"])
    sweep = report["parts"]["sweep"]["result"]
    assert 0.0 <= sweep["test_accuracy"] <= 1.0


def test_dry_run_markdown_names_every_part(dry_run):
    out, _ = dry_run
    report = _report(out)
    text = (out / "gpu_report.md").read_text(encoding="utf-8")
    assert "dry run" in text
    for name, part in report["parts"].items():
        assert f"## {name}:" in text, name
        for fig_name in part.get("figures", {}):
            assert f"| {fig_name} |" in text, (name, fig_name)
    for target in report["targets"]:
        assert target["target"] in text


def test_dry_run_without_fashion_mnist(tmp_path, monkeypatch):
    """No data anywhere: random rows for kneighbors, a synthetic stand-in for the study."""
    from gpuknn.datasets import fashion_mnist

    monkeypatch.delenv("GPUKNN_DATA", raising=False)
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DATA_DIR", tmp_path / "none")
    monkeypatch.setattr(fashion_mnist, "_LOCAL_DIR", tmp_path / "none-either")
    monkeypatch.syspath_prepend(str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("bench_gpu_under_test", SCRIPTS / "bench_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)  # its dataclasses look themselves up
    spec.loader.exec_module(bench)
    out = tmp_path / "report"
    assert bench.main(["--dry-run", "--out", str(out)]) == 0
    report = _report(out)
    assert report["meta"]["data"].startswith("random")
    _check_parts(report)
    assert any("synthetic" in note for note in report["parts"]["sweep"]["notes"])


@pytest.mark.parametrize("script", ["gpu_check.sh", "gpu_wheels.sh"])
def test_shell_scripts_parse(script):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not found")
    proc = subprocess.run([bash, "-n", str(SCRIPTS / script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _bench_module(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("bench_gpu_parts", SCRIPTS / "bench_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)
    spec.loader.exec_module(bench)
    return bench


def test_parts_runs_only_those_asked_for(tmp_path, monkeypatch, capsys):
    """A rerun after a fix measures only the parts it needs (gpu_check.sh's
    GPUKNN_CHECK_BENCH_PARTS); the others say so; a wrong name is refused before any work."""
    bench = _bench_module(monkeypatch)
    out = tmp_path / "report"
    assert bench.main(["--dry-run", "--out", str(out), "--parts", "copy,kneighbors"]) == 0
    parts = _report(out)["parts"]
    assert parts["copy"]["status"] == parts["kneighbors"]["status"] == "ok"
    for name in set(parts) - {"copy", "kneighbors"}:
        assert parts[name]["status"] == "skipped" and "--parts" in parts[name]["notes"][0], name
    assert bench.main(["--dry-run", "--out", str(tmp_path / "bad"), "--parts", "copy,nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "gpu_report.json").exists()


def test_the_torch_target_is_exactness_cost_not_a_speed_up(monkeypatch):
    """gpuknn and torch's mm + topk run the same FP32 GEMM: the target bounds gpuknn's time
    by 1.25 x torch's (issue 29), it does not ask gpuknn to be 2 x faster."""
    bench = _bench_module(monkeypatch)
    targets = {part: (figure, op, bound) for part, figure, op, bound, _ in bench.TARGETS}
    assert targets["torch_topk"] == ("gpuknn / torch", "<=", 1.25)
    assert targets["kneighbors"] == ("gpuknn / fp32 GEMM floor", "<=", 1.5)
