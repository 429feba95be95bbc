"""Label handling shared by the metrics: one encoder of y_true / y_pred (and labels) to
class indices in the inputs' namespace, the checks of label types scikit-learn makes
(NaN, mixed strings and numbers, continuous values), counts and the guarded division."""

from __future__ import annotations

import math
import warnings
from typing import Any

import array_api_compat.numpy as _npx
import numpy as np

from .._backend import array_namespace, from_numpy, input_device, to_numpy
from .._backend import device_of as _device
from .._delegation import bincount
from ..errors import InvalidInputError

__all__ = ["UndefinedMetricWarning"]


class UndefinedMetricWarning(UserWarning):
    """A score is undefined for the given input (0/0, one class only, ...)."""


# --------------------------------------------------------------------------- helpers
def _is_host_nonnumeric(y: Any) -> bool:
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    return isinstance(y, np.ndarray) and y.dtype.kind not in "biuf"


def _as_1d(y: Any, xp: Any, name: str, device: Any = None) -> Any:
    if isinstance(y, (list, tuple)):
        y = from_numpy(np.asarray(y), xp, device=device)
    if y.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got shape {tuple(y.shape)}")
    return y


def _check_lengths(a: Any, b: Any, names: tuple[str, str] = ("y_true", "y_pred")) -> None:
    if a.shape[0] != b.shape[0]:
        raise InvalidInputError(f"{names[0]} and {names[1]} have different lengths: {a.shape[0]} and {b.shape[0]}")
    if a.shape[0] == 0:
        raise InvalidInputError(f"{names[0]} and {names[1]} are empty")


_MIX = "Mix of label input types (string and number)"


def _host_kind(y: Any) -> str:
    """``"string"``, ``"number"`` or ``"mixed"`` for host labels (NumPy arrays, lists),
    ``"number"`` for arrays of any other namespace (they hold numbers only)."""
    if isinstance(y, (list, tuple)):
        try:
            y = np.asarray(y)
        except ValueError:  # ragged
            y = np.asarray(y, dtype=object)
    if not isinstance(y, np.ndarray):
        return "number"
    if y.dtype.kind in "USa":
        return "string"
    if y.dtype.kind == "O":
        is_str = {isinstance(v, (str, bytes)) for v in y.ravel().tolist()}
        return "mixed" if len(is_str) > 1 else ("string" if True in is_str else "number")
    return "number"


def _check_label_types(*ys: Any) -> None:
    """scikit-learn's ``unique_labels`` rule: string and number labels are never mixed
    (NumPy would silently turn the numbers into strings, which then match nothing)."""
    kinds = {_host_kind(y) for y in ys if y is not None}
    if "mixed" in kinds or {"string", "number"} <= kinds:
        raise InvalidInputError(_MIX)


def _check_finite_labels(y: Any, xp: Any, name: str, discrete: bool = False) -> None:
    """NaN/infinity in float labels raise; with ``discrete`` so do non-integer values
    (continuous targets, which classification scores cannot handle). One reduction."""
    if not xp.isdtype(y.dtype, "real floating") or y.shape[0] == 0:
        return
    ok = xp.isfinite(y)
    if discrete:
        ok = ok & (y == xp.floor(xp.where(ok, y, xp.zeros_like(y))))
    if bool(xp.all(ok)):
        return
    if not bool(xp.all(xp.isfinite(y))):
        raise InvalidInputError(f"{name} contains NaN or infinity")
    bad = to_numpy(xp.nonzero(~ok)[0])
    first = float(to_numpy(y[int(bad[0]) : int(bad[0]) + 1])[0])
    raise InvalidInputError(
        f"Classification metrics can't handle continuous targets: {name} has non-integer "
        f"values at {bad.size} position(s), e.g. {name}[{int(bad[0])}] = {first!r}; give "
        "class labels (integers, strings, or floats with integer values)"
    )


