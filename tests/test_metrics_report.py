"""gpuknn.metrics.report against scikit-learn and imbalanced-learn, on every backend."""

import warnings

import numpy as np
import pytest
from helpers import Backend, assert_xp
from imblearn import metrics as imm
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning as SkUndefined

from gpuknn.errors import InvalidInputError
from gpuknn.metrics.classification import UndefinedMetricWarning
from gpuknn.metrics.report import classification_report, geometric_mean_score, sensitivity_specificity_support

TOL = 1e-12
TABLES = {
    "int": np.arange(6),
    "neg": np.array([-7, -3, -1, 0, 5, 8]),
    "float": np.array([-1.5, 0.25, 1.0, 2.5, 9.0, 11.0]),
    "str": np.array(["a", "b", "c", "d", "zz", "zzz"]),
}


def _oracle(kind, y):
    """scikit-learn calls fractional float labels "continuous": it gets the codes (same order)."""
    return np.searchsorted(TABLES[kind], y) if kind == "float" else y


def _put(backend, y):
    return y if y.dtype.kind == "U" else backend.asarray(y)


def _home(backend, kind):
    """Where per-class arrays come back: string labels are encoded (and counted) on the host."""
    import array_api_compat.numpy as npx

    return Backend("numpy", npx) if kind == "str" else backend


@pytest.fixture
def codes():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 160)
    p = np.where(rng.random(160) < 0.6, y, rng.integers(0, 5, 160))  # class 4 only predicted
    return y, p


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("lab", [None, [3, 0, 1], [0, 1, 2, 3, 4, 5]])
@pytest.mark.parametrize("zd", [0.0, 1.0, np.nan])
def test_classification_report(backend, codes, kind, lab, zd):
    y, p = (TABLES[kind][c] for c in codes)
    labels = None if lab is None else TABLES[kind][np.array(lab)]
    glab = labels if kind == "str" or labels is None else backend.asarray(labels)
    for digits in (2, 4):
        got = classification_report(_put(backend, y), _put(backend, p), labels=glab, digits=digits, zero_division=zd)
        want = (
            skm.classification_report(y, p, labels=labels, digits=digits, zero_division=zd) if kind != "float" else None
        )
        assert isinstance(got, str)
        if want is not None:
            assert got == want
    got = classification_report(_put(backend, y), _put(backend, p), labels=glab, output_dict=True, zero_division=zd)
    want = skm.classification_report(
        _oracle(kind, y),
        _oracle(kind, p),
        output_dict=True,
        zero_division=zd,
        labels=None if labels is None else _oracle(kind, labels),
    )
    assert list(got) == [
        k
        if k in ("accuracy", "macro avg", "weighted avg", "micro avg")
        else str(TABLES[kind][int(k)])
        if kind == "float"
        else k
        for k in want
    ]
    for g, w in zip(got.values(), want.values()):
        if isinstance(w, dict):
            assert list(g) == list(w) and all(type(v) is float for v in g.values())
            np.testing.assert_allclose(list(g.values()), list(w.values()), atol=TOL)
        else:
            assert type(g) is float and g == pytest.approx(w, abs=TOL)


def test_report_target_names_and_warnings(backend, codes):
    y, p = codes
    Y, P = backend.asarray(y), backend.asarray(p)
    names = ["zero", "one", "two", "three", "four"]
    assert classification_report(Y, P, target_names=names) == skm.classification_report(
        y, p, target_names=names, zero_division=0.0
    )
    with pytest.warns(UserWarning, match="target_names"):
        want = skm.classification_report(y, p, labels=[0, 1, 2], target_names=names[:2], zero_division=0.0)
    with pytest.warns(UserWarning, match="target_names"):
        assert classification_report(Y, P, labels=[0, 1, 2], target_names=names[:2]) == want
    with pytest.raises(InvalidInputError, match="target_names"):
        classification_report(Y, P, target_names=names[:2])
    with pytest.warns(SkUndefined):
        want = skm.classification_report(y, p, zero_division="warn")
    with pytest.warns(UndefinedMetricWarning):
        assert classification_report(Y, P, zero_division="warn") == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 anywhere: neither warns
        assert classification_report(Y, Y, zero_division="warn") == skm.classification_report(
            y, y, zero_division="warn"
        )
    with pytest.raises(InvalidInputError, match="zero_division"):
        classification_report(Y, P, zero_division=2.0)
    with pytest.raises(InvalidInputError, match="digits"):
        classification_report(Y, P, digits=-1)


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize("lab", [None, [3, 0, 1], [0, 1, 2, 3, 4, 5]])
def test_sensitivity_specificity(backend, codes, kind, average, lab):
    y, p = (TABLES[kind][c] for c in codes)
    labels = None if lab is None else TABLES[kind][np.array(lab)]
    want = imm.sensitivity_specificity_support(
        _oracle(kind, y),
        _oracle(kind, p),
        average=average,
        warn_for=(),
        labels=None if labels is None else _oracle(kind, labels),
    )
    got = sensitivity_specificity_support(
        _put(backend, y),
        _put(backend, p),
        average=average,
        labels=labels if kind == "str" or labels is None else backend.asarray(labels),
    )
    if average is None:
        for g, w in zip(got, want):
            assert_xp(g, w, _home(backend, kind), exact=False, atol=TOL)
        assert got[2].dtype == _home(backend, kind).xp.int64
        return
    assert got[2] is None and all(isinstance(v, float) for v in got[:2])
    np.testing.assert_allclose(got[:2], want[:2], atol=TOL)


