"""Host data given with an array is put on that array's device, not the namespace's default.

Each test passes host data (a list or a NumPy array) for one argument and an array of the
backend for the other: the result must be in the backend's namespace and on its device
(``strict-device1`` puts the array on array_api_strict's second device, as torch on CUDA
does for a namespace whose default device is the CPU), equal to the all-NumPy result.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, gaussian_classes

from gpuknn.metrics import (
    average_precision_score,
    borda_rank,
    contingency_matrix,
    precision_recall_curve,
    roc_auc_score,
    roc_convex_hull,
    roc_curve,
)
from gpuknn.ops.votes import vote_counts, votes_for_many_k

Y = [0, 0, 1, 1, 0, 1, 1, 0]
S = [0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.5, 0.6]


def _assert_all(actual, expected, backend, **kw):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_xp(a, e, backend, **kw)


def _float_kw():
    return {"exact": False, "rtol": 1e-12}


# --------------------------------------------------------------------------- ranking
def test_roc_curve_host_labels_array_scores(backend):
    expected = [np.asarray(r) for r in roc_curve(np.array(Y), np.array(S))]
    _assert_all(roc_curve(Y, backend.asarray(np.array(S))), expected, backend, **_float_kw())


def test_roc_curve_array_labels_host_scores(backend):
    expected = [np.asarray(r) for r in roc_curve(np.array(Y), np.array(S))]
    _assert_all(roc_curve(backend.asarray(np.array(Y)), S), expected, backend, **_float_kw())


def test_roc_auc_score_host_and_array_arguments(backend):
    expected = roc_auc_score(np.array(Y), np.array(S))
    assert roc_auc_score(Y, backend.asarray(np.array(S))) == pytest.approx(expected, rel=1e-12)
    assert roc_auc_score(backend.asarray(np.array(Y)), S) == pytest.approx(expected, rel=1e-12)
    # string labels: encoded on the host, then put with the scores
    ys = np.where(np.array(Y) == 1, "pos", "neg")
    assert roc_auc_score(ys, backend.asarray(np.array(S))) == pytest.approx(expected, rel=1e-12)


def test_roc_auc_score_multiclass_host_labels(backend):
    y = [0, 1, 2, 2, 1, 0, 2, 1]
    s = np.random.default_rng(0).random((8, 3))
    for mc in ("ovr", "ovo"):
        expected = roc_auc_score(np.array(y), s, multi_class=mc)
        got = roc_auc_score(y, backend.asarray(s), multi_class=mc)
        assert got == pytest.approx(expected, rel=1e-12)


def test_borda_rank_host_and_array_rows(backend):
    a, b = [0.1, 0.9, 0.5, 0.3], np.array([3.0, 2.0, 1.0, 2.0])
    expected = np.asarray(borda_rank([np.array(a), b]))
    assert_xp(borda_rank([a, backend.asarray(b)]), expected, backend, **_float_kw())


def test_roc_convex_hull_host_and_array_points(backend):
    f, t = [0.1, 0.3, 0.5], np.array([0.5, 0.6, 0.9])
    ef, et, ei = roc_convex_hull(np.array(f), t)
    _assert_all(roc_convex_hull(f, backend.asarray(t))[:2], [ef, et], backend, **_float_kw())
    assert_xp(roc_convex_hull(f, backend.asarray(t))[2], ei, backend)
    _assert_all(roc_convex_hull(backend.asarray(np.array(f)), list(t))[:2], [ef, et], backend, **_float_kw())


# --------------------------------------------------------------------------- precision-recall
def test_precision_recall_curve_host_and_array_arguments(backend):
    expected = [np.asarray(r) for r in precision_recall_curve(np.array(Y), np.array(S))]
    _assert_all(precision_recall_curve(Y, backend.asarray(np.array(S))), expected, backend, **_float_kw())
    _assert_all(precision_recall_curve(backend.asarray(np.array(Y)), S), expected, backend, **_float_kw())


def test_average_precision_multilabel_host_indicator(backend):
    Yi = [[0, 1], [1, 0], [1, 1], [0, 0], [1, 0]]
    s = np.array([[0.2, 0.7], [0.6, 0.1], [0.5, 0.5], [0.3, 0.4], [0.9, 0.2]])
    expected = np.asarray(average_precision_score(np.array(Yi), s, average=None))
    assert_xp(average_precision_score(Yi, backend.asarray(s), average=None), expected, backend, **_float_kw())
    assert average_precision_score(Yi, backend.asarray(s)) == pytest.approx(
        average_precision_score(np.array(Yi), s), rel=1e-12
    )


# --------------------------------------------------------------------------- external
def test_contingency_matrix_host_and_array_labels(backend):
    t, p = [0, 0, 1, 1, 2], np.array([5, 5, 5, 7, 7])
    expected = contingency_matrix(np.array(t), p)
    assert_xp(contingency_matrix(t, backend.asarray(p)), expected, backend)
    assert_xp(contingency_matrix(backend.asarray(p), t), expected.T, backend)
    names = ["a", "a", "b", "b", "c"]  # host strings, encoded on the host
    assert_xp(contingency_matrix(names, backend.asarray(p)), expected, backend)
    assert_xp(contingency_matrix(backend.asarray(p), names), expected.T, backend)


# --------------------------------------------------------------------------- votes
def test_votes_host_labels_array_distances(backend):
    lab = [[2, 1, 1, 0], [0, 0, 1, 2], [1, 2, 2, 2]]
    d = np.array([[0.5, 1.0, 1.5, 2.0], [0.1, 0.3, 0.4, 0.9], [1.0, 1.1, 1.2, 1.3]])
    for weights in ("uniform", "distance"):
        kw = {"n_classes": 3, "weights": weights}
        expected = vote_counts(np.array(lab), [1, 2, 4], distances=d, **kw)
        got = vote_counts(lab, [1, 2, 4], distances=backend.asarray(d), **kw)
        assert_xp(got, expected, backend, **_float_kw())
        expected = votes_for_many_k(np.array(lab), [1, 2, 4], distances=d, **kw)
        assert_xp(votes_for_many_k(lab, [1, 2, 4], distances=backend.asarray(d), **kw), expected, backend)
    # and the other way round: array labels, host distances
    got = vote_counts(backend.asarray(np.array(lab)), [3], n_classes=3, distances=d.tolist(), weights="distance")
    expected = vote_counts(np.array(lab), [3], n_classes=3, distances=d, weights="distance")
    assert_xp(got, expected, backend, **_float_kw())


# --------------------------------------------------------------------------- kNN sweep
class _Stop(Exception):
    pass


def _cv_records(X_train, y_train, X_test, y_test):
    """The study's journalled CV records (raw k sweep, variance, (k, p) sweep), without
    timings; the run stops before the final fit, which needs nothing more of y_train."""
    from gpuknn.studies.knn_sweep import SweepConfig, run_sweep
    from gpuknn.studies.sweep_tables import MemoryJournal

    def stop_at_final(event, info):
        if event == "stage" and info["name"].startswith("final"):
            raise _Stop

    journal = MemoryJournal()
    config = SweepConfig(ks_raw=[1, 3, 5], ks=[1, 3], ps=[1, 2], folds=2, seed=0)
    with pytest.raises(_Stop):
        run_sweep(X_train, y_train, X_test, y_test, config, journal=journal, callback=stop_at_final)
    return {k: {f: v for f, v in r.items() if f != "seconds"} for k, r in journal.records.items()}


def test_knn_sweep_host_labels_array_matrices(backend):
    X, y = gaussian_classes(0, n=(20, 15, 10), d=4)
    Xtr, ytr, Xte, yte = X[:30], y[:30], X[30:], y[30:]
    expected = _cv_records(Xtr, ytr, Xte, yte)
    got = _cv_records(backend.asarray(Xtr), ytr, backend.asarray(Xte), yte)
    assert got.keys() == expected.keys()
    for key in expected:
        if key == "variance":
            for f in expected[key]:
                if f != "key":
                    np.testing.assert_allclose(got[key][f], expected[key][f], rtol=1e-10)
        else:
            assert got[key] == expected[key], key


def test_knn_sweep_runs_to_its_final_test_on_every_backend(backend):
    # The final stage indexed the votes' 2-D result with [0], which array_api_strict refuses:
    # run_sweep could not finish there. Its answer is NumPy's on every backend.
    from gpuknn.studies.knn_sweep import SweepConfig, run_sweep

    X, y = gaussian_classes(0, n=(20, 15, 10), d=4)
    Xtr, ytr, Xte, yte = X[:30], y[:30], X[30:], y[30:]
    config = SweepConfig(ks_raw=[1, 3, 5], ks=[1, 3], ps=[1, 2], folds=2, seed=0)
    want = run_sweep(Xtr, ytr, Xte, yte, config)
    got = run_sweep(backend.asarray(Xtr), ytr, backend.asarray(Xte), yte, config)
    for key in ("k_best", "p_best", "weights_best", "cv_accuracy_best", "test_accuracy", "test_macro_f1"):
        assert got[key] == want[key], key
