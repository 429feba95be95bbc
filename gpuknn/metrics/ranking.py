"""Scores of rankings: ROC curve, ROC AUC, the ROC convex hull and Borda rank aggregation.

Conventions
-----------
* ``roc_curve`` keeps **every** distinct score as a threshold by default (scikit-learn's
  ``drop_intermediate=False``; scikit-learn's own default is True); the first threshold is
  ``+inf`` (nothing predicted positive). ``det_curve`` is scikit-learn's, on the same counts.
* ``roc_auc_score`` is the trapezoid area under that curve. A run of tied scores is one
  diagonal segment, so a tied positive/negative pair counts ½ and the AUC equals the
  Mann–Whitney ``U / (n1 n0)``.
* ``y_true`` with a single class makes ROC undefined: NaN plus an
  :class:`UndefinedMetricWarning`. NaN or infinite scores raise :class:`InvalidInputError`.
"""

from __future__ import annotations

import warnings
from itertools import combinations
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, input_device, to_numpy
from .._backend import device_of as _device
from .._delegation import on_input_device
from .._labels import as_array_input, encode, is_host_nonnumeric
from ..errors import InvalidInputError
from ._labels import OptionNotImplementedError, UndefinedMetricWarning, _binary_pos_label, _check_weights

__all__ = ["roc_curve", "det_curve", "roc_auc_score", "roc_convex_hull", "borda_rank"]


def _namespace(y_true: Any, y_score: Any) -> Any:
    """The inputs' namespace: the arrays among them (string labels are host data, lists
    join the arrays' namespace); numeric arrays of two namespaces or devices are refused
    with :func:`~gpuknn._backend.array_namespace`'s message, not a library's TypeError."""
    arrays = [a for a in (y_score, y_true) if array_api_obj(a) and not is_host_nonnumeric(a)]
    return array_namespace(*arrays)


def _check_scores(s: Any, xp: Any, ndim: int, name: str = "y_score", device: Any = None) -> Any:
    """``s`` as a finite floating array of ``xp``; host lists go on ``device`` (the other
    inputs' device: the namespace's default may be another one, e.g. the CPU for torch)."""
    s = as_array_input(s)
    if isinstance(s, (list, tuple)):
        s = from_numpy(np.asarray(s, dtype=np.float64), xp, device=device)
    if s.ndim != ndim:
        raise InvalidInputError(f"{name} must be {ndim}-D, got shape {tuple(s.shape)}")
    if not xp.isdtype(s.dtype, "real floating"):
        s = xp.astype(s, xp.float64)
    if not bool(xp.all(xp.isfinite(s))):
        raise InvalidInputError(f"{name} contains NaN or infinity")
    return s


def _binary_target(y_true: Any, pos_label: Any, xp: Any, device: Any = None) -> Any:
    """y_true as a float64 0/1 vector of ``xp`` (1 = positive, see :func:`._labels._binary_pos_label`);
    host labels go on ``device`` (the scores' device)."""
    y_true = as_array_input(y_true)
    if is_host_nonnumeric(y_true):
        y = np.asarray(to_numpy(y_true))
        if y.ndim != 1:
            raise InvalidInputError(f"y_true must be 1-D, got shape {tuple(y.shape)}")
        pos_label = _binary_pos_label(np.unique(y), pos_label)
        return from_numpy((y == pos_label).astype(np.float64), xp, device=device)
    if isinstance(y_true, (list, tuple)):
        y_true = from_numpy(np.asarray(y_true), xp, device=device)
    if y_true.ndim != 1:
        raise InvalidInputError(f"y_true must be 1-D, got shape {tuple(y_true.shape)}")
    pos_label = _binary_pos_label(to_numpy(xp.unique_values(y_true)), pos_label)  # C values only
    return xp.astype(y_true == pos_label, xp.float64)


def array_api_obj(a: Any) -> bool:
    """Whether ``a`` is an array of some namespace (not a list or another array-like)."""
    import array_api_compat  # noqa: PLC0415

    return array_api_compat.is_array_api_obj(a)


