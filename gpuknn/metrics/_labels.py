"""What the metrics add to the label encoder (:func:`gpuknn._labels.encode`, which encodes
y_true / y_pred and checks the label types): the warning of undefined scores, the length
check of paired label vectors, co-occurrence counts and the guarded division."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning as _SklearnUndefinedMetricWarning

from .._backend import array_namespace, from_numpy, to_numpy
from .._backend import device_of as _device
from .._delegation import bincount
from .._labels import as_array_input
from ..errors import InvalidInputError, InvalidInputTypeError

__all__ = ["UndefinedMetricWarning"]


class UndefinedMetricWarning(_SklearnUndefinedMetricWarning):
    """A score is undefined for the given input (0/0, one class only, ...). Also
    scikit-learn's ``UndefinedMetricWarning`` (hence a ``UserWarning``), so the filters and
    ``pytest.warns`` of code written for scikit-learn's metrics apply."""


class OptionNotImplementedError(InvalidInputError, NotImplementedError):
    """An accepted option that is not implemented for this input (``average=None`` with
    ``multi_class="ovo"``): ``NotImplementedError`` as scikit-learn raises, and an
    :class:`~gpuknn.errors.InvalidInputError` as gpuknn's other rejections."""


# --------------------------------------------------------------------------- helpers
def _check_lengths(a: Any, b: Any, names: tuple[str, str] = ("y_true", "y_pred")) -> None:
    if a.shape[0] != b.shape[0]:
        raise InvalidInputError(f"{names[0]} and {names[1]} have different lengths: {a.shape[0]} and {b.shape[0]}")
    if a.shape[0] == 0:
        raise InvalidInputError(f"{names[0]} and {names[1]} are empty")


def _check_weights(sample_weight: Any, n: int, xp: Any, dev: Any, name: str = "sample_weight") -> Any:
    """``sample_weight`` as a 1-D float64 array of ``xp`` on ``dev`` (None stays None);
    :class:`InvalidInputError` for another length, NaN/infinity, or a negative weight, as
    scikit-learn's ``_check_sample_weight``."""
    if sample_weight is None:
        return None
    w = as_array_input(sample_weight)
    if isinstance(w, (list, tuple)) or isinstance(w, (int, float)):
        w = np.asarray(w, dtype=np.float64)
    if array_namespace(w) is not xp or _device(w) != dev:
        w = from_numpy(to_numpy(w), xp, device=dev)
    if w.ndim == 0:  # a scalar: the same weight for every sample
        w = xp.full(n, float(w), dtype=xp.float64, device=dev)
    if w.ndim != 1 or int(w.shape[0]) != n:
        raise InvalidInputError(f"{name} must be of shape ({n},), got {tuple(w.shape)}")
    w = xp.astype(w, xp.float64)
    if not bool(xp.all(xp.isfinite(w))):
        raise InvalidInputError(f"{name} contains NaN or infinity")
    return w


def _native_bincount(codes: Any) -> Any:
    import array_api_compat  # noqa: PLC0415

    if array_api_compat.is_numpy_array(codes):
        return np.bincount
    if array_api_compat.is_cupy_array(codes):
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand

        return cupy.bincount
    if array_api_compat.is_torch_array(codes):
        import torch  # noqa: PLC0415 - only reached with torch tensors in hand

        return torch.bincount
    return None