def _encode(*ys: Any, labels: Any = None, names: tuple[str, ...] = (), discrete: bool = False) -> tuple[Any, Any, list]:
    """Encode label vectors to class indices ``0..C-1``.

    Returns ``(xp, classes, codes)``: ``classes`` the sorted union (or ``labels`` in the
    given order) and one int64 code vector per input; values not in ``labels`` get ``-1``.
    Non-numeric host labels are encoded with NumPy; numeric ones stay in their namespace.
    String and number labels together raise (``"Mix of label input types"``), NaN labels
    too, and with ``discrete`` (the classification scores) non-integer float labels.
    """
    names = names or tuple(f"y{i}" for i in range(len(ys)))
    _check_label_types(*ys, labels)
    if any(_is_host_nonnumeric(y) for y in ys) or (labels is not None and _is_host_nonnumeric(labels)):
        arrs = [np.asarray(to_numpy(y)) for y in ys]
        for a, nm in zip(arrs, names):
            if a.ndim != 1:
                raise InvalidInputError(f"{nm} must be 1-D, got shape {a.shape}")
        try:
            classes = np.unique(np.concatenate(arrs)) if labels is None else np.asarray(labels)
            sorter = np.argsort(classes, kind="stable")
            codes = []
            for a in arrs:
                pos = np.searchsorted(classes, a, sorter=sorter)
                pos = np.clip(pos, 0, len(classes) - 1)
                idx = sorter[pos]
                codes.append(np.where(classes[idx] == a, idx, -1).astype(np.int64))
        except TypeError as exc:
            raise InvalidInputError(f"{_MIX}: labels of unorderable types ({exc})") from None
        return _npx, classes, codes
    xp = array_namespace(*ys)
    dev = input_device(ys)
    ys = [_as_1d(y, xp, nm, dev) for y, nm in zip(ys, names)]
    for y, nm in zip(ys, names):
        _check_finite_labels(y, xp, nm, discrete)
    sizes = [int(y.shape[0]) for y in ys]
    if labels is None:
        classes, inv = xp.unique_inverse(xp.concat(ys))
        inv = xp.astype(inv, xp.int64)
        codes, s = [], 0
        for n in sizes:
            codes.append(inv[s : s + n])
            s += n
        return xp, classes, codes
    lab = labels if hasattr(labels, "shape") else from_numpy(np.asarray(labels), xp, device=dev)
    lab = _as_1d(lab, xp, "labels")
    L = int(lab.shape[0])
    if L == 0:
        raise InvalidInputError("labels is empty")
    if int(xp.unique_values(lab).shape[0]) != L:
        raise InvalidInputError("labels contains duplicates")
    common = xp.result_type(lab.dtype, *[y.dtype for y in ys])
    allv = xp.concat([xp.astype(lab, common)] + [xp.astype(y, common) for y in ys])
    uniq, inv = xp.unique_inverse(allv)
    inv = xp.astype(inv, xp.int64)
    # map unique index -> position in `labels` (or -1): a tiny (L, n_unique) one-hot sum
    dev = _device(inv)
    onehot = inv[:L, None] == xp.arange(uniq.shape[0], dtype=xp.int64, device=dev)[None, :]
    pos = xp.arange(1, L + 1, dtype=xp.int64, device=dev)[:, None]
    lookup = xp.sum(xp.where(onehot, pos, xp.zeros_like(pos)), axis=0) - 1
    codes, s = [], L
    for n in sizes:
        codes.append(xp.take(lookup, inv[s : s + n]))
        s += n
    return xp, lab, codes


def _counts2d(a: Any, b: Any, n_a: int, n_b: int, xp: Any) -> Any:
    """(n_a, n_b) int64 table of co-occurrences of codes ``a`` and ``b`` (``-1`` ignored)."""
    valid = (a >= 0) & (b >= 0)
    flat = xp.where(valid, a * n_b + b, xp.full_like(a, -1))
    return xp.reshape(bincount(flat, n_a * n_b), (n_a, n_b))


def _divide(num: Any, den: Any, zero_division: Any, xp: Any, what: str) -> Any:
    """Elementwise ``num/den`` with ``zero_division`` where ``den == 0``."""
    zd = 0.0 if zero_division == "warn" else zero_division
    if isinstance(zd, str) or not (zd in (0.0, 1.0) or math.isnan(zd)):
        raise InvalidInputError(f"zero_division must be 'warn', 0.0, 1.0 or nan, got {zero_division!r}")
    zd = float(zd)
    bad = den == 0
    if zero_division == "warn" and bool(xp.any(bad)):
        warnings.warn(f"{what} is ill-defined (0/0) for some labels; set to 0.0", UndefinedMetricWarning, stacklevel=3)
    safe = xp.where(bad, xp.ones_like(den), den)
    return xp.where(bad, xp.full_like(num, zd), num / safe)


# --------------------------------------------------------------------------- public
