"""Rule measures, vectorised over a rule set.

Every measure is computed from a rule's contingency table against the class it predicts:
``tp`` (covered rows of that class), ``fp`` (covered rows of other classes), ``P`` (rows of
that class), ``N = n - P``, ``fn = P - tp``, ``tn = N - fp``, ``cov = tp + fp``. The formulas
are in docs/rules.md. A ratio whose denominator is zero is 0 (confidence, sensitivity, ...),
except the odds ratio, which is ``inf`` for a positive numerator over zero and NaN for 0/0.
"""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, device_of
from ..errors import InvalidInputError

__all__ = ["MEASURES", "rule_measures", "laplace"]

MEASURES = (
    "coverage",
    "support",
    "confidence",
    "sensitivity",
    "specificity",
    "fpr",
    "negrel",
    "f_measure",
    "wracc",
    "laplace",
    "m_estimate",
    "odds_ratio",
    "lift",
)


def _ratio(xp: Any, a: Any, b: Any) -> Any:
    """``a / b``, 0 where ``b == 0`` (no division by zero is evaluated)."""
    zero = b == 0
    return xp.where(zero, xp.zeros_like(a), a / xp.where(zero, xp.ones_like(b), b))


def laplace(tp: Any, cov: Any, n_classes: int) -> Any:
    """Laplace accuracy ``(tp + 1) / (cov + k)`` of rules covering ``cov`` rows, ``tp`` of
    them of the predicted class, in a problem of ``k = n_classes`` classes.

    Examples
    --------
    >>> import numpy as np
    >>> float(laplace(np.asarray(1.0), np.asarray(1.0), 2))  # 1 positive, 0 negatives
    0.6666666666666666
    """
    return (tp + 1) / (cov + n_classes)


def rule_measures(counts: Any, class_totals: Any, target: Any, *, m: float = 2.0) -> dict[str, Any]:
    """Every measure of every rule, as float64 arrays of the counts' namespace and device.

    Parameters
    ----------
    counts : int array, shape (n_rules, n_classes)
        Covered rows per class (:func:`gpuknn.rules.rule_counts`).
    class_totals : int array, shape (n_classes,)
        Rows per class in the data.
    target : int array, shape (n_rules,)
        The class each rule predicts (its head).
    m : float, default=2.0
        The m of the m-estimate.

    Returns
    -------
    dict
        ``{name: array of shape (n_rules,)}`` for every name of :data:`MEASURES`.

    Notes
    -----
    O(n_rules * n_classes) elementwise work; no host transfer.

    Examples
    --------
    >>> import numpy as np
    >>> r = rule_measures(np.array([[1, 0], [1, 1]]), np.array([5, 5]), np.array([0, 0]))
    >>> r["laplace"].tolist()
    [0.6666666666666666, 0.5]
    """
    xp = array_namespace(counts, class_totals, target)
    if counts.ndim != 2 or class_totals.ndim != 1 or target.ndim != 1:
        raise InvalidInputError(
            "counts must be (n_rules, n_classes), class_totals (n_classes,) and target (n_rules,); got shapes "
            f"{tuple(counts.shape)}, {tuple(class_totals.shape)}, {tuple(target.shape)}"
        )
    if counts.shape[0] != target.shape[0] or counts.shape[1] != class_totals.shape[0]:
        raise InvalidInputError(
            f"counts {tuple(counts.shape)} does not agree with class_totals {tuple(class_totals.shape)} "
            f"and target {tuple(target.shape)}"
        )
    f64 = xp.float64
    k = int(counts.shape[1])
    C = xp.astype(counts, f64)
    tot = xp.astype(class_totals, f64)
    t = xp.astype(target, xp.int64)
    head = t[:, None] == xp.arange(k, dtype=xp.int64, device=device_of(t))[None, :]
    zeros = xp.zeros_like(C)
    tp = xp.sum(xp.where(head, C, zeros), axis=1)
    cov = xp.sum(C, axis=1)
    fp = cov - tp
    n = xp.sum(tot)
    P = xp.sum(xp.where(head, xp.broadcast_to(tot[None, :], C.shape), zeros), axis=1)
    N = n - P
    fn, tn = P - tp, N - fp
    confidence = _ratio(xp, tp, cov)
    sensitivity = _ratio(xp, tp, P)
    prior = P / n
    num, den = tp * tn, fp * fn
    odds = xp.where(
        den == 0,
        xp.where(num == 0, xp.full_like(num, xp.nan), xp.full_like(num, xp.inf)),
        num / xp.where(den == 0, xp.ones_like(den), den),
    )
    return {
        "coverage": cov / n,
        "support": tp / n,
        "confidence": confidence,
        "sensitivity": sensitivity,
        "specificity": _ratio(xp, tn, N),
        "fpr": _ratio(xp, fp, N),
        "negrel": _ratio(xp, tn, tn + fn),
        "f_measure": _ratio(xp, 2 * confidence * sensitivity, confidence + sensitivity),
        "wracc": cov / n * (confidence - prior),
        "laplace": laplace(tp, cov, k),
        "m_estimate": (tp + m * prior) / (cov + m),
        "odds_ratio": odds,
        "lift": _ratio(xp, confidence, prior),
    }
