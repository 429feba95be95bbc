"""Metric names: the one resolver from what a user writes to the name the engine runs.

Two families reach the engine:

* **inner-product metrics** (``euclidean``, ``sqeuclidean``, ``cosine``, ``correlation``,
  ``inner``): a GEMM tile nominates, float64 keys decide (:mod:`gpuknn.ops.search`,
  :mod:`gpuknn.ops.exact`);
* **difference metrics** (``manhattan``, ``chebyshev``, ``minkowski``, ``canberra``,
  ``braycurtis``, ``hamming``): float64 keys of every pair, from the differences
  (:mod:`gpuknn.ops.differences`).

Aliases (scikit-learn's and SciPy's): ``l2`` -> ``euclidean``; ``cityblock``, ``l1`` ->
``manhattan``; ``infinity`` -> ``chebyshev``. ``minkowski`` with ``p`` resolves to
``manhattan`` (p = 1), ``euclidean`` (p = 2), ``chebyshev`` (p = inf), else to the engine
name ``"minkowski:<p>"`` (e.g. ``"minkowski:3"``), which carries p through every layer that
passes a metric name on (cross-validation, sweeps) and is accepted as a metric itself.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import InvalidInputError

__all__ = [
    "INNER_METRICS",
    "DIFFERENCE_METRICS",
    "ALIASES",
    "KNOWN_METRICS",
    "resolve_metric",
    "is_difference",
    "minkowski_p",
    "check_p",
]

INNER_METRICS = ("euclidean", "sqeuclidean", "cosine", "correlation", "inner")
DIFFERENCE_METRICS = ("manhattan", "chebyshev", "minkowski", "canberra", "braycurtis", "hamming")
ALIASES = {"l2": "euclidean", "cityblock": "manhattan", "l1": "manhattan", "infinity": "chebyshev"}
KNOWN_METRICS = INNER_METRICS + DIFFERENCE_METRICS + tuple(ALIASES)


def check_p(p: Any, *, name: str = "p") -> float:
    """``p`` of the Minkowski metric as a float in ``(0, inf]`` (scikit-learn's range;
    ``0 < p < 1`` gives a semi-metric, still ranked exactly)."""
    if isinstance(p, bool):
        raise InvalidInputError(f"{name} must be a number > 0 (or inf), got {p!r}")
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be a number > 0 (or inf), got {p!r}") from None
    if math.isnan(v) or v <= 0:
        raise InvalidInputError(f"{name} must be > 0 (or inf), got {p!r}")
    return v


def _p_name(p: float) -> str:
    return str(int(p)) if p == int(p) else repr(p)


def resolve_metric(metric: Any, p: Any = None) -> str:
    """The engine's name of ``metric`` (with ``p`` for ``"minkowski"``; default 2).

    Raises :class:`InvalidInputError` for an unknown name (listing the known ones), for a
    ``p`` given with another metric than minkowski, or for a bad ``p``.

    Examples
    --------
    >>> resolve_metric("cityblock"), resolve_metric("minkowski", 2), resolve_metric("minkowski", 3)
    ('manhattan', 'euclidean', 'minkowski:3')
    """
    if not isinstance(metric, str):
        raise InvalidInputError(f"metric must be a string, got {metric!r}")
    if metric.startswith("minkowski:"):
        if p is not None:
            raise InvalidInputError(f"metric {metric!r} names its p already; got p={p!r} too")
        metric, p = "minkowski", metric.split(":", 1)[1]
    metric = ALIASES.get(metric, metric)
    if metric not in INNER_METRICS + DIFFERENCE_METRICS:
        raise InvalidInputError(f"unknown metric {metric!r}; expected one of {KNOWN_METRICS}")
    if metric != "minkowski":
        return metric
    v = 2.0 if p is None else check_p(p)
    if v == 1:
        return "manhattan"
    if v == 2:
        return "euclidean"
    if math.isinf(v):
        return "chebyshev"
    return f"minkowski:{_p_name(v)}"


def is_difference(metric: Any) -> bool:
    """Whether an engine name (:func:`resolve_metric`'s) is a difference metric (plain
    ``"minkowski"``, p = 2, is euclidean: no)."""
    if not isinstance(metric, str):
        return False
    name, _, p = metric.partition(":")
    return name in DIFFERENCE_METRICS and (name != "minkowski" or p != "")


def minkowski_p(metric: str) -> float | None:
    """p of an engine name ``"minkowski:<p>"``, else None."""
    if not metric.startswith("minkowski:"):
        return None
    return float(metric.split(":", 1)[1])
