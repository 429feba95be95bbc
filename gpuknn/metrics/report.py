"""Per-class reports: scikit-learn's ``classification_report`` and imbalanced-learn's
sensitivity/specificity and geometric mean.

Labels are encoded once and counted with :func:`gpuknn._delegation.bincount` (per class: true
positives, predictions, true samples); everything after that is O(C). ``zero_division``
follows :func:`~gpuknn.metrics.precision_recall_fscore_support`: a value (default ``0.0``,
silent) or ``"warn"`` (0.0 and an :class:`~gpuknn.metrics.UndefinedMetricWarning` where
scikit-learn / imbalanced-learn warn). :func:`geometric_mean_score` has no ``zero_division``
and warns as imbalanced-learn does.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import array_api_compat.numpy as _npx
import numpy as np

from .._backend import array_namespace, check_int, to_numpy
from .._delegation import on_input_device
from .._labels import as_array_input
from ..errors import InvalidInputError
from ._labels import _divide
from .classification import _binary_index, _per_class_counts
from .classification import precision_recall_fscore_support as prfs

__all__ = ["classification_report", "sensitivity_specificity_support", "geometric_mean_score"]

_HEADERS = ["precision", "recall", "f1-score", "support"]


def _n_samples(y: Any) -> int:
    return int(y.shape[0]) if hasattr(y, "shape") else len(y)


def _mean(v: np.ndarray, w: np.ndarray) -> float:
    """Weighted mean of host ``v`` ignoring NaN entries (as precision_recall_fscore_support)."""
    ok = ~np.isnan(v)
    sw = float(np.sum(w[ok]))
    return float(np.sum(v[ok] * w[ok])) / sw if sw > 0 else float("nan")


def _prf(tp: np.ndarray, npred: np.ndarray, ntrue: np.ndarray, zero_division: Any) -> tuple:
    p = _divide(tp, npred, zero_division, _npx, "precision", "predicted")
    r = _divide(tp, ntrue, zero_division, _npx, "recall", "true")
    f = _divide(2 * tp, npred + ntrue, zero_division, _npx, "F-score", "true nor predicted")
    return p, r, f


@on_input_device
def classification_report(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    target_names: Any = None,
    sample_weight: Any = None,
    digits: int = 2,
    output_dict: bool = False,
    zero_division: Any = 0.0,
) -> str | dict:
    """Text (or dict) summary of precision, recall, F1 and support per class and averaged.

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
        Labels of any type (strings on the host).
    labels : array of shape (C,), optional
        Classes to report, in this order (default: the sorted union).
    target_names : sequence of C str, optional
        Row names (default ``str`` of each label). A length other than ``len(labels)`` is an
        error, or a ``UserWarning`` (extra rows dropped) when ``labels`` is given.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight; supports are then the classes' weights (floats,
        as scikit-learn prints them).
    digits : int
        Decimals of the text report.
    output_dict : bool
        Return ``{name: {"precision", "recall", "f1-score", "support"}}`` plus the averages
        (Python floats, supports included, as scikit-learn).
    zero_division : {0.0, 1.0, nan, "warn"}
        See :func:`~gpuknn.metrics.precision_recall_fscore_support`.

    Returns
    -------
    str or dict
        scikit-learn's layout: one row per class, then ``accuracy`` (when every sample's
        labels are among ``labels``; otherwise a ``micro avg`` row), ``macro avg`` and
        ``weighted avg``.

    Complexity O(n + C), one host transfer of the (3, C) counts.

    Examples
    --------
    >>> import numpy as np
    >>> print(classification_report(np.array([0, 1, 1]), np.array([0, 1, 0])))
                  precision    recall  f1-score   support
    <BLANKLINE>
               0       0.50      1.00      0.67         1
               1       1.00      0.50      0.67         2
    <BLANKLINE>
        accuracy                           0.67         3
       macro avg       0.75      0.75      0.67         3
    weighted avg       0.83      0.67      0.67         3
    <BLANKLINE>
    """
    digits = check_int(digits, name="digits", low=0)
    if getattr(as_array_input(y_true), "ndim", np.ndim(y_true)) == 2:  # multilabel indicator matrices
        return _multilabel_report(
            y_true, y_pred, labels, target_names, sample_weight, digits, output_dict, zero_division
        )
    xp, classes, tp, npred, ntrue = _per_class_counts(y_true, y_pred, labels, sample_weight=sample_weight)
    counts = to_numpy(xp.stack([tp, npred, ntrue]))  # the one transfer
    tp, npred, ntrue = (np.asarray(c, dtype=np.float64) for c in counts)
    n = _n_samples(y_true)
    # Whether every sample's labels are among `labels` is a question of counts, not weights.
    seen = (
        (npred, ntrue)
        if sample_weight is None or labels is None
        else (
            np.asarray(c, dtype=np.float64) for c in to_numpy(xp.stack(_per_class_counts(y_true, y_pred, labels)[3:]))
        )
    )
    npred_n, ntrue_n = seen
    names = [str(c) for c in to_numpy(classes).tolist()] if target_names is None else [str(t) for t in target_names]
    if len(names) != tp.shape[0]:
        if labels is None:
            raise InvalidInputError(
                f"target_names has {len(names)} names but there are {tp.shape[0]} classes; give labels"
            )
        warnings.warn(
            f"labels size, {tp.shape[0]}, does not match size of target_names, {len(names)}", UserWarning, stacklevel=2
        )
    # micro average is the accuracy when every sample's labels are among `labels`
    micro_is_accuracy = labels is None or (ntrue_n.sum() == n and npred_n.sum() == n)
    p, r, f = _prf(tp, npred, ntrue, zero_division)
    support = ntrue.astype(np.int64) if sample_weight is None else ntrue
    rows = list(zip(names, p.tolist(), r.tolist(), f.tolist(), support.tolist()))
    mp, mr, mf = _prf(*(np.asarray([v.sum()]) for v in (tp, npred, ntrue)), zero_division)
    ones = np.ones_like(tp)
    wts = ntrue if ntrue.sum() > 0 else ones
    total = int(support.sum()) if sample_weight is None else float(support.sum())
    averages = [
        ("accuracy" if micro_is_accuracy else "micro avg", [float(mp[0]), float(mr[0]), float(mf[0]), total]),
        ("macro avg", [_mean(p, ones), _mean(r, ones), _mean(f, ones), total]),
        ("weighted avg", [_mean(p, wts), _mean(r, wts), _mean(f, wts), total]),
    ]
    if output_dict:
        out: dict = {nm: dict(zip(_HEADERS, map(float, vals))) for nm, *vals in rows}
        for heading, vals in averages:
            out[heading] = dict(zip(_HEADERS, map(float, vals)))
        if "accuracy" in out:
            out["accuracy"] = out["accuracy"]["precision"]
        return out
    return _layout(names, rows, averages, digits)


def _layout(names: list, rows: list, averages: list, digits: int) -> str:
    """scikit-learn's text layout of the per-class ``rows`` and the ``averages``."""
    width = max(max((len(nm) for nm in names), default=0), len("weighted avg"), digits)
    report = ("{:>{width}s} " + " {:>9}" * 4).format("", *_HEADERS, width=width) + "\n\n"
    row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
    for row in rows:
        report += row_fmt.format(*row, width=width, digits=digits)
    report += "\n"
    for heading, vals in averages:
        if heading == "accuracy":
            fmt = "{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f}" + " {:>9}\n"
            report += fmt.format(heading, "", "", *vals[2:], width=width, digits=digits)
        else:
            report += row_fmt.format(heading, *vals, width=width, digits=digits)
    return report


