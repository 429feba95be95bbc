"""``scripts/bench_sklearn.py`` at tiny sizes: it runs, times every contender and compares
their choices (structure only; no speed is asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import fashion_mnist_dir

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_sklearn.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_sklearn_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "argv",
    [
        ["--rows", "200", "--kmax", "4", "--synthetic", "--weights", "both"],  # every contender
        ["--rows", "300", "--kmax", "3", "--no-sklearn", "--repeat", "2"],  # real data when present
    ],
)
def test_bench_runs_and_compares_choices(bench, capsys, argv):
    if "--synthetic" not in argv and fashion_mnist_dir() is None:
        argv = argv + ["--synthetic"]  # CI without the Fashion-MNIST files
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "KNeighborsClassifierCV" in out and "GridSearchCV(gpuknn KNN)" in out
    assert ("GridSearchCV(sklearn KNN)" in out) == ("--no-sklearn" not in argv)
    # gpuknn's exact kNN both ways: the same k (scikit-learn's float32 distances may differ)
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("GridSearchCV(gpuknn KNN)") and "/" in ln)
    assert "x the time; choice agrees" in line
    assert f"k = 1..{argv[argv.index('--kmax') + 1]}" in out
