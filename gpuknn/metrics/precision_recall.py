"""Precision-recall curve and average precision (scikit-learn 1.9 definitions).

Scores are sorted on the device (stable, descending); true positives come from one
cumulative sum and each run of tied scores is a single threshold. Average precision is the
step integral ``sum_k (R_k - R_{k-1}) P_k`` over thresholds, i.e. each positive sample
contributes the precision at the end of its run of ties, divided by the positives: for
several columns (multilabel / one-vs-rest) all columns are sorted and summed at once,
without a loop over columns or thresholds.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy
from .._backend import device_of as _device
from .._delegation import on_input_device
from .._labels import encode, is_host_nonnumeric
from ..errors import InvalidInputError
from ._labels import UndefinedMetricWarning, _binary_pos_label, _check_weights
from .ranking import _roc_counts

__all__ = ["precision_recall_curve", "average_precision_score"]


def _scores(y_score: Any, y_true: Any) -> tuple[Any, Any]:
    """(xp, y_score as a finite floating array of its namespace, or of y_true's for host input)."""
    if isinstance(y_score, (list, tuple)) or not hasattr(y_score, "shape"):
        base = y_true if hasattr(y_true, "shape") and not is_host_nonnumeric(y_true) else None
        xp = array_namespace(base)
        s = from_numpy(np.asarray(y_score, dtype=np.float64), xp, device=None if base is None else _device(base))
    else:
        s = y_score
        xp = (
            array_namespace(s)
            if is_host_nonnumeric(y_true) or not hasattr(y_true, "shape")
            else array_namespace(s, y_true)
        )
    if not xp.isdtype(s.dtype, "real floating"):
        s = xp.astype(s, xp.float64)
    if s.ndim not in (1, 2):
        raise InvalidInputError(f"y_score must be 1-D or 2-D, got shape {tuple(s.shape)}")
    if not bool(xp.all(xp.isfinite(s))):
        raise InvalidInputError("y_score contains NaN or infinity")
    return xp, s


def _to(a: Any, xp: Any, dev: Any) -> Any:
    """Host-made arrays (string labels) moved to ``xp`` on ``dev``."""
    if array_namespace(a) is not xp or _device(a) != dev:
        a = from_numpy(to_numpy(a), xp, device=dev)
    return a


def _positive(y_true: Any, pos_label: Any, xp: Any, dev: Any) -> Any:
    """y_true == pos_label as float64 of ``xp`` (pos_label None: y_true must be {0, 1} / {-1, 1},
    see :func:`._labels._binary_pos_label`)."""
    if is_host_nonnumeric(y_true) or isinstance(y_true, (list, tuple)):
        y = np.asarray(to_numpy(y_true))
        yx = None
    else:
        y, yx = y_true, array_namespace(y_true)
    if y.ndim != 1:
        raise InvalidInputError(f"y_true must be 1-D, got shape {tuple(y.shape)}")
    # a Python scalar comes back: strict namespaces accept no NumPy scalar
    pos_label = _binary_pos_label(to_numpy(yx.unique_values(y)) if yx is not None else np.unique(y), pos_label)
    if yx is None:
        return _to((y == pos_label).astype(np.float64), xp, dev)
    return _to(xp.astype(y == pos_label, xp.float64), xp, dev)


@on_input_device
def precision_recall_curve(
    y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None, drop_intermediate: bool = False
) -> tuple[Any, Any, Any]:
    """Precision and recall of ``score >= threshold`` for every distinct score.

    Parameters
    ----------
    y_true : array of shape (n,)
        Labels; ``{0, 1}`` or ``{-1, 1}`` unless ``pos_label`` is given (then any labels, the
        others being negative).
    y_score : array of shape (n,)
        Higher = more positive.
    pos_label : label, optional
    sample_weight : array of shape (n,), optional
        Each sample counts its weight; zero-weight samples make no threshold (scikit-learn).
    drop_intermediate : bool
        Drop thresholds whose true-positive count equals both neighbours' (the points in
        the middle of a vertical run of the curve).

    Returns
    -------
    precision, recall : float64 arrays of shape (T + 1,)
        By increasing threshold, ending with precision 1 and recall 0. Without positives
        recall is 1 everywhere, with an UndefinedMetricWarning (scikit-learn: ``UserWarning``,
        of which it is a subclass).
    thresholds : array of shape (T,)
        The distinct scores, increasing.

    Complexity O(n log n): one sort, one cumulative sum, 2 host syncs.

    Examples
    --------
    >>> import numpy as np
    >>> p, r, t = precision_recall_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    >>> p.tolist(), r.tolist(), t.tolist()
    ([0.5, 0.6666666666666666, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0], [0.1, 0.35, 0.4, 0.8])
    """
    xp, s = _scores(y_score, y_true)
    dev = _device(s)
    if s.ndim != 1:
        raise InvalidInputError(f"y_score must be 1-D, got shape {tuple(s.shape)}")
    y = _positive(y_true, pos_label, xp, dev)
    if y.shape[0] != s.shape[0] or s.shape[0] == 0:
        raise InvalidInputError(
            f"y_true and y_score must be non-empty and of equal length, got {y.shape[0]} and {s.shape[0]}"
        )
    w = _check_weights(sample_weight, int(s.shape[0]), xp, dev)
    fps, tps, thr = _roc_counts(y, s, xp, w)
    if drop_intermediate and int(tps.shape[0]) > 2:
        true = xp.ones(1, dtype=xp.bool, device=dev)
        keep = xp.concat([true, (tps[1:-1] != tps[:-2]) | (tps[2:] != tps[1:-1]), true])
        idx = xp.nonzero(keep)[0]
        fps, tps, thr = xp.take(fps, idx), xp.take(tps, idx), xp.take(thr, idx)
    above = tps + fps  # (the weight of) the samples at or above the threshold: > 0 but for weights
    precision = xp.where(above != 0, tps / xp.where(above != 0, above, xp.ones_like(above)), xp.zeros_like(above))
    P = float(tps[-1])
    if P == 0:
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        recall = xp.ones_like(tps)
    else:
        recall = tps / P
    one = xp.ones(1, dtype=precision.dtype, device=dev)
    return (xp.concat([xp.flip(precision), one]), xp.concat([xp.flip(recall), xp.zeros_like(one)]), xp.flip(thr))


def _column_ap(Y: Any, S: Any, xp: Any, w: Any = None) -> tuple[Any, Any]:
    """(AP per column, positives per column) of 0/1 ``Y`` and scores ``S`` of shape (n, L),
    with row weights ``w`` (n,) if given (then "positives" is their weight)."""
    if w is not None:  # zero-weight rows make no threshold (scikit-learn drops them first)
        keep = xp.nonzero(w != 0)[0]
        Y, S, w = xp.take(Y, keep, axis=0), xp.take(S, keep, axis=0), xp.take(w, keep)
    n, L = int(S.shape[0]), int(S.shape[1])
    dev = _device(S)
    order = xp.argsort(S, axis=0, descending=True, stable=True)
    ss = xp.take_along_axis(S, order, axis=0)
    ys = xp.take_along_axis(Y, order, axis=0)
    if w is not None:
        ws = xp.reshape(xp.take(w, xp.reshape(order, (-1,))), (n, L))
        ys = ys * ws  # each positive counts its weight
        seen = xp.reshape(xp.cumulative_sum(ws, axis=0).T, (-1,))  # the weight at or above
    tps = xp.cumulative_sum(ys, axis=0)
    last = xp.zeros((1, L), dtype=xp.bool, device=dev)
    # end of a run of ties: the next score differs (or the column ends); flattened column-major
    end = xp.reshape(xp.concat([ss[1:, :] != ss[:-1, :], ~last], axis=0).T, (-1,))
    flat_pos = xp.arange(n * L, dtype=xp.int64, device=dev)
    ends = xp.astype(xp.nonzero(end)[0], xp.int64)
    if w is None:
        prec_end = xp.take(xp.reshape(tps.T, (-1,)), ends) / xp.astype(ends % n + 1, xp.float64)
    else:
        prec_end = xp.take(xp.reshape(tps.T, (-1,)), ends) / xp.take(seen, ends)
    # precision at the end of each sample's run of ties, summed over the positives
    run_end = xp.searchsorted(ends, flat_pos)
    contrib = xp.reshape(xp.take(prec_end, run_end), (L, n)) * ys.T
    n_pos = tps[-1, :]
    total = xp.sum(contrib, axis=1)
    ap = total / xp.where(n_pos > 0, n_pos, xp.ones_like(n_pos))
    return ap, n_pos


@on_input_device
def average_precision_score(
    y_true: Any, y_score: Any, *, average: str | None = "macro", pos_label: Any = 1, sample_weight: Any = None
) -> Any:
    """Average precision: the step integral of the precision-recall curve.

    Parameters
    ----------
    y_true : array of shape (n,) or (n, L)
        Binary labels (1-D, ``pos_label`` positive); multiclass labels (1-D, more than two
        classes: one-vs-rest against the columns of ``y_score``, which are the sorted
        classes); or a 0/1 multilabel indicator matrix (n, L).
    y_score : array of shape (n,) or (n, L)
    average : {"macro", "weighted", "micro", "samples", None}
        Over the columns: plain mean, mean weighted by positives (0.0, without a warning,
        when there are none),
        AP of all columns pooled, mean over rows, or the per-column array.
    pos_label : label
        Binary ``y_true`` only; must be 1 otherwise.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight (``"samples"``: the weights of the per-row scores'
        mean; ``"weighted"``: columns weighted by their positives' weight), as scikit-learn.

    Returns
    -------
    float, or a float64 array of shape (L,) in y_score's namespace for ``average=None``.
    A column without positives scores 0.0 with an UndefinedMetricWarning.

    Complexity O(n L log n): one sort of all columns, one cumulative sum, 2-3 host syncs.

    Examples
    --------
    >>> import numpy as np
    >>> round(average_precision_score(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8])), 4)
    0.8333
    """
    if average not in (None, "micro", "macro", "weighted", "samples"):
        raise InvalidInputError(f"average must be None, 'micro', 'macro', 'weighted' or 'samples', got {average!r}")
    xp, s = _scores(y_score, y_true)
    dev = _device(s)
    ndim = np.ndim(y_true) if not hasattr(y_true, "ndim") else y_true.ndim
    if ndim == 2:  # multilabel indicator
        Y = from_numpy(np.asarray(y_true), xp, device=dev) if isinstance(y_true, (list, tuple)) else y_true
        Y = _to(Y, xp, dev)  # a host-encoded or other-device array: to the scores' device
        if not bool(xp.all((Y == 0) | (Y == 1))):
            raise InvalidInputError(
                "multiclass-multioutput format is not supported: a 2-D y_true must be a 0/1 (multilabel) "
                "indicator matrix"
            )
        if pos_label != 1:
            raise InvalidInputError(f"pos_label is fixed to 1 for a multilabel y_true, got {pos_label!r}")
        Y = xp.astype(Y, xp.float64)
        binary = False
    elif ndim == 1:
        _, classes, (codes,) = encode(y_true, names=("y_true",))
        C = int(classes.shape[0])
        binary = C <= 2
        if binary:
            cls = to_numpy(classes).tolist()
            if C == 2 and pos_label not in cls:
                raise InvalidInputError(f"pos_label={pos_label!r} is not one of the labels {cls}")
            Y = xp.reshape(_positive(y_true, pos_label, xp, dev), (-1, 1))
        else:
            if pos_label != 1:
                raise InvalidInputError(f"pos_label is fixed to 1 for a multiclass y_true, got {pos_label!r}")
            codes = _to(codes, xp, dev)
            Y = xp.astype(codes[:, None] == xp.arange(C, dtype=xp.int64, device=dev)[None, :], xp.float64)
    else:
        raise InvalidInputError(f"y_true must be 1-D or 2-D, got {ndim} dimensions")
    if binary:
        if s.ndim == 2 and int(s.shape[1]) != 1:
            raise InvalidInputError(f"y_true is binary: y_score must be 1-D, got shape {tuple(s.shape)}")
        s = xp.reshape(s, (-1, 1))
    if tuple(s.shape) != tuple(Y.shape):
        raise InvalidInputError(
            f"y_score must be of shape {tuple(Y.shape)} (one column per class), got {tuple(s.shape)}"
        )
    w = _check_weights(sample_weight, int(s.shape[0]), xp, dev)
    row_w = w  # weights of the rows of the scored columns; "samples" averages with them instead
    if binary or average == "micro":
        L = int(Y.shape[1])
        Y, s = xp.reshape(Y, (-1, 1)), xp.reshape(s, (-1, 1))
        if w is not None and L > 1:
            row_w = xp.reshape(xp.broadcast_to(w[:, None], (int(w.shape[0]), L)), (-1,))
    elif average == "samples":
        Y, s, row_w = Y.T, s.T, None
    elif average == "weighted" and float(xp.sum(Y if w is None else Y * w[:, None])) == 0:
        return 0.0  # no positive anywhere: scikit-learn's 0, without a warning
    ap, n_pos = _column_ap(Y, s, xp, row_w)
    if bool(xp.any(n_pos == 0)):
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if binary or average == "micro":
        return float(ap[0])
    if average is None:
        return ap
    if average == "weighted":
        return float(xp.sum(ap * n_pos) / xp.sum(n_pos))
    if average == "samples" and w is not None:
        ap = xp.where(w == 0, xp.zeros_like(ap), ap)  # zero-weight rows' NaN-free 0 (scikit-learn)
        return float(xp.sum(ap * w) / xp.sum(w))
    return float(xp.mean(ap))