def _multilabel_report(
    y_true: Any,
    y_pred: Any,
    labels: Any,
    target_names: Any,
    sample_weight: Any,
    digits: int,
    output_dict: bool,
    zero_division: Any,
) -> str | dict:
    """classification_report of multilabel 0/1 indicator matrices: a row per label (column),
    then the micro, macro, weighted and samples averages, as scikit-learn."""
    kw = {"labels": labels, "sample_weight": sample_weight, "zero_division": zero_division}
    p, r, f, sup = (np.asarray(to_numpy(v), dtype=np.float64) for v in prfs(y_true, y_pred, average=None, **kw))
    cols = (
        list(range(int(np.shape(to_numpy(as_array_input(y_true)))[1])))
        if labels is None
        else np.asarray(to_numpy(as_array_input(labels)) if hasattr(labels, "shape") else labels).tolist()
    )
    names = [str(c) for c in cols] if target_names is None else [str(t) for t in target_names]
    if len(names) != len(cols):
        if labels is None:
            raise InvalidInputError(
                f"target_names has {len(names)} names but there are {len(cols)} labels; give labels"
            )
        warnings.warn(
            f"labels size, {len(cols)}, does not match size of target_names, {len(names)}", UserWarning, stacklevel=3
        )
    support = sup.astype(np.int64) if sample_weight is None else sup
    rows = list(zip(names, p.tolist(), r.tolist(), f.tolist(), support.tolist()))
    total = int(support.sum()) if sample_weight is None else float(support.sum())
    averages = [
        (f"{avg} avg", [*(float(v) for v in prfs(y_true, y_pred, average=avg, **kw)[:3]), total])
        for avg in ("micro", "macro", "weighted", "samples")
    ]
    if output_dict:
        out: dict = {nm: dict(zip(_HEADERS, map(float, vals))) for nm, *vals in rows}
        for heading, vals in averages:
            out[heading] = dict(zip(_HEADERS, map(float, vals)))
        return out
    return _layout(names, rows, averages, digits)


