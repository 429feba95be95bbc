"""Tiled exact k-nearest-neighbour search and votes for many k at once.

:func:`kneighbors` walks query tiles (and reference tiles when one row of scores against
all references does not fit), computes each tile's scores with one GEMM of prepared rows
(:mod:`gpuknn.ops.distance`), selects the top k (:mod:`gpuknn.ops.topk`) and merges the
partial lists of reference tiles. The score tile never exceeds ``working_memory`` bytes
(selection scratch included); on an out-of-memory error the tile is halved and retried.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

from ._backend import (
    array_namespace,
    check_int,
    default_working_memory,
    device_of,
    is_out_of_memory,
    validate_matrix,
)
from .errors import InvalidInputError
from .ops.distance import check_metric, prepare_rows, scores_to_distances, validate_pair
from .ops.topk import merge_topk, topk_largest

__all__ = ["PreparedReference", "kneighbors", "votes_for_many_k", "vote_counts", "tile_shape"]

# Bytes of selection scratch per score element (mask + compaction), on top of the score.
_SCRATCH_PER_ELEMENT = 2


def tile_shape(n_queries: int, n_ref: int, itemsize: int, working_memory: int) -> tuple[int, int]:
    """Rows and columns of the score tile that fit in ``working_memory`` bytes.

    Whole reference rows are preferred (no merge); references are split only when even
    ``min(n_queries, 32)`` query rows against all references would not fit.
    """
    per = itemsize + _SCRATCH_PER_ELEMENT
    budget = max(int(working_memory), per)
    min_rows = min(n_queries, 32)
    if min_rows * n_ref * per <= budget:
        cols = n_ref
    else:
        cols = max(1, budget // (min_rows * per))
    rows = max(1, min(n_queries, budget // (cols * per)))
    return rows, cols


class PreparedReference:
    """Reference rows validated and prepared once, for repeated searches against them.

    Preparing (centring, normalising or augmenting) 60 000 x 784 rows costs about as much as
    a 300-query search, so estimators build this at ``fit`` and pass it to
    :func:`kneighbors` in place of ``R``.

    Parameters
    ----------
    R : array of shape (n_ref, d)
    metric : str

    Examples
    --------
    >>> import numpy as np
    >>> ref = PreparedReference(np.array([[0.0], [1.0], [2.0]]), metric="euclidean")
    >>> kneighbors(np.array([[1.9]]), ref, 1, metric="euclidean")[1]
    array([[2]])
    """

    def __init__(self, R: Any, *, metric: str = "euclidean"):
        check_metric(metric)
        xp = array_namespace(R)
        self.data = validate_matrix(R, xp, name="R")
        self.metric = metric
        self.rows = prepare_rows(self.data, metric, role="reference").rows
        self.shape = tuple(self.data.shape)
        self.dtype = self.data.dtype


def kneighbors(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    working_memory: int | None = None,
    return_distance: bool = True,
):
    """Exact k nearest references of every query, tiled under a memory budget.

    Parameters
    ----------
    Q : array of shape (n_queries, d)
    R : array of shape (n_ref, d), or a :class:`PreparedReference`
        Same namespace as Q. Integer input is computed in float64; float32 stays float32.
        With a :class:`PreparedReference` (of the same metric), Q is cast to its dtype.
    k : int
        Number of neighbours, ``1 <= k <= n_ref``.
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
        See :mod:`gpuknn.ops.distance`. For ``"inner"`` the returned "distances" are the
        inner products, sorted from largest (closest) to smallest.
    working_memory : int, optional
        Bytes the score tile plus selection scratch may use. Default: half the free GPU
        memory under CuPy, 256 MiB on the host (env ``GPUKNN_WORKING_MEMORY`` overrides).
    return_distance : bool
        Return ``(distances, indices)`` (default) or only ``indices``.

    Returns
    -------
    distances : array of shape (n_queries, k), ascending (``inner``: descending)
    indices : int64 array of shape (n_queries, k)
        **Ties:** equal distances are ordered by lower reference index, on every backend.

    Raises
    ------
    InvalidInputError
        NaN/inf (rows named), k out of range, feature mismatch, empty or non-2-D input,
        unknown metric. Nothing is computed before validation passes.

    Notes
    -----
    Complexity O(n_queries · n_ref · d) in GEMMs plus two reads of each score tile.
    Extra memory: ``working_memory`` + O(n_queries · k) + the prepared copies of the rows,
    O((n_queries + n_ref) · d); pass a :class:`PreparedReference` to prepare R only once.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> kneighbors(np.array([[1.2]]), R, 2)
    (array([[0.2, 0.8]]), array([[1, 2]]))
    """
    check_metric(metric)
    if isinstance(R, PreparedReference):
        if R.metric != metric:
            raise InvalidInputError(f"R was prepared for metric {R.metric!r}, not {metric!r}")
        xp = array_namespace(Q, R.data)
        Q = validate_matrix(Q, xp, name="Q", dtype=R.dtype)
        if Q.shape[1] != R.shape[1]:
            raise InvalidInputError(
                f"Q has {Q.shape[1]} features but R has {R.shape[1]} "
                f"(shapes {tuple(Q.shape)} and {R.shape})"
            )
        ref_rows = R.rows
    else:
        Q, R, xp = validate_pair(Q, R, names=("Q", "R"))
        ref_rows = None
    n_q, n_ref = Q.shape[0], R.shape[0]
    k = check_int(k, name="k", low=1, high=n_ref)
    if working_memory is None:
        working_memory = default_working_memory(xp)
    elif working_memory <= 0:
        raise InvalidInputError(f"working_memory must be positive, got {working_memory}")
    qp = prepare_rows(Q, metric, role="query")
    if ref_rows is None:
        ref_rows = prepare_rows(R, metric, role="reference").rows
    itemsize = 8 if Q.dtype == xp.float64 else 4
    rows, cols = tile_shape(n_q, n_ref, itemsize, working_memory)

    out_s, out_i = [], []
    start = 0
    while start < n_q:
        stop = min(start + rows, n_q)
        try:
            s, i = _query_tile(qp.rows[start:stop, :], ref_rows, k, cols, xp)
        except Exception as exc:  # noqa: BLE001 - only allocation failures are retried
            if not is_out_of_memory(exc) or (rows == 1 and cols == 1):
                raise
            rows, cols = (max(1, rows // 2), cols) if rows > 1 else (1, max(1, cols // 2))
            continue
        out_s.append(s)
        out_i.append(i)
        start = stop
    scores = out_s[0] if len(out_s) == 1 else xp.concat(out_s, axis=0)
    indices = out_i[0] if len(out_i) == 1 else xp.concat(out_i, axis=0)
    if not return_distance:
        return indices
    return scores_to_distances(scores, metric, qp.sqnorm), indices


def _query_tile(Qt: Any, Rp: Any, k: int, cols: int, xp: Any) -> tuple[Any, Any]:
    """Top-k scores/indices of one query tile against all references, tile by tile."""
    n_ref = Rp.shape[0]
    best_s = best_i = None
    for c0 in range(0, n_ref, cols):
        c1 = min(c0 + cols, n_ref)
        S = Qt @ Rp[c0:c1, :].T
        s, i = topk_largest(S, min(k, c1 - c0))
        del S
        if c0:
            i = i + c0
        if best_s is None:
            best_s, best_i = s, i
        else:
            best_s, best_i = merge_topk(
                xp.concat([best_s, s], axis=1), xp.concat([best_i, i], axis=1), k
            )
    return best_s, best_i


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

