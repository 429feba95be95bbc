import json

import numpy as np
import pytest

from gpuknn import kneighbors
from gpuknn._backend import to_numpy
from gpuknn.datasets import make_fashion_mnist_like
from gpuknn.model_selection.journal import Journal
from gpuknn.model_selection.splitters import StratifiedKFold
from gpuknn.studies import fashion_sweep
from gpuknn.studies.fashion_sweep import SweepConfig, config_dict, run_sweep

SMALL = dict(ks_raw=list(range(1, 11)), ks=[1, 2, 3, 5, 8], ps=[1, 2, 3, 5, 8, 13, 20],
             folds=3, seed=1)


@pytest.fixture(scope="module")
def data():
    return make_fashion_mnist_like(300, 90, n_features=64, class_sep=0.25, random_state=0)


def _strip(res):
    """Everything but the timings."""
    res = json.loads(json.dumps(res))
    res.pop("seconds_compute", None)
    res["test"].pop("seconds", None)
    return res


class Stop(Exception):
    pass


def test_interrupted_sweep_resumes_to_the_same_result(tmp_path, data):
    config = SweepConfig(**SMALL)
    full = run_sweep(*data, config)
    path = tmp_path / "journal.jsonl"
    seen = []

    def stop_after_two_folds(event, info):
        if event == "step":
            seen.append(info)
            if info["stage"] == "kp" and info["done"] == 2:
                raise Stop

    with pytest.raises(Stop):
        run_sweep(*data, config, journal=Journal(path, config_dict(config)), callback=stop_after_two_folds)
    keys = [json.loads(line).get("key") for line in path.read_text().splitlines()[1:]]
    assert "raw/fold=2" in keys and "kp/fold=1/p=20" in keys and "kp/fold=2/p=1" not in keys

    computed = []
    resumed = run_sweep(*data, config, journal=Journal(path, config_dict(config), resume=True),
                        callback=lambda e, i: computed.append(i) if e == "tile" else None)
    assert _strip(resumed) == _strip(full)
    assert len(computed) == 1  # only the unfinished fold was recomputed (one query tile)


def test_pca_sees_training_folds_only(monkeypatch, data):
    X_train = data[0]
    fitted = []
    real = fashion_sweep._pca

    def spy(n, config):
        pca = real(n, config)
        fit = pca.fit

        def recording_fit(X):
            fitted.append(to_numpy(X).copy())
            return fit(X)

        pca.fit = recording_fit
        return pca

    monkeypatch.setattr(fashion_sweep, "_pca", spy)
    run_sweep(*data, SweepConfig(**{**SMALL, "ks_raw": [1]}))
    y = data[1]
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(y, y))
    # order: full training set (variance), one fit per fold, the final refit on all training data
    assert len(fitted) == 2 + len(folds)
    for (tr, te), X in zip(folds, fitted[1:-1]):
        np.testing.assert_array_equal(X, X_train[tr])
    np.testing.assert_array_equal(fitted[-1], X_train)


def test_results_agree_with_direct_computation(data):
    X_train, y_train, X_test, y_test = data
    res = run_sweep(*data, SweepConfig(**SMALL))
    for key in ("k_best", "p_best", "weights_best", "cv_accuracy_best", "test_accuracy", "test_macro_f1"):
        assert key in res
    heat = res["heatmap"]
    assert res["cv_accuracy_best"] == max(max(max(r) for r in heat["mean"][w]) for w in heat["weights"])
    # the reported test accuracy is that of a plain PCA + kNN refit with the chosen settings
    from gpuknn import KNeighborsClassifier
    from gpuknn.decomposition import PCA

    pca = PCA(res["p_best"], solver="eigh", random_state=1).fit(X_train)
    clf = KNeighborsClassifier(res["k_best"], metric="correlation", weights=res["weights_best"])
    acc = clf.fit(pca.transform(X_train), y_train).score(pca.transform(X_test), y_test)
    assert res["test_accuracy"] == pytest.approx(acc, abs=1e-12)
    cm = np.asarray(res["test"]["confusion_matrix"])
    assert cm.sum() == len(y_test) and np.trace(cm) / cm.sum() == pytest.approx(acc)
    assert res["test_accuracy"] > 0.5  # learnable stand-in: chance is 0.1


def test_raw_sweep_matches_fold_by_fold_knn(data):
    X_train, y_train = data[0], data[1]
    res = run_sweep(*data, SweepConfig(**SMALL))
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(y_train, y_train))
    tr, te = folds[0]
    d, i = kneighbors(X_train[te], X_train[tr], 10, metric="correlation")
    pred = np.array([np.bincount(y_train[tr][row[:5]], minlength=10).argmax() for row in i])
    assert res["raw"]["uniform"]["folds"][0][4] == pytest.approx(np.mean(pred == y_train[te]))
