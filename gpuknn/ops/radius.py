"""Everything within a radius, decided exactly: the tile nominates, exact keys decide.

Which references lie within the radius of a query (distance ``<= radius``, scikit-learn's
rule) is decided on the exact distances (:mod:`gpuknn.ops.exact`), as the k-nearest search
decides its lists: a tile score farther than its certified bound (:mod:`gpuknn.ops.certify`)
from the radius settles a pair; the pairs within the bound of the radius -- and those that
may lie at distance 0, where the zero-distance weight rule changes every weight -- get exact
keys. Three shapes of the one rule:

* :func:`radius_tile` -- a dense ``(rows, n_ref)`` block of distances and its membership
  (the radius votes and means);
* :func:`radius_pairs` -- the member pairs of a block with exact distances (the radius
  graph), and :func:`radius_pairs_kdtree`, the same pairs from a ``cKDTree`` (host NumPy,
  euclidean family), decided on the same arithmetic (:func:`gpuknn._delegation.sqdist64`);
* :func:`radius_votes` -- class votes of the members; a weighted vote whose winner the tile
  distances cannot settle is decided on the exact distances of that row's members
  (:func:`gpuknn.ops.votes.exact_winner`).

The difference metrics (:mod:`gpuknn.ops.differences`) and the host metrics
(``precomputed``, callable: :mod:`gpuknn.ops.hostmetric`) have no tile to screen: every
pair's distance is exact (:func:`_dense_tile`), and the same three shapes follow from it.

So every backend, tiling and algorithm gives the same members. :func:`radius_rows` is the
one block budget: query rows per block under a budget in bytes (the public
``working_memory``, in MiB, through :func:`gpuknn.ops.limits.check_working_memory`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._backend import array_namespace, device_of, to_numpy
from .._delegation import sqdist64
from ..errors import InvalidInputError
from .certify import reference_bound
from .differences import DifferenceReference
from .exact import exact_keys, keys_to_distances
from .hostmetric import HostReference
from .kneighbors import unscale_distances
from .limits import underflow_scale
from .metricspec import INNER_METRICS, resolve_metric
from .rerank import take_stats
from .search import Reference, prepare_queries, score_tile
from .votes import exact_winner
from .weights import distance_weights

__all__ = [
    "radius_key",
    "check_radius",
    "radius_rows",
    "RadiusTile",
    "radius_tile",
    "radius_votes",
    "radius_pairs",
    "radius_pairs_kdtree",
    "ragged",
]

_EUCLID = ("euclidean", "sqeuclidean")
# Bytes per (query, reference) pair of a dense radius block: the score tile, its float64
# copy, the masks and, where every pair is a candidate, their positions, keys and distances.
_BYTES_PER_PAIR = 80


def radius_key(radius: float, metric: str) -> float:
    """The exact key (larger = closer) of a pair at distance ``radius``."""
    if metric not in INNER_METRICS:  # difference and host metrics: minus the distance
        return -radius
    if metric == "euclidean":
        return -radius * radius
    if metric == "sqeuclidean":
        return -radius
    return 1.0 - radius


def radius_rows(n_queries: int, n_ref: int, budget: int) -> int:
    """Query rows per dense radius block: about ten float64 ``(rows, n_ref)`` tiles in
    ``budget`` **bytes**, at least one row."""
    return max(1, min(n_queries, int(budget) // max(1, n_ref * _BYTES_PER_PAIR)))


class RadiusTile(NamedTuple):
    """A dense radius block (:func:`radius_tile`).

    Attributes
    ----------
    dist : float64 array (rows, n_ref)
        Distances: exact where ``unsure``, the tile's (within ``err``) elsewhere.
    inside : bool array (rows, n_ref)
        Membership, exact.
    unsure : bool array (rows, n_ref)
        The pairs the tile could not place (near the radius or near 0): exact keys.
    keys : float64 array (rows, n_ref)
        The keys of ``dist`` (:mod:`gpuknn.ops.exact`).
    err : float64 array (rows,)
        Bound on the key error of the pairs that are not ``unsure``.
    q_stats : the queries' statistics (for exact keys of further pairs)
    """

    dist: Any
    inside: Any
    unsure: Any
    keys: Any
    err: Any
    q_stats: Any


def radius_tile(Xb: Any, ref: Reference, radius: float) -> RadiusTile:
    """Distances of a query block to every reference and exact membership ``d <= radius``.

    One GEMM nominates; the pairs within its certified bound of the radius or of distance 0
    get exact keys, so membership and zero distances are exact (the ``"distance"`` weight
    rule), the other distances the tile's. Complexity: one (rows, n_ref) GEMM plus O(d)
    float64 work per unsure pair; memory O(rows · n_ref).
    """
    if isinstance(ref, DifferenceReference | HostReference):
        return _dense_tile(Xb, ref, radius)
    xp, metric = array_namespace(Xb), ref.metric
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Xb, ref, Xb.dtype)
    S = xp.astype(score_tile(q_rows, ref.block(0, ref.shape[0], Xb.dtype).T), xp.float64)
    e = reference_bound(ref, q_norm, q_stats, Xb.dtype)[:, None]
    euclid = metric in _EUCLID
    scale = 0.5 if euclid else 1.0

    def units(key):  # a key in tile units, (rows, 1)
        return 0.5 * (q_sq[:, None] + key) if euclid else xp.full_like(e, key)

    key = radius_key(radius, metric)
    at_radius, at_zero = units(key), units(radius_key(0.0, metric))
    # Pairs the tile cannot place: within its certified error of the radius -- widened by a
    # few float64 ulps of the radius in tile units (their own rounding) -- or possibly at 0.
    slack = 2.0**-40 * (0.5 * (q_sq[:, None] + abs(key)) if euclid else xp.full_like(e, 1 + abs(key)))
    near_radius = (S >= at_radius - e - slack) & (S <= at_radius + e + slack)
    unsure = near_radius | ((S >= at_zero - e) & (e > 0))
    keys = (S - 0.5 * q_sq[:, None]) / scale if euclid else S
    flat_unsure = xp.reshape(unsure, (-1,))
    flat = xp.nonzero(flat_unsure)[0]
    if flat.shape[0]:
        n_ref = S.shape[1]
        r, c = flat // n_ref, flat % n_ref
        exact = exact_keys(
            xp.take(Xb, r, axis=0), ref.data, c[:, None], metric, ref.stats, q_stats=take_stats(q_stats, r)
        )[:, 0]
        # Scatter the exact keys back: position of each unsure entry among the unsure ones.
        pos = xp.clip(xp.cumulative_sum(xp.astype(flat_unsure, xp.int64)) - 1, min=0)
        keys = xp.reshape(xp.where(flat_unsure, xp.take(exact, pos), xp.reshape(keys, (-1,))), S.shape)
    dist = keys_to_distances(keys, metric)
    inside = xp.where(unsure, dist <= radius, S >= at_radius)
    return RadiusTile(dist, inside, unsure, keys, e[:, 0] / scale, q_stats)


def _dense_tile(Xb: Any, ref: Any, radius: float) -> RadiusTile:
    """:func:`radius_tile` of a reference whose pair distances are exact (difference and
    host metrics): every distance exact, nothing unsure, no error."""
    xp = array_namespace(Xb)
    dist = ref.distances(ref.values(Xb, 0, ref.shape[0]))
    dev = device_of(dist)
    zero = xp.zeros(dist.shape[0], dtype=xp.float64, device=dev)
    return RadiusTile(dist, dist <= radius, xp.zeros(dist.shape, dtype=xp.bool, device=dev), -dist, zero, None)


def _member_distances(Xr: Any, ref: Any, members: Any, q_stats: Any) -> Any:
    """Exact distances (float64 (1, m)) of one query row ``Xr`` (1, d) to ``members``."""
    if isinstance(ref, DifferenceReference | HostReference):
        return ref.distances(ref.pair_values(Xr, members[None, :]))
    keys = exact_keys(Xr, ref.data, members[None, :], ref.metric, ref.stats, q_stats=q_stats)
    return keys_to_distances(keys, ref.metric)


def radius_votes(
    X: Any,
    ref: Reference,
    onehot: Any,
    radius: float,
    weights: str,
    *,
    rows_per_block: int,
) -> tuple[Any, Any]:
    """Vote totals (n, n_classes) of the references within ``radius``, and their winners.

    Parameters
    ----------
    X : array (n, d), validated, ``ref``'s dtype
    ref : Reference
        The training rows (kept prepared: :class:`gpuknn.ops.kneighbors.PreparedReference`).
    onehot : array (n_ref, n_classes)
        One-hot labels of the references, X's dtype.
    radius : float
        References at exact distance ``<= radius`` vote (scikit-learn's inclusive rule).
    weights : {"uniform", "distance"}
    rows_per_block : int
        Queries scored at once (a (rows, n_ref) tile).

    Returns
    -------
    counts : array (n, n_classes)
        Uniform: exact member counts. Distance: ``sum 1/d`` from the tile's distances (or
        the zero-distance rule), for shares (``predict_proba``).
    winners : int64 array (n,)
        The winning class of each row's exact vote, ties to the lowest; -1 for rows with no
        member (outliers).

    Complexity: one GEMM per block, O(n · n_ref · n_classes), plus exact keys for the pairs
    near the radius (and, for hinging weighted votes, for each member of the row).
    """
    xp = array_namespace(X)
    counts, winners = [], []
    for b0 in range(0, X.shape[0], rows_per_block):
        c, w = _block(X[b0 : min(b0 + rows_per_block, X.shape[0]), :], ref, onehot, radius, weights, xp)
        counts.append(c)
        winners.append(w)
    if len(counts) == 1:
        return counts[0], winners[0]
    return xp.concat(counts, axis=0), xp.concat(winners, axis=0)


def _block(Xb, ref, onehot, radius, weights, xp):
    t = radius_tile(Xb, ref, radius)
    inside = t.inside
    if weights == "uniform":
        counts = xp.astype(inside, onehot.dtype) @ onehot
        return counts, _winners(counts, inside, xp)
    W = distance_weights(t.dist, xp, member=inside)  # exact zeros: every pair near 0 is exact
    counts = W @ xp.astype(onehot, xp.float64)
    winners = _winners(counts, inside, xp)
    # Settled where the margin exceeds what the members' distances (tile-derived ones within
    # the bound) and the totals' rounding could move.
    has_zero = xp.any(inside & (t.dist == 0), axis=1, keepdims=True)
    inv = 1.0 / xp.where(t.dist == 0, xp.ones_like(t.dist), t.dist)
    d_lo = keys_to_distances(t.keys + t.err[:, None], ref.metric)
    move = xp.where(
        inside & ~has_zero & ~t.unsure, 1.0 / xp.where(d_lo > 0, d_lo, xp.ones_like(d_lo)) - inv, xp.zeros_like(inv)
    )
    slack = xp.sum(move, axis=1) * 2 + 4 * 2.0**-53 * t.dist.shape[1] * xp.sum(W, axis=1)
    top = xp.max(counts, axis=1)
    cls = xp.arange(counts.shape[1], device=device_of(counts))
    second = xp.max(xp.where(cls[None, :] == winners[:, None], xp.full_like(counts, -1.0), counts), axis=1)
    hinge = xp.any(inside, axis=1) & (top - second <= slack)
    if bool(xp.any(hinge)):
        winners = _settle(Xb, ref, t.q_stats, inside, onehot, hinge, winners, xp)
    return xp.astype(counts, onehot.dtype), xp.astype(winners, xp.int64)


def _winners(counts, inside, xp):
    """Argmax class (ties to the lowest) of rows with members; -1 for the others."""
    best = xp.astype(xp.argmax(counts, axis=1), xp.int64)
    return xp.where(xp.any(inside, axis=1), best, xp.full_like(best, -1))


def _settle(Xb, ref, q_stats, inside, onehot, hinge, winners, xp):
    """Winners of the hinging rows from the exact distances of all their members."""
    labels = to_numpy(xp.argmax(onehot, axis=1))
    out = to_numpy(winners).copy()
    n_classes = int(onehot.shape[1])
    dev = device_of(Xb)
    for r in to_numpy(xp.nonzero(hinge)[0]).tolist():
        members = xp.nonzero(inside[r, :])[0]
        q_r = None if q_stats is None else take_stats(q_stats, xp.arange(r, r + 1, device=dev))
        d = to_numpy(_member_distances(Xb[r : r + 1, :], ref, members, q_r))[0]
        out[r] = exact_winner(labels[to_numpy(members)], d, n_classes)
    return xp.asarray(out, device=device_of(winners))


def radius_pairs(Xb: Any, ref: Reference, radius: float, *, budget: int) -> tuple[Any, Any, Any]:
    """Every (query, reference) pair of a query block within ``radius``, exactly.

    Parameters
    ----------
    Xb : array of shape (m, d), validated, ``ref``'s dtype
    ref : Reference
        The prepared training rows (:class:`gpuknn.ops.kneighbors.PreparedReference`).
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

    Membership is :func:`radius_tile`'s. Complexity: one (m, n_ref) GEMM, O(d) float64 work
    per pair inside the radius or near it; memory O(m · n_ref).

    Examples
    --------
    >>> import numpy as np
    >>> ref = Reference(np.array([[0.0], [1.0], [3.0]]), "euclidean", keep_rows=True)
    >>> radius_pairs(np.array([[0.5], [3.0]]), ref, 1.0, budget=1 << 20)
    (array([0, 0, 1]), array([0, 1, 2]), array([0.5, 0.5, 0. ]))
    """
    xp, metric, dtype = array_namespace(Xb), ref.metric, Xb.dtype
    n_ref = ref.shape[0]
    t = radius_tile(Xb, ref, radius)  # the one membership rule
    flat = xp.nonzero(xp.reshape(t.inside, (-1,)))[0]
    r, c = flat // n_ref, flat % n_ref
    # Every member's exact distance (the graph reports them), pair by pair, in chunks of
    # gathered query rows within the budget.
    n_pairs = int(flat.shape[0])
    if not n_pairs:
        empty = xp.zeros(0, dtype=xp.int64, device=device_of(Xb))
        return empty, empty, xp.zeros(0, dtype=dtype, device=device_of(Xb))
    if t.q_stats is None:  # exact distances already (difference and host metrics)
        d = xp.take(xp.reshape(t.dist, (-1,)), flat)
        return xp.astype(r, xp.int64), xp.astype(c, xp.int64), xp.astype(d, dtype)
    step = max(1, budget // (4 * 8 * (ref.shape[1] + 4)))
    keys = []
    for p0 in range(0, n_pairs, step):
        rp, cp = r[p0 : min(p0 + step, n_pairs)], c[p0 : min(p0 + step, n_pairs)]
        q_stats = take_stats(t.q_stats, rp)
        keys.append(
            exact_keys(xp.take(Xb, rp, axis=0), ref.data, cp[:, None], metric, ref.stats, q_stats=q_stats)[:, 0]
        )
    d = keys_to_distances(keys[0] if len(keys) == 1 else xp.concat(keys), metric)
    return xp.astype(r, xp.int64), xp.astype(c, xp.int64), xp.astype(d, dtype)


def radius_pairs_kdtree(Xb: Any, tree: Any, radius: float, metric: str, *, dtype: Any = None):
    """:func:`radius_pairs` through a ``cKDTree`` of the references (host NumPy; euclidean
    or sqeuclidean): the same members, order and exact distances (float64, or ``dtype``)."""
    from scipy.spatial import cKDTree  # noqa: PLC0415 - scipy import is slow, only when used

    metric = resolve_metric(metric)  # "minkowski" (p = 2), "l2": euclidean
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
    return qi[o], rj[o], d[o] if dtype is None else d[o].astype(dtype)


class Rescaled(NamedTuple):
    """A radius search of tiny data in scaled units (:func:`rescaled`)."""

    X: Any  # the queries times ``scale``
    ref: Reference  # the training rows times ``scale``, prepared for this search only
    radius: float  # the radius in the scaled units
    scale: float  # a power of two

    def distances(self, d: Any, metric: str) -> Any:
        """Distances of the scaled search back in the inputs' units."""
        return unscale_distances(d, metric, self.scale)


