"""Coverage of a rule set as matrix products.

A rule set is a 0/1 antecedent matrix ``A`` of shape ``(n_rules, n_items)``; row ``i`` of a
boolean item matrix ``B`` matches rule ``r`` when it has every item of the antecedent, i.e.
when ``(B @ A.T)[i, r] == A[r].sum()``. Per-class counts are a second product,
``matches.T @ onehot(y)``. Both are GEMMs on the data's device.
"""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, check_namespace, device_of
from ..errors import InvalidInputError

__all__ = ["rule_matches", "class_counts", "rule_counts", "exact_float"]

# float32 represents every integer up to 2**24 exactly, so a GEMM of 0/1 matrices whose sums
# stay within it is exact whatever the summation order.
_F32_EXACT = 2**24


def exact_float(xp: Any, largest_count: int) -> Any:
    """The float dtype in which 0/1 products counting up to ``largest_count`` are exact:
    float32 up to 2**24, float64 beyond (exact to 2**53)."""
    return xp.float32 if largest_count <= _F32_EXACT else xp.float64


def _as_float(M: Any, xp: Any, dtype: Any) -> Any:
    return xp.astype(M, dtype)


def _as_bool(M: Any, xp: Any) -> Any:
    """A 0/1 matrix as bool (a bool one as it is: strict refuses ``bool != 0``)."""
    return M if M.dtype == xp.bool else M != 0


def rule_matches(B: Any, A: Any, xp: Any = None) -> Any:
    """Which rows match which rules.

    Parameters
    ----------
    B : bool array, shape (n_rows, n_items)
        Item matrix.
    A : bool or 0/1 array, shape (n_rules, n_items)
        Antecedents, in B's namespace and on its device. An empty antecedent matches every row.
    xp : namespace, optional
        The arrays' namespace (found from them when not given).

    Returns
    -------
    matches : bool array, shape (n_rows, n_rules)

    Notes
    -----
    One GEMM, O(n_rows * n_items * n_rules), in float32 (exact: each entry counts at most
    n_items items, checked against 2**24; float64 beyond).

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1, 0], [1, 0, 1]], dtype=bool)
    >>> A = np.array([[1, 1, 0], [1, 0, 0]], dtype=bool)
    >>> rule_matches(B, A)
    array([[ True,  True],
           [False,  True]])
    """
    if B.ndim != 2 or A.ndim != 2 or B.shape[1] != A.shape[1]:
        raise InvalidInputError(
            f"B (n_rows, n_items) and A (n_rules, n_items) must agree on n_items; got shapes "
            f"{tuple(B.shape)} and {tuple(A.shape)}"
        )
    xp = array_namespace(B) if xp is None else xp
    check_namespace(A, xp, name="A", device=device_of(B))
    dtype = exact_float(xp, int(B.shape[1]))
    Af = _as_float(_as_bool(A, xp), xp, dtype)
    lengths = xp.sum(Af, axis=1)
    return _as_float(_as_bool(B, xp), xp, dtype) @ Af.T == lengths[None, :]


def class_counts(matches: Any, y: Any, n_classes: int, xp: Any = None) -> Any:
    """Rows of each class that each rule covers: ``matches.T @ onehot(y)``.

    Parameters
    ----------
    matches : bool array, shape (n_rows, n_rules)
    y : int array, shape (n_rows,)
        Class indices in ``0..n_classes-1``.
    n_classes : int
    xp : namespace, optional
        The arrays' namespace (found from them when not given).

    Returns
    -------
    counts : int64 array, shape (n_rules, n_classes)

    Notes
    -----
    One GEMM, O(n_rows * n_rules * n_classes); float32 while n_rows <= 2**24.

    Examples
    --------
    >>> import numpy as np
    >>> class_counts(np.array([[True], [True], [False]]), np.array([0, 1, 1]), 2)
    array([[1, 1]])
    """
    xp = array_namespace(matches, y) if xp is None else xp
    dtype = exact_float(xp, int(matches.shape[0]))
    onehot = xp.astype(y[:, None] == xp.arange(n_classes, dtype=y.dtype, device=device_of(y))[None, :], dtype)
    return xp.astype(xp.astype(matches, dtype).T @ onehot, xp.int64)


def rule_counts(B: Any, A: Any, y: Any, n_classes: int, xp: Any = None) -> Any:
    """Per-class coverage counts of rule set ``A`` on item matrix ``B`` with classes ``y``.

    Parameters
    ----------
    B : bool array, shape (n_rows, n_items)
    A : 0/1 array, shape (n_rules, n_items)
    y : int array, shape (n_rows,)
    n_classes : int
    xp : namespace, optional
        The arrays' namespace (found from them when not given).

    Returns
    -------
    counts : int64 array, shape (n_rules, n_classes)
        ``counts[r, c]``: rows of class ``c`` that match rule ``r``. Coverage is the row sum.

    Notes
    -----
    Two GEMMs (:func:`rule_matches`, :func:`class_counts`).

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1], [1, 0], [0, 1]], dtype=bool)
    >>> rule_counts(B, np.array([[1, 0]]), np.array([0, 1, 1]), 2)
    array([[1, 1]])
    """
    xp = array_namespace(B, A, y) if xp is None else xp
    return class_counts(rule_matches(B, A, xp), y, n_classes, xp)
