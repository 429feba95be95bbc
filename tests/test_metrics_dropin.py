"""gpuknn's metrics as drop-in replacements of scikit-learn's (issue 33): the answers,
errors and warnings scikit-learn gives, on every backend, scikit-learn as float64 oracle."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from helpers import host
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning as SkUndefined
from sklearn.metrics.cluster import contingency_matrix as sk_contingency
from sklearn.utils._mocking import MockDataFrame

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import (
    UndefinedMetricWarning,
    accuracy_score,
    average_precision_score,
    balanced_accuracy_score,
    classification_report,
    cohen_kappa_score,
    confusion_matrix,
    contingency_matrix,
    det_curve,
    f1_score,
    fbeta_score,
    log_loss,
    matthews_corrcoef,
    mutual_info_score,
    precision_recall_curve,
    precision_recall_fscore_support,
    precision_score,
    rand_score,
    recall_score,
    roc_auc_score,
    roc_curve,
    sensitivity_specificity_support,
    top_k_accuracy_score,
)

TOL = 1e-10


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 80)
    p = np.where(rng.random(80) < 0.6, y, rng.integers(0, 3, 80))
    w = rng.random(80) * 3
    P = rng.random((80, 3)) + np.eye(3)[y]
    P /= P.sum(axis=1, keepdims=True)
    return y, p, w, P


# --------------------------------------------------------------------------- wrong answers / crashes
def test_roc_auc_ovo_class_absent_from_y_true(backend):
    y = np.array([0, 2, 0, 2])
    s = np.array([[0.2, 0, 0.8], [0.6, 0, 0.4], [0.55, 0, 0.45], [0.4, 0, 0.6]])
    want = skm.roc_auc_score(y, s, labels=[0, 1, 2], multi_class="ovo")
    assert want == pytest.approx(0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no UndefinedMetricWarning: the pair (0, 2) is defined
        got = roc_auc_score(backend.asarray(y), backend.asarray(s), labels=[0, 1, 2], multi_class="ovo")
    assert got == pytest.approx(want, abs=TOL)
    got_w = roc_auc_score(
        backend.asarray(y), backend.asarray(s), labels=[0, 1, 2], multi_class="ovo", average="weighted"
    )
    assert got_w == pytest.approx(skm.roc_auc_score(y, s, labels=[0, 1, 2], multi_class="ovo", average="weighted"))


@pytest.mark.parametrize("dtype", ["Int64", "boolean"])
def test_pandas_nullable_labels(dtype):
    yt = pd.Series([1, 0, 1, 1, 0], dtype=dtype)
    yp = pd.Series([1, 1, 0, 1, 0], dtype=dtype)
    np.testing.assert_array_equal(to_numpy(confusion_matrix(yt, yp)), skm.confusion_matrix(yt, yp))
    assert accuracy_score(yt, yp) == pytest.approx(skm.accuracy_score(yt, yp))
    assert f1_score(yt, yp, pos_label=True if dtype == "boolean" else 1) == pytest.approx(
        skm.f1_score(yt, yp, pos_label=True if dtype == "boolean" else 1)
    )
    assert matthews_corrcoef(yt, yp) == pytest.approx(skm.matthews_corrcoef(yt, yp))
    assert balanced_accuracy_score(yt, yp) == pytest.approx(skm.balanced_accuracy_score(yt, yp))
    np.testing.assert_array_equal(to_numpy(contingency_matrix(yt, yp)), sk_contingency(yt, yp))


def test_pandas_nullable_missing_value_refused():
    yt = pd.Series([1, 0, None], dtype="Int64")
    with pytest.raises(InvalidInputError, match="NaN"):
        confusion_matrix(yt, pd.Series([1, 0, 1], dtype="Int64"))


def test_mock_dataframe_array_like():
    y = np.array([0, 1, 1, 0])
    P = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    assert log_loss(MockDataFrame(y), MockDataFrame(P)) == pytest.approx(
        skm.log_loss(MockDataFrame(y), MockDataFrame(P))
    )
    assert roc_auc_score(MockDataFrame(y), MockDataFrame(P[:, 1])) == pytest.approx(skm.roc_auc_score(y, P[:, 1]))
    assert accuracy_score(MockDataFrame(y), MockDataFrame(y[::-1])) == pytest.approx(skm.accuracy_score(y, y[::-1]))


# --------------------------------------------------------------------------- minor deviations
def test_confusion_matrix_labels_absent_from_y_true(backend):
    with pytest.raises(ValueError, match="At least one label specified must be in y_true") as sk_err:
        skm.confusion_matrix([0, 1], [0, 1], labels=[3, 4])
    assert sk_err.value is not None
    with pytest.raises(InvalidInputError, match="At least one label specified must be in y_true"):
        confusion_matrix(backend.asarray(np.array([0, 1])), backend.asarray(np.array([0, 1])), labels=[3, 4])
    # labels found only in y_pred are not enough either
    with pytest.raises(InvalidInputError, match="At least one label"):
        confusion_matrix(backend.asarray(np.array([0, 1])), backend.asarray(np.array([3, 1])), labels=[3, 4])


def test_roc_auc_unordered_labels(backend):
    y = np.array([0, 1, 2, 1])
    s = np.array([[0.6, 0.2, 0.2], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3]])
    with pytest.raises(ValueError, match="must be ordered"):
        skm.roc_auc_score(y, s, labels=[2, 0, 1], multi_class="ovr")
    with pytest.raises(InvalidInputError, match="Parameter 'labels' must be ordered"):
        roc_auc_score(backend.asarray(y), backend.asarray(s), labels=[2, 0, 1], multi_class="ovr")


def test_rand_score_empty(backend):
    empty = backend.asarray(np.array([], dtype=np.int64))
    assert rand_score(empty, empty) == skm.rand_score([], []) == 1.0
    assert rand_score([], []) == 1.0


def test_pos_label_ignored_warns(backend):
    y, p = np.array([0, 1, 2, 1]), np.array([0, 2, 2, 1])
    with pytest.warns(UserWarning, match="pos_label"):
        skm.f1_score(y, p, average="macro", pos_label=2)
    with pytest.warns(UserWarning, match=r"Note that pos_label \(set to 2\) is ignored when average != 'binary'"):
        got = f1_score(backend.asarray(y), backend.asarray(p), average="macro", pos_label=2)
    assert got == pytest.approx(skm.f1_score(y, p, average="macro"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default pos_label=1 never warns
        f1_score(backend.asarray(y), backend.asarray(p), average="macro")


def test_confusion_matrix_single_label_warns(backend):
    y = np.array([1, 1, 1])
    with pytest.warns(UserWarning, match="A single label was found in 'y_true' and 'y_pred'"):
        got = confusion_matrix(backend.asarray(y), backend.asarray(y))
    assert to_numpy(got).tolist() == [[3]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert host(confusion_matrix(backend.asarray(y), backend.asarray(y), labels=[0, 1])).tolist() == [
            [0, 0],
            [0, 3],
        ]


def test_balanced_accuracy_unseen_prediction_warns(backend):
    y, p = np.array([0, 0, 1, 1]), np.array([0, 2, 1, 1])
    with pytest.warns(UserWarning, match="y_pred contains classes not in y_true"):
        want = skm.balanced_accuracy_score(y, p)
    with pytest.warns(UserWarning, match="y_pred contains classes not in y_true"):
        got = balanced_accuracy_score(backend.asarray(y), backend.asarray(p))
    assert got == pytest.approx(want, abs=TOL)


# --------------------------------------------------------------------------- options
def test_sample_weight_classification(backend, data):
    y, p, w, _ = data
    Y, Pr, W = backend.asarray(y), backend.asarray(p), backend.asarray(w)
    assert accuracy_score(Y, Pr, sample_weight=W) == pytest.approx(skm.accuracy_score(y, p, sample_weight=w), abs=TOL)
    assert accuracy_score(Y, Pr, sample_weight=W, normalize=False) == pytest.approx(
        skm.accuracy_score(y, p, sample_weight=w, normalize=False), abs=TOL
    )
    np.testing.assert_allclose(
        host(confusion_matrix(Y, Pr, sample_weight=W)), skm.confusion_matrix(y, p, sample_weight=w), atol=TOL
    )
    wi = (w * 2).astype(np.int64)
    cm = confusion_matrix(Y, Pr, sample_weight=backend.asarray(wi))
    np.testing.assert_array_equal(host(cm), skm.confusion_matrix(y, p, sample_weight=wi))
    assert host(cm).dtype.kind == "i"
    for average in (None, "micro", "macro", "weighted"):
        got = precision_recall_fscore_support(Y, Pr, average=average, sample_weight=W, beta=0.5)
        want = skm.precision_recall_fscore_support(y, p, average=average, sample_weight=w, beta=0.5)
        for g, e in zip(got[:3], want[:3]):
            np.testing.assert_allclose(host(g) if average is None else g, e, atol=TOL)
        if average is None:
            np.testing.assert_allclose(host(got[3]), want[3], atol=TOL)
        kw = {"average": average, "sample_weight": W}
        skw = {"average": average, "sample_weight": w}
        for mine, theirs in (
            (precision_score, skm.precision_score),
            (recall_score, skm.recall_score),
            (f1_score, skm.f1_score),
        ):
            g = mine(Y, Pr, **kw)
            np.testing.assert_allclose(host(g) if average is None else g, theirs(y, p, **skw), atol=TOL)
        g = fbeta_score(Y, Pr, beta=2.0, **kw)
        np.testing.assert_allclose(host(g) if average is None else g, skm.fbeta_score(y, p, beta=2.0, **skw), atol=TOL)
    assert balanced_accuracy_score(Y, Pr, sample_weight=W) == pytest.approx(
        skm.balanced_accuracy_score(y, p, sample_weight=w), abs=TOL
    )
    assert matthews_corrcoef(Y, Pr, sample_weight=W) == pytest.approx(
        skm.matthews_corrcoef(y, p, sample_weight=w), abs=TOL
    )
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa_score(Y, Pr, weights=weights, sample_weight=W) == pytest.approx(
            skm.cohen_kappa_score(y, p, weights=weights, sample_weight=w), abs=TOL
        )


def test_sample_weight_bad_length(backend, data):
    y, p, w, _ = data
    with pytest.raises(InvalidInputError, match="sample_weight"):
        accuracy_score(backend.asarray(y), backend.asarray(p), sample_weight=backend.asarray(w[:-1]))
    with pytest.raises(InvalidInputError, match="sample_weight"):
        confusion_matrix(backend.asarray(y), backend.asarray(p), sample_weight=backend.asarray(w[:5]))


def test_sample_weight_probabilistic(backend, data):
    y, _, w, P = data
    Y, S, W = backend.asarray(y), backend.asarray(P), backend.asarray(w)
    for normalize in (True, False):
        assert log_loss(Y, S, sample_weight=W, normalize=normalize) == pytest.approx(
            skm.log_loss(y, P, sample_weight=w, normalize=normalize), rel=1e-12
        )
    yb = (y > 0).astype(np.int64)
    assert roc_auc_score(backend.asarray(yb), backend.asarray(P[:, 0]), sample_weight=W) == pytest.approx(
        skm.roc_auc_score(yb, P[:, 0], sample_weight=w), abs=TOL
    )
    w0 = w.copy()
    w0[::3] = 0.0  # zero weights drop samples (and their thresholds)
    assert roc_auc_score(
        backend.asarray(yb), backend.asarray(P[:, 0]), sample_weight=backend.asarray(w0)
    ) == pytest.approx(skm.roc_auc_score(yb, P[:, 0], sample_weight=w0), abs=TOL)


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
def test_roc_auc_ovr_averages(backend, data, average):
    y, _, w, P = data
    for sw in (None, w):
        want = skm.roc_auc_score(y, P, multi_class="ovr", average=average, sample_weight=sw)
        got = roc_auc_score(
            backend.asarray(y), backend.asarray(P), multi_class="ovr", average=average,
            sample_weight=None if sw is None else backend.asarray(sw),
        )  # fmt: skip
        np.testing.assert_allclose(host(got) if average is None else got, want, atol=TOL)


def test_roc_auc_option_errors(backend, data):
    y, _, w, P = data
    Y, S = backend.asarray(y), backend.asarray(P)
    with pytest.raises(InvalidInputError, match="sample_weight is not supported"):
        roc_auc_score(Y, S, multi_class="ovo", sample_weight=backend.asarray(w))
    with pytest.raises(InvalidInputError, match="average must be one of"):
        roc_auc_score(Y, S, multi_class="ovo", average="micro")
    with pytest.raises(InvalidInputError, match="Partial AUC"):
        roc_auc_score(Y, S, multi_class="ovr", max_fpr=0.5)
    with pytest.raises(InvalidInputError, match="max_fpr"):
        roc_auc_score(backend.asarray((y > 0).astype(np.int64)), backend.asarray(P[:, 0]), max_fpr=0.0)


@pytest.mark.parametrize("max_fpr", [0.1, 0.37, 0.8, 1.0])
def test_roc_auc_max_fpr(backend, data, max_fpr):
    y, _, w, P = data
    yb = (y == 2).astype(np.int64)
    s = np.round(P[:, 2], 1)  # ties
    assert roc_auc_score(backend.asarray(yb), backend.asarray(s), max_fpr=max_fpr) == pytest.approx(
        skm.roc_auc_score(yb, s, max_fpr=max_fpr), abs=TOL
    )


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", "samples", None])
def test_roc_auc_multilabel(backend, data, average):
    y, _, w, P = data
    Yml = (P + np.eye(3)[(y + 1) % 3] * 0.3 > 0.4).astype(np.int64)
    Yml[0] = [0, 1, 1]  # every row (samples) and column has both values
    Yml[1] = [1, 0, 0]
    want = skm.roc_auc_score(Yml, P, average=average)
    got = roc_auc_score(backend.asarray(Yml), backend.asarray(P), average=average)
    np.testing.assert_allclose(host(got) if average is None else got, want, atol=TOL)


def test_warn_for(backend):
    y, p = np.array([0, 1, 1, 2]), np.array([0, 1, 1, 1])  # class 2 never predicted: precision 0/0
    Y, Pr = backend.asarray(y), backend.asarray(p)
    with pytest.warns(UndefinedMetricWarning):
        precision_recall_fscore_support(Y, Pr, zero_division="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # precision is the only undefined ratio, and it is not asked for
        got = precision_recall_fscore_support(Y, Pr, zero_division="warn", warn_for=("recall",))
    want = skm.precision_recall_fscore_support(y, p, zero_division=0.0)
    np.testing.assert_allclose(host(got[0]), want[0], atol=TOL)


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "samples", None])
def test_multilabel_prf(backend, average):
    rng = np.random.default_rng(3)
    yt = rng.integers(0, 2, (40, 4))
    yp = np.where(rng.random((40, 4)) < 0.7, yt, 1 - yt)
    w = rng.random(40)
    for sw in (None, w):
        got = precision_recall_fscore_support(
            backend.asarray(yt), backend.asarray(yp), average=average, zero_division=0.0,
            sample_weight=None if sw is None else backend.asarray(sw),
        )  # fmt: skip
        want = skm.precision_recall_fscore_support(yt, yp, average=average, zero_division=0.0, sample_weight=sw)
        for g, e in zip(got[:3], want[:3]):
            np.testing.assert_allclose(host(g) if average is None else g, e, atol=TOL)
    got = f1_score(backend.asarray(yt), backend.asarray(yp), average=average, labels=[0, 2])
    np.testing.assert_allclose(
        host(got) if average is None else got,
        skm.f1_score(yt, yp, average=average, labels=[0, 2], zero_division=0.0),
        atol=TOL,
    )
    assert accuracy_score(backend.asarray(yt), backend.asarray(yp)) == pytest.approx(skm.accuracy_score(yt, yp))
    assert accuracy_score(backend.asarray(yt), backend.asarray(yp), sample_weight=backend.asarray(w)) == pytest.approx(
        skm.accuracy_score(yt, yp, sample_weight=w)
    )


def test_multilabel_binary_average_refused(backend):
    yt = backend.asarray(np.array([[0, 1], [1, 1]]))
    with pytest.raises(InvalidInputError, match="multilabel-indicator but average='binary'"):
        f1_score(yt, yt)
    with pytest.raises(InvalidInputError, match="Samplewise"):
        f1_score(backend.asarray(np.array([0, 1])), backend.asarray(np.array([0, 1])), average="samples")


def test_contingency_eps_sparse(backend):
    a, b = np.array([0, 0, 1, 2, 2]), np.array([1, 1, 0, 0, 3])
    got = contingency_matrix(backend.asarray(a), backend.asarray(b), eps=0.25)
    np.testing.assert_allclose(host(got), sk_contingency(a, b, eps=0.25), atol=TOL)
    sp = contingency_matrix(backend.asarray(a), backend.asarray(b), sparse=True)
    assert scipy.sparse.issparse(sp)
    np.testing.assert_array_equal(sp.toarray(), sk_contingency(a, b, sparse=True).toarray())
    with pytest.raises(InvalidInputError, match="Cannot set 'eps' when sparse=True"):
        contingency_matrix(backend.asarray(a), backend.asarray(b), eps=0.1, sparse=True)
    assert host(contingency_matrix(backend.asarray(a[:0]), backend.asarray(b[:0]))).shape == (0, 0)


@pytest.mark.parametrize("average", ["binary", "macro", "micro", "weighted"])
def test_fbeta_infinite_beta_is_recall(backend, average):
    """beta = inf is recall, as in scikit-learn (it was NaN: inf * 0 in the formula)."""
    yt, yp = np.array([0, 1, 1, 2, 1]), np.array([0, 1, 0, 2, 2])
    if average == "binary":
        yt, yp = yt % 2, yp % 2
    got = fbeta_score(backend.asarray(yt), backend.asarray(yp), beta=np.inf, average=average)
    assert float(got) == pytest.approx(skm.fbeta_score(yt, yp, beta=np.inf, average=average), abs=1e-15)
    assert float(got) == pytest.approx(skm.recall_score(yt, yp, average=average), abs=1e-15)


# --------------------------------------------------------------------------- scikit-learn's own tests (conformance)
def _messages(fn, category=UserWarning):
    """The messages of the warnings of ``category`` that ``fn()`` emits."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fn()
    return sorted(str(r.message) for r in record if issubclass(r.category, category))


