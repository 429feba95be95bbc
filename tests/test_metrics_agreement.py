"""gpuknn.metrics.agreement against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning as SkUndefined

from gpuknn.errors import InvalidInputError
from gpuknn.metrics.agreement import cohen_kappa_score, log_loss, matthews_corrcoef, top_k_accuracy_score
from gpuknn.metrics.classification import UndefinedMetricWarning

TOL = 1e-12
KINDS = ["int", "neg", "float", "str"]


def _labels(kind, y):
    """Class codes 0..4 turned into labels of one kind (strings stay on the host)."""
    table = {
        "int": np.arange(5),
        "neg": np.array([-7, -3, -1, 0, 5]),
        "float": np.array([-1.5, 0.25, 1.0, 2.5, 9.0]),
        "str": np.array(["a", "b", "c", "d", "zz"]),
    }[kind]
    return table[y]


def _oracle(kind, y):
    """What scikit-learn is given: fractional float labels are "continuous" to it, so it gets
    the class codes instead (every table is increasing, so the order is the same)."""
    return np.searchsorted(_labels(kind, np.arange(5)), y) if kind == "float" else y


def _put(backend, y):
    return y if y.dtype.kind == "U" else backend.asarray(y)


@pytest.fixture
def codes():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 150)
    p = np.where(rng.random(150) < 0.6, y, rng.integers(0, 5, 150))  # class 4 only predicted
    return y, p


@pytest.mark.parametrize("kind", KINDS)
def test_matthews(backend, codes, kind):
    y, p = (_labels(kind, c) for c in codes)
    got = matthews_corrcoef(_put(backend, y), _put(backend, p))
    assert isinstance(got, float)
    assert got == pytest.approx(skm.matthews_corrcoef(_oracle(kind, y), _oracle(kind, p)), abs=TOL)
    yb, pb = y[:40], np.where(codes[1][:40] % 2 == 0, y[0], y[1])
    want = skm.matthews_corrcoef(_oracle(kind, yb), _oracle(kind, pb))
    assert matthews_corrcoef(_put(backend, yb), _put(backend, pb)) == pytest.approx(want, abs=TOL)


def test_matthews_constant_is_zero(backend):
    y, p = np.array([0, 1, 1, 0]), np.array([1, 1, 1, 1])
    assert matthews_corrcoef(backend.asarray(y), backend.asarray(p)) == skm.matthews_corrcoef(y, p) == 0.0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("lab", [None, [3, 0, 1], [4, 0, 1, 2, 3]])
def test_cohen_kappa(backend, codes, kind, weights, lab):
    y, p = (_labels(kind, c) for c in codes)
    labels = None if lab is None else _labels(kind, np.array(lab))
    want = skm.cohen_kappa_score(
        _oracle(kind, y), _oracle(kind, p), labels=None if lab is None else _oracle(kind, labels), weights=weights
    )
    got = cohen_kappa_score(
        _put(backend, y),
        _put(backend, p),
        labels=labels if kind == "str" or labels is None else backend.asarray(labels),
        weights=weights,
    )
    assert isinstance(got, float)
    assert got == pytest.approx(want, abs=TOL)


def test_cohen_kappa_undefined_and_errors(backend):
    a, b = backend.asarray(np.array([0, 0, 1])), backend.asarray(np.array([2, 2, 2]))
    with pytest.warns(SkUndefined):
        want = skm.cohen_kappa_score([0, 0, 1], [2, 2, 2], labels=[0, 1])
    with pytest.warns(UndefinedMetricWarning):
        got = cohen_kappa_score(a, b, labels=backend.asarray(np.array([0, 1])))
    assert np.isnan(got) and np.isnan(want)
    with pytest.warns(UndefinedMetricWarning):  # one class in common: 0/0
        assert np.isnan(cohen_kappa_score(backend.asarray(np.array([1, 1])), backend.asarray(np.array([1, 1]))))
    with pytest.raises(InvalidInputError, match="weights"):
        cohen_kappa_score(a, b, weights="cubic")
    with pytest.raises(InvalidInputError, match="labels"):
        cohen_kappa_score(a, b, labels=backend.asarray(np.array([2, 5])))
    with pytest.raises(InvalidInputError, match="y1"):
        cohen_kappa_score(a, backend.asarray(np.array([0, 1])))


@pytest.fixture
def scored():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 4, 120)
    s = np.round(rng.random((120, 4)) + 0.3 * (y[:, None] == np.arange(4)), 1)  # many ties
    return y, s


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_multiclass(backend, scored, kind, k):
    y, s = scored
    yl = _labels(kind, y)
    for normalize in (True, False):
        want = skm.top_k_accuracy_score(_oracle(kind, yl), s, k=k, normalize=normalize)
        got = top_k_accuracy_score(_put(backend, yl), backend.asarray(s), k=k, normalize=normalize)
        assert isinstance(got, float)
        assert got == pytest.approx(want, abs=TOL)


def test_top_k_labels_and_binary(backend, scored):
    y, s = scored
    y3 = np.where(y == 2, 0, y)  # class 2 missing from y_true
    got = top_k_accuracy_score(backend.asarray(y3), backend.asarray(s), k=2, labels=backend.asarray(np.arange(4)))
    assert got == pytest.approx(skm.top_k_accuracy_score(y3, s, k=2, labels=np.arange(4)), abs=TOL)
    yb = (y % 2) * 5
    for sb in (s[:, 0] / 1.5, s[:, 0] - 0.7):  # thresholds 0.5 and 0
        got = top_k_accuracy_score(backend.asarray(yb), backend.asarray(sb), k=1)
        assert got == pytest.approx(skm.top_k_accuracy_score(yb, sb, k=1), abs=TOL)
    with pytest.warns(SkUndefined):
        want = skm.top_k_accuracy_score(yb, s[:, 0], k=2)
    with pytest.warns(UndefinedMetricWarning):
        assert top_k_accuracy_score(backend.asarray(yb), backend.asarray(s[:, 0]), k=2) == want == 1.0
    with pytest.warns(UndefinedMetricWarning):
        assert top_k_accuracy_score(backend.asarray(y), backend.asarray(s), k=4) == 1.0


def test_top_k_errors(backend, scored):
    y, s = scored
    Y, S = backend.asarray(y), backend.asarray(s)
    with pytest.raises(InvalidInputError, match="labels"):
        top_k_accuracy_score(Y, S, labels=backend.asarray(np.array([3, 2, 1, 0])))
    with pytest.raises(InvalidInputError, match="labels"):
        top_k_accuracy_score(Y, S, labels=backend.asarray(np.array([0, 1, 2, 5])))
    with pytest.raises(InvalidInputError, match="k"):
        top_k_accuracy_score(Y, S, k=0)
    with pytest.raises(InvalidInputError, match="y_score"):
        top_k_accuracy_score(Y, S[:, :3])
    with pytest.raises(InvalidInputError, match="y_score"):
        top_k_accuracy_score(Y, backend.asarray(np.where(s > 0.5, np.nan, s)))


@pytest.mark.parametrize("kind", KINDS)
def test_log_loss(backend, scored, kind):
    y, s = scored
    P = s / s.sum(axis=1, keepdims=True)
    P[0] = [1.0, 0.0, 0.0, 0.0]  # clipped to [eps, 1 - eps]
    yl = _labels(kind, y)
    for normalize in (True, False):
        got = log_loss(_put(backend, yl), backend.asarray(P), normalize=normalize)
        assert isinstance(got, float)
        assert got == pytest.approx(skm.log_loss(_oracle(kind, yl), P, normalize=normalize), rel=1e-12)
    labels = _labels(kind, np.arange(5))
    P5 = np.concatenate([P * 0.9, np.full((len(y), 1), 0.1)], axis=1)
    got = log_loss(_put(backend, yl), backend.asarray(P5), labels=labels if kind == "str" else backend.asarray(labels))
    assert got == pytest.approx(skm.log_loss(_oracle(kind, yl), P5, labels=_oracle(kind, labels)), rel=1e-12)


def test_log_loss_binary_and_warnings(backend, scored):
    y, s = scored
    yb, p = np.where(y > 1, 3, -2), s[:, 0] / 1.5
    for pp in (p, p[:, None]):
        assert log_loss(backend.asarray(yb), backend.asarray(pp)) == pytest.approx(skm.log_loss(yb, pp), rel=1e-12)
    with pytest.warns(UserWarning, match="sum to one"):
        want = skm.log_loss(y, s / 1.5)
    with pytest.warns(UserWarning, match="sum to one"):
        assert log_loss(backend.asarray(y), backend.asarray(s / 1.5)) == pytest.approx(want, rel=1e-12)
    P = s / s.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_loss(backend.asarray(y), backend.asarray(P))
    with pytest.warns(UserWarning, match="sorted"):
        got = log_loss(backend.asarray(y), backend.asarray(P), labels=[3, 1, 2, 0])
    assert got == pytest.approx(skm.log_loss(y, P), rel=1e-12)


def test_log_loss_errors(backend, scored):
    y, s = scored
    Y = backend.asarray(y)
    with pytest.raises(InvalidInputError, match="y_pred"):
        log_loss(Y, backend.asarray(s * 2))
    with pytest.raises(InvalidInputError, match="y_pred"):
        log_loss(Y, backend.asarray(np.where(s > 0.9, np.nan, s)))
    with pytest.raises(InvalidInputError, match="y_pred"):
        log_loss(Y, backend.asarray(s[:, :3] / 3))
    with pytest.raises(InvalidInputError, match="labels"):
        log_loss(backend.asarray(np.zeros(5, dtype=np.int64)), backend.asarray(np.full(5, 0.5)))
    with pytest.raises(InvalidInputError, match="y_true"):
        log_loss(Y, backend.asarray(s / s.sum(axis=1, keepdims=True)), labels=backend.asarray(np.array([0, 1, 2, 7])))
