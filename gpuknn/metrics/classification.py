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
from .._delegation import on_input_device
from .._labels import as_1d, as_array_input, check_finite_labels, check_label_types, encode, is_host_nonnumeric
from ..errors import InvalidInputError
from ._labels import UndefinedMetricWarning, _check_lengths, _check_weights, _counts2d, _divide, _wcount

__all__ = [
    "UndefinedMetricWarning",
    "accuracy_score",
    "confusion_matrix",
    "precision_recall_fscore_support",
    "f1_score",
    "fbeta_score",
    "precision_score",
    "recall_score",
    "balanced_accuracy_score",
    "positive_class_report",
]


@on_input_device
def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> Any:
    """Fraction (or number) of correct predictions.

    Parameters
    ----------
    y_true : array of shape (n,)
    y_pred : array of shape (n,) or (m, n)
        A 2-D ``y_pred`` scores ``m`` predictions at once (e.g. one row per ``k`` from
        :func:`gpuknn.votes_for_many_k`) and returns an array of shape (m,). With a 2-D
        ``y_true`` (a multilabel 0/1 indicator matrix (n, L)) ``y_pred`` must be of the same
        shape and a sample is correct when its whole row is (subset accuracy).
    normalize : bool
        ``False`` returns the number (or total weight) of correct predictions.
    sample_weight : array of shape (n,), optional
        Weight of each sample: the accuracy is the weighted mean of the correct samples.

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
    y_true, y_pred = as_array_input(y_true), as_array_input(y_pred)
    check_label_types(y_true, y_pred, names=("y_true", "y_pred"))
    if is_host_nonnumeric(y_true) or is_host_nonnumeric(y_pred):
        yt, yp = np.asarray(to_numpy(y_true)), np.asarray(to_numpy(y_pred))
        xp = _npx
    else:
        xp = array_namespace(y_true, y_pred)
        dev = input_device([y_true, y_pred])
        yt, yp = (
            from_numpy(np.asarray(y), xp, device=dev) if isinstance(y, (list, tuple)) else y for y in (y_true, y_pred)
        )
    if yt.ndim == 2:  # multilabel indicator: subset accuracy
        if tuple(yp.shape) != tuple(yt.shape):
            raise InvalidInputError(
                f"a 2-D (multilabel) y_true needs y_pred of the same shape, got {tuple(yt.shape)} and {tuple(yp.shape)}"
            )
        _check_multilabel(yt, xp, "y_true")
        _check_multilabel(yp, xp, "y_pred")
        correct = xp.all(yt == yp, axis=1)
        yp = yp[:, 0]
    elif yt.ndim != 1 or yp.ndim not in (1, 2):
        raise InvalidInputError(f"y_true must be 1-D and y_pred 1-D or 2-D, got {yt.shape} and {yp.shape}")
    else:
        if xp is not _npx or yt.dtype.kind in "biuf":
            check_finite_labels(yt, xp, "y_true", True)
            check_finite_labels(xp.reshape(yp, (-1,)), xp, "y_pred", True)
        _check_lengths(yt, yp.T if yp.ndim == 2 else yp)
        correct = yp == (yt[None, :] if yp.ndim == 2 else yt)
    if sample_weight is not None:
        w = _check_weights(sample_weight, int(yt.shape[0]), xp, _device(correct))
        n_ok = xp.sum(xp.where(correct, w, xp.zeros_like(w)), axis=-1)
        total = float(xp.sum(w))
        if yp.ndim == 2:
            return n_ok / total if normalize else n_ok
        return float(n_ok) / total if normalize else float(n_ok)
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
def confusion_matrix(
    y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None, normalize: str | None = None
) -> Any:
    """Confusion matrix ``C[i, j]`` = number of samples of class ``i`` predicted as ``j``.

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
    labels : array of shape (C,), optional
        Classes and their order; default the sorted union of both vectors. Samples whose
        true or predicted label is not in ``labels`` are not counted; at least one of
        ``labels`` must occur in ``y_true``.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight (the matrix is float64 unless the weights are integers).
    normalize : {None, "true", "pred", "all"}
        Divide by row sums, column sums or the total (empty rows/columns give 0).

    Returns
    -------
    C : int64 array (float64 when normalised or weighted) of shape (C, C), in the labels'
        namespace (NumPy for string labels). A (1, 1) matrix (a single label, and no
        ``labels``) comes with scikit-learn's ``UserWarning``.

    Complexity O(n + C²).

    Examples
    --------
    >>> import numpy as np
    >>> confusion_matrix(np.array([0, 1, 1]), np.array([0, 1, 0])).tolist()
    [[1, 0], [1, 1]]
    """
    if normalize not in (None, "true", "pred", "all"):
        raise InvalidInputError(f"normalize must be None, 'true', 'pred' or 'all', got {normalize!r}")
    xp, classes, (t, p) = encode(y_true, y_pred, labels=labels, names=("y_true", "y_pred"), discrete=True)
    _check_lengths(t, p)
    if labels is not None and not bool(xp.any(t >= 0)):
        raise InvalidInputError(f"At least one label specified must be in y_true: labels={to_numpy(classes).tolist()}")
    C = int(classes.shape[0])
    w = _check_weights(sample_weight, int(t.shape[0]), xp, _device(t))
    if w is not None and _integer_weights(sample_weight):
        cm = _integer_counts2d(t, p, C, sample_weight, xp)  # scikit-learn keeps integer weights integer
    else:
        cm = _counts2d(t, p, C, C, xp, w)
    if C == 1:
        warnings.warn(
            "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have "
            "the correct shape, use the 'labels' parameter to pass all known labels.",
            UserWarning,
            stacklevel=3,
        )
    if normalize is None:
        return cm
    cmf = xp.astype(cm, xp.float64)
    if normalize == "all":
        den = xp.sum(cmf) * xp.ones_like(cmf)
    elif normalize == "true":
        den = xp.sum(cmf, axis=1, keepdims=True) * xp.ones_like(cmf)
    else:
        den = xp.sum(cmf, axis=0, keepdims=True) * xp.ones_like(cmf)
    return _divide(cmf, den, 0.0, xp, "normalised confusion matrix")


def _integer_weights(sample_weight: Any) -> bool:
    """Whether the user's weights are integers (or booleans): scikit-learn's integer counts."""
    w = as_array_input(sample_weight)
    if isinstance(w, (list, tuple, int, float)):
        w = np.asarray(w)
    return array_namespace(w).isdtype(w.dtype, ("integral", "bool"))


def _integer_counts2d(t: Any, p: Any, C: int, sample_weight: Any, xp: Any) -> Any:
    """(C, C) int64 sums of integer ``sample_weight`` per (true, predicted) code pair (``-1``
    codes not counted), exact where float64 sums would round (weights above 2**53) and
    wrapping on int64 overflow as scikit-learn's: differences of one int64 cumulative sum
    over the samples sorted by cell."""
    dev = _device(t)
    w = as_array_input(sample_weight)
    w = np.asarray(w) if isinstance(w, (list, tuple, int, float)) else w
    if array_namespace(w) is not xp or _device(w) != dev:
        w = from_numpy(np.asarray(to_numpy(w)).astype(np.int64), xp, device=dev)
    w = xp.broadcast_to(xp.astype(w, xp.int64), (int(t.shape[0]),))
    keep = (t >= 0) & (p >= 0)
    cell = xp.astype(t[keep] * C + p[keep], xp.int64)
    order = xp.argsort(cell, stable=True)
    cell, ws = xp.take(cell, order), xp.take(w[keep], order)
    prefix = xp.concat([xp.zeros(1, dtype=xp.int64, device=dev), xp.cumulative_sum(ws)])
    cells = xp.arange(C * C, dtype=xp.int64, device=dev)
    lo, hi = xp.searchsorted(cell, cells, side="left"), xp.searchsorted(cell, cells, side="right")
    return xp.reshape(xp.take(prefix, hi) - xp.take(prefix, lo), (C, C))


def _check_multilabel(y: Any, xp: Any, name: str) -> None:
    """A 2-D label array must be a 0/1 indicator matrix (scikit-learn's multilabel-indicator)."""
    if not bool(xp.all((y == 0) | (y == 1))):
        raise InvalidInputError(f"a 2-D {name} must be a multilabel 0/1 indicator matrix")


def _per_class_counts(
    y_true: Any, y_pred: Any, labels: Any, discrete: bool = False, sample_weight: Any = None
) -> tuple[Any, Any, Any, Any, Any]:
    """(xp, classes, tp, n_pred, n_true) per class as float64 arrays (``discrete``: refuse
    non-integer float labels, as the scores of this module do); with ``sample_weight`` the
    sums of the samples' weights."""
    xp, classes, (t, p) = encode(y_true, y_pred, labels=labels, names=("y_true", "y_pred"), discrete=discrete)
    _check_lengths(t, p)
    C = int(classes.shape[0])
    w = _check_weights(sample_weight, int(t.shape[0]), xp, _device(t))
    hit = xp.where(t == p, t, xp.full_like(t, -1))
    return xp, classes, _wcount(hit, C, w, xp), _wcount(p, C, w, xp), _wcount(t, C, w, xp)


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


def _multilabel_counts(y_true: Any, y_pred: Any, labels: Any, samplewise: bool, sample_weight: Any) -> tuple:
    """(xp, tp, n_pred, n_true) of multilabel 0/1 indicator matrices (n, L): per label
    (columns ``labels``, default all), or per sample for ``samplewise``; float64, weighted."""
    y_true, y_pred = as_array_input(y_true), as_array_input(y_pred)
    xp = array_namespace(y_true, y_pred)
    dev = input_device([y_true, y_pred])
    yt, yp = (from_numpy(np.asarray(y), xp, device=dev) if not hasattr(y, "shape") else y for y in (y_true, y_pred))
    if yp.ndim != 2 or tuple(yt.shape) != tuple(yp.shape):
        raise InvalidInputError(
            f"a 2-D (multilabel) y_true needs y_pred of the same shape, got {tuple(yt.shape)} and {tuple(yp.shape)}"
        )
    _check_multilabel(yt, xp, "y_true")
    _check_multilabel(yp, xp, "y_pred")
    yt, yp = xp.astype(yt, xp.float64), xp.astype(yp, xp.float64)
    n, L = int(yt.shape[0]), int(yt.shape[1])
    if n == 0:
        raise InvalidInputError("y_true and y_pred are empty")
    if labels is not None:
        cols = np.asarray(to_numpy(as_array_input(labels))).astype(np.int64).reshape(-1)
        if cols.size and (cols.max() >= L or cols.min() < 0):
            raise InvalidInputError(f"All labels must be in [0, n labels) for multilabel targets, got {cols.tolist()}")
        idx = from_numpy(cols, xp, device=_device(yt))
        yt, yp = xp.take(yt, idx, axis=1), xp.take(yp, idx, axis=1)
    w = _check_weights(sample_weight, n, xp, _device(yt))
    hit = yt * yp
    if w is not None and not samplewise:  # per label: each sample counts its weight
        hit, yp, yt = hit * w[:, None], yp * w[:, None], yt * w[:, None]
    axis = 1 if samplewise else 0  # per sample: the weights weight the samples' scores
    return xp, xp.sum(hit, axis=axis), xp.sum(yp, axis=axis), xp.sum(yt, axis=axis)


def _nanaverage(v: Any, w: Any, xp: Any) -> float:
    """Weighted mean of ``v`` ignoring its NaN entries (scikit-learn's ``_nanaverage``)."""
    if int(v.shape[0]) == 0:
        return float("nan")
    ok = ~xp.isnan(v)
    wv = xp.where(ok, w, xp.zeros_like(w))
    sw = float(xp.sum(wv))
    if sw == 0:
        return float("nan") if not bool(xp.any(ok)) else float(xp.mean(v[ok]))
    return float(xp.sum(xp.where(ok, v, xp.zeros_like(v)) * wv)) / sw


@on_input_device
def precision_recall_fscore_support(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float = 1.0,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = None,
    warn_for: Any = ("precision", "recall", "f-score"),
    sample_weight: Any = None,
    zero_division: Any = 0.0,
) -> tuple[Any, Any, Any, Any]:
    """Precision, recall, F-beta and support per class or averaged (scikit-learn semantics).

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,), or multilabel 0/1 indicator matrices (n, L)
    beta : float
        Weight of recall in the F-score.
    labels : array of shape (C,), optional
        Classes to report and average over (default: sorted union of both vectors); for
        multilabel input the column indices.
    pos_label : label
        The positive class for ``average="binary"``; another value than 1 with another
        ``average`` is ignored with scikit-learn's ``UserWarning``.
    average : {None, "binary", "micro", "macro", "weighted", "samples"}
        ``None`` gives per-class arrays; ``micro`` pools the counts, ``macro`` is the plain
        mean over classes, ``weighted`` weights by support (true counts), ``samples``
        (multilabel only) the mean of the per-sample scores.
    warn_for : collection of {"precision", "recall", "f-score"}
        Which undefined ratios warn when ``zero_division="warn"``.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight.
    zero_division : {0.0, 1.0, nan, "warn"}
        Value of an undefined ratio. F is ``zero_division`` only when tp = fp = fn = 0,
        and 0 when precision and recall are both 0.

    Returns
    -------
    precision, recall, fbeta, support
        float64 arrays of shape (C,) (support int64, float64 when weighted) for
        ``average=None``; floats and ``support=None`` otherwise.

    Complexity O(n + C) (O(n L) multilabel).

    Examples
    --------
    >>> import numpy as np
    >>> p, r, f, s = precision_recall_fscore_support(np.array([0, 1, 1]), np.array([0, 1, 0]))
    >>> p.tolist(), s.tolist()
    ([0.5, 1.0], [1, 2])
    """
    if average not in (None, "binary", "micro", "macro", "weighted", "samples"):
        raise InvalidInputError(
            f"average has to be one of (None, 'micro', 'macro', 'weighted', 'samples') or 'binary', got {average!r}"
        )
    if beta < 0:
        raise InvalidInputError(f"beta must be >= 0, got {beta}")
    y_true, y_pred = as_array_input(y_true), as_array_input(y_pred)
    multilabel = getattr(y_true, "ndim", np.ndim(y_true)) == 2
    if average not in ("binary", None) and isinstance(pos_label, np.generic):
        pos_label = pos_label.item()
    if average != "binary" and not (pos_label is None or (isinstance(pos_label, (int, float)) and pos_label == 1)):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got "
            f"{average!r}). You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
            stacklevel=3,
        )
    if multilabel:
        if average == "binary":
            raise InvalidInputError(
                "Target is multilabel-indicator but average='binary'. Please choose another average "
                "setting, one of [None, 'micro', 'macro', 'weighted', 'samples']."
            )
        xp, tp, n_pred, n_true = _multilabel_counts(y_true, y_pred, labels, average == "samples", sample_weight)
    else:
        if average == "samples":
            raise InvalidInputError(
                "Samplewise metrics are not available outside of multilabel classification: "
                "average='samples' needs 2-D indicator y_true and y_pred"
            )
        xp, classes, tp, n_pred, n_true = _per_class_counts(
            y_true, y_pred, labels, discrete=True, sample_weight=sample_weight
        )
    if average == "binary":
        present = (n_pred + n_true) > 0
        i = _binary_index(xp, classes, pos_label, present)
        if i < 0:
            tp = n_pred = n_true = xp.zeros(1, dtype=xp.float64, device=_device(tp))
        else:
            tp, n_pred, n_true = tp[i : i + 1], n_pred[i : i + 1], n_true[i : i + 1]
    if average == "micro":
        tp, n_pred, n_true = (xp.reshape(xp.sum(v), (1,)) for v in (tp, n_pred, n_true))
    warn_for = tuple(warn_for)

    def zd(metric: str) -> Any:
        return zero_division if zero_division != "warn" or metric in warn_for else 0.0

    b2 = float(beta) ** 2
    by_sample = average == "samples"
    precision = _divide(tp, n_pred, zd("precision"), xp, "precision", "predicted", by_sample)
    recall = _divide(tp, n_true, zd("recall"), xp, "recall", "true", by_sample)
    if math.isinf(b2):  # the limit beta -> inf is recall (inf * 0 would make it NaN)
        fscore = recall
    else:
        f_den = (1 + b2) * tp + b2 * (n_true - tp) + (n_pred - tp)
        fscore = _divide((1 + b2) * tp, f_den, zd("f-score"), xp, "F-score", "true nor predicted", by_sample)
    if average is None:
        support = n_true if sample_weight is not None else xp.astype(n_true, xp.int64)
        return precision, recall, fscore, support
    if average == "weighted":
        # all-zero support (only unseen ``labels``): plain mean, like scikit-learn
        w = n_true if float(xp.sum(n_true)) > 0 else xp.ones_like(tp)
    elif average == "samples" and sample_weight is not None:
        w = _check_weights(sample_weight, int(tp.shape[0]), xp, _device(tp))
    else:
        w = xp.ones_like(tp)
    return (*(_nanaverage(v, w, xp) for v in (precision, recall, fscore)), None)