def test_undefined_metric_warning_is_sklearns():
    assert issubclass(UndefinedMetricWarning, SkUndefined)
    with pytest.warns(SkUndefined):  # precision of class 1 is 0/0: never predicted
        precision_score(np.array([0, 1, 1]), np.array([0, 0, 0]), zero_division="warn")


@pytest.mark.parametrize(
    "yt, yp, average",
    [
        ([0, 1, 2], [1, 1, 2], None),  # precision 0/0 for label 0: "in labels with"
        ([1, 1, 2], [0, 1, 2], "macro"),  # recall 0/0 for label 0
        ([[1, 1], [1, 1]], [[0, 0], [0, 0]], "micro"),  # one pooled score: "due to"
        ([[1, 0], [0, 0]], [[1, 0], [1, 0]], "samples"),  # per sample: "in samples with no true labels"
        ([[0, 0], [0, 0]], [[0, 0], [0, 0]], "weighted"),  # every ratio 0/0, F-score "true nor predicted"
    ],
)
def test_zero_division_warning_wording(backend, yt, yp, average):
    """zero_division="warn" words its UndefinedMetricWarning as scikit-learn's _warn_prf."""
    yt, yp = np.array(yt), np.array(yp)
    want = _messages(lambda: skm.precision_recall_fscore_support(yt, yp, average=average, zero_division="warn"))
    got = _messages(
        lambda: precision_recall_fscore_support(
            backend.asarray(yt), backend.asarray(yp), average=average, zero_division="warn"
        )
    )
    assert want and got == want


