"""The cluster-validity study, its table and the ``gpuknn cluster-study`` command."""

import json

import numpy as np
import pytest

from gpuknn.cluster import KMeans
from gpuknn.errors import InvalidInputError
from gpuknn.studies.cluster_study import _null_sampler, _null_test, format_table, make_groups, run_cluster_study


def _first_1se(ks, gap, s_k):
    """Tibshirani's rule written out: smallest K with Gap(K) >= Gap(K+1) - s_{K+1}, else the last K."""
    for i in range(len(ks) - 1):
        if gap[i] >= gap[i + 1] - s_k[i + 1]:
            return ks[i]
    return ks[-1]


def _check_study(r, B, nulls):
    assert r["k"] == list(range(1, 8))
    assert r["chosen_k"]["rand"] == 5
    for name in ("adjusted_rand", "pair_jaccard", "fowlkes_mallows", "davies_bouldin", "gap"):
        assert r["chosen_k"][name] == 5, name
    assert r["indices"]["rand"][4] == pytest.approx(1.0)
    assert r["indices"]["dunn"][0] is None  # undefined for K = 1: recorded as None, not NaN
    # Gap: both rules, recomputed here from the reported table.
    g = r["gap"]
    assert g["rule"] == "1se" and g["chosen"] == _first_1se(r["k"], g["gap"], g["s_k"])
    assert g["chosen_by_rule"] == {"1se": g["chosen"], "max": r["k"][int(np.argmax(g["gap"]))]}
    # Structure test: one row per null and per K = 2..7.
    t = r["structure_test"]
    assert t["B"] == B and t["nulls"] == nulls
    assert [(row["null"], row["k"]) for row in t["tests"]] == [(n, k) for n in nulls for k in range(2, 8)]
    for row in t["tests"]:
        for p in (row["p_within_ss"], row["p_gamma"]):
            assert p * (B + 1) == pytest.approx(round(p * (B + 1))) and 1 / (B + 1) <= p <= 1  # (1 + j) / (B + 1)
        assert row["gamma_observed"] == pytest.approx(r["indices"]["hubert_gamma_internal"][row["k"] - 1])
        if row["k"] == 5:  # the true K: far outside the null
            assert row["p_within_ss"] == pytest.approx(1 / (B + 1)) == row["p_gamma"]
            assert row["within_ss_observed"] < row["within_ss_null_min"]
            assert row["gamma_observed"] > row["gamma_null_max"]
    # The observed within-SS does not depend on the null model.
    obs = {(row["null"], row["k"]): row["within_ss_observed"] for row in t["tests"]}
    assert all(obs[nulls[0], k] == obs[n, k] for n in nulls for k in range(2, 8))
    assert 0.5 < r["cpcc"]["average"] <= 1.0
    json.dumps(r)  # JSON-ready


def test_study_picks_five_groups(xp):
    r = run_cluster_study(seed=0, k_max=7, n_per_group=60, n_init=4, B_gap=10, B_null=3, xp=xp)
    _check_study(r, 3, ["uniform"])  # the default null


def test_study_both_nulls():
    r = run_cluster_study(seed=0, k_max=7, n_per_group=60, n_init=4, B_gap=10, B_null=9, null=["uniform", "normal"])
    _check_study(r, 9, ["uniform", "normal"])


def test_study_null_and_rule_options():
    kw = dict(seed=2, k_max=5, n_per_group=20, n_init=2, B_gap=3, B_null=4)
    a = run_cluster_study(null="normal", gap_rule="max", **kw)
    b = run_cluster_study(null="normal", gap_rule="max", **kw)
    assert a["structure_test"] == b["structure_test"] and a["gap"] == b["gap"]  # seeded: reproducible
    assert a["structure_test"]["nulls"] == ["normal"] and [row["k"] for row in a["structure_test"]["tests"]] == [
        2,
        3,
        4,
        5,
    ]
    assert a["chosen_k"]["gap"] == a["gap"]["chosen"] == a["k"][int(np.argmax(a["gap"]["gap"]))]
    u = run_cluster_study(null="uniform", **kw)
    assert u["gap"]["gap"] == a["gap"]["gap"]  # the rule changes the choice only, not the table
    assert u["chosen_k"]["gap"] == _first_1se(u["k"], u["gap"]["gap"], u["gap"]["s_k"])
    for bad in ({"null": "gauss"}, {"null": []}, {"null": ["normal", "normal"]}, {"gap_rule": "first"}, {"B_null": 0}):
        with pytest.raises(InvalidInputError):
            run_cluster_study(**{**kw, **bad})