def rescaled(X: Any, fit_X: Any, metric: str, magnitude: float, radius: float) -> Rescaled | None:
    """The radius search of data whose squares underflow, scaled by a power of two, or None
    for ordinary data.

    Squared distances of rows of 1e-170 (float64) vanish, so every pair would lie within any
    radius (issue 32). Queries, training rows and the radius are multiplied by the power of
    two :func:`gpuknn.ops.limits.underflow_scale` gives for the larger ``magnitude`` (exact);
    membership is unchanged and distances come back through :meth:`Rescaled.distances`.
    Costs a scaled copy of the training rows, for such data only.
    """
    if not isinstance(metric, str) or metric not in INNER_METRICS + ("minkowski", "l2"):
        return None  # difference and host metrics: no squares, nothing underflows
    metric = resolve_metric(metric)  # "minkowski" (p = 2 here) and "l2" are euclidean
    xp = array_namespace(X)
    scale = underflow_scale(magnitude, X.dtype, xp)
    if scale == 1.0:
        return None
    if metric == "euclidean":
        radius = radius * scale
    elif metric != "cosine" and metric != "correlation":  # sqeuclidean: squared units
        radius = radius * scale * scale
    # Scaled rows lie within [-1, 1]: their distances are below 2 sqrt(d) (squared: 4 d), so a
    # radius beyond 1e150 (or an overflow to infinity) admits every pair either way.
    radius = min(radius, 1e150)
    return Rescaled(X * scale, Reference(fit_X * scale, metric, keep_rows=False), radius, scale)


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
