"""``sample_weight`` (and ``drop_intermediate``) in the curve and report metrics, as
scikit-learn 1.9 and imbalanced-learn 0.14 define them (issue 33); the peers in float64 are
the oracle, on every backend."""

import numpy as np
import pytest
from helpers import assert_xp, host
from imblearn import metrics as imbm
from sklearn import metrics as skm

from gpuknn.errors import InvalidInputError
from gpuknn.metrics import (
    average_precision_score,
    classification_report,
    geometric_mean_score,
    precision_recall_curve,
    roc_curve,
    sensitivity_specificity_support,
)
from gpuknn.metrics.ranking import det_curve


def _binary(seed=0, n=40):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 1)  # ties: runs of equal scores are one threshold
    w = rng.integers(0, 8, n) / 4  # dyadic: sums are exact in any order; zeros included
    assert (w == 0).any() and len(np.unique(y)) == 2
    return y, s, w


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("curve", ["roc", "det", "pr"])
def test_curves_with_sample_weight(backend, curve, drop):
    ours, ref = {
        "roc": (roc_curve, skm.roc_curve),
        "det": (det_curve, skm.det_curve),
        "pr": (precision_recall_curve, skm.precision_recall_curve),
    }[curve]
    y, s, w = _binary(1)
    for sw in (None, w):
        got = ours(
            backend.asarray(y),
            backend.asarray(s),
            sample_weight=None if sw is None else backend.asarray(sw),
            drop_intermediate=drop,
        )
        expected = ref(y, s, sample_weight=sw, drop_intermediate=drop)
        for g, e in zip(got, expected, strict=True):
            assert_xp(g, e, backend, exact=False, rtol=1e-12)
    unweighted = ours(y, s, drop_intermediate=drop)
    weighted = ours(y, s, sample_weight=w, drop_intermediate=drop)
    assert not all(np.array_equal(a, b) for a, b in zip(unweighted, weighted))  # the weights matter


def test_zero_weight_samples_make_no_threshold(backend):
    y = np.array([0, 1, 1, 0, 1])
    s = np.array([0.1, 0.9, 0.5, 0.7, 0.3])
    w = np.array([1.0, 1.0, 0.0, 1.0, 2.0])
    fpr, tpr, thr = roc_curve(backend.asarray(y), backend.asarray(s), sample_weight=backend.asarray(w))
    assert 0.5 not in host(thr).tolist()  # the zero-weight sample's score
    e = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    assert_xp(thr, e[2], backend)
    assert_xp(tpr, e[1], backend, exact=False, rtol=1e-15)


def test_roc_curve_drop_intermediate_as_sklearn_default():
    y, _, _ = _binary(2, n=200)
    s = np.random.default_rng(2).random(200) + y * 0.3  # distinct scores, runs of one class
    got = roc_curve(y, s, drop_intermediate=True)
    full = roc_curve(y, s)
    expected = skm.roc_curve(y, s)  # scikit-learn's default drops them
    assert got[0].shape[0] < full[0].shape[0]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_det_curve_single_class_refused():
    with pytest.raises(InvalidInputError, match="Only one class"):
        det_curve(np.ones(4, dtype=int), np.arange(4.0))
    with pytest.raises(ValueError, match="Only one class"):
        skm.det_curve(np.ones(4, dtype=int), np.arange(4.0))


@pytest.mark.parametrize("average", ["macro", "micro", "weighted", "samples", None])
def test_average_precision_with_sample_weight(backend, average):
    rng = np.random.default_rng(3)
    n = 50
    Y = rng.integers(0, 2, (n, 3))
    Y[Y.sum(axis=1) == 0, 0] = 1  # every row has a positive ("samples" is defined)
    S = np.round(rng.random((n, 3)), 1)
    w = rng.integers(0, 8, n) / 4
    got = average_precision_score(
        backend.asarray(Y), backend.asarray(S), average=average, sample_weight=backend.asarray(w)
    )
    expected = skm.average_precision_score(Y, S, average=average, sample_weight=w)
    if average is None:
        assert_xp(got, expected, backend, exact=False, rtol=1e-12)
    else:
        assert got == pytest.approx(expected, rel=1e-12)
        assert got != pytest.approx(skm.average_precision_score(Y, S, average=average), rel=1e-6)
    if average != "samples":  # multiclass one-vs-rest
        yc = rng.integers(0, 3, n)
        got = average_precision_score(backend.asarray(yc), backend.asarray(S), average=average, sample_weight=w)
        expected = skm.average_precision_score(yc, S, average=average, sample_weight=w)
        if average is None:
            assert_xp(got, expected, backend, exact=False, rtol=1e-12)
        else:
            assert got == pytest.approx(expected, rel=1e-12)


def test_average_precision_binary_with_sample_weight(backend):
    y, s, w = _binary(4)
    got = average_precision_score(backend.asarray(y), backend.asarray(s), sample_weight=backend.asarray(w))
    assert got == pytest.approx(skm.average_precision_score(y, s, sample_weight=w), rel=1e-12)
    assert got != pytest.approx(skm.average_precision_score(y, s), rel=1e-6)


@pytest.mark.parametrize("labels", [None, [0, 1, 2], [3, 1, 0, 2]])
def test_classification_report_with_sample_weight(backend, labels):
    rng = np.random.default_rng(5)
    y, p = rng.integers(0, 4, 60), rng.integers(0, 4, 60)
    w = rng.integers(0, 8, 60) / 4
    args = (backend.asarray(y), backend.asarray(p))
    kw = dict(labels=labels, zero_division=0.0)
    assert classification_report(*args, sample_weight=backend.asarray(w), **kw) == skm.classification_report(
        y, p, sample_weight=w, **kw
    )
    got = classification_report(*args, sample_weight=w, output_dict=True, **kw)
    assert got == skm.classification_report(y, p, sample_weight=w, output_dict=True, **kw)
    assert got != classification_report(*args, output_dict=True, **kw)


@pytest.mark.parametrize("average", [None, "macro", "micro", "weighted"])
def test_sensitivity_specificity_gmean_with_sample_weight(backend, average):
    rng = np.random.default_rng(6)
    y, p = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    w = rng.integers(0, 8, 50) / 4
    args, sw = (backend.asarray(y), backend.asarray(p)), backend.asarray(w)
    got = sensitivity_specificity_support(*args, sample_weight=sw, average=average)
    expected = imbm.sensitivity_specificity_support(y, p, sample_weight=w, average=average)
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None
        elif average is None:
            assert_xp(g, e, backend, exact=False, rtol=1e-12)
        else:
            assert g == pytest.approx(e, rel=1e-12)
    gm = geometric_mean_score(*args, sample_weight=sw, average=average or "multiclass")
    ref = imbm.geometric_mean_score(y, p, sample_weight=w, average=average or "multiclass")
    assert float(gm) == pytest.approx(float(ref), rel=1e-12)