def test_classification_report_warning_wording():
    y, p = np.array([0, 1, 1]), np.array([1, 1, 1])
    want = set(_messages(lambda: skm.classification_report(y, p, zero_division="warn")))
    assert "Use `zero_division` parameter to control this behavior." in next(iter(want))
    assert set(_messages(lambda: classification_report(y, p, zero_division="warn"))) == want


def test_multilabel_classification_report(backend):
    rng = np.random.default_rng(5)
    yt = rng.integers(0, 2, (50, 4))
    yp = np.where(rng.random((50, 4)) < 0.6, yt, 1 - yt)
    yp[0] = 0  # a sample without predicted labels
    w = rng.random(50)
    Yt, Yp = backend.asarray(yt), backend.asarray(yp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkUndefined)  # scikit-learn's zero_division="warn"
        text = skm.classification_report(yt, yp)
        want = skm.classification_report(yt, yp, sample_weight=w, output_dict=True)
        want_kw = skm.classification_report(yt, yp, labels=[2, 0], target_names=["c", "a"], digits=4)
    assert classification_report(Yt, Yp) == text
    assert "samples avg" in text
    got = classification_report(Yt, Yp, sample_weight=backend.asarray(w), output_dict=True)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key], abs=TOL)
    assert classification_report(Yt, Yp, labels=[2, 0], target_names=["c", "a"], digits=4) == want_kw