def _roc_counts(y: Any, s: Any, xp: Any, w: Any = None) -> tuple[Any, Any, Any]:
    """(fps, tps, thresholds) at each distinct score, descending, without the (0, 0) start;
    with weights ``w`` the weighted counts (zero-weight samples dropped first, as
    scikit-learn: they make no threshold)."""
    if w is not None:
        keep = w != 0
        y, s, w = y[keep], s[keep], w[keep]
    n = int(s.shape[0])
    order = xp.argsort(s, descending=True, stable=True)
    ss, yy = xp.take(s, order), xp.take(y, order)
    last = xp.nonzero(ss[1:] != ss[:-1])[0]  # last position of each run of equal scores
    idx = xp.concat([xp.astype(last, xp.int64), xp.asarray([n - 1], dtype=xp.int64, device=_device(s))])
    if w is not None:
        ww = xp.take(w, order)
        tps = xp.take(xp.cumulative_sum(yy * ww), idx)
        fps = xp.take(xp.cumulative_sum((1.0 - yy) * ww), idx)
        return fps, tps, xp.take(ss, idx)
    tps = xp.take(xp.cumulative_sum(yy), idx)
    fps = xp.astype(idx, xp.float64) + 1.0 - tps
    return fps, tps, xp.take(ss, idx)


