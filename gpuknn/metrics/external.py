"""External clustering indices: agreement of two partitions, from their contingency table.

All pair-counting indices use the table ``N[i, j]`` (points in class i and cluster j) and
never enumerate the n(n-1)/2 pairs:

* ``a`` = pairs together in both partitions = ½(ΣΣ N_ij² − n)
* ``m1`` = pairs together in the first = ½(Σ N_i·² − n), ``m2`` likewise for the second
* ``b = m1 − a`` (together only in the first), ``c = m2 − a``, ``d = M − a − b − c``
  with ``M = n(n−1)/2``.

The table comes from one ``bincount``-like pass in the labels' namespace; the few sums are
brought to the host as Python integers, so the indices are exact up to the final division.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import to_numpy as _host_copy
from .._delegation import on_input_device
from .._labels import encode
from ..errors import InvalidInputError
from ._labels import _counts2d

__all__ = [
    "contingency_matrix",
    "pair_counts",
    "rand_score",
    "adjusted_rand_score",
    "pair_jaccard_score",
    "fowlkes_mallows_score",
]


@on_input_device
def contingency_matrix(labels_true: Any, labels_pred: Any, *, eps: float | None = None, sparse: bool = False) -> Any:
    """Contingency table ``N[i, j]`` = number of points in true class i and cluster j.

    Parameters
    ----------
    labels_true, labels_pred : arrays of shape (n,)
        Any labels (integers of any namespace, or host strings); classes and clusters are
        numbered in sorted order of their labels. Empty labelings give a (0, 0) table.
    eps : float, optional
        Added to every cell (a float64 table), e.g. to keep logarithms finite.
    sparse : bool
        Return a ``scipy.sparse`` CSR matrix on the host, as scikit-learn does (not with
        ``eps``).

    Returns
    -------
    int64 array of shape (n_classes, n_clusters), in the labels' namespace (float64 with
    ``eps``; a host ``scipy.sparse.csr_matrix`` with ``sparse=True``).

    Complexity O(n + n_classes n_clusters).

    Examples
    --------
    >>> import numpy as np
    >>> contingency_matrix(np.array([0, 0, 1, 1]), np.array([5, 5, 5, 7])).tolist()
    [[2, 0], [1, 1]]
    """
    xp, ct, (t,) = encode(labels_true, names=("labels_true",))
    _, cp, (p,) = encode(labels_pred, names=("labels_pred",))
    if t.shape[0] != p.shape[0]:
        raise InvalidInputError(f"labels_true and labels_pred have different lengths: {t.shape[0]} and {p.shape[0]}")
    if eps is not None and sparse:
        raise InvalidInputError("Cannot set 'eps' when sparse=True")
    if type(t) is not type(p):
        from .._backend import array_namespace, device_of, from_numpy, to_numpy  # noqa: PLC0415 - mixed host/xp input

        # host labels (NumPy codes) meet an array: both go to the array's namespace and device
        base = p if isinstance(t, np.ndarray) else t
        xp, dev = array_namespace(base), device_of(base)
        t, p = (a if type(a) is type(base) else from_numpy(to_numpy(a), xp, device=dev) for a in (t, p))
    table = _counts2d(t, p, int(ct.shape[0]), int(cp.shape[0]), xp)
    if sparse:
        import scipy.sparse  # noqa: PLC0415 - only for sparse=True

        return scipy.sparse.csr_matrix(_host_copy(table))
    if eps is not None:
        table = xp.astype(table, xp.float64) + float(eps)
    return table


@on_input_device
def pair_counts(labels_true: Any, labels_pred: Any) -> tuple[int, int, int, int]:
    """Pair counts ``(a, b, c, d)`` over the n(n−1)/2 unordered pairs of points.

    ``a``: together in both; ``b``: together in ``labels_true`` only; ``c``: together in
    ``labels_pred`` only; ``d``: apart in both. Exact Python integers.

    Complexity O(n + table size).

    Examples
    --------
    >>> import numpy as np
    >>> pair_counts(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1]))
    (1, 1, 2, 2)
    """
    N = contingency_matrix(labels_true, labels_pred)
    return _pairs_from_table(N)


def _pairs_from_table(N: Any) -> tuple[int, int, int, int]:
    from .._backend import array_namespace  # noqa: PLC0415

    xp = array_namespace(N)
    n = int(xp.sum(N))
    sum_sq = int(xp.sum(N * N))
    rows, cols = xp.sum(N, axis=1), xp.sum(N, axis=0)
    sa, sb = int(xp.sum(rows * rows)), int(xp.sum(cols * cols))
    a = (sum_sq - n) // 2
    m1, m2 = (sa - n) // 2, (sb - n) // 2
    b, c = m1 - a, m2 - a
    d = n * (n - 1) // 2 - a - b - c
    return a, b, c, d


@on_input_device
def rand_score(labels_true: Any, labels_pred: Any) -> float:
    """Rand index: fraction of pairs on which the partitions agree, ``(a + d) / M``.

    Equals ``1 + (ΣΣN_ij² − ½(ΣN_i·² + ΣN_·j²))·2/(n(n−1))``. One point: 1.0.
    Complexity O(n + table size).

    Examples
    --------
    >>> import numpy as np
    >>> rand_score(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]))
    1.0
    """
    a, b, c, d = pair_counts(labels_true, labels_pred)
    M = a + b + c + d
    return 1.0 if M == 0 else (a + d) / M


@on_input_device
def adjusted_rand_score(labels_true: Any, labels_pred: Any) -> float:
    """Rand index adjusted for chance (Hubert & Arabie): 0 expected at random, 1 if identical.

    ``ARI = 2(ad − bc) / ((a + b)(b + d) + (a + c)(c + d))``; 1.0 when ``b = c = 0``
    (identical partitions, including the trivial ones). Complexity O(n + table size).

    Examples
    --------
    >>> import numpy as np
    >>> adjusted_rand_score(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]))
    1.0
    """
    a, b, c, d = pair_counts(labels_true, labels_pred)
    if b == 0 and c == 0:
        return 1.0
    return 2.0 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))


@on_input_device
def pair_jaccard_score(labels_true: Any, labels_pred: Any) -> float:
    """Pair-counting Jaccard index ``a / (a + b + c)`` (not scikit-learn's label ``jaccard_score``).

    1.0 when no pair is together in either partition (both all-singletons: identical).
    Complexity O(n + table size).

    Examples
    --------
    >>> import numpy as np
    >>> pair_jaccard_score(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1]))
    0.25
    """
    a, b, c, _ = pair_counts(labels_true, labels_pred)
    return 1.0 if a + b + c == 0 else a / (a + b + c)


@on_input_device
def fowlkes_mallows_score(labels_true: Any, labels_pred: Any) -> float:
    """Fowlkes–Mallows index ``a / sqrt((a + b)(a + c))``; 0.0 when ``a = 0``.

    Complexity O(n + table size).

    Examples
    --------
    >>> import numpy as np
    >>> round(fowlkes_mallows_score(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1])), 6)
    0.408248
    """
    a, b, c, _ = pair_counts(labels_true, labels_pred)
    if a == 0:
        return 0.0
    return math.sqrt(a / (a + c)) * math.sqrt(a / (a + b))


def _hubert_gamma_partitions(labels_a: Any, labels_b: Any, *, normalized: bool = True) -> float:
    """Hubert Γ between the same-cluster pair indicators of two partitions.

    Raw Γ = a / M (mean product of the indicators). Normalised Γ = their Pearson
    correlation over pairs = Matthews correlation ``(M a − m1 m2) / sqrt(m1 m2 (M−m1)(M−m2))``;
    0.0 when an indicator is constant (a partition of one cluster or of singletons).
    """
    a, b, c, d = pair_counts(labels_a, labels_b)
    M = a + b + c + d
    if M == 0:
        raise InvalidInputError("Hubert Γ needs at least 2 points")
    if not normalized:
        return a / M
    m1, m2 = a + b, a + c
    den = m1 * m2 * (M - m1) * (M - m2)
    if den == 0:
        return 0.0
    return (M * a - m1 * m2) / math.sqrt(den)