@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_sample_weight(backend, data, k):
    y, _, w, P = data
    W = backend.asarray(w)
    yb, sb = (y > 0).astype(np.int64), P[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkUndefined)  # k >= the number of classes (both libraries)
        for normalize in (True, False):
            got = top_k_accuracy_score(
                backend.asarray(y), backend.asarray(P), k=k, normalize=normalize, sample_weight=W
            )
            want = skm.top_k_accuracy_score(y, P, k=k, normalize=normalize, sample_weight=w)
            assert got == pytest.approx(want, abs=TOL)
        got = top_k_accuracy_score(backend.asarray(yb), backend.asarray(sb), k=k, sample_weight=W)
        want = skm.top_k_accuracy_score(yb, sb, k=k, sample_weight=w)
    assert got == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize(
    "y_true, labels, msg",
    [
        (
            [0, 1, 2, 3],
            None,
            r"Number of classes in 'y_true' \(4\) not equal to the number of classes in 'y_score' \(3\)",
        ),
        (["c", "c", "a", "b"], ["a", "b", "c", "c"], "Parameter 'labels' must be unique"),
        (["c", "c", "a", "b"], ["a", "c", "b"], "Parameter 'labels' must be ordered"),
        ([0, 0, 1, 2], [0, 1, 2, 3], r"Number of given labels \(4\) not equal to the number of classes in 'y_score'"),
        ([0, 0, 1, 2], [0, 1, 3], "'y_true' contains labels not in parameter 'labels'"),
    ],
)
def test_top_k_errors(backend, y_true, labels, msg):
    s = np.array([[0.2, 0.1, 0.7], [0.4, 0.3, 0.3], [0.3, 0.4, 0.3], [0.4, 0.5, 0.1]])
    with pytest.raises(ValueError, match=msg):
        skm.top_k_accuracy_score(y_true, s, k=2, labels=labels)
    y = np.array(y_true)
    with pytest.raises(InvalidInputError, match=msg):
        top_k_accuracy_score(y if y.dtype.kind == "U" else backend.asarray(y), backend.asarray(s), k=2, labels=labels)


