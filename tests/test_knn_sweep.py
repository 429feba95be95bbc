import json

import numpy as np
import pytest

from gpuknn import kneighbors
from gpuknn._backend import to_numpy
from gpuknn.datasets import make_fashion_mnist_like
from gpuknn.model_selection.journal import Journal
from gpuknn.model_selection.splitters import StratifiedKFold
from gpuknn.studies import knn_sweep, sweep_tasks
from gpuknn.studies.knn_sweep import SweepConfig, config_dict, run_sweep

SMALL = dict(ks_raw=list(range(1, 11)), ks=[1, 2, 3, 5, 8], ps=[1, 2, 3, 5, 8, 13, 20], folds=3, seed=1)


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
            if [i.get("task") for i in seen].count("kp") == 2:  # the (k, p) folds go first
                raise Stop

    with pytest.raises(Stop):
        run_sweep(*data, config, journal=Journal(path, config_dict(config)), callback=stop_after_two_folds)
    keys = [json.loads(line).get("key") for line in path.read_text().splitlines()[1:]]
    assert (
        "kp/correlation/fold=1/p=20" in keys
        and "kp/correlation/fold=2/p=1" not in keys
        and not any(key.startswith(("raw/", "variance")) for key in keys)
    )

    computed = []
    resumed = run_sweep(
        *data,
        config,
        journal=Journal(path, config_dict(config), resume=True),
        callback=lambda e, i: computed.append(i) if e == "tile" else None,
    )
    assert _strip(resumed) == _strip(full)
    assert len(computed) == 1  # only the unfinished fold was recomputed (one query tile)


def test_pca_sees_training_folds_only(monkeypatch, data):
    X_train = data[0]
    fitted = []
    real = sweep_tasks._pca

    def spy(n, config):
        pca = real(n, config)
        fit = pca.fit

        def recording_fit(X):
            fitted.append(to_numpy(X).copy())
            return fit(X)

        pca.fit = recording_fit
        return pca

    monkeypatch.setattr(sweep_tasks, "_pca", spy)
    run_sweep(*data, SweepConfig(**{**SMALL, "ks_raw": [1]}))
    y = data[1]
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(y, y))
    # order: one fit per fold (the (k, p) folds go first), the full training set (the
    # explained variance), the final refit on all training data
    assert len(fitted) == len(folds) + 2
    for (tr, _), X in zip(folds, fitted[: len(folds)]):
        np.testing.assert_array_equal(X, X_train[tr])
    np.testing.assert_array_equal(fitted[-2], X_train)
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


def test_default_grids_follow_the_data_shape():
    g = knn_sweep.default_grids(150, 4, folds=5)
    assert g["ps"] == [1, 2, 3, 4] and g["ks"] == list(range(1, 31)) and g["ks_raw"][-1] == 100
    g = knn_sweep.default_grids(20, 784, folds=5)  # 16 training rows per fold
    assert g["ks"][-1] == 16 and g["ps"][-1] == 16
    g = knn_sweep.default_grids(60000, 784)
    assert g["ps"][:15] == list(range(1, 16)) and g["ps"][-1] == 784 and len(g["ps"]) <= 36


def test_digits_any_data_study_chooses_the_metric():
    # issue 18: the study on a non-image data set with the metric as a searched axis; the
    # chosen configuration generalises (test accuracy >= 0.97)
    from sklearn.datasets import load_digits

    from gpuknn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    g = knn_sweep.default_grids(Xtr.shape[0], Xtr.shape[1], folds=3)
    config = SweepConfig(
        metric=["euclidean", "cosine"],
        ks_raw=g["ks_raw"][:20],
        ks=g["ks"][:10],
        ps=g["ps"],
        folds=3,
        scoring="macro_f1",
    )
    res = run_sweep(Xtr, ytr, Xte, yte, config)
    assert res["metric_best"] in ("euclidean", "cosine") and set(res["per_metric"]) == {"euclidean", "cosine"}
    assert res["scoring"] == "macro_f1" and "cv_accuracy_best" not in res
    best = res["per_metric"][res["metric_best"]]["heatmap"]
    others = [
        max(max(r) for r in h["heatmap"]["mean"][w])
        for h in res["per_metric"].values()
        for w in h["heatmap"]["weights"]
    ]
    assert res["cv_score_best"] == pytest.approx(max(others))
    assert best["scoring"] == "macro_f1"
    assert res["test_accuracy"] >= 0.97