def _score(which: int, y_true: Any, y_pred: Any, **kwargs: Any) -> Any:
    return precision_recall_fscore_support(y_true, y_pred, **kwargs)[which]


@on_input_device
def fbeta_score(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = 0.0,
) -> Any:
    """F-beta score, the weighted harmonic mean of precision and recall (recall ``beta``
    times as important); see :func:`precision_recall_fscore_support`.

    Returns a float for an ``average``, a float64 array of shape (C,) for ``average=None``.
    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> round(fbeta_score(np.array([0, 1, 1]), np.array([0, 1, 0]), beta=2.0), 4)
    0.5556
    """
    return _score(
        2, y_true, y_pred, beta=beta, labels=labels, pos_label=pos_label, average=average,
        warn_for=("f-score",), sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


@on_input_device
def f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
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
    return _score(
        2, y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("f-score",), sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


@on_input_device
def precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = 0.0,
) -> Any:
    """Precision ``tp / (tp + fp)``; see :func:`precision_recall_fscore_support`.

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> precision_score(np.array([0, 1, 1]), np.array([0, 1, 0]))
    1.0
    """
    return _score(
        0, y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("precision",), sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


@on_input_device
def recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = 0.0,
) -> Any:
    """Recall ``tp / (tp + fn)``; see :func:`precision_recall_fscore_support`.

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> recall_score(np.array([0, 1, 1]), np.array([0, 1, 0]))
    0.5
    """
    return _score(
        1, y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("recall",), sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


@on_input_device
def balanced_accuracy_score(y_true: Any, y_pred: Any, *, sample_weight: Any = None, adjusted: bool = False) -> float:
    """Mean recall over the classes present in ``y_true``.

    Classes that occur only in ``y_pred`` have no recall and are left out, with
    scikit-learn's ``UserWarning`` "y_pred contains classes not in y_true".
    ``sample_weight`` weights each sample in the recalls. ``adjusted=True`` rescales so
    that chance level is 0:
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
    xp, _, tp, _, n_true = _per_class_counts(y_true, y_pred, None, discrete=True, sample_weight=sample_weight)
    present = n_true > 0
    C = int(xp.sum(xp.astype(present, xp.int64)))
    if C < int(n_true.shape[0]):
        warnings.warn("y_pred contains classes not in y_true", UserWarning, stacklevel=3)
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
