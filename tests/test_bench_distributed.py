"""``scripts/bench_distributed.py`` at tiny sizes: both parts run on a LocalCluster, the JSON
holds the machine facts, timings and ratios, and the correctness checks ran and passed (no
speed is asserted)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("dask.array")
pytest.importorskip("distributed")
pytest.importorskip("psutil")
pytest.importorskip("threadpoolctl")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_distributed.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_distributed_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_distributed_tiny(bench, capsys, tmp_path):
    out_json = tmp_path / "bench.json"
    threads = {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    argv = [
        "--part",
        "knn,big",
        "--json",
        str(out_json),
        "--repeat",
        "2",
        "--synthetic",
        "--queries",
        "120",
        "--train",
        "900",
        "--query-chunks",
        "3",
        "--big-rows",
        "30000",
        "--big-chunk",
        "7000",  # uneven last chunk
        "--big-queries",
        "200",
        "--big-sample",
        "8",
        "--sample-every",
        "0.2",
    ]
    assert bench.main(argv) == 0
    # the LocalCluster's BLAS thread variables were undone in this process
    assert {v: os.environ.get(v) for v in threads} == threads
    out = capsys.readouterr().out
    assert "indices identical to single-process: yes" in out
    assert "sample verified: indices equal" in out

    res = json.loads(out_json.read_text())
    m = res["machine"]
    for key in ("cpu_model", "cpu_count", "numpy", "blas", "dask", "distributed", "memory_total_bytes"):
        assert key in m
    assert set(res["parts"]) == {"knn", "big"}

    knn = res["parts"]["knn"]
    assert (knn["n_queries"], knn["n_ref"], knn["query_chunks"], knn["ref_shards"]) == (120, 900, 3, 2)
    for side in ("single", "distributed", "distributed_with_scatter", "scatter_train_only"):
        assert len(knn["times_s"][side]) == 2 and all(t > 0 for t in knn["times_s"][side])
        assert set(knn["summary_s"][side]) == {"min", "median", "max"}
    assert set(knn["ratios"]) == {
        f"{s}/single_{stat}" for s in ("distributed", "distributed_with_scatter") for stat in ("min", "median")
    }
    assert isinstance(knn["meets_goal"], bool)
    assert all(c["indices_equal"] for c in knn["checks"].values()) and len(knn["checks"]) == 2

    big = res["parts"]["big"]
    assert (big["n_ref"], big["n_chunks"], big["reference_bytes"]) == (30000, 5, 30000 * 64 * 4)
    assert big["check"]["indices_equal"] and big["check"]["sample_size"] == 8
    assert big["wall_s"] > 0 and big["n_memory_samples"] >= 2 and big["workers_unchanged"]
    assert len(big["peak_rss_bytes"]) == 2 and all(v > 0 for v in big["peak_rss_bytes"].values())
    assert set(big["spilled_bytes"]) == set(big["peak_rss_bytes"])


def test_unknown_part_is_refused(bench):
    with pytest.raises(SystemExit):
        bench.parse_args(["--part", "knn,nope"])


def test_bench_distributed_sweep_part_tiny(bench, capsys, tmp_path):
    out_json = tmp_path / "sweep.json"
    assert bench.main(["--part", "sweep", "--synthetic", "--json", str(out_json)]) == 0
    assert "tables: identical; choice identical" in capsys.readouterr().out
    sweep = json.loads(out_json.read_text())["parts"]["sweep"]
    assert sweep["same_tables"] is True and sweep["same_choice_and_test"] is True and sweep["workers"] == 2
    assert sweep["heatmap_cells_differing"] == 0 < sweep["heatmap_cells"]
    assert len(sweep["times_s"]["single"]) == len(sweep["times_s"]["distributed"]) == 1
    assert 0 <= sweep["test_accuracy"] <= 1 and sweep["choice"]["k_best"] >= 1
