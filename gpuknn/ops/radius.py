"""Fixed-radius votes with exact membership: the tile nominates, exact keys decide.

Which references lie within the radius, and a distance-weighted vote among them, are decided
on the exact distances (:mod:`gpuknn.ops.exact`), as the k-nearest search decides its lists:
a tile score farther than its certified bound (:mod:`gpuknn.ops.certify`) from the radius
settles a pair; the pairs within the bound of the radius -- and those that may lie at
distance 0, where scikit-learn's zero-distance rule changes every weight -- get exact keys.
A weighted vote whose winner the tile distances cannot settle is decided on the exact
distances of that row's members, exactly (:func:`gpuknn.votes.exact_winner`).
"""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, device_of, to_numpy
from .certify import reference_bound
from .exact import exact_keys, keys_to_distances
from .rerank import take_stats
from .search import Reference, prepare_queries, score_tile

__all__ = ["radius_votes", "radius_key"]

_EUCLID = ("euclidean", "sqeuclidean")


def radius_key(radius: float, metric: str) -> float:
    """The exact key (larger = closer) of a pair at distance ``radius``."""
    if metric == "euclidean":
        return -radius * radius
    if metric == "sqeuclidean":
        return -radius
    return 1.0 - radius


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
        The training rows (kept prepared: :class:`gpuknn.neighbors.PreparedReference`).
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
    metric, dtype = ref.metric, Xb.dtype
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Xb, ref, dtype)
    S = xp.astype(score_tile(q_rows, ref.block(0, ref.shape[0], dtype).T), xp.float64)
    e = reference_bound(ref, q_norm, q_stats, dtype)[:, None]
    euclid = metric in _EUCLID

    def units(key):  # a key in tile units, (m, 1)
        return 0.5 * (q_sq[:, None] + key) if euclid else xp.full_like(e, key)

    at_radius, at_zero = units(radius_key(radius, metric)), units(radius_key(0.0, metric))
    # Pairs the tile cannot place: near the radius, or possibly at distance 0.
    unsure = ((S >= at_radius - e) & (S <= at_radius + e)) | (S >= at_zero - e)
    unsure = unsure & (e > 0)
    inside = S >= at_radius
    scale = 0.5 if euclid else 1.0
    key_t = (S - (0.5 * q_sq[:, None] if euclid else 0.0)) / scale
    flat = xp.nonzero(xp.reshape(unsure, (-1,)))[0]
    if flat.shape[0]:
        n_ref = S.shape[1]
        r, c = flat // n_ref, flat % n_ref
        keys = exact_keys(
            xp.take(Xb, r, axis=0), ref.data, c[:, None], metric, ref.stats, q_stats=take_stats(q_stats, r)
        )[:, 0]
        pos = xp.clip(xp.cumulative_sum(xp.astype(xp.reshape(unsure, (-1,)), xp.int64)) - 1, min=0)
        fill = xp.take(keys, pos)
        key_t = xp.reshape(xp.where(xp.reshape(unsure, (-1,)), fill, xp.reshape(key_t, (-1,))), S.shape)
    dist = keys_to_distances(key_t, metric)
    inside = xp.where(unsure, dist <= radius, inside)
    if weights == "uniform":
        counts = xp.astype(inside, onehot.dtype) @ onehot
        return counts, _winners(counts, inside, xp)
    zero = inside & (dist == 0)  # exact: every pair that may be at 0 has its exact key
    has_zero = xp.any(zero, axis=1, keepdims=True)
    inv = 1.0 / xp.where(dist == 0, xp.ones_like(dist), dist)
    W = xp.where(has_zero, xp.astype(zero, dist.dtype), xp.where(inside, inv, xp.zeros_like(dist)))
    counts = W @ xp.astype(onehot, xp.float64)
    winners = _winners(counts, inside, xp)
    # Settled where the margin exceeds what the members' distances (tile-derived ones within
    # the bound) and the totals' rounding could move.
    err = e[:, 0] / scale
    d_lo = keys_to_distances(key_t + err[:, None], metric)
    move = xp.where(
        inside & ~has_zero & ~unsure, 1.0 / xp.where(d_lo > 0, d_lo, xp.ones_like(d_lo)) - inv, xp.zeros_like(inv)
    )
    slack = xp.sum(move, axis=1) * 2 + 4 * 2.0**-53 * S.shape[1] * xp.sum(W, axis=1)
    top = xp.max(counts, axis=1)
    cls = xp.arange(counts.shape[1], device=device_of(counts))
    second = xp.max(xp.where(cls[None, :] == winners[:, None], xp.full_like(counts, -1.0), counts), axis=1)
    hinge = xp.any(inside, axis=1) & (top - second <= slack)
    if bool(xp.any(hinge)):
        winners = _settle(Xb, ref, q_stats, inside, onehot, hinge, winners, xp)
    return xp.astype(counts, onehot.dtype), xp.astype(winners, xp.int64)


def _winners(counts, inside, xp):
    """Argmax class (ties to the lowest) of rows with members; -1 for the others."""
    best = xp.astype(xp.argmax(counts, axis=1), xp.int64)
    return xp.where(xp.any(inside, axis=1), best, xp.full_like(best, -1))


def _settle(Xb, ref, q_stats, inside, onehot, hinge, winners, xp):
    """Winners of the hinging rows from the exact distances of all their members."""
    from ..votes import exact_winner  # noqa: PLC0415 - votes imports ops

    labels = to_numpy(xp.argmax(onehot, axis=1))
    out = to_numpy(winners).copy()
    n_classes = int(onehot.shape[1])
    dev = device_of(Xb)
    for r in to_numpy(xp.nonzero(hinge)[0]).tolist():
        members = xp.nonzero(inside[r, :])[0]
        keys = exact_keys(
            Xb[r : r + 1, :],
            ref.data,
            members[None, :],
            ref.metric,
            ref.stats,
            q_stats=take_stats(q_stats, xp.arange(r, r + 1, device=dev)),
        )
        d = to_numpy(keys_to_distances(keys, ref.metric))[0]
        out[r] = exact_winner(labels[to_numpy(members)], d, n_classes)
    return xp.asarray(out, device=device_of(winners))
