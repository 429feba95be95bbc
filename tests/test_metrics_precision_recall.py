"""gpuknn.metrics.precision_recall against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from helpers import assert_xp
from sklearn import metrics as skm

from gpuknn.errors import InvalidInputError
from gpuknn.metrics.classification import UndefinedMetricWarning
from gpuknn.metrics.precision_recall import average_precision_score, precision_recall_curve

TOL = 1e-12
TABLES = {
    "int": np.array([3, 7, 9]),
    "neg": np.array([-5, -1, 2]),
    "float": np.array([-1.5, 0.25, 2.5]),
    "str": np.array(["ham", "spam", "zz"]),
}


def _put(backend, y):
    return y if y.dtype.kind == "U" else backend.asarray(y)


@pytest.fixture
def binary():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 250)
    s = np.round(rng.normal(y * 0.8, 1.0), 1)  # rounding makes many ties
    return y, s


@pytest.mark.parametrize("drop", [False, True])
def test_curve_matches_sklearn(backend, binary, drop):
    y, s = binary
    for yy in (y, 2 * y - 1):
        got = precision_recall_curve(backend.asarray(yy), backend.asarray(s), drop_intermediate=drop)
        want = skm.precision_recall_curve(yy, s, drop_intermediate=drop)
        for g, w in zip(got, want):
            assert_xp(g, w, backend, exact=False, atol=TOL)
    assert_xp(got[2], want[2], backend)  # thresholds exactly the distinct scores


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("drop", [False, True])
def test_curve_pos_label_multiclass(backend, binary, kind, drop):
    y, s = binary
    codes = np.where(s > 1.0, 2, y)  # three classes; class 1 against the others
    yl = TABLES[kind][codes]
    got = precision_recall_curve(
        _put(backend, yl), backend.asarray(s), pos_label=TABLES[kind][1].item(), drop_intermediate=drop
    )
    want = skm.precision_recall_curve(codes, s, pos_label=1, drop_intermediate=drop)
    for g, w in zip(got, want):
        assert_xp(g, w, backend, exact=False, atol=TOL)


def test_curve_no_positive_and_errors(backend, binary):
    y, s = binary
    zeros = np.zeros_like(y)
    with pytest.warns(UserWarning, match="No positive"):
        want = skm.precision_recall_curve(zeros, s)
    with pytest.warns(UndefinedMetricWarning, match="No positive"):
        got = precision_recall_curve(backend.asarray(zeros), backend.asarray(s))
    for g, w in zip(got, want):
        assert_xp(g, w, backend, exact=False, atol=TOL)
    with pytest.raises(InvalidInputError, match="pos_label"):
        precision_recall_curve(backend.asarray(y * 4 + 3), backend.asarray(s))
    with pytest.raises(InvalidInputError, match="y_score"):
        precision_recall_curve(backend.asarray(y), backend.asarray(np.where(s > 1, np.inf, s)))
    with pytest.raises(InvalidInputError, match="y_score"):
        precision_recall_curve(backend.asarray(y), backend.asarray(np.stack([s, s], axis=1)))
    with pytest.raises(InvalidInputError, match="length"):
        precision_recall_curve(backend.asarray(y[:-1]), backend.asarray(s))


@pytest.mark.parametrize("kind", list(TABLES))
def test_ap_binary(backend, binary, kind):
    y, s = binary
    yl = TABLES[kind][y]
    pos = TABLES[kind][1].item()
    got = average_precision_score(_put(backend, yl), backend.asarray(s), pos_label=pos)
    assert isinstance(got, float)
    assert got == pytest.approx(skm.average_precision_score(y, s), abs=TOL)
    got = average_precision_score(backend.asarray(y), backend.asarray(s[:, None]))
    assert got == pytest.approx(skm.average_precision_score(y, s), abs=TOL)
    with pytest.raises(InvalidInputError, match="pos_label"):
        average_precision_score(_put(backend, yl), backend.asarray(s), pos_label=TABLES[kind][2].item())


@pytest.fixture
def multilabel():
    rng = np.random.default_rng(5)
    Y = (rng.random((90, 4)) < [0.5, 0.3, 0.1, 0.6]).astype(np.int64)
    S = np.round(rng.random((90, 4)) + 0.4 * Y, 1)
    return Y, S


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted", "samples"])
def test_ap_multilabel(backend, multilabel, average):
    Y, S = multilabel
    Y = Y.copy()
    Y[Y.sum(axis=1) == 0, 0] = 1  # "samples": every row has a positive (else both warn)
    want = skm.average_precision_score(Y, S, average=average)
    got = average_precision_score(backend.asarray(Y), backend.asarray(S), average=average)
    if average is None:
        assert_xp(got, want, backend, exact=False, atol=TOL)
    else:
        assert isinstance(got, float) and got == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("kind", list(TABLES))
@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
def test_ap_multiclass_one_vs_rest(backend, multilabel, kind, average):
    _, S = multilabel
    codes = np.argmax(S[:, :3] + np.random.default_rng(6).random((90, 3)), axis=1)
    want = skm.average_precision_score(codes, S[:, :3], average=average)
    got = average_precision_score(_put(backend, TABLES[kind][codes]), backend.asarray(S[:, :3]), average=average)
    if average is None:
        assert_xp(got, want, backend, exact=False, atol=TOL)
    else:
        assert isinstance(got, float) and got == pytest.approx(want, abs=TOL)


def test_ap_no_positive_and_errors(backend, multilabel):
    Y, S = multilabel
    Y = Y.copy()
    Y[:, 2] = 0
    for average in (None, "macro", "weighted"):
        with pytest.warns(UserWarning, match="No positive"):
            want = skm.average_precision_score(Y, S, average=average)
        with pytest.warns(UndefinedMetricWarning, match="No positive"):
            got = average_precision_score(backend.asarray(Y), backend.asarray(S), average=average)
        if average is None:
            assert_xp(got, want, backend, exact=False, atol=TOL)
        else:
            assert got == pytest.approx(want, abs=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # weighted without any positive: 0 before any 0/0, no warning
        want = skm.average_precision_score(np.zeros_like(Y), S, average="weighted")
        assert (
            average_precision_score(backend.asarray(np.zeros_like(Y)), backend.asarray(S), average="weighted") == want
        )
        assert average_precision_score(backend.asarray(Y[:, 0]), backend.asarray(S[:, 0])) > 0
    YB, SB = backend.asarray(Y), backend.asarray(S)
    with pytest.raises(InvalidInputError, match="pos_label"):
        average_precision_score(YB, SB, pos_label=2)
    with pytest.raises(InvalidInputError, match="y_score"):
        average_precision_score(YB, SB[:, :3])
    with pytest.raises(InvalidInputError, match="average"):
        average_precision_score(YB, SB, average="binary")
    with pytest.raises(InvalidInputError, match="y_true"):
        average_precision_score(backend.asarray(Y * 2), SB)
    with pytest.raises(InvalidInputError, match="y_score"):
        average_precision_score(backend.asarray(Y[:, 0]), SB)
