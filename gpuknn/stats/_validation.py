"""Checks at the public boundary of :mod:`gpuknn.stats`: score tables, paired samples, alpha."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import check_int
from ..errors import InvalidInputError, InvalidInputTypeError

__all__ = ["check_alpha", "check_control", "check_option", "check_paired", "check_table"]


def _as_float64(a: Any, name: str) -> np.ndarray:
    try:
        return np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputTypeError(f"{name} must hold real numbers: {exc}") from exc


def check_table(
    scores: Any, *, name: str = "scores", greater_is_better: bool = True, min_datasets: int = 2, min_methods: int = 2
) -> np.ndarray:
    """``scores`` as a finite float64 host array of shape (n_datasets, n_methods), negated
    when ``greater_is_better`` is false (so that larger is always better afterwards)."""
    s = _as_float64(scores, name)
    if s.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-D (n_datasets, n_methods), got shape {s.shape}")
    n, k = s.shape
    if n < min_datasets:
        raise InvalidInputError(f"{name} needs at least {min_datasets} data sets (rows), got shape {s.shape}")
    if k < min_methods:
        raise InvalidInputError(f"{name} needs at least {min_methods} methods (columns), got shape {s.shape}")
    bad = ~np.isfinite(s)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidInputError(
            f"{name} of shape {s.shape} contains NaN or infinity ({int(bad.sum())} entries; "
            f"first at [{i}, {j}] = {s[i, j]})"
        )
    return s if greater_is_better else -s


def check_paired(x: Any, y: Any, *, names: tuple[str, str] = ("x", "y"), min_size: int = 2) -> tuple:
    """Two finite float64 1-D host arrays of one length (at least ``min_size``)."""
    out = []
    for a, name in zip((x, y), names):
        v = _as_float64(a, name)
        if v.ndim != 1:
            raise InvalidInputError(f"{name} must be 1-D, got shape {v.shape}")
        if not np.isfinite(v).all():
            raise InvalidInputError(f"{name} of shape {v.shape} contains NaN or infinity")
        out.append(v)
    if out[0].shape != out[1].shape:
        raise InvalidInputError(f"{names[0]} and {names[1]} have different lengths: {out[0].size} and {out[1].size}")
    if out[0].size < min_size:
        raise InvalidInputError(f"{names[0]} and {names[1]} need at least {min_size} pairs, got {out[0].size}")
    return out[0], out[1]


def check_alpha(alpha: Any, name: str = "alpha") -> float:
    """``alpha`` as a float in the open interval (0, 1)."""
    try:
        a = float(alpha)
    except (TypeError, ValueError) as exc:
        raise InvalidInputTypeError(f"{name} must be a number in (0, 1), got {alpha!r}") from exc
    if not 0.0 < a < 1.0:
        raise InvalidInputError(f"{name} must be in the open interval (0, 1), got {alpha!r}")
    return a


def check_control(control: Any, n_methods: int) -> int:
    """``control`` as a column index in [0, n_methods) (negative indices count from the end)."""
    return check_int(control, name="control", low=-n_methods, high=n_methods - 1) % n_methods


def check_option(value: Any, name: str, allowed: tuple) -> Any:
    if value not in allowed:
        raise InvalidInputError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value
