"""The CDNN study's numbers against scikit-learn oracles on the same folds."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from sklearn.metrics import f1_score
from sklearn.neighbors import KNeighborsClassifier as SkKNN
from sklearn.neighbors import NearestCentroid as SkNC
from sklearn.neighbors import RadiusNeighborsClassifier as SkRNC
from sklearn.preprocessing import StandardScaler

from gpuknn.errors import InvalidInputError
from gpuknn.model_selection import RepeatedStratifiedKFold
from gpuknn.neighbors import CDNNClassifier, ECDNNClassifier
from gpuknn.plots.cdnn import plot_f1_vs_k
from gpuknn.studies.cdnn_study import DATASETS, METHODS, PUBLISHED, load_study_dataset, run_cdnn_study

KS = [5, 9]


@pytest.fixture(scope="module")
def wine_result():
    return run_cdnn_study(datasets=["wine"], ks=KS, n_splits=5, n_repeats=1, random_state=3)["wine"]


def test_every_fold_matches_oracles(wine_result):
    X, y = load_study_dataset("wine")
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=1, random_state=3)
    for fold, (tr, te) in enumerate(cv.split(X, y)):
        sc = StandardScaler().fit(X[tr])
        Xtr, Xte = sc.transform(X[tr]), sc.transform(X[te])
        for j, k in enumerate(KS):
            expected = {
                "kNN": SkKNN(k).fit(Xtr, y[tr]).predict(Xte),
                "WKNN": SkKNN(k, weights="distance").fit(Xtr, y[tr]).predict(Xte),
                "NC": SkNC().fit(Xtr, y[tr]).predict(Xte),
                "CDNN": CDNNClassifier(k).fit(Xtr, y[tr]).predict(Xte),
                "ECDNN": ECDNNClassifier(k).fit(Xtr, y[tr]).predict(Xte),
            }
            dtr = SkKNN(k + 1).fit(Xtr, y[tr]).kneighbors(Xtr)[0][:, k]
            rnn = SkRNC(radius=float(np.median(dtr)), outlier_label="most_frequent").fit(Xtr, y[tr])
            expected["RNN"] = rnn.predict(Xte)
            for m, pred in expected.items():
                assert wine_result["f1"][m][fold, j] == pytest.approx(
                    f1_score(y[te], pred, average="macro"), abs=1e-12
                ), (m, fold, k)


def test_summary_fields(wine_result):
    r = wine_result
    assert r["ks"] == KS and r["n_folds"] == 5 and r["n_classes"] == 3
    for m in METHODS:
        assert r["mean_over_k"][m] == pytest.approx(r["f1"][m].mean())
        k, best = r["best_k"][m]
        assert k in KS and best == pytest.approx(r["mean_f1"][m].max())
        assert m in r["seconds"]
    assert np.all(r["f1"]["NC"][:, 0] == r["f1"]["NC"][:, 1])  # no k
    assert r["mean_over_k"]["CDNN"] > 0.9


def test_plot_and_render(wine_result, tmp_path):
    fig = plot_f1_vs_k(wine_result, title="wine")
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == len(METHODS)
    path = Path(__file__).resolve().parents[1] / "scripts" / "cdnn_study.py"
    spec = importlib.util.spec_from_file_location("cdnn_study_script", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = script.render({"wine": wine_result}, 1.0, 3)
    assert "| Wine | CDNN |" in text and "0.9721" in text  # published value beside ours
    rnn = next(line for line in text.splitlines() if line.startswith("| Wine | RNN |"))
    ours = wine_result["mean_over_k"]["RNN"]
    assert rnn.split(" | ")[2:5] == [f"{ours:.4f}", "0.4705", f"{ours - 0.4705:+.4f}"]  # the paper's radius-NN column


def test_published_table_has_every_method():
    # The seed paper's table, radius-NN column included (iris / wine / breast cancer / digits).
    assert {name: set(PUBLISHED[name]) for name in PUBLISHED} == {name: set(METHODS) for name in DATASETS}
    assert [PUBLISHED[name]["RNN"] for name in DATASETS] == [0.9406, 0.4705, 0.6193, 0.1815]


def test_unknown_dataset():
    with pytest.raises(InvalidInputError, match="unknown study data set"):
        run_cdnn_study(datasets=["mnist"])