def _check_average(average: Any, allowed: tuple) -> None:
    if average not in allowed:
        raise InvalidInputError(f"average must be one of {allowed}, got {average!r}")


@on_input_device
def sensitivity_specificity_support(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = None,
    warn_for: Any = ("sensitivity", "specificity"),
    sample_weight: Any = None,
    zero_division: Any = 0.0,
) -> tuple[Any, Any, Any]:
    """Sensitivity (recall, ``tp / (tp + fn)``), specificity (``tn / (tn + fp)``) and support
    per class, one class against the rest (imbalanced-learn's definitions).

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
    labels : array of shape (C,), optional
        Classes to report and average over (default the sorted union); ``tn`` counts every
        sample, including those of other labels. Ignored for ``average="binary"``.
    pos_label : label
        The positive class for ``average="binary"``.
    average : {None, "binary", "micro", "macro", "weighted"}
        ``micro`` pools tp, fp, fn and tn over the classes; ``weighted`` weights by support.
    warn_for : collection of {"sensitivity", "specificity"}
        Which undefined ratios warn when ``zero_division="warn"``.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight in tp, fp, fn (supports are then float weights); tn
        is the number of samples less those, as imbalanced-learn 0.14 computes it.
    zero_division : {0.0, 1.0, nan, "warn"}
        Value of an undefined ratio (imbalanced-learn's behaviour is ``"warn"``).

    Returns
    -------
    sensitivity, specificity, support
        float64 arrays of shape (C,) and an int64 array of shape (C,) in the labels'
        namespace for ``average=None``; floats and ``None`` otherwise (``0.0, 0.0, 0`` for
        ``binary`` when only the negative class occurs).

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> sen, spe, sup = sensitivity_specificity_support(np.array([0, 1, 1, 2]), np.array([0, 1, 2, 2]))
    >>> sen.tolist(), spe.tolist(), sup.tolist()
    ([1.0, 0.5, 1.0], [1.0, 1.0, 0.6666666666666666], [1, 2, 1])
    """
    _check_average(average, (None, "binary", "micro", "macro", "weighted"))
    if isinstance(pos_label, np.generic):
        pos_label = pos_label.item()
    if average != "binary" and not (pos_label is None or (isinstance(pos_label, (int, float)) and pos_label == 1)):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got "
            f"{average!r}). You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
            stacklevel=3,
        )
    xp, classes, tp, npred, ntrue = _per_class_counts(
        y_true, y_pred, None if average == "binary" else labels, sample_weight=sample_weight
    )
    # tn = n - (fp + fn + tp), n the number of samples even with weights (imbalanced-learn's rule)
    n = _n_samples(y_true)
    if average == "binary":
        i = _binary_index(xp, classes, pos_label, (npred + ntrue) > 0)
        if i < 0:
            return 0.0, 0.0, 0
        tp, npred, ntrue = tp[i : i + 1], npred[i : i + 1], ntrue[i : i + 1]
    tn = n - (npred + ntrue - tp)
    if average == "micro":
        tp, npred, ntrue, tn = (xp.reshape(xp.sum(v), (1,)) for v in (tp, npred, ntrue, tn))

    def zd(metric: str) -> Any:
        return zero_division if zero_division != "warn" or metric in warn_for else 0.0

    spe = _divide(tn, tn + npred - tp, zd("specificity"), xp, "specificity")
    sen = _divide(tp, ntrue, zd("sensitivity"), xp, "sensitivity")
    if average is None:
        return sen, spe, (xp.astype(ntrue, xp.int64) if sample_weight is None else ntrue)
    host = to_numpy(xp.stack([sen, spe, ntrue]))  # one transfer of (3, C)
    w = np.ones_like(host[2])
    if average == "weighted":
        if host[2].sum() == 0:
            return 0.0, 0.0, None
        w = host[2]
    return _mean(host[0], w), _mean(host[1], w), None


