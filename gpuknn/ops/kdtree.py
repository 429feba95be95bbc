"""Exact k-nearest neighbours through SciPy's ``cKDTree`` for low-dimensional host data.

A k-d tree beats the GEMM engine on the CPU when the dimension is small (the tree prunes
most of the references); it is useless on a GPU and in high dimension. :func:`resolve_algorithm`
implements the ``algorithm="auto"`` rule of the classifiers:

* ``"kd_tree"`` when the namespace is NumPy, the metric is ``"euclidean"`` or
  ``"sqeuclidean"`` and ``d <= KD_TREE_MAX_DIM`` (15);
* ``"brute"`` (the tiled GEMM engine, :func:`gpuknn.ops.kneighbors.kneighbors`) otherwise.

**Same answer as brute force.** ``cKDTree.query`` orders equal distances arbitrarily, so
:func:`kdtree_kneighbors` asks for a few more neighbours than needed, re-orders each row by
(distance, index) and cuts at k. A row whose last returned distance still equals its k-th
distance may hide more tied references; those rows are queried again with a doubled count
until the tie group is complete. The result therefore follows the engine's rule: equal
distances -> lower reference index. Candidate distances are recomputed on the host in
float64 as ``sum((q - r)²)`` by :func:`gpuknn._delegation.sqdist64`, the brute-force
engine's exact pass (:mod:`gpuknn.ops.exact`): both give the same distances, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, is_numpy_namespace, to_numpy
from .._delegation import sqdist64
from ..errors import InvalidInputError
from .kneighbors import Neighbors, PreparedReference, search, search_validated
from .limits import check_magnitude, check_values, check_working_memory, underflow_scale
from .metricspec import is_difference

__all__ = ["KD_TREE_MAX_DIM", "ALGORITHMS", "resolve_algorithm", "kdtree_kneighbors", "neighbors"]

KD_TREE_MAX_DIM = 15
ALGORITHMS = ("auto", "brute", "kd_tree")
_KD_METRICS = ("euclidean", "sqeuclidean")


def resolve_algorithm(algorithm: str, xp: Any, metric: str, n_features: int) -> str:
    """``"brute"`` or ``"kd_tree"`` for the given request (see the module docstring).

    Raises :class:`InvalidInputError` for an unknown algorithm, or ``"kd_tree"`` asked for
    with a non-euclidean inner-product metric or a non-NumPy namespace. ``"kd_tree"`` with a
    difference metric (:mod:`gpuknn.ops.differences`) or ``"precomputed"`` runs brute force,
    as ``"auto"`` does: the same answer, the tree serves only the euclidean family here.
    """
    if algorithm not in ALGORITHMS:
        raise InvalidInputError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if is_difference(metric) or metric in ("precomputed", "callable"):
        return "brute"
    kd_ok = metric in _KD_METRICS
    if algorithm == "kd_tree":
        if not kd_ok:
            raise InvalidInputError(f"algorithm='kd_tree' supports metric 'euclidean' or 'sqeuclidean', got {metric!r}")
        if not is_numpy_namespace(xp):
            raise InvalidInputError(
                "algorithm='kd_tree' runs on the CPU with NumPy arrays only; "
                f"got arrays of {getattr(xp, '__name__', xp)} (use 'brute' or 'auto')"
            )
        return "kd_tree"
    if algorithm == "auto" and kd_ok and is_numpy_namespace(xp) and n_features <= KD_TREE_MAX_DIM:
        return "kd_tree"
    return "brute"


def build_tree(R: Any, *, name: str = "R", magnitude: float | None = None) -> Any:
    """A ``scipy.spatial.cKDTree`` over the rows of R (host float64 copy).

    Values whose squares overflow are refused (naming ``name``), as the brute engine does,
    unless the caller validated R already and passes its ``magnitude``.
    """
    from scipy.spatial import cKDTree  # noqa: PLC0415 - scipy import is slow, only when used

    if magnitude is None:
        check_values(R, array_namespace(R), name=name)
    return cKDTree(np.asarray(to_numpy(R), dtype=np.float64))


def kdtree_kneighbors(
    Q: Any, R: Any, k: int, *, metric: str = "euclidean", tree: Any = None, extra: int = 4, squared: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest rows of R for every row of Q, ties -> lower index (host NumPy).

    Parameters
    ----------
    Q : array of shape (n_queries, d), finite
    R : array of shape (n_ref, d), finite (unused when ``tree`` is given)
    k : int, ``1 <= k <= n_ref``
    metric : {"euclidean", "sqeuclidean"}
    tree : cKDTree, optional
        A tree built by :func:`build_tree` on R (classifiers build it once in ``fit``).
    extra : int
        Neighbours asked for beyond k, so that most tie groups are seen in one query.
    squared : bool
        Return squared distances whatever the metric (the exact pass's keys, negated).

    Returns
    -------
    distances : float64 array of shape (n_queries, k), ascending
    indices : int64 array of shape (n_queries, k)

    Complexity: about O(n_queries · (k + extra) · log n_ref) for small d.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0], [2.0], [1.0], [1.0]])
    >>> kdtree_kneighbors(np.array([[1.0]]), R, 2)
    (array([[0., 0.]]), array([[2, 3]]))
    """
    if metric not in _KD_METRICS:
        raise InvalidInputError(f"kd_tree supports 'euclidean' or 'sqeuclidean', got {metric!r}")
    if tree is None:
        tree = build_tree(R)
    Qh = np.asarray(to_numpy(Q), dtype=np.float64)
    n_ref = tree.n
    if not 1 <= k <= n_ref:
        raise InvalidInputError(f"k must satisfy 1 <= k <= n_reference = {n_ref}, got k={k}")
    n_q = Qh.shape[0]
    out_d = np.empty((n_q, k), dtype=np.float64)
    out_i = np.empty((n_q, k), dtype=np.int64)
    m0 = min(n_ref, k + extra)
    # Query blocks keep the (rows, m, d) candidate differences around 32 MiB.
    block = max(1, (1 << 25) // (8 * m0 * max(1, Qh.shape[1])))
    for b0 in range(0, n_q, block):
        rows = np.arange(b0, min(n_q, b0 + block))
        m = m0
        while rows.size:
            i = tree.query(Qh[rows], k=m, workers=-1)[1]
            i = np.asarray(i, dtype=np.int64).reshape(rows.size, m)
            # Exact squared distances of the candidates (the tree's are sqrt'ed, so squaring
            # them back is off by an ulp), by the brute-force engine's own canonical pair
            # arithmetic: both paths give the same bits, and ties are decided on these.
            d = sqdist64(tree.data[i], Qh[rows][:, None, :])
            # Re-order by (distance, index): lexsort's last key is the primary one.
            order = np.lexsort((i, d), axis=1)
            d = np.take_along_axis(d, order, axis=1)
            i = np.take_along_axis(i, order, axis=1)
            # A row is complete when all references were seen or its k-th distance is
            # strictly below the last one returned (no hidden member of its tie group).
            done = (m == n_ref) | (d[:, k - 1] < d[:, m - 1])
            out_d[rows[done]] = d[done, :k]
            out_i[rows[done]] = i[done, :k]
            rows = rows[~done]
            m = min(n_ref, 2 * m)
    if squared or metric == "sqeuclidean":
        return out_d, out_i
    return np.sqrt(out_d), out_i


def neighbors(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    algorithm: str = "auto",
    working_memory: float | None = None,
    tree: Any = None,
    names: tuple[str, str] = ("Q", "R"),
    magnitude: float | None = None,
) -> Any:
    """k nearest references by the chosen algorithm: a :class:`gpuknn.ops.kneighbors.Neighbors`.

    ``algorithm`` is resolved with :func:`resolve_algorithm`; ``"brute"`` calls
    :func:`gpuknn.ops.kneighbors.search` (R an array or a ``PreparedReference``). Ties -> lower
    reference index either way, and the same distances. Inputs must already be
    validated; values whose squares overflow are refused on both paths, naming ``names`` (the
    caller's argument names). With ``magnitude`` (``max |value|`` of Q and R, from the
    caller's one check at its public boundary) nothing is checked or scanned again: R (a
    ``PreparedReference`` for brute force) is touched only through its index.
    """
    data = R.data if isinstance(R, PreparedReference) else R
    xp = array_namespace(Q, data)
    algo = resolve_algorithm(algorithm, xp, metric, int(data.shape[1]))
    if algo == "brute":
        if magnitude is not None and isinstance(R, PreparedReference) and R.metric == metric:
            wm = check_working_memory(working_memory, xp)
            return search_validated(Q, R, k, magnitude=magnitude, working_memory=wm)
        return search(Q, R, k, metric=metric, working_memory=working_memory, names=names)
    if magnitude is None:
        magnitude = check_magnitude(Q, data, xp, names=names)  # cKDTree would return garbage indices
    if underflow_scale(magnitude, np.float64, np) != 1.0:
        # Squared distances of data this tiny underflow in the tree's float64 (every pair
        # tied at 0, issue 32): the brute engine rescales them exactly and scales back.
        return search(Q, data, k, metric=metric, working_memory=working_memory, names=names)
    sq, i = kdtree_kneighbors(Q, data, k, metric=metric, tree=tree, squared=True)
    keys = -sq
    dist = np.sqrt(sq) if metric == "euclidean" else sq
    return Neighbors(keys, i, np.zeros(sq.shape[0]), metric, Q.dtype, lambda rows: dist[rows])
