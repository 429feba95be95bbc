"""The cluster-validity study, its table and the ``gpuknn cluster-study`` command."""

import json

import numpy as np
import pytest

from gpuknn.studies.cluster_study import format_table, make_groups, run_cluster_study


def test_study_picks_five_groups(xp):
    r = run_cluster_study(seed=0, k_max=7, n_per_group=60, n_init=4, B_gap=10, B_null=9, xp=xp)
    assert r["k"] == list(range(1, 8))
    assert r["chosen_k"]["rand"] == 5
    for name in ("adjusted_rand", "pair_jaccard", "fowlkes_mallows", "davies_bouldin", "gap"):
        assert r["chosen_k"][name] == 5, name
    assert r["indices"]["rand"][4] == pytest.approx(1.0)
    assert r["indices"]["dunn"][0] is None  # undefined for K = 1: recorded as None, not NaN
    t = r["structure_test"]
    assert t["p_within_ss"] == pytest.approx(1 / 10) and t["within_ss_observed"] < t["within_ss_null_min"]
    assert 0.5 < r["cpcc"]["average"] <= 1.0
    json.dumps(r)  # JSON-ready


def test_make_groups_and_table():
    X, y = make_groups(n_per_group=10, seed=3)
    assert X.shape == (50, 3) and np.bincount(y).tolist() == [10] * 5
    r = run_cluster_study(seed=1, k_max=6, n_per_group=30, n_init=3, B_gap=2, B_null=4)
    md = format_table(r)
    assert md.count("\n") == 6 + 3 and "| **best K** |" in md
    csv = format_table(r, fmt="csv").splitlines()
    assert csv[0].startswith("K,rand,") and len(csv) == 8


def test_cli_writes_outputs(tmp_path, capsys):
    from gpuknn.cli import main

    rc = main(
        [
            "cluster-study",
            "--out",
            str(tmp_path),
            "--k-max",
            "6",
            "--n-per-group",
            "30",
            "--b-gap",
            "2",
            "--b-null",
            "4",
            "--device",
            "cpu",
        ]
    )
    assert rc == 0
    data = json.loads((tmp_path / "cluster_study.json").read_text())
    assert data["chosen_k"]["rand"] == 5
    for name in ("cluster_study.md", "cluster_study.csv", "cluster_external.png", "cluster_gap.png"):
        assert (tmp_path / name).stat().st_size > 0
    out = capsys.readouterr()
    assert "chosen K per index" in out.out and "k-means K=1" in out.err
    rc = main(
        [
            "cluster-study",
            "--out",
            str(tmp_path / "q"),
            "--k-max",
            "5",
            "--n-per-group",
            "20",
            "--b-gap",
            "2",
            "--b-null",
            "2",
            "--quiet",
            "--device",
            "cpu",
        ]
    )
    assert rc == 0 and capsys.readouterr().out == ""