def test_top_k_binary_2d_scores_and_warning(backend):
    with pytest.raises(InvalidInputError, match="`y_true` is binary while y_score is 2d with 3 classes"):
        top_k_accuracy_score(backend.asarray(np.array([0, 1])), backend.asarray(np.full((2, 3), 0.3)))
    s = np.eye(4)
    with pytest.warns(UndefinedMetricWarning, match=r"'k' \(4\) greater than or equal to 'n_classes' \(4\)"):
        assert top_k_accuracy_score(backend.asarray(np.arange(4)), backend.asarray(s), k=4) == 1.0


def test_cohen_kappa_undefined_and_wrong_labels(backend):
    y1 = backend.asarray(np.array([1] * 5 + [2] * 5))
    with pytest.warns(UndefinedMetricWarning, match="`y2` contains no labels that are present in both `y1` and"):
        assert np.isnan(cohen_kappa_score(y1, backend.asarray(np.full(10, 3)), labels=[1, 2]))
    with pytest.warns(UndefinedMetricWarning, match="`y1`, `y2` and `labels` have only one label in common"):
        got = cohen_kappa_score(
            y1, backend.asarray(np.array([1] * 5 + [3] * 5)), labels=[1, 2], replace_undefined_by=0.0
        )
    assert got == 0.0
    strings = np.array(["a"] * 5 + ["b"] * 5)
    with pytest.raises(InvalidInputError, match="At least one label in `labels` must be present in `y1`"):
        cohen_kappa_score(strings, np.array(["b"] * 10), labels=[1, 2])
    with pytest.raises(InvalidInputError, match="At least one label in `labels` must be present in `y1`"):
        cohen_kappa_score(y1, y1, labels=[7, 8])