def _wcount(codes: Any, n_bins: int, w: Any, xp: Any) -> Any:
    """float64 sums of ``w`` per code ``0 .. n_bins - 1`` (``-1`` ignored); plain counts
    without weights. One-hot rows summed in chunks (no per-sample loop, memory O(chunk))."""
    if w is None:
        return xp.astype(bincount(codes, n_bins), xp.float64)
    dev = _device(codes)
    if int(codes.shape[0]) == 0:
        return xp.zeros(n_bins, dtype=xp.float64, device=dev)
    native = _native_bincount(codes)
    if native is not None:  # NumPy / CuPy / torch: one weighted bincount, negatives in a dropped bin
        spill = xp.where(codes >= 0, codes, xp.full_like(codes, n_bins))
        return xp.astype(native(spill, weights=w, minlength=n_bins + 1)[:n_bins], xp.float64)
    bins = xp.arange(n_bins, dtype=xp.int64, device=dev)[None, :]
    total = xp.zeros(n_bins, dtype=xp.float64, device=dev)
    n = int(codes.shape[0])
    step = max(1, (1 << 18) // max(1, n_bins))
    for s in range(0, n, step):
        e = min(n, s + step)
        c, ws = codes[s:e], w[s:e]
        total = total + xp.sum(xp.where(c[:, None] == bins, ws[:, None], xp.zeros_like(ws)[:, None]), axis=0)
    return total


def _counts2d(a: Any, b: Any, n_a: int, n_b: int, xp: Any, w: Any = None) -> Any:
    """(n_a, n_b) table of co-occurrences of codes ``a`` and ``b`` (``-1`` ignored): int64
    counts, or float64 sums of the weights ``w``."""
    valid = (a >= 0) & (b >= 0)
    flat = xp.where(valid, a * n_b + b, xp.full_like(a, -1))
    if w is not None:
        return xp.reshape(_wcount(flat, n_a * n_b, w, xp), (n_a, n_b))
    return xp.reshape(bincount(flat, n_a * n_b), (n_a, n_b))


def _ravel_column(y: Any) -> Any:
    """A column vector of labels, shape (n, 1), as the 1-D vector it holds (scikit-learn's
    ``column_or_1d`` accepts one); anything else unchanged."""
    y = as_array_input(y)
    if isinstance(y, (list, tuple)) and np.ndim(y) == 2:
        y = np.asarray(y)
    if hasattr(y, "shape") and len(y.shape) == 2 and int(y.shape[1]) == 1:
        return array_namespace(y).reshape(y, (-1,)) if not isinstance(y, np.ndarray) else y.reshape(-1)
    return y


def _binary_pos_label(classes: Any, pos_label: Any) -> Any:
    """The positive label of a binary curve over the sorted host ``classes`` of ``y_true``
    (scikit-learn's ``type_of_target`` and ``_check_pos_label_consistency`` rules, with its
    messages): bytes labels are refused; without ``pos_label``, more than two classes are a
    multiclass target and two must be {0, 1} or {-1, 1} (positive 1). A given ``pos_label``
    binarises any number of classes (``y_true == pos_label``)."""
    classes = np.asarray(classes)
    if classes.dtype.kind == "S" or (classes.size and isinstance(classes.reshape(-1)[0], bytes)):
        raise InvalidInputTypeError(
            "Support for labels represented as bytes is not supported. Convert the labels to a string "
            "or integer format."
        )
    if pos_label is not None:
        return pos_label.item() if isinstance(pos_label, np.generic) else pos_label
    if classes.size > 2:
        raise InvalidInputError(
            f"multiclass format is not supported: y_true has {classes.size} classes; give pos_label (one "
            "class against the rest), or use roc_auc_score with (n, C) scores and multi_class='ovr' or 'ovo'"
        )
    values = set(classes.tolist()) if classes.dtype.kind in "biuf" else None
    if values is None or not (values <= {0, 1} or values <= {-1, 1}):
        shown = ", ".join(repr(c) for c in classes.tolist())
        raise InvalidInputError(
            f"y_true takes value in {{{shown}}} and pos_label is not specified: either make y_true take "
            "value in {0, 1} or {-1, 1} or pass pos_label explicitly."
        )
    return 1


def _divide(
    num: Any, den: Any, zero_division: Any, xp: Any, what: str, modifier: str | None = None, samplewise: bool = False
) -> Any:
    """Elementwise ``num/den`` with ``zero_division`` where ``den == 0``.

    With ``zero_division="warn"`` an undefined entry warns; given ``modifier`` (what the
    zero denominator lacks: "predicted", "true", "true nor predicted") in scikit-learn's
    wording (``_warn_prf``: "... in labels with no predicted samples", "... due to" for a
    single score, samples and labels swapped for ``samplewise`` scores)."""
    zd = 0.0 if zero_division == "warn" else zero_division
    if isinstance(zd, str) or not (zd in (0.0, 1.0) or math.isnan(zd)):
        raise InvalidInputError(f"zero_division must be 'warn', 0.0, 1.0 or nan, got {zero_division!r}")
    zd = float(zd)
    bad = den == 0
    if zero_division == "warn" and bool(xp.any(bad)):
        if modifier is None:
            msg = f"{what} is ill-defined (0/0) for some labels; set to 0.0"
        else:
            unit, group = ("label", "sample") if samplewise else ("sample", "label")
            where = "due to" if int(den.shape[0]) == 1 else f"in {group}s with"
            msg = (
                f"{what[0].upper() + what[1:]} is ill-defined and being set to 0.0 {where} no {modifier} "
                f"{unit}s. Use `zero_division` parameter to control this behavior."
            )
        warnings.warn(msg, UndefinedMetricWarning, stacklevel=3)
    safe = xp.where(bad, xp.ones_like(den), den)
    return xp.where(bad, xp.full_like(num, zd), num / safe)


# --------------------------------------------------------------------------- public
