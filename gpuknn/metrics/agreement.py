"""Agreement and probabilistic scores: Matthews correlation, Cohen's kappa, top-k accuracy, log loss.

Definitions and edge cases follow scikit-learn 1.9. Labels are encoded once
(:func:`~gpuknn._labels.encode`: in their own namespace when numeric, on the host
when strings); counts come from :func:`gpuknn._delegation.bincount`; every score is reduced on
the device and read back in a single transfer. Scores are Python floats.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._backend import array_namespace, check_int, from_numpy, to_numpy
from .._backend import device_of as _device
from .._delegation import on_input_device
from .._labels import as_array_input, encode, is_host_nonnumeric
from ..errors import InvalidInputError
from ._labels import UndefinedMetricWarning, _check_weights, _counts2d, _ravel_column, _wcount

__all__ = ["matthews_corrcoef", "cohen_kappa_score", "top_k_accuracy_score", "log_loss"]


def _host(*scalars: Any) -> list[float]:
    """Several 0-d device scalars as Python floats in one transfer."""
    xp = array_namespace(*scalars)
    return [float(v) for v in to_numpy(xp.stack([xp.astype(s, xp.float64) for s in scalars]))]


def _score_array(y: Any, other: Any, name: str) -> tuple[Any, Any]:
    """(xp, y) for a score/probability input: the namespace of ``y`` (or of ``other`` when ``y``
    is host data), floating, finite."""
    y, other = as_array_input(y), as_array_input(other)
    if isinstance(y, (list, tuple)) or not hasattr(y, "shape"):
        base = other if hasattr(other, "shape") and not is_host_nonnumeric(other) else None
        xp = array_namespace(base)
        y = from_numpy(np.asarray(y, dtype=np.float64), xp, device=None if base is None else _device(base))
    else:
        xp = (
            array_namespace(y)
            if is_host_nonnumeric(other) or not hasattr(other, "shape")
            else array_namespace(y, other)
        )
    if not xp.isdtype(y.dtype, "real floating"):
        y = xp.astype(y, xp.float64)
    if not bool(xp.all(xp.isfinite(y))):
        raise InvalidInputError(f"{name} contains NaN or infinity")
    return xp, y


def _codes_on(codes: Any, xp: Any, dev: Any) -> Any:
    """Class codes moved to namespace ``xp`` on ``dev`` (host-encoded string labels)."""
    if array_namespace(codes) is not xp or _device(codes) != dev:
        codes = from_numpy(to_numpy(codes), xp, device=dev)
    return codes


def _sorted_labels(labels: Any) -> bool:
    """Whether ``labels`` is strictly increasing (sorted and unique); one sync."""
    if not hasattr(labels, "shape") or is_host_nonnumeric(labels):
        lab = np.asarray(to_numpy(labels))
        return bool(np.all(lab[1:] > lab[:-1])) if lab.size > 1 else True
    xp = array_namespace(labels)
    return bool(xp.all(labels[1:] > labels[:-1])) if int(labels.shape[0]) > 1 else True


@on_input_device
def matthews_corrcoef(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    """Matthews correlation coefficient (multiclass: Gorodkin's R_K), in [-1, 1].

    Parameters
    ----------
    y_true, y_pred : arrays of shape (n,) (or column vectors (n, 1))
        Labels of any type (strings on the host).
    sample_weight : array of shape (n,), optional
        Each sample counts its weight.

    Returns
    -------
    float
        ``cov(t, p) / sqrt(cov(t, t) cov(p, p))`` of the one-hot label vectors; 0.0 (without a
        warning, as scikit-learn) when either vector is constant.

    Complexity O(n + C), one host transfer.

    Examples
    --------
    >>> import numpy as np
    >>> round(matthews_corrcoef(np.array([1, 1, 1, 0]), np.array([1, 0, 1, 1])), 4)
    -0.3333
    """
    y_true, y_pred = _ravel_column(y_true), _ravel_column(y_pred)
    xp, classes, (t, p) = encode(y_true, y_pred, names=("y_true", "y_pred"))
    if t.shape[0] != p.shape[0] or t.shape[0] == 0:
        raise InvalidInputError(
            f"y_true and y_pred must be non-empty and of equal length, got {t.shape[0]} and {p.shape[0]}"
        )
    C = int(classes.shape[0])
    w = _check_weights(sample_weight, int(t.shape[0]), xp, _device(t))
    t_sum, p_sum = _wcount(t, C, w, xp), _wcount(p, C, w, xp)
    hit = xp.astype(t == p, xp.float64)
    correct = xp.sum(hit if w is None else hit * w)
    n = float(t.shape[0]) if w is None else xp.sum(w)
    cov_tp = correct * n - xp.sum(t_sum * p_sum)
    cov_pp = n * n - xp.sum(p_sum * p_sum)
    cov_tt = n * n - xp.sum(t_sum * t_sum)
    cov_tp, cov_pp, cov_tt = _host(cov_tp, cov_pp, cov_tt)
    den = cov_pp * cov_tt
    return 0.0 if den == 0 else cov_tp / math.sqrt(den)


_NO_LABEL_IN_Y1 = (
    "At least one label in `labels` must be present in `y1` (even though `cohen_kappa_score` is "
    "otherwise agnostic to the order of `y1` and `y2`)."
)


@on_input_device
def cohen_kappa_score(
    y1: Any,
    y2: Any,
    *,
    labels: Any = None,
    weights: str | None = None,
    sample_weight: Any = None,
    replace_undefined_by: float = float("nan"),
) -> float:
    """Cohen's kappa: agreement of two annotators beyond chance.

    Parameters
    ----------
    y1, y2 : arrays of shape (n,)
        Labels assigned by the two annotators (any type; strings on the host).
    labels : array of shape (C,), optional
        Classes (and their order, which the weights use); default the sorted union. Samples
        with a label outside ``labels`` are not counted; at least one of ``labels`` must
        occur in ``y1``.
    weights : {None, "linear", "quadratic"}
        Disagreement weight of classes ``i`` and ``j``: 1 for ``i != j``, ``|i - j|`` or
        ``(i - j)**2``.
    sample_weight : array of shape (n,), optional
        Each sample counts its weight in the confusion matrix.
    replace_undefined_by : float
        Value (with an :class:`UndefinedMetricWarning`) when kappa is 0/0: no pair counted, or
        only one class in common.

    Returns
    -------
    float
        ``1 - sum(w * O) / sum(w * E)`` with ``O`` the confusion matrix and ``E`` its
        independence expectation.

    Complexity O(n + C²), one host transfer.

    Examples
    --------
    >>> import numpy as np
    >>> cohen_kappa_score(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]))
    0.5
    """
    if weights not in (None, "linear", "quadratic"):
        raise InvalidInputError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    try:
        xp, classes, (a, b) = encode(y1, y2, labels=labels, names=("y1", "y2"))
    except InvalidInputError as e:
        # numbers in labels and strings in y1 (or the reverse): no label can be in y1, the
        # condition scikit-learn reports (its confusion matrix compares the mixed types)
        if labels is not None and str(e).startswith("Mix of label input types") and "labels" in str(e):
            raise InvalidInputError(_NO_LABEL_IN_Y1) from e
        raise
    if a.shape[0] != b.shape[0] or a.shape[0] == 0:
        raise InvalidInputError(f"y1 and y2 must be non-empty and of equal length, got {a.shape[0]} and {b.shape[0]}")
    C = int(classes.shape[0])
    dev = _device(a)
    cm = xp.astype(_counts2d(a, b, C, C, xp, _check_weights(sample_weight, int(a.shape[0]), xp, dev)), xp.float64)
    sum0, sum1 = xp.sum(cm, axis=0), xp.sum(cm, axis=1)
    total = xp.sum(sum0)
    expected = sum1[:, None] * sum0[None, :] / xp.where(total > 0, total, xp.ones_like(total))
    idx = xp.arange(C, dtype=xp.float64, device=dev)
    diff = idx[None, :] - idx[:, None]
    if weights is None:
        w = xp.astype(diff != 0, xp.float64)
    else:
        w = xp.abs(diff) if weights == "linear" else diff * diff
    in_y1 = xp.astype(xp.any(a >= 0), xp.float64)
    seen, total, num, den = _host(in_y1, total, xp.sum(w * cm), xp.sum(w * expected))
    if labels is not None and not seen:
        raise InvalidInputError(_NO_LABEL_IN_Y1)
    if total == 0:
        warnings.warn(
            "`y2` contains no labels that are present in both `y1` and `labels`. `cohen_kappa_score` is "
            "undefined and set to the value defined by the `replace_undefined_by` param, which is set to "
            f"{replace_undefined_by}.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return float(replace_undefined_by)
    if den == 0:
        warnings.warn(
            "`y1`, `y2` and `labels` have only one label in common. `cohen_kappa_score` is undefined and "
            "set to the value defined by the `replace_undefined_by` param, which is set to "
            f"{replace_undefined_by}.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return float(replace_undefined_by)
    return float(1.0 - num / den)


def _host_labels(labels: Any) -> np.ndarray:
    """``labels`` as a 1-D NumPy array (for the few checks of a short class list)."""
    labels = as_array_input(labels)
    return np.asarray(labels if isinstance(labels, (list, tuple)) else to_numpy(labels)).reshape(-1)


@on_input_device
def top_k_accuracy_score(
    y_true: Any, y_score: Any, *, k: int = 2, normalize: bool = True, sample_weight: Any = None, labels: Any = None
) -> float:
    """Fraction (or number) of samples whose true class is among the ``k`` highest scores.

    Parameters
    ----------
    y_true : array of shape (n,)
        Binary or multiclass labels (fractional floats are labels too, where scikit-learn
        refuses a 'continuous' target).
    y_score : array of shape (n,) or (n, C)
        Binary: scores of the greater class (1-D). Multiclass: one column per class of
        ``labels`` (or the sorted classes of ``y_true``).
    k : int
        Number of top classes that count as a hit; ``k >= C`` gives 1.0 with an
        :class:`UndefinedMetricWarning`, as scikit-learn.
    normalize : bool
        ``False`` returns the number of hits (a float; with ``sample_weight`` the sum of the
        weights of the hits).
    sample_weight : array of shape (n,), optional
        Each sample counts its weight: the weighted mean (or sum) of the hits.
    labels : array of shape (C,), optional
        All classes, sorted and unique.

    Returns
    -------
    float

    Notes
    -----
    Ties are broken as scikit-learn's (stable ascending sort, reversed): among equal scores
    the class of the higher column wins. Binary with ``k=1`` predicts the greater class for
    scores above 0.5 (scores in [0, 1]) or above 0. No sort: a class is a hit when fewer
    than ``k`` columns outrank it, O(n C).

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([[0.5, 0.2, 0.3], [0.3, 0.4, 0.3], [0.2, 0.4, 0.4]])
    >>> top_k_accuracy_score(np.array([0, 1, 0]), s, k=2, labels=[0, 1, 2])
    0.6666666666666666
    """
    k = check_int(k, name="k", low=1)
    y_true = as_array_input(y_true)
    if isinstance(y_true, (list, tuple)):
        y_true = np.asarray(y_true)
    if getattr(y_true, "ndim", 1) != 1:
        raise InvalidInputError(f"y type must be 'binary' or 'multiclass', got a y_true of shape {tuple(y_true.shape)}")
    xp, s = _score_array(y_score, y_true, "y_score")
    dev = _device(s)
    # the class count decides binary vs multiclass as scikit-learn's type_of_target (more than
    # two labels given make it multiclass even when y_true holds two)
    _, classes_true, _ = encode(y_true, names=("y_true",))
    n_true = int(classes_true.shape[0])
    binary = n_true <= 2 and (labels is None or _host_labels(labels).size <= 2)
    if binary:
        if s.ndim == 2 and int(s.shape[1]) != 1:
            raise InvalidInputError(
                f"`y_true` is binary while y_score is 2d with {int(s.shape[1])} classes. If `y_true` "
                "does not contain all the labels, `labels` must be provided."
            )
        s = xp.reshape(s, (-1,))
    elif s.ndim != 2:
        raise InvalidInputError(
            "`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains "
            f"multiple classes. Got `y_score.shape={tuple(s.shape)}`."
        )
    n = int(y_true.shape[0])
    if n != int(s.shape[0]) or n == 0:
        raise InvalidInputError(
            f"y_true and y_score must be non-empty and of equal length, got {n} and {int(s.shape[0])}"
        )
    n_score = int(s.shape[1]) if s.ndim == 2 else 2
    if labels is None:
        if n_true != n_score:
            raise InvalidInputError(
                f"Number of classes in 'y_true' ({n_true}) not equal to the number of classes in "
                f"'y_score' ({n_score}). You can provide a list of all known classes by assigning "
                "it to the `labels` parameter."
            )
    else:
        lab = _host_labels(labels)
        if np.unique(lab).size != lab.size:
            raise InvalidInputError(f"Parameter 'labels' must be unique. Got {lab.tolist()}")
        if not _sorted_labels(lab):
            raise InvalidInputError(f"Parameter 'labels' must be ordered. Got {lab.tolist()}")
        if lab.size != n_score:
            raise InvalidInputError(
                f"Number of given labels ({lab.size}) not equal to the number of classes in 'y_score' ({n_score})."
            )
    _, classes, (codes,) = encode(y_true, labels=labels, names=("y_true",))
    codes = _codes_on(codes, xp, dev)
    C = int(classes.shape[0])
    if labels is not None and bool(xp.any(codes < 0)):
        raise InvalidInputError("'y_true' contains labels not in parameter 'labels'.")
    if k >= C:
        warnings.warn(
            f"'k' ({k}) greater than or equal to 'n_classes' ({C}) will result in a perfect score "
            "and is therefore meaningless.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if binary:
        if k == 1:
            lo, hi = _host(xp.min(s), xp.max(s))
            thr = 0.5 if lo >= 0 and hi <= 1 else 0.0
            hits = xp.astype(s > thr, xp.int64) == codes
        else:
            hits = xp.ones(n, dtype=xp.bool, device=dev)
    else:
        cols = xp.arange(C, dtype=xp.int64, device=dev)[None, :]
        mine = xp.sum(xp.where(cols == codes[:, None], s, xp.zeros_like(s)), axis=1)[:, None]
        above = (s > mine) | ((s == mine) & (cols > codes[:, None]))
        hits = xp.sum(xp.astype(above, xp.int64), axis=1) < k
    hits = xp.astype(hits, xp.float64)
    w = _check_weights(sample_weight, n, xp, dev)
    if w is None:
        n_hit = float(xp.sum(hits))
        return n_hit / n if normalize else n_hit
    n_hit, w_sum = _host(xp.sum(hits * w), xp.sum(w))
    if not normalize:
        return n_hit
    if w_sum == 0:
        raise InvalidInputError("sample_weight sums to zero: the weighted mean is undefined")
    return n_hit / w_sum


@on_input_device
def log_loss(
    y_true: Any,
    y_proba: Any = None,
    *,
    normalize: bool = True,
    sample_weight: Any = None,
    labels: Any = None,
    y_pred: Any = "deprecated",
) -> float:
    """Cross-entropy of predicted probabilities (scikit-learn 1.9 semantics).

    Parameters
    ----------
    y_true : array of shape (n,)
    y_proba : array of shape (n,) or (n, C)
        Probabilities in [0, 1]; columns are the sorted classes. 1-D (or one column): the
        probability of the greater of two classes. Values are clipped to
        ``[eps, 1 - eps]`` (``eps`` of the dtype) and **not** renormalised; rows that do not
        sum to 1 (tolerance ``1e-8 + sqrt(eps)``) give a ``UserWarning``.
    labels : array of shape (C,), optional
        All classes (default: those of ``y_true``). Unsorted labels are sorted, with a
        ``UserWarning``, as scikit-learn does.
    normalize : bool
        Mean (default) or sum of the per-sample losses.
    sample_weight : array of shape (n,), optional
        Weights of the per-sample losses: their weighted mean (or weighted sum).
    y_pred : array, deprecated
        The former name of ``y_proba`` (scikit-learn 1.9 renamed it): accepted with a
        ``FutureWarning``; giving both raises :class:`InvalidInputError`.

    Returns
    -------
    float

    Complexity O(n C).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]])
    >>> round(log_loss(np.array([0, 1, 1]), p), 4)
    0.5108
    """
    if not (isinstance(y_pred, str) and y_pred == "deprecated"):
        if y_proba is not None:
            raise InvalidInputError(
                "Cannot use both `y_pred` and `y_proba`. `y_pred` is deprecated, use `y_proba` instead."
            )
        warnings.warn(
            "`y_pred` was renamed to `y_proba` in version 1.9 and will be removed in 1.11. Use `y_proba` instead.",
            FutureWarning,
            stacklevel=2,
        )
        y_proba = y_pred
    if y_proba is None:
        raise InvalidInputError("log_loss needs y_proba, the predicted probabilities")
    # the messages name both spellings: y_pred was the name before scikit-learn 1.9
    name = "y_proba (y_pred)"
    y_true = as_array_input(y_true)
    xp, P = _score_array(y_proba, y_true, name)
    dev = _device(P)
    lo, hi = _host(xp.min(P), xp.max(P)) if P.size else (0.0, 0.0)
    if hi > 1 or lo < 0:
        raise InvalidInputError(f"{name} must be probabilities in [0, 1], got values in [{lo}, {hi}]")
    if labels is not None and not _sorted_labels(labels):
        given = _host_labels(labels)
        warnings.warn(
            f"Labels passed were {given.tolist()}. But this function assumes labels are ordered "
            f"lexicographically. Pass the ordered labels={np.sort(given).tolist()} and ensure that the "
            "columns of y_prob correspond to this ordering. The columns are taken as the sorted labels.",
            UserWarning,
            stacklevel=2,
        )
        labels = (
            np.sort(np.asarray(labels)).tolist()
            if not hasattr(labels, "shape")
            else array_namespace(labels).sort(labels)
        )
    _, classes, (codes,) = encode(y_true, labels=labels, names=("y_true",))
    C = int(classes.shape[0])
    if C < 2:
        raise InvalidInputError(
            f"y_true contains only one label {to_numpy(classes).tolist()}; give all classes in labels"
        )
    codes = _codes_on(codes, xp, dev)
    n = int(codes.shape[0])
    if n != int(P.shape[0]) or n == 0:
        raise InvalidInputError(
            f"y_true and {name} must be non-empty and of equal length, got {n} and {int(P.shape[0])}"
        )
    if labels is not None and bool(xp.any(codes < 0)):
        raise InvalidInputError("y_true contains labels that are not in labels")
    if P.ndim == 1:
        P = P[:, None]
    if P.ndim != 2:
        raise InvalidInputError(f"{name} must be 1-D or 2-D, got shape {tuple(P.shape)}")
    if int(P.shape[1]) == 1:
        P = xp.concat([1 - P, P], axis=1)
    if int(P.shape[1]) != C:
        raise InvalidInputError(f"{name} has {int(P.shape[1])} columns but there are {C} classes; give labels")
    eps = float(xp.finfo(P.dtype).eps)
    rows = xp.sum(P, axis=1)
    off = xp.any(xp.abs(rows - 1) > 1e-8 + math.sqrt(eps))
    P = xp.clip(P, eps, 1 - eps)
    cols = xp.arange(C, dtype=xp.int64, device=dev)[None, :]
    per_sample = xp.sum(xp.where(cols == codes[:, None], xp.log(P), xp.zeros_like(P)), axis=1)
    w = _check_weights(sample_weight, n, xp, dev)
    ll = xp.sum(per_sample if w is None else per_sample * xp.astype(w, per_sample.dtype))
    off, total, wsum = _host(off, ll, xp.sum(w)) if w is not None else (*_host(off, ll), float(n))
    if off:
        warnings.warn(
            "The y_prob values do not sum to one. Make sure to pass probabilities.", UserWarning, stacklevel=2
        )
    return -total / wsum if normalize else -total