def _warn_one_class(what: str) -> None:
    warnings.warn(
        f"Only one class is present in y_true. {what} score is not defined in that case (NaN).",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def _curve_counts(y_true: Any, y_score: Any, pos_label: Any, sample_weight: Any) -> tuple[Any, Any, Any, Any]:
    """``(xp, fps, tps, thresholds)`` of a binary curve: (weighted) counts at each distinct
    score, descending (scikit-learn's ``_binary_clf_curve``)."""
    xp = _namespace(y_true, y_score)
    s = _check_scores(y_score, xp, 1, device=input_device([y_score, y_true]))
    y = _binary_target(y_true, pos_label, xp, _device(s))
    if y.shape[0] != s.shape[0]:
        raise InvalidInputError(
            f"y_true and y_score have inconsistent numbers of samples (different lengths): {y.shape[0]} and "
            f"{s.shape[0]}"
        )
    if y.shape[0] == 0:
        raise InvalidInputError("y_true and y_score are empty")
    w = _check_weights(sample_weight, int(s.shape[0]), xp, _device(s))
    fps, tps, thr = _roc_counts(y, s, xp, w)
    return xp, fps, tps, thr


def _keep(xp: Any, mask: Any, *arrays: Any) -> tuple[Any, ...]:
    """``arrays`` at the positions where ``mask`` (with both ends kept) holds."""
    true = xp.ones(1, dtype=xp.bool, device=_device(mask))
    idx = xp.nonzero(xp.concat([true, mask, true]))[0]
    return tuple(xp.take(a, idx) for a in arrays)


@on_input_device
def roc_curve(
    y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None, drop_intermediate: bool = False
) -> tuple[Any, Any, Any]:
    """Receiver operating characteristic: false- and true-positive rates per threshold.

    Parameters
    ----------
    y_true : array of shape (n,)
        Binary labels; ``{0, 1}`` or ``{-1, 1}`` unless ``pos_label`` is given.
    y_score : array of shape (n,)
        Higher = more positive.
    pos_label : label, optional
    sample_weight : array of shape (n,), optional
        Each sample counts its weight; zero-weight samples make no threshold (scikit-learn).
    drop_intermediate : bool, default False
        Drop the thresholds whose point lies on the straight line through its neighbours
        (scikit-learn's rule; its default is True, gpuknn's keeps every threshold).

    Returns
    -------
    fpr, tpr : float64 arrays of shape (T + 1,)
        Rates for ``score >= thresholds[i]``, starting at (0, 0).
    thresholds : array of shape (T + 1,)
        ``+inf`` then the T distinct scores in decreasing order. A single-class ``y_true``
        gives NaN rates and an UndefinedMetricWarning.

    Complexity O(n log n) (one sort).

    Examples
    --------
    >>> import numpy as np
    >>> fpr, tpr, thr = roc_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    xp, fps, tps, thr = _curve_counts(y_true, y_score, pos_label, sample_weight)
    dev = _device(fps)
    if drop_intermediate and int(fps.shape[0]) > 2:
        # second differences of zero: the point is collinear with its neighbours
        bend = ((fps[2:] - 2 * fps[1:-1] + fps[:-2]) != 0) | ((tps[2:] - 2 * tps[1:-1] + tps[:-2]) != 0)
        fps, tps, thr = _keep(xp, bend, fps, tps, thr)
    zero = xp.zeros(1, dtype=xp.float64, device=dev)
    fps, tps = xp.concat([zero, fps]), xp.concat([zero, tps])
    thr = xp.concat([xp.full(1, float("inf"), dtype=thr.dtype, device=dev), thr])
    P, N = float(tps[-1]), float(fps[-1])
    if N == 0:
        warnings.warn(
            "No negative samples in y_true, false positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if P == 0:
        warnings.warn(
            "No positive samples in y_true, true positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    fpr = fps / N if N > 0 else xp.full_like(fps, float("nan"))
    tpr = tps / P if P > 0 else xp.full_like(tps, float("nan"))
    return fpr, tpr, thr


@on_input_device
def det_curve(
    y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None, drop_intermediate: bool = False
) -> tuple[Any, Any, Any]:
    """Detection error tradeoff: false-positive and false-negative rates per threshold
    (scikit-learn 1.9's ``det_curve``).

    Parameters
    ----------
    y_true : array of shape (n,)
        Binary labels; ``{0, 1}`` or ``{-1, 1}`` unless ``pos_label`` is given.
    y_score : array of shape (n,)
    pos_label : label, optional
    sample_weight : array of shape (n,), optional
    drop_intermediate : bool, default False
        Drop the thresholds whose true-positive count equals both neighbours'.

    Returns
    -------
    fpr, fnr : float64 arrays of shape (T,)
        From the last threshold without false positives to the first without false
        negatives, false positives decreasing.
    thresholds : array of shape (T,)
        Increasing (may start at ``+inf`` when every sample is negative-scored alike).

    Raises :class:`InvalidInputError` when ``y_true`` has a single class. O(n log n).

    Examples
    --------
    >>> import numpy as np
    >>> fpr, fnr, thr = det_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    >>> fpr.tolist(), fnr.tolist(), thr.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.35, 0.4, 0.8])
    """
    xp, fps, tps, thr = _curve_counts(y_true, y_score, pos_label, sample_weight)
    dev = _device(fps)
    zero = xp.zeros(1, dtype=xp.float64, device=dev)
    fps, tps = xp.concat([zero, fps]), xp.concat([zero, tps])
    thr = xp.concat([xp.full(1, float("inf"), dtype=thr.dtype, device=dev), thr])
    if drop_intermediate and int(fps.shape[0]) > 2:
        fps, tps, thr = _keep(xp, (tps[1:-1] != tps[:-2]) | (tps[2:] != tps[1:-1]), fps, tps, thr)
    P, N = float(tps[-1]), float(fps[-1])
    if P == 0 or N == 0:
        raise InvalidInputError(
            "Only one class is present in y_true. Detection error tradeoff curve is not defined in that case."
        )
    # from the last threshold with fps == fps[0] (no false positive yet) to the first with
    # every positive found; counts ascend, so these are counts of equal values
    first = int(xp.sum(xp.astype(fps == fps[0], xp.int64))) - 1
    last = int(xp.sum(xp.astype(tps < tps[-1], xp.int64))) + 1
    f, t, th = fps[first:last], tps[first:last], thr[first:last]
    return xp.flip(f) / N, xp.flip(tps[-1] - t) / P, xp.flip(th)


def _binary_auc(y: Any, s: Any, xp: Any, w: Any = None, max_fpr: float | None = None) -> float:
    """ROC AUC of 0/1 ``y`` and scores ``s`` (weights ``w``); with ``max_fpr`` < 1 the
    partial AUC up to that false-positive rate, McClish-standardised (0.5 chance, 1 best)."""
    if y.shape[0] == 0 or float(xp.min(y)) == float(xp.max(y)):
        _warn_one_class("ROC AUC")
        return float("nan")
    fps, tps, _ = _roc_counts(y, s, xp, w)
    P, N = float(tps[-1]), float(fps[-1])
    if P == 0 or N == 0:
        _warn_one_class("ROC AUC")
        return float("nan")
    zero = xp.zeros(1, dtype=xp.float64, device=_device(s))
    fps, tps = xp.concat([zero, fps]), xp.concat([zero, tps])
    if max_fpr is None or max_fpr == 1:
        # integer counts keep the trapezoid sum exact; one division at the end
        twice = xp.sum((fps[1:] - fps[:-1]) * (tps[1:] + tps[:-1]))
        return float(twice) / (2.0 * P * N)
    fpr, tpr = fps / N, tps / P
    stop = int(xp.sum(xp.astype(fpr <= max_fpr, xp.int64)))  # fpr ascends and ends at 1 > max_fpr
    x0, x1, y0, y1 = (float(v) for v in (fpr[stop - 1], fpr[stop], tpr[stop - 1], tpr[stop]))
    y_end = y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0)  # the curve's point at max_fpr
    f, t = fpr[:stop], tpr[:stop]
    partial = float(xp.sum((f[1:] - f[:-1]) * (t[1:] + t[:-1]))) / 2.0 + (max_fpr - x0) * (y0 + y_end) / 2.0
    min_area, max_area = 0.5 * max_fpr**2, max_fpr
    return 0.5 * (1 + (partial - min_area) / (max_area - min_area))


def _average_columns(Y: Any, s: Any, xp: Any, average: Any, w: Any, max_fpr: Any) -> Any:
    """scikit-learn's ``_average_binary_score`` of ROC AUC over the columns of the 0/1
    matrix ``Y`` (multilabel, or one-vs-rest classes) and scores ``s`` of shape (n, L)."""
    n, L = int(s.shape[0]), int(s.shape[1])
    if average == "micro":
        wr = None if w is None else xp.reshape(xp.broadcast_to(w[:, None], (n, L)), (-1,))
        return _binary_auc(xp.reshape(Y, (-1,)), xp.reshape(s, (-1,)), xp, wr, max_fpr)
    if average == "samples":  # one AUC per sample (row), averaged with the sample weights
        scores = [_binary_auc(Y[i, :], s[i, :], xp, None, max_fpr) for i in range(n)]
        weights = np.ones(n) if w is None else to_numpy(w)
    else:
        scores = [_binary_auc(Y[:, c], s[:, c], xp, w, max_fpr) for c in range(L)]
        weights = None
        if average == "weighted":
            weights = to_numpy(xp.sum(Y * (1.0 if w is None else w[:, None]), axis=0))
            if np.isclose(weights.sum(), 0.0):
                return 0.0
    sc = np.asarray(scores, dtype=np.float64)
    if average is None:
        return from_numpy(sc, xp, device=_device(s))
    if weights is not None:
        sc[weights == 0] = 0.0  # zero-weight columns (NaN AUC) do not poison the mean
        return float(np.average(sc, weights=weights))
    return float(np.mean(sc))


@on_input_device
def roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    average: str | None = "macro",
    sample_weight: Any = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: Any = None,
) -> Any:
    """Area under the ROC curve (trapezoid rule, ties counted ½ = Mann–Whitney U / (n1 n0)).

    Parameters
    ----------
    y_true : array of shape (n,) or (n, L)
        Binary or multiclass labels, or a multilabel 0/1 indicator matrix.
    y_score : array of shape (n,) or (n, C)
        1-D: scores of the greater of two classes. 2-D: one column per class of ``labels``
        (or per label of a multilabel ``y_true``).
    average : {"macro", "weighted", "micro", "samples", None}
        Over classes (multiclass one-vs-rest, multilabel): plain mean, weighted by class
        prevalence (ovr) / pair prevalence (ovo), the AUC of all columns pooled (``micro``,
        not ovo), the mean over samples (``samples``, multilabel), or the per-class array
        (``None``, not ovo). Ignored for binary ``y_true``.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight (not with ``multi_class="ovo"``).
    max_fpr : float in (0, 1], optional
        Binary and multilabel only: the partial AUC over false-positive rates up to
        ``max_fpr``, standardised by McClish's correction (0.5 chance level, 1 perfect).
    multi_class : {"raise", "ovr", "ovo"}
        ``ovr``: each class against the rest with its own column. ``ovo`` (Hand & Till):
        for every pair (a, b) of classes present in ``y_true`` the mean of AUC(a | b) and
        AUC(b | a) on the samples of a and b. Scores need not sum to 1.
    labels : array of shape (C,), optional
        Classes of the columns, sorted and unique; default the sorted classes of ``y_true``.

    Returns
    -------
    float, or a float64 array of shape (C,) in y_score's namespace for ``average=None``
        NaN (with an UndefinedMetricWarning) when a needed class is missing from y_true.

    Complexity O(n log n) binary, O(C n log n) ovr, O(C² n log n) ovo.

    Examples
    --------
    >>> import numpy as np
    >>> roc_auc_score(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    if average not in ("macro", "weighted", "micro", "samples", None):
        raise InvalidInputError(
            f"average must be one of 'micro', 'macro', 'samples', 'weighted' or None, got {average!r}"
        )
    if max_fpr is not None and not (isinstance(max_fpr, (int, float)) and 0 < max_fpr <= 1):
        raise InvalidInputError(f"Expected max_fpr in range (0, 1], got: {max_fpr!r}")
    y_true, y_score = as_array_input(y_true), as_array_input(y_score)
    xp = _namespace(y_true, y_score)
    ndim = 1 if isinstance(y_score, (list, tuple)) and np.ndim(y_score) == 1 else getattr(y_score, "ndim", 2)
    s = _check_scores(y_score, xp, 2 if ndim == 2 else 1, device=input_device([y_score, y_true]))
    dev = _device(s)
    multiclass = ndim == 2 and getattr(y_true, "ndim", np.ndim(y_true)) == 1
    # multiclass: the options are checked first, as scikit-learn (ovo refuses any sample_weight)
    w = None if multiclass else _check_weights(sample_weight, int(s.shape[0]), xp, dev)
    if getattr(y_true, "ndim", np.ndim(y_true)) == 2:  # multilabel indicator
        Y = from_numpy(np.asarray(y_true), xp, device=dev) if not array_api_obj(y_true) else y_true
        if array_namespace(Y) is not xp or _device(Y) != dev:
            Y = from_numpy(to_numpy(Y), xp, device=dev)
        if tuple(Y.shape) != tuple(s.shape):
            raise InvalidInputError(f"y_true and y_score have different shapes: {tuple(Y.shape)} and {tuple(s.shape)}")
        if not bool(xp.all((Y == 0) | (Y == 1))):
            raise InvalidInputError("a 2-D y_true must be a multilabel 0/1 indicator matrix")
        return _average_columns(xp.astype(Y, xp.float64), s, xp, average, w, max_fpr)
    if ndim == 1:
        if is_host_nonnumeric(y_true):
            classes = np.unique(np.asarray(to_numpy(y_true)))
        else:
            yt = from_numpy(np.asarray(y_true), xp, device=dev) if isinstance(y_true, (list, tuple)) else y_true
            classes = to_numpy(xp.unique_values(yt))  # C values only
        if classes.size > 2:
            raise InvalidInputError(f"y_true has {classes.size} classes: pass (n, C) scores and multi_class")
        y = _binary_target(y_true, classes[-1] if classes.size else None, xp, dev)
        if y.shape[0] != s.shape[0] or s.shape[0] == 0:
            raise InvalidInputError(
                f"y_true and y_score have different lengths (or none): {y.shape[0]} and {s.shape[0]}"
            )
        if classes.size < 2:
            _warn_one_class("ROC AUC")
            return float("nan")
        return _binary_auc(y, s, xp, w, max_fpr)
    if max_fpr is not None and max_fpr != 1.0:
        raise InvalidInputError(
            "Partial AUC computation not available in multiclass setting, 'max_fpr' must be set to "
            f"`None`, received `max_fpr={max_fpr}` instead"
        )
    if multi_class not in ("ovr", "ovo"):
        raise InvalidInputError(
            f"multi_class must be in ('ovo', 'ovr') for (n, C) scores of a multiclass y_true, got {multi_class!r}"
        )
    allowed = ("micro", "macro", "weighted", None) if multi_class == "ovr" else ("macro", "weighted", None)
    if average not in allowed:
        raise InvalidInputError(
            f"average must be one of {allowed} for multiclass problems (multi_class={multi_class!r}), got {average!r}"
        )
    if multi_class == "ovo" and sample_weight is not None:
        raise InvalidInputError(
            "sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must be None "
            "in this case."
        )
    if multi_class == "ovo" and average is None:
        raise OptionNotImplementedError("average=None is not implemented for multi_class='ovo'.")
    w = _check_weights(sample_weight, int(s.shape[0]), xp, dev)
    if labels is not None:
        lab = np.asarray(to_numpy(as_array_input(labels)) if not isinstance(labels, (list, tuple)) else labels)
        uniq = np.unique(lab)
        if uniq.size != lab.size:
            raise InvalidInputError("Parameter 'labels' must be unique")
        if not np.array_equal(uniq, lab):
            raise InvalidInputError(f"Parameter 'labels' must be ordered, got {lab.tolist()}")
    _, classes, (codes,) = encode(y_true, labels=labels, names=("y_true",))
    if array_namespace(codes) is not xp or _device(codes) != dev:
        codes = from_numpy(to_numpy(codes), xp, device=dev)
    n, C = int(s.shape[0]), int(s.shape[1])
    if codes.shape[0] != n:
        raise InvalidInputError(f"y_true and y_score have different lengths: {codes.shape[0]} and {n}")
    if int(classes.shape[0]) != C:
        raise InvalidInputError(
            f"Number of given labels, {int(classes.shape[0])}, not equal to the number of columns in "
            f"'y_score', {C}" if labels is not None else
            f"Number of classes in y_true ({int(classes.shape[0])}) not equal to the number of columns "
            f"in 'y_score' ({C})"
        )  # fmt: skip
    if bool(xp.any(codes < 0)):
        raise InvalidInputError("'y_true' contains labels not in parameter 'labels'")
    if C < 2:
        _warn_one_class("ROC AUC")
        return float("nan")
    if multi_class == "ovr":
        Y = xp.astype(codes[:, None] == xp.arange(C, dtype=xp.int64, device=dev)[None, :], xp.float64)
        return _average_columns(Y, s, xp, average, w, None)
    present = to_numpy(xp.unique_values(codes)).tolist()  # Hand & Till: pairs of classes in y_true
    scores, weights = [], []
    for a, b in combinations(present, 2):
        mask = (codes == a) | (codes == b)
        sub_codes, sub = codes[mask], s[mask]
        auc_a = _binary_auc(xp.astype(sub_codes == a, xp.float64), sub[:, a], xp)
        auc_b = _binary_auc(xp.astype(sub_codes == b, xp.float64), sub[:, b], xp)
        scores.append((auc_a + auc_b) / 2.0)
        weights.append(float(xp.sum(xp.astype(mask, xp.float64))) / n)
    if not scores:
        _warn_one_class("ROC AUC")
        return float("nan")
    sc, wt = np.asarray(scores), np.asarray(weights)
    return float(np.average(sc, weights=wt)) if average == "weighted" else float(np.mean(sc))


def _average_ranks(s: Any, xp: Any) -> Any:
    """1-based ranks of ``s`` (ascending) with ties given their mean position."""
    n = int(s.shape[0])
    order = xp.argsort(s, stable=True)
    ss = xp.take(s, order)
    dev = _device(s)
    new = xp.concat([xp.ones(1, dtype=xp.bool, device=dev), ss[1:] != ss[:-1]])
    gid = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1
    starts = xp.astype(xp.nonzero(new)[0], xp.float64)
    ends = xp.concat([starts[1:], xp.asarray([float(n)], dtype=xp.float64, device=dev)])
    mean_rank = (starts + 1.0 + ends) / 2.0  # ranks start+1 .. end
    return xp.take(xp.take(mean_rank, gid), xp.argsort(order))


@on_input_device
def borda_rank(scores_list: Any) -> Any:
    """Borda-count aggregation of several scorings of the same n items.

    Each scoring is turned into ranks 1 (lowest score) .. n (highest), tied scores sharing
    their mean rank; the result is the **mean rank** over scorings (an affine function of
    the Borda count), so higher = more positive and it can be fed to :func:`roc_auc_score`.

    Parameters
    ----------
    scores_list : sequence of m arrays of shape (n,), or an array of shape (m, n)

    Returns
    -------
    float64 array of shape (n,), values in [1, n].

    Complexity O(m n log n).

    Examples
    --------
    >>> import numpy as np
    >>> borda_rank([np.array([0.1, 0.9, 0.5]), np.array([3.0, 2.0, 1.0])]).tolist()
    [2.0, 2.5, 1.5]
    """
    if hasattr(scores_list, "ndim") and scores_list.ndim == 2:
        xp = array_namespace(scores_list)
        rows = [scores_list[i, :] for i in range(int(scores_list.shape[0]))]
    else:
        rows = list(scores_list)
        if not rows:
            raise InvalidInputError("scores_list is empty")
        xp = array_namespace(*[r for r in rows if hasattr(r, "shape")])
    dev = input_device(rows)  # host rows join the array rows' device
    rows = [_check_scores(r, xp, 1, name=f"scores_list[{i}]", device=dev) for i, r in enumerate(rows)]
    n = int(rows[0].shape[0])
    if n == 0 or any(int(r.shape[0]) != n for r in rows):
        raise InvalidInputError(
            f"scorings must be non-empty and of equal length, got {[int(r.shape[0]) for r in rows]}"
        )
    total = _average_ranks(rows[0], xp)
    for r in rows[1:]:
        total = total + _average_ranks(r, xp)
    return total / len(rows)


@on_input_device
def roc_convex_hull(fpr: Any, tpr: Any) -> tuple[Any, Any, Any]:
    """Upper convex hull of ROC points, from (0, 0) to (1, 1) (Provost & Fawcett).

    Parameters
    ----------
    fpr, tpr : arrays of shape (p,)
        ROC points (e.g. of several classifiers), in [0, 1].

    Returns
    -------
    hull_fpr, hull_tpr : float64 arrays of shape (h,)
        Hull vertices by increasing fpr (collinear points are not vertices).
    index : int64 array of shape (h,)
        Position of each vertex in the input; ``-1`` for the corners (0, 0) and (1, 1) when
        they are not input points. Duplicates resolve to the lowest input position.

    Complexity O(p log p) on the host (p is small: points, not samples).

    Examples
    --------
    >>> import numpy as np
    >>> f, t, i = roc_convex_hull(np.array([0.1, 0.3, 0.5]), np.array([0.5, 0.6, 0.9]))
    >>> f.tolist(), t.tolist(), i.tolist()
    ([0.0, 0.1, 0.5, 1.0], [0.0, 0.5, 0.9, 1.0], [-1, 0, 2, -1])
    """
    xp = array_namespace(fpr, tpr)
    f, t = np.asarray(to_numpy(fpr), dtype=np.float64), np.asarray(to_numpy(tpr), dtype=np.float64)
    if f.ndim != 1 or f.shape != t.shape:
        raise InvalidInputError(f"fpr and tpr must be 1-D of equal length, got {f.shape} and {t.shape}")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(t))):
        raise InvalidInputError("fpr/tpr contain NaN or infinity")
    if f.size and (f.min() < 0 or f.max() > 1 or t.min() < 0 or t.max() > 1):
        raise InvalidInputError("fpr and tpr must lie in [0, 1]")
    p = f.size
    xs = np.concatenate([[0.0, 1.0], f])
    ys = np.concatenate([[0.0, 1.0], t])
    idx = np.concatenate([[-1, -1], np.arange(p)])
    # among identical points the last in sort order survives: corners first, then
    # input points from the highest position to the lowest
    pref = np.concatenate([[0, 0], p - np.arange(p)])
    order = np.lexsort((pref, ys, xs))
    same_as_next = (xs[order][1:] == xs[order][:-1]) & (ys[order][1:] == ys[order][:-1])
    order = order[np.concatenate([~same_as_next, [True]])]
    hull: list[int] = []
    for j in order:  # Andrew's monotone chain, upper part, left to right
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (xs[a] - xs[o]) * (ys[j] - ys[o]) - (ys[a] - ys[o]) * (xs[j] - xs[o])
            if cross < 0:
                break
            hull.pop()  # a is below or on the segment o-j: not a vertex
        hull.append(j)
    h = np.asarray(hull)
    dev = input_device([fpr, tpr])  # lists have no device: the array argument's
    return (
        from_numpy(xs[h], xp, device=dev),
        from_numpy(ys[h], xp, device=dev),
        from_numpy(idx[h].astype(np.int64), xp, device=dev),
    )