def test_log_loss_y_proba_and_warnings(backend, data):
    y, _, w, P = data
    Y, S = backend.asarray(y), backend.asarray(P)
    want = skm.log_loss(y, P, sample_weight=w)
    assert log_loss(Y, y_proba=S, sample_weight=backend.asarray(w)) == pytest.approx(want, rel=1e-12)
    with pytest.warns(FutureWarning, match="`y_pred` was renamed to `y_proba` in version 1.9"):
        assert log_loss(Y, y_pred=S) == pytest.approx(skm.log_loss(y, P), rel=1e-12)
    with pytest.raises(InvalidInputError, match="Cannot use both `y_pred` and `y_proba`"):
        log_loss(Y, S, y_pred=S)
    with pytest.warns(UserWarning, match="The y_prob values do not sum to one"):
        log_loss(Y, backend.asarray(P / 2))
    msg = (
        "Labels passed were ['spam', 'eggs', 'ham']. But this function assumes labels are ordered "
        "lexicographically. Pass the ordered labels=['eggs', 'ham', 'spam'] and ensure that the columns of "
        "y_prob correspond to this ordering."
    )
    yl, Pl = ["eggs", "spam", "ham"], np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    with pytest.warns(UserWarning, match=re.escape(msg)):
        got = log_loss(yl, backend.asarray(Pl), labels=["spam", "eggs", "ham"])
    assert got == pytest.approx(skm.log_loss(yl, Pl, labels=["eggs", "ham", "spam"]), rel=1e-12)