def test_scaling_uses_the_fold_training_part_only(monkeypatch, data):
    X_train = to_numpy(data[0])
    seen = []
    real = sweep_tasks.scaled

    def spy(Xtr, Xte, kind, xp):
        seen.append(int(Xtr.shape[0]))
        return real(Xtr, Xte, kind, xp)

    monkeypatch.setattr(sweep_tasks, "scaled", spy)
    run_sweep(*data, SweepConfig(**{**SMALL, "scale": "minmax", "skip_raw": True}))
    folds = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X_train, to_numpy(data[1])))
    # the (k, p) folds, the explained variance, the final refit
    assert seen == [tr.size for tr, _ in folds] + [X_train.shape[0]] * 2


def test_resampling_inside_training_folds_only(data):
    Xtr, ytr, Xte, yte = data
    ytr_h = to_numpy(ytr).copy()
    keep = np.flatnonzero((ytr_h != 0) | (np.arange(ytr_h.size) % 4 == 0))  # class 0 rare
    Xi, yi = to_numpy(Xtr)[keep], ytr_h[keep]
    base = run_sweep(Xi, yi, Xte, yte, SweepConfig(**{**SMALL, "skip_raw": True}))
    over = run_sweep(
        Xi,
        yi,
        Xte,
        yte,
        SweepConfig(**{**SMALL, "skip_raw": True, "resample": "RandomOverSampler", "scoring": "balanced_accuracy"}),
    )
    assert over["heatmap"] != base["heatmap"]  # the training folds were resampled
    assert over["n_train"] == base["n_train"] == keep.size  # the data themselves were not
    assert 0.0 <= over["test_balanced_accuracy"] <= 1.0


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(scoring="f2"), "scoring must be one of"),
        (dict(scale="robust"), "scale must be one of"),
        (dict(resample="NoSuchSampler"), "resample must name a gpuknn.resampling sampler"),
        (dict(metric=[]), "at least one metric"),
        (dict(metric=["euclidean", "manhattan"]), "manhattan"),
    ],
)
def test_bad_settings_are_refused_before_any_work(data, bad, match):
    from gpuknn.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=match):
        run_sweep(*data, SweepConfig(**{**SMALL, **bad}))


def test_raw_sweep_shares_one_tile_pass_and_resumes_without_it(tmp_path, monkeypatch, data):
    # The raw k sweep's folds take their tile passes from one pass over the pairs of folds
    # (half the GEMMs); the result is that of each fold searching alone, and a run stopped
    # between two raw folds resumes (fold by fold) to the same result.
    import gpuknn.ops.kneighbors as kn_module

    config = SweepConfig(**{**SMALL, "ps": [1, 2]})
    passes = []
    real = knn_sweep._shared_passes
    monkeypatch.setattr(knn_sweep, "_shared_passes", lambda *a: passes.append(real(*a)) or passes[-1])
    shared = run_sweep(*data, config)
    assert passes[0] is not None and passes[0][1]["correlation"] is not None
    monkeypatch.setattr(knn_sweep, "_shared_passes", lambda *a: None)
    alone = run_sweep(*data, config)
    assert _strip(shared) == _strip(alone)

    monkeypatch.setattr(knn_sweep, "_shared_passes", real)
    path = tmp_path / "journal.jsonl"

    def stop_after_one_raw_fold(event, info):
        if event == "step" and info["task"] == "raw":  # the first raw fold (after the (k, p) folds)
            raise Stop

    with pytest.raises(Stop):
        run_sweep(*data, config, journal=Journal(path, config_dict(config)), callback=stop_after_one_raw_fold)
    searched = []
    nominate = kn_module.nominate
    monkeypatch.setattr(kn_module, "nominate", lambda *a, **kw: searched.append(1) or nominate(*a, **kw))
    resumed = run_sweep(*data, config, journal=Journal(path, config_dict(config), resume=True))
    assert _strip(resumed) == _strip(shared)
    assert len(searched) == 3  # the two raw folds left, each on its own, and the final test
