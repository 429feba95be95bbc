"""One label encoder, :func:`gpuknn._labels.encode`, behind the metrics and the classifiers."""

import sys

import numpy as np
import pytest

import gpuknn.metrics._labels as metric_labels
from gpuknn import _labels
from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import confusion_matrix
from gpuknn.neighbors import KNeighborsClassifier

LABELS = {
    "int": np.array([3, 1, 2, 1, 3, 3]),
    "str": np.array(["c", "a", "b", "a", "c", "c"]),
    "intfloat": np.array([3.0, 1.0, 2.0, 1.0, 3.0, 3.0]),
}


@pytest.fixture
def encoder_calls(monkeypatch):
    """Every call of the one encoder, wherever gpuknn imported it: its results, in order."""
    calls = []
    original = _labels.encode

    def encode(*ys, **kwargs):
        out = original(*ys, **kwargs)
        calls.append(out)
        return out

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("gpuknn") and getattr(mod, "encode", None) is original:
            monkeypatch.setattr(mod, "encode", encode)
    return calls


def test_metrics_keep_no_encoder_of_their_own():
    for name in ("_encode", "_check_label_types", "_host_kind", "_check_finite_labels", "_is_host_nonnumeric"):
        assert not hasattr(metric_labels, name), name


@pytest.mark.parametrize("kind", list(LABELS))
def test_metric_and_classifier_fit_share_the_encoder(backend, kind, encoder_calls):
    y = LABELS[kind] if kind == "str" else backend.asarray(LABELS[kind])
    X = backend.asarray(np.arange(6, dtype=np.float64)[:, None])
    confusion_matrix(y, y)
    assert len(encoder_calls) == 1
    _, m_classes, (m_codes, _) = encoder_calls.pop()
    clf = KNeighborsClassifier(1).fit(X, y)
    assert len(encoder_calls) == 1
    _, c_classes, (c_codes,) = encoder_calls.pop()
    want_classes = np.unique(LABELS[kind])
    want_codes = np.searchsorted(want_classes, LABELS[kind])
    for classes, codes in ((m_classes, m_codes), (c_classes, c_codes), (clf.classes_, clf._y)):
        assert to_numpy(classes).tolist() == want_classes.tolist()
        assert to_numpy(codes).tolist() == want_codes.tolist()
        assert to_numpy(codes).dtype == np.int64
    # the classifier's classes_ and the metric's classes: one namespace and dtype
    assert type(clf.classes_) is type(m_classes) and clf.classes_.dtype == m_classes.dtype


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (np.array([0.5, 1.0]), r"Unknown label type: continuous \(y(_true)? has non-integer values"),
        (np.array([np.nan, 1.0]), r"y(_true)? contains NaN or infinity at 1 position\(s\): \[0\]"),
        (np.array(["a", 1], dtype=object), r"Mix of label input types \(string and number\) in y(_true)?;"),
        (np.array([1 + 1j, 2]), r"Complex data not supported: y(_true)? has dtype complex128"),
    ],
)
def test_metric_and_classifier_refuse_labels_alike(y, match):
    with pytest.raises(InvalidInputError, match=match):
        confusion_matrix(y, np.zeros(2))
    with pytest.raises(InvalidInputError, match=match):
        KNeighborsClassifier(1).fit(np.zeros((2, 1)), y)


def test_a_mix_across_vectors_names_them():
    from gpuknn.metrics import accuracy_score

    for fn in (accuracy_score, confusion_matrix):
        with pytest.raises(InvalidInputError, match=r"\(string and number\): strings in y_true and numbers in y_pred"):
            fn(["a", "b"], [1, 2])