def test_sensitivity_specificity_binary_and_warnings(backend):
    y, p = np.array(["n", "y", "y", "n", "n"]), np.array(["y", "y", "n", "n", "n"])
    got = sensitivity_specificity_support(y, p, average="binary", pos_label="y")
    assert got == pytest.approx(imm.sensitivity_specificity_support(y, p, average="binary", pos_label="y"), abs=TOL)
    Y = backend.asarray(np.array([0, 0, 0]))
    assert sensitivity_specificity_support(Y, Y, average="binary") == (0.0, 0.0, 0)
    assert imm.sensitivity_specificity_support([0, 0, 0], [0, 0, 0], average="binary") == (0.0, 0.0, 0)
    yi, pi = np.array([0, 1, 1, 2]), np.array([0, 1, 1, 1])
    with pytest.warns(SkUndefined, match="Sensitivity"):
        want = imm.sensitivity_specificity_support(yi, pi, labels=[0, 1, 2, 3], average="macro")
    with pytest.warns(UndefinedMetricWarning, match="sensitivity"):
        got = sensitivity_specificity_support(
            backend.asarray(yi),
            backend.asarray(pi),
            zero_division="warn",
            labels=backend.asarray(np.array([0, 1, 2, 3])),
            average="macro",
        )
    np.testing.assert_allclose(got[:2], want[:2], atol=TOL)
    with pytest.raises(InvalidInputError, match="average"):
        sensitivity_specificity_support(Y, Y, average="samples")
    with pytest.raises(InvalidInputError, match="average='binary'"):
        sensitivity_specificity_support(backend.asarray(yi), backend.asarray(pi), average="binary")
    with pytest.raises(InvalidInputError, match="pos_label"):
        sensitivity_specificity_support(backend.asarray(yi[:3]), backend.asarray(pi[:3]), average="binary", pos_label=7)


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("average", ["multiclass", "macro", "weighted", "micro", None])
@pytest.mark.parametrize("correction", [0.0, 0.001])
def test_geometric_mean(backend, codes, kind, average, correction):
    y, p = codes
    yl, pl = TABLES[kind][y], TABLES[kind][np.where(p == 4, 0, p)]  # every predicted class is true somewhere
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0: neither warns
        want = imm.geometric_mean_score(_oracle(kind, yl), _oracle(kind, pl), average=average, correction=correction)
        got = geometric_mean_score(_put(backend, yl), _put(backend, pl), average=average, correction=correction)
    if average is None:
        assert_xp(got, want, _home(backend, kind), exact=False, atol=TOL)
    else:
        assert isinstance(got, float) and got == pytest.approx(want, abs=TOL)


def test_geometric_mean_undefined(backend, codes):
    y, p = codes  # class 4 has no true sample: its recall is 0/0
    Y, P = backend.asarray(y), backend.asarray(p)
    for correction in (0.0, 0.01):
        with pytest.warns(SkUndefined):
            want = imm.geometric_mean_score(y, p, correction=correction)
        with pytest.warns(UndefinedMetricWarning):
            assert geometric_mean_score(Y, P, correction=correction) == pytest.approx(want, abs=TOL)
    yb, pb = np.array([1, 1, 1]), np.array([1, 1, 0])  # no negative: specificity 0/0
    with pytest.warns(SkUndefined, match="Specificity"):
        want = imm.geometric_mean_score(yb, pb, average="binary")
    with pytest.warns(UndefinedMetricWarning, match="specificity"):
        assert geometric_mean_score(backend.asarray(yb), backend.asarray(pb), average="binary") == want
    with pytest.raises(InvalidInputError, match="correction"):
        geometric_mean_score(Y, P, correction=-1.0)
    with pytest.raises(InvalidInputError, match="average"):
        geometric_mean_score(Y, P, average="samples")
