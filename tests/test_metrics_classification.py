"""gpuknn.metrics.classification against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import (
    UndefinedMetricWarning,
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    positive_class_report,
    precision_recall_fscore_support,
)

TOL = 1e-10


@pytest.fixture
def labels():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 200)
    p = np.where(rng.random(200) < 0.6, y, rng.integers(0, 5, 200))  # class 4 only predicted
    return y, p


def test_accuracy(xp, to_xp, labels):
    y, p = labels
    assert accuracy_score(to_xp(y), to_xp(p)) == pytest.approx(skm.accuracy_score(y, p), abs=TOL)
    assert accuracy_score(to_xp(y), to_xp(p), normalize=False) == skm.accuracy_score(y, p, normalize=False)


def test_accuracy_many_predictions(xp, to_xp, labels):
    y, p = labels
    P = np.stack([p, y, np.roll(p, 3)])
    got = to_numpy(accuracy_score(to_xp(y), to_xp(P)))
    want = [skm.accuracy_score(y, row) for row in P]
    np.testing.assert_allclose(got, want, atol=TOL)


@pytest.mark.parametrize("lab", [None, [3, 0, 1], [0, 1, 2, 3, 4, 7]])
@pytest.mark.parametrize("normalize", [None, "true", "pred", "all"])
def test_confusion_matrix(xp, to_xp, labels, lab, normalize):
    y, p = labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # sklearn: 0/0 for an unseen label
        want = skm.confusion_matrix(y, p, labels=lab, normalize=normalize)
    got = to_numpy(
        confusion_matrix(to_xp(y), to_xp(p), labels=None if lab is None else to_xp(np.array(lab)), normalize=normalize)
    )
    np.testing.assert_allclose(got, np.nan_to_num(want), atol=TOL)


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize("lab", [None, [0, 2, 3], [0, 1, 2, 3, 4, 9]])
@pytest.mark.parametrize("zd", [0.0, 1.0])
def test_prfs_multiclass(xp, to_xp, labels, average, lab, zd):
    y, p = labels
    want = skm.precision_recall_fscore_support(y, p, labels=lab, average=average, zero_division=zd)
    got = precision_recall_fscore_support(
        to_xp(y), to_xp(p), labels=None if lab is None else lab, average=average, zero_division=zd
    )
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(to_numpy(g) if average is None else g, w, atol=TOL)
    if average is None:
        np.testing.assert_array_equal(to_numpy(got[3]), want[3])
    else:
        assert got[3] is None


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_fbeta_and_f1(xp, to_xp, labels, beta):
    y, p = labels
    got = precision_recall_fscore_support(to_xp(y), to_xp(p), beta=beta, average="macro")[2]
    assert got == pytest.approx(skm.fbeta_score(y, p, beta=beta, average="macro", zero_division=0.0), abs=TOL)
    for avg in ("micro", "macro", "weighted"):
        assert f1_score(to_xp(y), to_xp(p), average=avg) == pytest.approx(
            skm.f1_score(y, p, average=avg, zero_division=0.0), abs=TOL
        )


def test_binary(xp, to_xp):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 50)
    p = rng.integers(0, 2, 50)
    for pos in (0, 1):
        got = precision_recall_fscore_support(to_xp(y), to_xp(p), average="binary", pos_label=pos)
        want = skm.precision_recall_fscore_support(y, p, average="binary", pos_label=pos)
        np.testing.assert_allclose(got[:3], want[:3], atol=TOL)
    assert f1_score(to_xp(y), to_xp(p)) == pytest.approx(skm.f1_score(y, p), abs=TOL)
    with pytest.raises(InvalidInputError, match="pos_label"):
        f1_score(to_xp(y), to_xp(p), pos_label=5)
    with pytest.raises(InvalidInputError, match="at most 2 classes"):
        f1_score(to_xp(np.array([0, 1, 2])), to_xp(np.array([0, 1, 2])))


def test_string_labels():
    y = np.array(["cat", "dog", "dog", "emu", "cat"])
    p = np.array(["cat", "dog", "cat", "emu", "emu"])
    np.testing.assert_array_equal(confusion_matrix(y, p), skm.confusion_matrix(y, p))
    got = precision_recall_fscore_support(y, p, average="macro")
    np.testing.assert_allclose(got[:3], skm.precision_recall_fscore_support(y, p, average="macro")[:3], atol=TOL)
    assert accuracy_score(y, p) == pytest.approx(0.6)
    r = positive_class_report(y, p, pos_label="cat")
    assert (r["tp"], r["fp"], r["fn"], r["tn"]) == (1, 1, 1, 2)


def test_balanced_accuracy(xp, to_xp):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 90)
    p = np.where(rng.random(90) < 0.5, y, rng.integers(0, 3, 90))
    for adjusted in (False, True):
        assert balanced_accuracy_score(to_xp(y), to_xp(p), adjusted=adjusted) == pytest.approx(
            skm.balanced_accuracy_score(y, p, adjusted=adjusted), abs=TOL
        )


def test_positive_class_report(xp, to_xp, labels):
    y, p = labels
    r = positive_class_report(to_xp(y), to_xp(p), pos_label=2)
    yt, yp = y == 2, p == 2
    assert r["tp"] == int(np.sum(yt & yp)) and r["fp"] == int(np.sum(~yt & yp))
    assert r["fn"] == int(np.sum(yt & ~yp)) and r["tn"] == int(np.sum(~yt & ~yp))
    assert r["precision"] == pytest.approx(skm.precision_score(yt, yp), abs=TOL)
    assert r["recall"] == pytest.approx(skm.recall_score(yt, yp), abs=TOL)
    assert r["accuracy"] == pytest.approx(skm.accuracy_score(yt, yp), abs=TOL)
    # pos_label in neither vector (issue 18): refused, naming it and the labels present
    with pytest.raises(InvalidInputError, match=r"pos_label=99 .*labels present: \[0, 1, 2, 3\]"):
        positive_class_report(to_xp(y), to_xp(y), pos_label=99)


def test_zero_division_rules(xp, to_xp):
    y, p = to_xp(np.array([0, 0, 1])), to_xp(np.array([0, 0, 0]))
    prec = to_numpy(precision_recall_fscore_support(y, p)[0])
    assert prec.tolist() == [2 / 3, 0.0]  # class 1 never predicted: 0.0, no warning
    with pytest.warns(UndefinedMetricWarning):
        precision_recall_fscore_support(y, p, zero_division="warn")
    with pytest.raises(InvalidInputError):
        precision_recall_fscore_support(y, p, zero_division=0.5)


def test_bad_input(xp, to_xp):
    with pytest.raises(InvalidInputError, match="different lengths"):
        accuracy_score(to_xp(np.array([0, 1])), to_xp(np.array([0, 1, 1])))
    with pytest.raises(InvalidInputError, match="different lengths"):
        confusion_matrix(to_xp(np.array([0, 1])), to_xp(np.array([0])))
    with pytest.raises(InvalidInputError, match="NaN"):
        confusion_matrix(to_xp(np.array([0.0, np.nan])), to_xp(np.array([0.0, 1.0])))
    with pytest.raises(InvalidInputError, match="average"):
        f1_score(to_xp(np.array([0, 1])), to_xp(np.array([0, 1])), average="samples")


def test_label_types_checked_as_type_of_target(backend):
    """Issue 18: NaN labels, continuous labels and string/number mixes raise (scikit-learn's
    type_of_target rules) instead of scoring garbage."""
    a = backend.asarray
    y = a(np.array([0.0, 1.0, 1.0]))
    for fn in (accuracy_score, confusion_matrix, f1_score):
        with pytest.raises(InvalidInputError, match="y_true contains NaN"):
            fn(a(np.array([0.0, np.nan, 1.0])), y)
        with pytest.raises(InvalidInputError, match="y_pred contains NaN"):
            fn(y, a(np.array([0.0, np.nan, 1.0])))
        with pytest.raises(
            InvalidInputError, match=r"Unknown label type: continuous \(y_true has non-integer values.*0\.5"
        ):
            fn(a(np.array([0.5, 1.0, 1.0])), y)
    with pytest.raises(InvalidInputError, match="continuous"):
        positive_class_report(a(np.array([0.5, 1.0, 1.0])), y, pos_label=1)
    # floats with integer values are class labels
    assert accuracy_score(y, y) == 1.0


@pytest.mark.parametrize("fn", [accuracy_score, confusion_matrix, f1_score, positive_class_report])
def test_string_and_number_labels_do_not_mix(fn):
    kw = {"pos_label": 1} if fn is positive_class_report else {}
    for yt, yp in (
        (["a", "b"], [1, 2]),
        (np.array(["a", "b"]), np.array([0, 1])),
        (np.array(["a", 1], dtype=object), np.array(["a", "b"], dtype=object)),
    ):
        with pytest.raises(InvalidInputError, match=r"Mix of label input types \(string and number\)"):
            fn(yt, yp, **kw)


def test_positive_class_report_refuses_absent_pos_label(backend):
    a = backend.asarray
    with pytest.raises(InvalidInputError, match=r"pos_label=9 .*labels present: \[0, 1\]"):
        positive_class_report(a(np.array([0, 1])), a(np.array([1, 0])), pos_label=9)
    with pytest.raises(InvalidInputError, match=r"pos_label='x' .*labels present: \[0, 1\]"):
        positive_class_report(a(np.array([0, 1])), a(np.array([1, 0])), pos_label="x")
    with pytest.raises(InvalidInputError, match=r"pos_label='z' .*\['a', 'b'\]"):
        positive_class_report(["a", "b"], ["b", "a"], pos_label="z")
    # one class only (scikit-learn's rule): no error, nothing positive
    assert positive_class_report(a(np.array([0, 0])), a(np.array([0, 0])), pos_label=1)["tn"] == 2
