"""Every reference within a radius of each query of a block, with exact distances.

The brute-force path (:func:`radius_block`) is one GEMM of scores for a block of queries
against all references; a pair whose score lies inside the radius or within the tile's
certified rounding bound (:mod:`gpuknn.ops.certify`) of it gets its exact float64 distance
(:mod:`gpuknn.ops.exact`) and is a member iff that distance is ``<= radius``
(scikit-learn's rule). The k-d tree path (:func:`radius_block_kdtree`, host NumPy) asks the
tree for a hair more than the radius and decides the same way on the same arithmetic
(:func:`gpuknn._delegation.sqdist64`). So every backend, tiling and algorithm gives the
same members, and every reported distance is exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of
from .._delegation import sqdist64
from ..errors import InvalidInputError
from .certify import reference_bound
from .exact import exact_keys, keys_to_distances
from .radius import radius_key
from .rerank import take_stats
from .search import Reference, prepare_queries, score_tile

__all__ = ["radius_block", "radius_block_kdtree", "check_radius", "ragged"]

_EUCLID = ("euclidean", "sqeuclidean")


def radius_block(Xb: Any, ref: Reference, radius: float, *, budget: int) -> tuple[Any, Any, Any]:
    """Every (query, reference) pair of a query block within ``radius``, exactly.

    Parameters
    ----------
    Xb : array of shape (m, d), validated, ``ref``'s dtype
    ref : Reference
        The prepared training rows (:class:`gpuknn.neighbors.PreparedReference`).
    radius : float
        Pairs at exact distance ``<= radius`` (metric units) are members.
    budget : int
        Bytes for the gathered rows of the exact pass (chunked under it).

    Returns
    -------
    rows, columns : int64 arrays of shape (n_pairs,)
        Query row (within the block) and reference index, in (row, column) order.
    distances : array of shape (n_pairs,), Xb's dtype
        The exact (float64, rounded once) distances.

    Complexity: one (m, n_ref) GEMM, O(d) float64 work per pair inside the radius or near
    it; memory O(m · n_ref) for the scores.

    Examples
    --------
    >>> import numpy as np
    >>> ref = Reference(np.array([[0.0], [1.0], [3.0]]), "euclidean", keep_rows=True)
    >>> radius_block(np.array([[0.5], [3.0]]), ref, 1.0, budget=1 << 20)
    (array([0, 0, 1]), array([0, 1, 2]), array([0.5, 0.5, 0. ]))
    """
    xp, metric, dtype = array_namespace(Xb), ref.metric, Xb.dtype
    n_ref = ref.shape[0]
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Xb, ref, dtype)
    S = xp.astype(score_tile(q_rows, ref.block(0, n_ref, dtype).T), xp.float64)
    e = reference_bound(ref, q_norm, q_stats, dtype)
    key = radius_key(radius, metric)
    # The radius in tile units (euclidean family: (|q - c|^2 + key) / 2), lowered by the
    # tile's certified error and a few float64 ulps of the units themselves (the radius's
    # own rounding): every true member is a candidate; the exact pass decides.
    at = 0.5 * (q_sq + key) if metric in _EUCLID else xp.full_like(e, key)
    slack = 2.0**-40 * ((0.5 * (q_sq + abs(key))) if metric in _EUCLID else xp.full_like(e, 1 + abs(key)))
    cand = xp.nonzero(xp.reshape(S >= (at - e - slack)[:, None], (-1,)))[0]
    r, c = cand // n_ref, cand % n_ref
    # Exact keys pair by pair, in chunks of gathered query rows within the budget.
    n_cand = int(cand.shape[0])
    step = max(1, budget // (4 * 8 * (ref.shape[1] + 4)))
    keys = []
    for p0 in range(0, n_cand, step):
        rp, cp = r[p0 : min(p0 + step, n_cand)], c[p0 : min(p0 + step, n_cand)]
        keys.append(
            exact_keys(
                xp.take(Xb, rp, axis=0), ref.data, cp[:, None], metric, ref.stats, q_stats=take_stats(q_stats, rp)
            )[:, 0]
        )
    if not keys:
        empty = xp.zeros(0, dtype=xp.int64, device=device_of(Xb))
        return empty, empty, xp.zeros(0, dtype=dtype, device=device_of(Xb))
    d = keys_to_distances(keys[0] if len(keys) == 1 else xp.concat(keys), metric)
    inside = xp.nonzero(d <= radius)[0]
    return (
        xp.astype(xp.take(r, inside), xp.int64),
        xp.astype(xp.take(c, inside), xp.int64),
        xp.astype(xp.take(d, inside), dtype),
    )


def radius_block_kdtree(Xb: Any, tree: Any, radius: float, metric: str) -> tuple[Any, Any, Any]:
    """:func:`radius_block` through a ``cKDTree`` of the references (host NumPy; euclidean
    or sqeuclidean): the same members, order and exact distances."""
    from scipy.spatial import cKDTree  # noqa: PLC0415 - scipy import is slow, only when used

    Xh = np.asarray(Xb, dtype=np.float64)
    r_tree = math.sqrt(radius) if metric == "sqeuclidean" else radius
    # A hair beyond the radius: membership is decided below on the exact distances.
    pairs = cKDTree(Xh).sparse_distance_matrix(tree, r_tree * (1 + 1e-9) + 1e-300, output_type="ndarray")
    qi, rj = pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)
    d = sqdist64(Xh[qi], tree.data[rj])  # the brute engine's exact arithmetic
    if metric == "euclidean":
        d = np.sqrt(d)
    keep = d <= radius
    qi, rj, d = qi[keep], rj[keep], d[keep]
    o = np.lexsort((rj, qi))
    return qi[o], rj[o], d[o].astype(Xb.dtype)


def check_radius(radius: Any) -> float:
    """``radius`` as a finite float ``>= 0``, or :class:`InvalidInputError` naming it."""
    if isinstance(radius, bool):
        raise InvalidInputError(f"radius must be a number, got {radius!r}")
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise InvalidInputError(f"radius must be a number, got {radius!r}") from None
    if not (math.isfinite(r) and r >= 0):
        raise InvalidInputError(f"radius must be finite and >= 0, got {radius!r}")
    return r


def ragged(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """NumPy object array whose entry i is ``values[indptr[i]:indptr[i + 1]]``."""
    out = np.empty(indptr.shape[0] - 1, dtype=object)
    for i, part in enumerate(np.split(values, indptr[1:-1])):
        out[i] = part  # assigned one by one: equal lengths must not make a 2-D array
    return out
