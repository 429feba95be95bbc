"""Information-theoretic agreement of two partitions, scikit-learn's definitions.

All scores come from the contingency table ``N[i, j]`` (points in class i and cluster j,
built on the labels' device by :func:`gpuknn.metrics.contingency_matrix`) and its margins
``a_i = Σ_j N_ij``, ``b_j = Σ_i N_ij`` (natural logarithms, n points):

* ``H(U) = −Σ_i (a_i/n) log(a_i/n)``, ``H(V)`` likewise from ``b``;
* ``MI = Σ_ij (N_ij/n) log(n N_ij / (a_i b_j))`` (terms below machine epsilon dropped);
* ``NMI = MI / mean(H(U), H(V))`` and ``AMI = (MI − E[MI]) / (mean(H(U), H(V)) − E[MI])``,
  ``mean`` one of min, geometric, arithmetic, max;
* homogeneity ``MI / H(U)``, completeness ``MI / H(V)``, V-measure their weighted harmonic
  mean.

The table, entropies and MI are computed in float64 in the labels' namespace and brought to
the host in one transfer. ``E[MI]`` under the hypergeometric model of random labelings with
the same margins (Vinh, Epps & Bailey 2010) is summed on the host, vectorised over the
distinct margin pairs ``(a, b)`` and the admissible cell values ``n_ij``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import array_namespace, to_numpy
from .._delegation import on_input_device
from .._labels import as_array_input
from ..errors import InvalidInputError
from .external import contingency_matrix

__all__ = [
    "mutual_info_score",
    "normalized_mutual_info_score",
    "adjusted_mutual_info_score",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "completeness_score",
    "v_measure_score",
]

_EPS = float(np.finfo(np.float64).eps)
_AVERAGES = ("min", "geometric", "arithmetic", "max")
_BATCH = 1 << 20  # (pair, n_ij) terms per vectorised step of E[MI]


def _length(y: Any) -> int:
    shape = y.shape if hasattr(y, "shape") else np.shape(y)
    return int(shape[0]) if len(shape) else -1


def _given_table(contingency: Any) -> Any:
    """A user's contingency table as a 2-D array: a ``scipy.sparse`` matrix (scikit-learn's
    ``contingency_matrix(sparse=True)``) densified on the host, a list as a NumPy array, an
    array of any namespace as it is; it must hold non-negative integer counts."""
    if hasattr(contingency, "toarray") and not hasattr(contingency, "__array_namespace__"):
        contingency = contingency.toarray()  # scipy.sparse: a host table of R x C cells
    contingency = as_array_input(contingency)
    if isinstance(contingency, (list, tuple)):
        contingency = np.asarray(contingency)
    xp = array_namespace(contingency)
    if contingency.ndim != 2:
        raise InvalidInputError(f"contingency must be a 2-D table, got shape {tuple(contingency.shape)}")
    if not xp.isdtype(contingency.dtype, ("integral", "bool")):
        raise InvalidInputError(f"contingency must hold integer counts, got dtype {contingency.dtype}")
    if bool(xp.any(contingency < 0)):
        raise InvalidInputError("contingency holds negative counts")
    return contingency


def _summary(labels_true: Any, labels_pred: Any, *, margins: bool = False, table: Any = None) -> dict | None:
    """MI, the two entropies, the table's shape (and margins): None for empty labelings.
    ``table``: a validated contingency table to use instead of the labels'."""
    if table is None:
        if _length(labels_true) == 0 and _length(labels_pred) == 0:
            return None
        N = contingency_matrix(labels_true, labels_pred)
    else:
        N = table
        if int(N.shape[0]) * int(N.shape[1]) == 0:
            return None
    xp = array_namespace(N)
    R, C = int(N.shape[0]), int(N.shape[1])
    F = xp.astype(N, xp.float64)
    a, b = xp.sum(F, axis=1), xp.sum(F, axis=0)
    n = xp.sum(a)
    log_n = xp.log(n)

    def entropy(p: Any) -> Any:
        pos = p > 0
        lp = xp.log(xp.where(pos, p, xp.ones_like(p)))
        return -xp.sum(xp.where(pos, (p / n) * (lp - log_n), xp.zeros_like(p)))

    nz = F > 0
    lf = xp.log(xp.where(nz, F, xp.ones_like(F)))
    outer = xp.log(a)[:, None] + xp.log(b)[None, :]
    t = (F / n) * (lf - log_n) + (F / n) * (2 * log_n - outer)
    t = xp.where(nz & (xp.abs(t) >= _EPS), t, xp.zeros_like(t))
    parts = [xp.reshape(xp.sum(t), (1,)), xp.reshape(entropy(a), (1,)), xp.reshape(entropy(b), (1,))]
    if margins:
        parts += [a, b]
    v = to_numpy(xp.concat(parts)).astype(np.float64)  # the one transfer to the host
    out = {
        "mi": 0.0 if R == 1 or C == 1 else max(float(v[0]), 0.0),
        "h_true": 0.0 if R == 1 else float(v[1]),
        "h_pred": 0.0 if C == 1 else float(v[2]),
        "R": R,
        "C": C,
    }
    if margins:
        out["a"], out["b"] = v[3 : 3 + R].astype(np.int64), v[3 + R :].astype(np.int64)
    return out