def test_null_samplers_match_their_models():
    """Uniform draws stay in the data's box and fill it; normal draws have its mean and covariance."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3)) @ np.array([[2.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, -0.5, 0.3]]) + [1.0, -2.0, 4.0]
    lo, hi = X.min(axis=0), X.max(axis=0)
    draw = _null_sampler(X, "uniform", np.random.default_rng(0), np)
    Z = np.concatenate([draw() for _ in range(25)])  # one generator: 25 different sets
    assert Z.shape == (10000, 3) and np.all(Z >= lo) and np.all(Z <= hi)
    np.testing.assert_allclose(Z.mean(axis=0), (lo + hi) / 2, atol=0.05 * (hi - lo).max())
    np.testing.assert_allclose(Z.var(axis=0), (hi - lo) ** 2 / 12, rtol=0.05)  # variance of U(lo, hi)
    draw = _null_sampler(X, "normal", np.random.default_rng(0), np)
    N = np.concatenate([draw() for _ in range(50)])
    cov = np.cov(X, rowvar=False)
    np.testing.assert_allclose(N.mean(axis=0), X.mean(axis=0), atol=0.05)
    np.testing.assert_allclose(np.cov(N, rowvar=False), cov, atol=0.05 * np.abs(cov).max())
    # Seeded: the same generator state gives the same draw.
    d1 = _null_sampler(X, "normal", np.random.default_rng(3), np)()
    d2 = _null_sampler(X, "normal", np.random.default_rng(3), np)()
    np.testing.assert_array_equal(d1, d2)


def test_null_test_does_not_reject_its_own_null():
    """Data drawn from the null itself: the p-values are not all at their minimum."""
    rng = np.random.default_rng(11)
    B = 19
    for null, X in (("uniform", rng.uniform(size=(60, 2))), ("normal", rng.normal(size=(60, 2)))):
        ks = [1, 2, 3]
        parts = [KMeans(k, n_init=3, random_state=0).fit(X).labels_ for k in ks]
        rows = _null_test(X, parts, ks, B, null, np.random.default_rng(1), np, 0)
        assert [row["k"] for row in rows] == [2, 3]
        ps = [row[p] for row in rows for p in ("p_within_ss", "p_gamma")]
        assert np.mean(ps) > 0.2, (null, ps)  # under H0 the p-values are uniform on {1/(B+1), ..., 1}


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
    # the report docs/clustering.md shows (scripts/cluster_study.py splices this file in)
    report = (tmp_path / "cluster_study.md").read_text()
    assert "| index | meaning | best K by | chosen K |" in report and "Structure test, B = 4" in report
    assert "| uniform | 5 |" in report and "CPCC" in report
    out = capsys.readouterr()
    assert "chosen K per index" in out.out and "k-means K=1" in out.err
    assert "uniform K=5 " in out.out and "normal" not in out.out  # default: uniform null only
    rc = main(
        ["cluster-study", "--out", str(tmp_path / "b"), "--k-max", "4", "--n-per-group", "20", "--b-gap", "2"]
        + ["--b-null", "2", "--null", "both", "--gap-rule", "max", "--device", "cpu"]
    )
    assert rc == 0
    data = json.loads((tmp_path / "b" / "cluster_study.json").read_text())
    assert data["structure_test"]["nulls"] == ["uniform", "normal"] and data["gap"]["rule"] == "max"
    assert len(data["structure_test"]["tests"]) == 2 * 3
    out = capsys.readouterr().out
    assert "normal  K=4 " in out and "(1-SE rule)" in out and "(maximum)" in out
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