def test_curve_target_checks(backend):
    s = np.array([0.2, 0.3, 0.8, 0.1])
    for curve in (roc_curve, precision_recall_curve):
        for labels in ([b"a", b"b"], np.array([b"a", b"b"])):
            with pytest.raises(TypeError, match="Support for labels represented as bytes is not supported"):
                curve(labels, [0.0, 1.0])
    y3 = np.array([0, 1, 2, 1])
    for curve, sk_curve in ((roc_curve, skm.roc_curve), (precision_recall_curve, skm.precision_recall_curve)):
        with pytest.raises(InvalidInputError, match="multiclass format is not supported"):
            curve(backend.asarray(y3), backend.asarray(s))
        got = curve(backend.asarray(y3), backend.asarray(s), pos_label=2)  # one class against the rest
        for g, e in zip(got, sk_curve(y3, s, pos_label=2, drop_intermediate=False)):
            np.testing.assert_allclose(host(g), e, atol=TOL)
    msg = "y_true takes value in {'cancer', 'not cancer'} and pos_label is not specified"
    with pytest.raises(InvalidInputError, match=re.escape(msg)):
        det_curve(["cancer", "cancer", "not cancer"], backend.asarray(s[:3]))
    with pytest.raises(InvalidInputError, match="inconsistent numbers of samples"):
        det_curve(backend.asarray(np.array([0, 1])), backend.asarray(s[:3]))


def test_roc_curve_one_class_warnings(backend):
    s = backend.asarray(np.array([0.0, 1, 0, 1, 0, 1]))
    with pytest.warns(UndefinedMetricWarning, match="No negative samples in y_true, false positive value"):
        fpr, tpr, thr = roc_curve(backend.asarray(np.ones(6, dtype=np.int64)), s)
    assert np.isnan(host(fpr)).all() and not np.isnan(host(tpr)).any()
    with pytest.warns(UndefinedMetricWarning, match="No positive samples in y_true, true positive value"):
        fpr, tpr, thr = roc_curve(backend.asarray(np.zeros(6, dtype=np.int64)), s)
    assert np.isnan(host(tpr)).all() and not np.isnan(host(fpr)).any()
    msg = "Only one class is present in y_true. ROC AUC score is not defined in that case."
    with pytest.warns(UndefinedMetricWarning, match=msg):
        assert np.isnan(roc_auc_score(backend.asarray(np.zeros(6, dtype=np.int64)), s))


