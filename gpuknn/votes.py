"""Class votes of sorted neighbour lists, for many k at once.

A cumulative one-hot count along the neighbour axis gives the votes of the first k
neighbours for every k in one vectorised pass -- what the sweeps and the classifiers use.
**Vote ties go to the lowest class index** (scikit-learn's rule), on every backend.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from ._backend import array_namespace, device_of
from .errors import InvalidInputError

__all__ = ["vote_counts", "votes_for_many_k"]


def _neighbor_weights(distances: Any, weights: str, xp: Any) -> Any:
    """Per-neighbour vote weights (rows sorted ascending by distance).

    ``"distance"`` follows scikit-learn: ``1/d``, except that a row with an exact zero
    distance gives weight 1 to its zero-distance neighbours and 0 to the others.
    """
    if weights == "uniform":
        return None
    if weights != "distance":
        raise InvalidInputError(f"weights must be 'uniform' or 'distance', got {weights!r}")
    if distances is None:
        raise InvalidInputError("weights='distance' needs the neighbour distances")
    zero = distances == 0
    inv = 1.0 / xp.where(zero, xp.ones_like(distances), distances)
    # Rows are sorted ascending, so a zero anywhere means a zero in column 0.
    row_zero = zero[:, 0:1]
    return xp.where(row_zero, xp.astype(zero, distances.dtype), inv)


def vote_counts(
    neighbor_labels: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    distances: Any = None,
    weights: str = "uniform",
    max_bytes: int = 1 << 28,
) -> Any:
    """Class vote totals for every k in ``ks`` from one sorted neighbour list.

    A cumulative one-hot count along the neighbour axis gives the votes of the first k
    neighbours for every k at once: O(n · k_max · n_classes).

    Parameters
    ----------
    neighbor_labels : int array of shape (n, k_max)
        Class indices (0 .. n_classes-1) of the neighbours, nearest first.
    ks : sequence of int
        Each ``1 <= k <= k_max``.
    n_classes : int
    distances : array of shape (n, k_max), optional
        Needed for ``weights="distance"``.
    weights : {"uniform", "distance"}
    max_bytes : int
        Rows are processed in blocks so the one-hot cube stays under this size.

    Returns
    -------
    counts : array of shape (len(ks), n, n_classes)
        int64 for uniform votes, the distances' float dtype for distance weights.
    """
    xp = array_namespace(neighbor_labels, distances)
    n, k_max = neighbor_labels.shape
    ks_list = [operator.index(k) for k in ks]
    if not ks_list or min(ks_list) < 1 or max(ks_list) > k_max:
        raise InvalidInputError(f"every k must be in [1, {k_max}], got {ks_list}")
    w = _neighbor_weights(distances, weights, xp)
    dev = device_of(neighbor_labels)
    classes = xp.arange(n_classes, device=dev)
    k_idx = xp.asarray([k - 1 for k in ks_list], device=dev)
    dtype = xp.int64 if w is None else w.dtype
    per_row = k_max * n_classes * 8
    block = max(1, min(n, max_bytes // max(1, per_row)))
    out = []
    for b0 in range(0, n, block):
        b1 = min(b0 + block, n)
        lab = neighbor_labels[b0:b1, :]
        onehot = xp.astype(lab[:, :, None] == classes[None, None, :], dtype)
        if w is not None:
            onehot = onehot * w[b0:b1, :, None]
        cum = xp.cumulative_sum(onehot, axis=1)
        out.append(xp.take(cum, k_idx, axis=1))  # (b, len(ks), C)
    counts = out[0] if len(out) == 1 else xp.concat(out, axis=0)
    return xp.permute_dims(counts, (1, 0, 2))


def votes_for_many_k(
    neighbor_labels: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    distances: Any = None,
    weights: str = "uniform",
) -> Any:
    """Predicted class index for every k in ``ks`` from one sorted neighbour list.

    **Vote ties go to the lowest class index** (scikit-learn's rule), on every backend.

    Returns
    -------
    predictions : int64 array of shape (len(ks), n)

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([[2, 1, 1, 0]])
    >>> votes_for_many_k(labels, [1, 2, 3], n_classes=3)
    array([[2],
           [1],
           [1]])
    """
    xp = array_namespace(neighbor_labels, distances)
    counts = vote_counts(
        neighbor_labels, ks, n_classes=n_classes, distances=distances, weights=weights
    )
    return xp.astype(xp.argmax(counts, axis=2), xp.int64)