@on_input_device
def geometric_mean_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "multiclass",
    sample_weight: Any = None,
    correction: float = 0.0,
) -> Any:
    """Geometric mean of per-class recalls (imbalanced-learn's ``geometric_mean_score``).

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,)
    labels : array of shape (C,), optional
        Classes to include (default the sorted union).
    pos_label : label
        The positive class for ``average="binary"``.
    average : {"multiclass", None, "binary", "micro", "macro", "weighted"}
        ``multiclass``: the C-th root of the product of the recalls of the classes, a class
        without true samples counting 0 (with an UndefinedMetricWarning). Otherwise
        ``sqrt(sensitivity * specificity)`` of :func:`sensitivity_specificity_support` with
        that average (an UndefinedMetricWarning where a specificity is 0/0).
    sample_weight : array of shape (n,), optional
        Each sample counts its weight.
    correction : float
        ``multiclass`` only: replaces a zero recall, so that one missed class does not zero
        the score.

    Returns
    -------
    float, or a float64 array of shape (C,) in the labels' namespace for ``average=None``.

    Complexity O(n + C).

    Examples
    --------
    >>> import numpy as np
    >>> y, p = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 0, 1, 2, 2, 2])
    >>> round(geometric_mean_score(y, p), 4)
    0.7937
    """
    _check_average(average, ("multiclass", None, "binary", "micro", "macro", "weighted"))
    if not (isinstance(correction, (int, float)) and correction >= 0):
        raise InvalidInputError(f"correction must be a number >= 0, got {correction!r}")
    if average != "multiclass":
        sen, spe, _ = sensitivity_specificity_support(
            y_true,
            y_pred,
            labels=labels,
            pos_label=pos_label,
            average=average,
            warn_for=("specificity",),
            sample_weight=sample_weight,
            zero_division="warn",
        )
        if average is None:
            return array_namespace(sen).sqrt(sen * spe)
        return math.sqrt(sen * spe)
    xp, _, tp, _, ntrue = _per_class_counts(y_true, y_pred, labels, sample_weight=sample_weight)
    recall = _divide(tp, ntrue, "warn", xp, "recall", "true")
    recall = xp.where(recall == 0, xp.full_like(recall, float(correction)), recall)
    zero = xp.any(recall == 0)
    logs = xp.log(xp.where(recall > 0, recall, xp.ones_like(recall)))
    host = to_numpy(xp.stack([xp.astype(zero, xp.float64), xp.mean(logs)]))
    return 0.0 if host[0] else float(math.exp(host[1]))
