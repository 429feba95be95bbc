"""Classification scores from label vectors, computed in the labels' own namespace.

Labels are integer (or any numeric) arrays of any array-API namespace, or host NumPy arrays /
lists of strings. Numeric labels are encoded in their namespace with ``unique_inverse``;
only non-numeric labels are encoded on the host. Counts come from one-hot matrix products
(a ``bincount`` fast path on NumPy/CuPy), so there is no per-sample Python loop.

Undefined ratios (0/0, e.g. the precision of a class never predicted) take the value
``zero_division`` (default ``0.0``, scikit-learn's value) **without** a warning; pass
``zero_division="warn"`` to get 0.0 plus an :class:`UndefinedMetricWarning`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import array_api_compat.numpy as _npx
import numpy as np

from .._backend import array_namespace, from_numpy, input_device, to_numpy
from .._backend import device_of as _device
from .._delegation import bincount, on_input_device
from .._labels import as_1d, check_finite_labels, check_label_types, encode, is_host_nonnumeric
from ..errors import InvalidInputError
from ._labels import UndefinedMetricWarning, _check_lengths, _counts2d, _divide

__all__ = [
    "UndefinedMetricWarning",
    "accuracy_score",
    "confusion_matrix",
    "precision_recall_fscore_support",
    "f1_score",
    "balanced_accuracy_score",
    "positive_class_report",
]


@on_input_device
def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True) -> Any:
    """Fraction (or number) of correct predictions.

    Parameters
    ----------
    y_true : array of shape (n,)
    y_pred : array of shape (n,) or (m, n)
        A 2-D ``y_pred`` scores ``m`` predictions at once (e.g. one row per ``k`` from
        :func:`gpuknn.votes_for_many_k`) and returns an array of shape (m,).
    normalize : bool
        ``False`` returns the number of correct predictions.

    Returns
    -------
    float (or int), or array of shape (m,) in the labels' namespace for 2-D ``y_pred``.

    Complexity O(m n), one comparison and one reduction, no encoding for numeric labels.

    Examples
    --------
    >>> import numpy as np
    >>> accuracy_score(np.array([0, 1, 1]), np.array([0, 1, 0]))
    0.6666666666666666
    """
    check_label_types(y_true, y_pred, names=("y_true", "y_pred"))
    if is_host_nonnumeric(y_true) or is_host_nonnumeric(y_pred):
        yt, yp = np.asarray(to_numpy(y_true)), np.asarray(to_numpy(y_pred))
        xp = _npx
    else:
        xp = array_namespace(y_true, y_pred)
        dev = input_device([y_true, y_pred])
        yt = as_1d(y_true, xp, "y_true", dev)
        yp = from_numpy(np.asarray(y_pred), xp, device=dev) if isinstance(y_pred, (list, tuple)) else y_pred
    if yt.ndim != 1 or yp.ndim not in (1, 2):
        raise InvalidInputError(f"y_true must be 1-D and y_pred 1-D or 2-D, got {yt.shape} and {yp.shape}")
    if xp is not _npx or yt.dtype.kind in "biuf":
        check_finite_labels(yt, xp, "y_true", True)
        check_finite_labels(xp.reshape(yp, (-1,)), xp, "y_pred", True)
    _check_lengths(yt, yp.T if yp.ndim == 2 else yp)
    correct = yp == (yt[None, :] if yp.ndim == 2 else yt)
    n_ok = xp.sum(xp.astype(correct, xp.int64), axis=-1)
    if yp.ndim == 2:
        if not normalize:
            return n_ok
        # A tensor divisor, not a Python number: torch on CUDA divides by a scalar as a
        # product with its reciprocal, which is not correctly rounded -- equal accuracies
        # then differed in the last bit from NumPy's, and CV ties broke another way.
        n = xp.full(n_ok.shape, float(yt.shape[0]), dtype=xp.float64, device=_device(n_ok))
        return xp.astype(n_ok, xp.float64) / n
    return float(n_ok) / yt.shape[0] if normalize else int(n_ok)


@on_input_device
def confusion_matrix(y_true: Any, y_pred: Any, *, labels: Any = None, normalize: str | None = None) -> Any:
    """Confusion matrix ``C[i, j]`` = number of samples of class ``i`` predicted as ``j``.

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
    labels : array of shape (C,), optional
        Classes and their order; default the sorted union of both vectors. Samples whose
        true or predicted label is not in ``labels`` are not counted.
    normalize : {None, "true", "pred", "all"}
        Divide by row sums, column sums or the total (empty rows/columns give 0).

    Returns
    -------
    C : int64 array (float64 when normalised) of shape (C, C), in the labels' namespace
        (NumPy for string labels).

    Complexity O(n + C²).

    Examples
    --------
    >>> import numpy as np
    >>> confusion_matrix(np.array([0, 1, 1]), np.array([0, 1, 0])).tolist()
    [[1, 0], [1, 1]]
    """
    xp, classes, (t, p) = encode(y_true, y_pred, labels=labels, names=("y_true", "y_pred"), discrete=True)
    _check_lengths(t, p)
    C = int(classes.shape[0])
    cm = _counts2d(t, p, C, C, xp)
    if normalize is None:
        return cm
    if normalize not in ("true", "pred", "all"):
        raise InvalidInputError(f"normalize must be None, 'true', 'pred' or 'all', got {normalize!r}")
    cmf = xp.astype(cm, xp.float64)
    if normalize == "all":
        den = xp.sum(cmf) * xp.ones_like(cmf)
    elif normalize == "true":
        den = xp.sum(cmf, axis=1, keepdims=True) * xp.ones_like(cmf)
    else:
        den = xp.sum(cmf, axis=0, keepdims=True) * xp.ones_like(cmf)
    return _divide(cmf, den, 0.0, xp, "normalised confusion matrix")


def _per_class_counts(y_true: Any, y_pred: Any, labels: Any, discrete: bool = False) -> tuple[Any, Any, Any, Any, Any]:
    """(xp, classes, tp, n_pred, n_true) per class as float64 arrays (``discrete``: refuse
    non-integer float labels, as the scores of this module do)."""
    xp, classes, (t, p) = encode(y_true, y_pred, labels=labels, names=("y_true", "y_pred"), discrete=discrete)
    _check_lengths(t, p)
    C = int(classes.shape[0])
    hit = xp.where(t == p, t, xp.full_like(t, -1))
    tp = xp.astype(bincount(hit, C), xp.float64)
    n_pred = xp.astype(bincount(p, C), xp.float64)
    n_true = xp.astype(bincount(t, C), xp.float64)
    return xp, classes, tp, n_pred, n_true


def _binary_index(xp: Any, classes: Any, pos_label: Any, present: Any) -> int:
    n_present = int(xp.sum(xp.astype(present, xp.int64)))
    if n_present > 2:
        raise InvalidInputError(f"average='binary' needs at most 2 classes, got {n_present}; choose another average")
    cls = to_numpy(classes)
    hits = np.nonzero(cls == pos_label)[0]
    if hits.size == 0 or not bool(to_numpy(present)[hits[0]]):
        if n_present >= 2:
            raise InvalidInputError(f"pos_label={pos_label!r} is not one of the labels {cls.tolist()}")
        return -1
    return int(hits[0])


@on_input_device
def precision_recall_fscore_support(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float = 1.0,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = None,
    zero_division: Any = 0.0,
) -> tuple[Any, Any, Any, Any]:
    """Precision, recall, F-beta and support per class or averaged (scikit-learn semantics).

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
    beta : float
        Weight of recall in the F-score.
    labels : array of shape (C,), optional
        Classes to report and average over (default: sorted union of both vectors).
    pos_label : label
        The positive class for ``average="binary"``.
    average : {None, "binary", "micro", "macro", "weighted"}
        ``None`` gives per-class arrays; ``micro`` pools the counts, ``macro`` is the plain
        mean over classes, ``weighted`` weights by support (true counts).
    zero_division : {0.0, 1.0, nan, "warn"}
        Value of an undefined ratio. F is ``zero_division`` only when tp = fp = fn = 0,
        and 0 when precision and recall are both 0.

    Returns
    -------
    precision, recall, fbeta, support
        float64 arrays of shape (C,) (support int64) for ``average=None``; floats and
        ``support=None`` otherwise.

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> p, r, f, s = precision_recall_fscore_support(np.array([0, 1, 1]), np.array([0, 1, 0]))
    >>> p.tolist(), s.tolist()
    ([0.5, 1.0], [1, 2])
    """
    if average not in (None, "binary", "micro", "macro", "weighted"):
        raise InvalidInputError(f"average must be None, 'binary', 'micro', 'macro' or 'weighted', got {average!r}")
    if beta < 0:
        raise InvalidInputError(f"beta must be >= 0, got {beta}")
    xp, classes, tp, n_pred, n_true = _per_class_counts(y_true, y_pred, labels, discrete=True)
    if average == "binary":
        present = (n_pred + n_true) > 0
        i = _binary_index(xp, classes, pos_label, present)
        if i < 0:
            tp = n_pred = n_true = xp.zeros(1, dtype=xp.float64, device=_device(tp))
        else:
            tp, n_pred, n_true = tp[i : i + 1], n_pred[i : i + 1], n_true[i : i + 1]
    if average == "micro":
        tp, n_pred, n_true = (xp.reshape(xp.sum(v), (1,)) for v in (tp, n_pred, n_true))
    b2 = float(beta) ** 2
    precision = _divide(tp, n_pred, zero_division, xp, "precision")
    recall = _divide(tp, n_true, zero_division, xp, "recall")
    f_den = (1 + b2) * tp + b2 * (n_true - tp) + (n_pred - tp)
    fscore = _divide((1 + b2) * tp, f_den, zero_division, xp, "F-score")
    if average is None:
        return precision, recall, fscore, xp.astype(n_true, xp.int64)
    if average == "weighted":
        # all-zero support (only unseen ``labels``): plain mean, like scikit-learn
        w = n_true if float(xp.sum(n_true)) > 0 else xp.ones_like(tp)
    else:
        w = xp.ones_like(tp)
    out = []
    for v in (precision, recall, fscore):
        ok = ~xp.isnan(v)
        wv = xp.where(ok, w, xp.zeros_like(w))
        sw = float(xp.sum(wv))
        out.append(float(xp.sum(xp.where(ok, v, xp.zeros_like(v)) * wv)) / sw if sw > 0 else float("nan"))
    return out[0], out[1], out[2], None


@on_input_device
def f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    zero_division: Any = 0.0,
) -> Any:
    """F1 score (harmonic mean of precision and recall); see :func:`precision_recall_fscore_support`.

    Returns a float for an ``average``, a float64 array of shape (C,) for ``average=None``.
    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> round(f1_score(np.array([0, 1, 1]), np.array([0, 1, 0])), 4)
    0.6667
    """
    _, _, f, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, pos_label=pos_label, average=average, zero_division=zero_division
    )
    return f


@on_input_device
def balanced_accuracy_score(y_true: Any, y_pred: Any, *, adjusted: bool = False) -> float:
    """Mean recall over the classes present in ``y_true``.

    Classes that occur only in ``y_pred`` have no recall and are left out (without a
    warning). ``adjusted=True`` rescales so that chance level is 0:
    ``(score - 1/C) / (1 - 1/C)``; with a single class in ``y_true`` that is 0/0 and, as in
    scikit-learn, the result is NaN (-inf if some prediction is wrong) with an
    :class:`UndefinedMetricWarning`.

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> balanced_accuracy_score(np.array([0, 0, 0, 1]), np.array([0, 0, 0, 0]))
    0.5
    """
    xp, _, tp, _, n_true = _per_class_counts(y_true, y_pred, None, discrete=True)
    present = n_true > 0
    C = int(xp.sum(xp.astype(present, xp.int64)))
    rec = tp / xp.where(present, n_true, xp.ones_like(n_true))
    score = float(xp.sum(xp.where(present, rec, xp.zeros_like(rec)))) / C
    if adjusted:
        if C == 1:
            # Chance level is 1/C = 1, so the rescaling divides by 0: scikit-learn returns
            # (score - 1) / 0 -- NaN for a perfect score, -inf otherwise -- with a warning;
            # 0.0 (as before) passed a degenerate fold off as a chance-level score.
            warnings.warn(
                "balanced_accuracy_score with adjusted=True is undefined (0/0) when y_true holds a "
                f"single class (chance level 1/1 = 1); returning {'nan' if score == 1.0 else '-inf'}",
                UndefinedMetricWarning,
                stacklevel=3,
            )
            return math.nan if score == 1.0 else -math.inf
        chance = 1.0 / C
        score = (score - chance) / (1 - chance)
    return score


@on_input_device
def positive_class_report(y_true: Any, y_pred: Any, *, pos_label: Any, zero_division: Any = 0.0) -> dict:
    """One-vs-rest counts and scores for the class ``pos_label``.

    Returns
    -------
    dict
        ``tp, fp, tn, fn`` (int), ``precision, recall, specificity, f1, accuracy`` (float).
        Undefined ratios take ``zero_division``.

    Complexity O(n).

    Examples
    --------
    >>> import numpy as np
    >>> r = positive_class_report(np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0]), pos_label=1)
    >>> (r["tp"], r["fp"], r["tn"], r["fn"], r["precision"])
    (1, 1, 1, 1, 0.5)
    """
    check_label_types(y_true, y_pred, names=("y_true", "y_pred"))
    if is_host_nonnumeric(y_true) or is_host_nonnumeric(y_pred):
        xp = _npx
        yt, yp = np.asarray(to_numpy(y_true)), np.asarray(to_numpy(y_pred))
        strings = True
    else:
        xp = array_namespace(y_true, y_pred)
        dev = input_device([y_true, y_pred])
        yt, yp = as_1d(y_true, xp, "y_true", dev), as_1d(y_pred, xp, "y_pred", dev)
        strings = False
    if yt.ndim != 1 or yp.ndim != 1:
        raise InvalidInputError(f"y_true and y_pred must be 1-D, got shapes {yt.shape} and {yp.shape}")
    _check_lengths(yt, yp)
    if not strings:
        check_finite_labels(yt, xp, "y_true", True)
        check_finite_labels(yp, xp, "y_pred", True)
    if isinstance(pos_label, np.generic):
        pos_label = pos_label.item()  # strict namespaces accept Python scalars only
    comparable = isinstance(pos_label, (str, bytes)) == strings and (
        strings
        or (isinstance(pos_label, (int, float)) and not (isinstance(pos_label, float) and math.isnan(pos_label)))
    )
    if comparable:
        t, p = yt == pos_label, yp == pos_label
        tp = int(xp.sum(xp.astype(t & p, xp.int64)))
        fp = int(xp.sum(xp.astype(~t & p, xp.int64)))
        fn = int(xp.sum(xp.astype(t & ~p, xp.int64)))
    else:
        tp = fp = fn = 0
    if tp + fp + fn == 0:  # pos_label in neither vector: refused where 2 classes show (sklearn)
        present = np.unique(np.concatenate([np.asarray(to_numpy(yt)).ravel(), np.asarray(to_numpy(yp)).ravel()]))
        if present.size >= 2:
            raise InvalidInputError(
                f"pos_label={pos_label!r} is not a valid label: it occurs in neither y_true nor "
                f"y_pred; labels present: {present.tolist()}"
            )
    tn = int(yt.shape[0]) - tp - fp - fn
    zd = 0.0 if zero_division == "warn" else float(zero_division)

    def ratio(a: int, b: int, what: str) -> float:
        if b == 0:
            if zero_division == "warn":
                warnings.warn(f"{what} is ill-defined (0/0); set to 0.0", UndefinedMetricWarning, stacklevel=3)
            return zd
        return a / b

    prec = ratio(tp, tp + fp, "precision")
    rec = ratio(tp, tp + fn, "recall")
    return {
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "precision": prec,
        "recall": rec,
        "specificity": ratio(tn, tn + fp, "specificity"),
        "f1": ratio(2 * tp, 2 * tp + fp + fn, "F1"),
        "accuracy": (tp + tn) / int(yt.shape[0]),
    }