def _average(u: float, v: float, method: str) -> float:
    if method == "min":
        return min(u, v)
    if method == "max":
        return max(u, v)
    if method == "geometric":
        return math.sqrt(u * v)
    return (u + v) / 2.0


def _check_average(method: Any) -> str:
    if method not in _AVERAGES:
        raise InvalidInputError(f"average_method must be 'min', 'geometric', 'arithmetic' or 'max', got {method!r}")
    return method


def _expected_mutual_info(a: np.ndarray, b: np.ndarray) -> float:
    """E[MI] of random labelings with margins ``a``, ``b`` (hypergeometric model).

    ``E = Σ_ij Σ_{k=max(1, a_i+b_j−n)}^{min(a_i, b_j)} (k/n) log(n k/(a_i b_j)) P(k)`` with
    ``P(k) = a_i! b_j! (n−a_i)! (n−b_j)! / (n! k! (a_i−k)! (b_j−k)! (n−a_i−b_j+k)!)``, the
    log-factorials from one ``gammaln`` table. The terms depend on ``(a_i, b_j)`` only, so
    each distinct pair is summed once and weighted by its multiplicity.
    """
    from scipy.special import gammaln  # noqa: PLC0415

    if a.size == 1 or b.size == 1:
        return 0.0
    n = int(a.sum())
    ua, ca = np.unique(a, return_counts=True)
    ub, cb = np.unique(b, return_counts=True)
    A = np.repeat(ua, ub.size)
    B = np.tile(ub, ua.size)
    W = np.outer(ca, cb).ravel().astype(np.float64)
    start = np.maximum(1, A + B - n)
    length = np.minimum(A, B) - start + 1
    lf = gammaln(np.arange(n + 1, dtype=np.float64) + 1.0)  # lf[k] = log k!
    total = 0.0
    ends = np.cumsum(length)
    p0 = 0
    while p0 < A.size:  # batches of pairs holding about _BATCH terms
        p1 = max(p0 + 1, int(np.searchsorted(ends, ends[p0] - length[p0] + _BATCH, side="right")))
        L = length[p0:p1]
        pair = np.repeat(np.arange(p0, p1), L)
        first = np.repeat(np.cumsum(L) - L, L)
        k = start[pair] + (np.arange(int(L.sum())) - first)
        a_, b_ = A[pair], B[pair]
        log_p = (
            lf[a_] + lf[b_] + lf[n - a_] + lf[n - b_] - lf[n] - lf[k] - lf[a_ - k] - lf[b_ - k] - lf[n - a_ - b_ + k]
        )
        term = (k / n) * (math.log(n) + np.log(k) - np.log(a_) - np.log(b_)) * np.exp(log_p)
        total += float(np.sum(term * W[pair]))
        p0 = p1
    return total


@on_input_device
def mutual_info_score(labels_true: Any, labels_pred: Any, *, contingency: Any = None) -> float:
    """Mutual information of two labelings, in nats (scikit-learn's ``mutual_info_score``).

    Parameters
    ----------
    labels_true, labels_pred : arrays of shape (n,), n >= 1
        Labels of any type (integers or floats of any namespace, host strings). Not used
        when ``contingency`` is given (``None`` is then fine).
    contingency : array of shape (R, C), optional
        Their contingency table (:func:`~gpuknn.metrics.contingency_matrix`: integer counts
        of any namespace, or its ``scipy.sparse`` form, densified on the host).

    Returns
    -------
    float >= 0
        0.0 when either labeling has a single class.

    Notes
    -----
    Complexity O(n + R C) for R classes and C clusters, one transfer to the host.

    Examples
    --------
    >>> import numpy as np
    >>> round(mutual_info_score(np.array([0, 0, 1, 1]), np.array([5, 5, 7, 7])), 6)
    0.693147
    """
    table = None if contingency is None else _given_table(contingency)
    s = _summary(labels_true, labels_pred, table=table)
    if s is None:
        raise InvalidInputError("labels_true and labels_pred are empty" if table is None else "contingency is empty")
    return s["mi"]


@on_input_device
def normalized_mutual_info_score(labels_true: Any, labels_pred: Any, *, average_method: str = "arithmetic") -> float:
    """Mutual information normalised by a mean of the two entropies, in [0, 1].

    1.0 when both labelings have a single class (or are empty); 0.0 when the mutual
    information is 0 otherwise (scikit-learn's conventions).

    Parameters
    ----------
    labels_true, labels_pred : arrays of shape (n,)
    average_method : {"arithmetic", "geometric", "min", "max"}

    Returns
    -------
    float

    Notes
    -----
    Complexity O(n + R C).

    Examples
    --------
    >>> import numpy as np
    >>> normalized_mutual_info_score(np.array([0, 0, 1, 1]), np.array(["b", "b", "a", "a"]))
    1.0
    """
    _check_average(average_method)
    s = _summary(labels_true, labels_pred)
    if s is None or s["R"] == s["C"] == 1:
        return 1.0
    if s["mi"] == 0.0:
        return 0.0
    return s["mi"] / _average(s["h_true"], s["h_pred"], average_method)


