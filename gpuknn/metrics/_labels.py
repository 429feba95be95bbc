"""What the metrics add to the label encoder (:func:`gpuknn._labels.encode`, which encodes
y_true / y_pred and checks the label types): the warning of undefined scores, the length
check of paired label vectors, co-occurrence counts and the guarded division."""

from __future__ import annotations

import math
import warnings
from typing import Any

from .._delegation import bincount
from ..errors import InvalidInputError

__all__ = ["UndefinedMetricWarning"]


class UndefinedMetricWarning(UserWarning):
    """A score is undefined for the given input (0/0, one class only, ...)."""


# --------------------------------------------------------------------------- helpers
def _check_lengths(a: Any, b: Any, names: tuple[str, str] = ("y_true", "y_pred")) -> None:
    if a.shape[0] != b.shape[0]:
        raise InvalidInputError(f"{names[0]} and {names[1]} have different lengths: {a.shape[0]} and {b.shape[0]}")
    if a.shape[0] == 0:
        raise InvalidInputError(f"{names[0]} and {names[1]} are empty")


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