def test_roc_auc_multiclass_option_messages(backend, data):
    y, _, _, P = data
    Y, S = backend.asarray(y), backend.asarray(P)
    with pytest.raises(NotImplementedError, match="average=None is not implemented for multi_class='ovo'"):
        roc_auc_score(Y, S, multi_class="ovo", average=None)
    with pytest.raises(InvalidInputError, match=re.escape("average must be one of ('macro', 'weighted', None)")):
        roc_auc_score(Y, S, multi_class="ovo", average="samples")
    with pytest.raises(InvalidInputError, match=re.escape("('micro', 'macro', 'weighted', None) for multiclass")):
        roc_auc_score(Y, S, multi_class="ovr", average="samples")
    with pytest.raises(InvalidInputError, match="sample_weight is not supported for multiclass one-vs-one"):
        roc_auc_score(Y, S, multi_class="ovo", sample_weight=[])  # refused before its length is checked
    with pytest.raises(InvalidInputError, match=re.escape("multi_class must be in ('ovo', 'ovr')")):
        roc_auc_score(Y, S)


def test_average_precision_multiclass_multioutput(backend):
    yt = np.array([[2, 2, 1], [1, 2, 0], [0, 1, 2]])
    with pytest.raises(InvalidInputError, match="multiclass-multioutput format is not supported"):
        average_precision_score(backend.asarray(yt), backend.asarray(np.full((3, 3), 0.3)), pos_label=2)


def test_confusion_matrix_integer_weights_exact(backend):
    """Integer weights are summed in int64, exactly (float64 rounds above 2**53) and wrapping
    on overflow, as scikit-learn's."""
    y = backend.asarray(np.array([0, 1, 1]))
    cm = confusion_matrix(y, y, sample_weight=backend.asarray(np.full(3, np.iinfo(np.int64).max)))
    assert host(cm).tolist() == [[np.iinfo(np.int64).max, 0], [0, -2]]
    big = np.array([2**53 + 1, 3, 2**53 + 1, 5], dtype=np.int64)
    yt, yp = np.array([0, 1, 0, 2]), np.array([0, 1, 0, 1])
    got = confusion_matrix(
        backend.asarray(yt), backend.asarray(yp), sample_weight=backend.asarray(big), labels=[2, 0, 1]
    )
    assert host(got).dtype == np.int64
    assert host(got).tolist() == skm.confusion_matrix(yt, yp, sample_weight=big, labels=[2, 0, 1]).tolist()
    for dtype in (np.bool_, np.int32, np.uint32):
        w = np.ones(3).astype(dtype)
        assert host(confusion_matrix([0, 1, 1], [0, 1, 1], sample_weight=w)).dtype == np.int64


def test_matthews_column_vector(backend):
    y = np.array(["a", "b", "a", "a", "b"])
    assert matthews_corrcoef(y, np.where(y == "a", "b", "a")[:, None]) == pytest.approx(-1.0)
    yt, yp = np.array([0, 1, 1, 0, 1]), np.array([0, 1, 0, 0, 1])
    got = matthews_corrcoef(backend.asarray(yt[:, None]), backend.asarray(yp))
    assert got == pytest.approx(skm.matthews_corrcoef(yt, yp), abs=TOL)


def test_mutual_info_given_contingency(backend):
    a = np.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3])
    b = np.array([1, 1, 1, 1, 2, 1, 2, 2, 2, 2, 3, 1, 3, 3, 3, 2, 2])
    want = skm.mutual_info_score(a, b)
    A, B = backend.asarray(a), backend.asarray(b)
    for table in (contingency_matrix(A, B), contingency_matrix(A, B, sparse=True)):
        assert mutual_info_score(A, B, contingency=table) == pytest.approx(want, abs=TOL)
    assert mutual_info_score(None, None, contingency=[[3, 0], [0, 4]]) == pytest.approx(
        skm.mutual_info_score(None, None, contingency=np.array([[3, 0], [0, 4]])), abs=TOL
    )
    with pytest.raises(InvalidInputError, match="integer counts"):
        mutual_info_score(None, None, contingency=np.array([[0.5, 1.0]]))


def test_sensitivity_specificity_unused_pos_label(backend):
    with pytest.warns(UserWarning, match=r"use labels=\[pos_label\] to specify a single"):
        sensitivity_specificity_support(
            backend.asarray(np.array([1, 2, 1])), backend.asarray(np.array([1, 2, 2])), pos_label=2, average="macro"
        )