@on_input_device
def adjusted_mutual_info_score(labels_true: Any, labels_pred: Any, *, average_method: str = "arithmetic") -> float:
    """Mutual information adjusted for chance: ``(MI − E[MI]) / (mean(H_U, H_V) − E[MI])``.

    1.0 for identical partitions (and when both have a single class, or are empty), about
    0 for independent ones, 0.0 when exactly one of them has a single class; numerator and
    denominator are kept at least machine epsilon away from 0 with their sign, as
    scikit-learn does.

    Parameters
    ----------
    labels_true, labels_pred : arrays of shape (n,)
    average_method : {"arithmetic", "geometric", "min", "max"}

    Returns
    -------
    float <= 1

    Notes
    -----
    Complexity O(n + R C) on the device; E[MI] on the host in float64,
    O(U_a U_b min(max a, max b)) for U_a, U_b distinct class and cluster sizes (at worst
    O(R C n)).

    Examples
    --------
    >>> import numpy as np
    >>> adjusted_mutual_info_score(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]))
    1.0
    >>> round(adjusted_mutual_info_score(np.array([0, 0, 0, 1, 1, 1]), np.array([0, 0, 1, 1, 2, 2])), 6)
    0.298792
    """
    _check_average(average_method)
    s = _summary(labels_true, labels_pred, margins=True)
    if s is None or s["R"] == s["C"] == 1:
        return 1.0
    if s["R"] == 1 or s["C"] == 1:
        return 0.0
    emi = _expected_mutual_info(s["a"], s["b"])
    den = _average(s["h_true"], s["h_pred"], average_method) - emi
    den = min(den, -_EPS) if den < 0 else max(den, _EPS)
    num = s["mi"] - emi
    num = min(num, -_EPS) if num < 0 else max(num, _EPS)
    return num / den


@on_input_device
def homogeneity_completeness_v_measure(
    labels_true: Any, labels_pred: Any, *, beta: float = 1.0
) -> tuple[float, float, float]:
    """Homogeneity ``MI/H(U)``, completeness ``MI/H(V)`` and V-measure, all in [0, 1].

    Homogeneity (completeness) is 1.0 when ``labels_true`` (``labels_pred``) has a single
    class; V-measure is ``(1 + β) h c / (β h + c)``, 0.0 when ``h + c = 0``. Empty
    labelings give ``(1.0, 1.0, 1.0)``.

    Parameters
    ----------
    labels_true, labels_pred : arrays of shape (n,)
    beta : float >= 0
        Weight of homogeneity (< 1) or completeness (> 1) in the V-measure.

    Returns
    -------
    (float, float, float)

    Notes
    -----
    Complexity O(n + R C), one transfer to the host.

    Examples
    --------
    >>> import numpy as np
    >>> h, c, v = homogeneity_completeness_v_measure(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 2]))
    >>> round(h, 6), round(c, 6), round(v, 6)
    (1.0, 0.666667, 0.8)
    """
    try:
        beta = float(beta)
    except (TypeError, ValueError):
        raise InvalidInputError(f"beta must be a number >= 0, got {beta!r}") from None
    if not beta >= 0:
        raise InvalidInputError(f"beta must be a number >= 0, got {beta!r}")
    s = _summary(labels_true, labels_pred)
    if s is None:
        return 1.0, 1.0, 1.0
    h = s["mi"] / s["h_true"] if s["h_true"] else 1.0
    c = s["mi"] / s["h_pred"] if s["h_pred"] else 1.0
    v = 0.0 if h + c == 0.0 else (1 + beta) * h * c / (beta * h + c)
    return float(h), float(c), float(v)


@on_input_device
def homogeneity_score(labels_true: Any, labels_pred: Any) -> float:
    """Homogeneity: each cluster holds members of a single class (see
    :func:`homogeneity_completeness_v_measure`). Complexity O(n + R C).

    Examples
    --------
    >>> import numpy as np
    >>> round(homogeneity_score(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 2])), 6)
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[0]


@on_input_device
def completeness_score(labels_true: Any, labels_pred: Any) -> float:
    """Completeness: all members of a class are in one cluster (see
    :func:`homogeneity_completeness_v_measure`). Complexity O(n + R C).

    Examples
    --------
    >>> import numpy as np
    >>> round(completeness_score(np.array([0, 0, 1, 2]), np.array([0, 0, 1, 1])), 6)
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[1]


@on_input_device
def v_measure_score(labels_true: Any, labels_pred: Any, *, beta: float = 1.0) -> float:
    """V-measure, the weighted harmonic mean of homogeneity and completeness (equal to
    :func:`normalized_mutual_info_score` with the arithmetic mean when ``beta = 1``).
    Complexity O(n + R C).

    Examples
    --------
    >>> import numpy as np
    >>> round(v_measure_score(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 2])), 6)
    0.8
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)[2]
