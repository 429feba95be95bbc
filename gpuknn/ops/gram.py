"""Scores of a projected tile for many PCA sizes from one accumulated Gram matrix.

For projected rows z (components sorted by variance), the similarity of the first p
components is ``G_p = Z_q[:, :p] @ Z_r[:, :p].T = G_{p'} + Z_q[:, p':p] @ Z_r[:, p':p].T``.
Row sums ``s`` and squared norms ``n2`` over the first p components accumulate the same way,
and every metric's *tile score* (larger = closer) follows from ``(G_p, s, n2)``:

* correlation: ``(G_p - s_q s_r / p) w_r``, ``w_r = 1/|r - mean(r)|``;
* cosine: ``G_p w_r``, ``w_r = 1/|r|``; euclidean family: ``G_p - n2_r/2``; inner: ``G_p``.

The weights ``w_r`` are the canonical float64 statistics of the exact pass
(:func:`gpuknn.ops.exact.row_stats` of ``Z_r[:, :p]``) rounded once, so a row that is
exactly constant scores exactly 0, as its exact key does. A whole grid of p costs one
projection-sized GEMM plus one scoring pass and one top-k per p; the tile only nominates
candidates, which the exact pass (:func:`gpuknn.ops.rerank.rerank`) decides, with the
bounds of :func:`prefix_bounds` in the units of these scores.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._delegation import add_outer, scale_columns, tree_sums
from .._memory import preferred_tile_bytes
from .certify import U64, gamma
from .exact import RowStats, concat_stats, prefix_row_stats, row_kappa, row_stats

__all__ = [
    "prefix_stats",
    "prefix_norms",
    "score_from_gram",
    "PrefixReference",
    "prefix_references",
    "prefix_bounds",
]


def prefix_stats(Z: Any, ps: list[int]) -> tuple[list[Any], list[Any]]:
    """Row sums and squared norms of ``Z[:, :p]`` for every p in ``ps`` (ascending).

    Two cumulative sums over the columns, read at the grid's p: a handful of launches for
    the whole grid instead of a few per p. Each entry is a sum of p rounded terms (in
    whatever order the backend's scan adds them), which :func:`prefix_bounds` counts.
    """
    xp = array_namespace(Z)
    at = xp.asarray([p - 1 for p in ps], dtype=xp.int64, device=device_of(Z))
    Zp = Z[:, : ps[-1]]
    sums = xp.take(xp.cumulative_sum(Zp, axis=1), at, axis=1)
    norms = xp.take(xp.cumulative_sum(Zp * Zp, axis=1), at, axis=1)
    return [sums[:, j] for j in range(len(ps))], [norms[:, j] for j in range(len(ps))]


def prefix_norms(Z: Any, ps: list[int]) -> Any:
    """``|Z[i, :p]|`` (float64, shape (n, len(ps))) for every p in ``ps`` (ascending).

    For the tile bounds only (not the canonical statistics of the exact keys): a float64
    cumulative sum of the exact float64 squares, whose rounding (below ``gamma_p`` of
    float64) the bounds' float64 terms cover.
    """
    xp = array_namespace(Z)
    Z64 = xp.astype(Z[:, : ps[-1]], xp.float64)
    at = xp.asarray([p - 1 for p in ps], dtype=xp.int64, device=device_of(Z))
    return xp.sqrt(xp.take(xp.cumulative_sum(Z64 * Z64, axis=1), at, axis=1))


class PrefixReference(NamedTuple):
    """What the p-sweep needs of the references at one size p.

    ``stats``: canonical :class:`RowStats` of ``Z_r[:, :p]``; ``weight``: ``w_r`` in Z's
    dtype (cosine/correlation) or None; ``kappa``: the largest ``|r| w_r`` (cosine,
    correlation; 0 when every row is zero) or ``|r|`` (euclidean, inner), float64;
    ``kappa_rows``: correlation's ``|r| w_r`` per row in Z's dtype (rounded up), else None;
    ``query_stats``: the canonical :class:`RowStats` of the query rows at size p.
    """

    stats: RowStats
    weight: Any
    kappa: float
    kappa_rows: Any
    query_stats: RowStats


def prefix_references(Z: Any, queries: Any, ps: list[int], metric: str, *, budget: int) -> list[PrefixReference]:
    """:class:`PrefixReference` of the rows of ``Z[:, :p]`` (with the statistics of
    ``queries[:, :p]``) for every p in ``ps``.

    The statistics of each p are the canonical ones (:func:`row_stats`, computed per p:
    the exact keys need their bits). Each row's are a function of that row alone, so the
    references and the queries go through one call per p and block: rows in blocks of
    about ``budget`` bytes of float64 work (capped at the host's cache-sized tile,
    :func:`gpuknn._memory.preferred_tile_bytes`; a device takes them all at once). Every
    p's ``kappa`` comes to the host in one transfer for the whole grid.
    """
    xp = array_namespace(Z, queries)
    n_ref = Z.shape[0]
    both = xp.concat([Z[:, : ps[-1]], queries[:, : ps[-1]]], axis=0)
    n = both.shape[0]
    cap = preferred_tile_bytes(xp)
    block_bytes = budget if cap is None else min(budget, cap)
    refs, queries_stats = [], []
    if tree_sums(xp):  # every p of a row block at once (a fixed number of launches)
        step = max(1, min(n, block_bytes // (max(ps) * _PREFIX_ENTRY_BYTES)))
        blocks = [prefix_row_stats(both[b0 : min(b0 + step, n), :], ps, metric) for b0 in range(0, n, step)]
        per_p = [concat_stats([blk[j] for blk in blocks], xp) for j in range(len(ps))]
    else:  # the host: each p in cache-sized blocks of its own width
        per_p = []
        for p in ps:
            step = max(1, min(n, block_bytes // (p * _STATS_ENTRY_BYTES)))
            per_p.append(
                concat_stats([row_stats(both[b0 : min(b0 + step, n), :p], metric) for b0 in range(0, n, step)], xp)
            )
    for st in per_p:
        refs.append(RowStats(*(None if v is None else v[:n_ref] for v in st)))
        queries_stats.append(RowStats(*(None if v is None else v[n_ref:] for v in st)))

    def grid(name):  # one statistic of every p, (n_ref, len(ps))
        return xp.stack([getattr(r, name) for r in refs], axis=1)

    # Weights and kappa of every p at once, from (n_ref, len(ps)) statistics.
    inv = None if refs[0].inv_norm is None else grid("inv_norm")
    weights = [None] * len(ps) if inv is None else _columns(xp.astype(inv, Z.dtype))
    kap_rows = [None] * len(ps)
    if metric == "correlation":  # |r| / |r - m|, 0 for rows that are zero once centred
        d = from_numpy(np.asarray(ps, dtype=np.float64), xp, device=device_of(Z))[None, :]  # p per column
        kap = row_kappa(RowStats(grid("mean"), inv, None), d)
        maxima = xp.max(kap, axis=0)
        rounded = xp.astype(kap * (1 + 2.0**-20), Z.dtype)
        kap_rows = _columns(rounded)
    elif metric == "cosine":
        maxima = xp.max(grid("norm") * inv, axis=0)
    else:
        # The bounds' |r| (not canonical): every p of a row block from one cumulative sum.
        step = max(1, min(n_ref, block_bytes // (ps[-1] * _STATS_ENTRY_BYTES)))
        blocks = [xp.max(prefix_norms(Z[b0 : min(b0 + step, n_ref), :], ps), axis=0) for b0 in range(0, n_ref, step)]
        maxima = xp.max(xp.stack(blocks), axis=0)
    kappas = to_numpy(maxima).tolist()  # one transfer for the grid
    return [
        PrefixReference(ref, w, max(0.0, kappa), rows, q)
        for ref, w, kappa, rows, q in zip(refs, weights, kappas, kap_rows, queries_stats)
    ]


def _columns(A: Any) -> list[Any]:
    """The columns of a 2-D array (n, c), each contiguous: rows of one C-ordered copy of
    ``A.T`` (a strided column makes every tile operation that broadcasts it over a score
    tile several times slower on the host)."""
    xp = array_namespace(A)
    At = xp.reshape(xp.reshape(xp.permute_dims(A, (1, 0)), (-1,)), (A.shape[1], A.shape[0]))
    return [At[j, :] for j in range(A.shape[1])]


# Bytes of float64 work per entry of a reference block in row_stats (float64 copies and
# products of the block).
_STATS_ENTRY_BYTES = 24
# The same for prefix_row_stats, per entry of the widest prefix: the products, their tree's
# levels and the partial sums; the far rows' two-pass adds ~40 bytes per (p, far row) entry,
# which a fraction of the grid's rows need (most where p is small).
_PREFIX_ENTRY_BYTES = 64


def score_from_gram(
    G: Any, p: int, metric: str, q_sum: Any, r_sum: Any, r_n2: Any, r_weight: Any, *, out: Any = None, lift: Any = None
) -> Any:
    """Tile scores (larger = closer) from the Gram matrix at size p (module docstring).

    ``out``: a buffer of G's shape to write into, which avoids allocating (and
    page-faulting) a fresh tile for every p (:func:`gpuknn._delegation.scale_columns`). The
    euclidean family and ``inner`` return G's own (shifted or unchanged) values without a
    copy when no shift is needed. ``lift``
    (correlation only): ``(a, b)`` added as ``a ⊗ b`` (:func:`prefix_bounds`'s optimistic
    scores).
    """
    w = r_weight
    if metric == "correlation":
        # S = G w - q_sum ⊗ (w r_sum / p) (+ lift), every step in place where it can be.
        S = add_outer(scale_columns(G, w, out=out), -1.0, q_sum, w * r_sum / p)
        return S if lift is None else add_outer(S, 1.0, lift[0], lift[1])
    if metric == "cosine":
        return scale_columns(G, w, out=out)
    if metric in ("euclidean", "sqeuclidean"):
        return scale_columns(G, -0.5 * r_n2, shift=True, out=out)
    return G


def prefix_bounds(
    metric: str,
    ps: list[int],
    q_inv: Any,
    q_norm: Any,
    kappa: list[float],
    *,
    u: list[float],
    eta: list[float],
    per_row: list[bool],
) -> tuple[Any, Any, Any, Any]:
    """``(bound, scale, shift, lift)`` of the p-sweep's tile scores for every p of the grid
    at once: float64 arrays (m, len(ps)) whose column j belongs to ``ps[j]`` (``scale``
    0.5 and ``shift`` None, or ``scale`` None, where a metric has one for all), ``lift``
    None where no ``per_row`` is set.

    A tile score at size p is within ``bound`` of ``scale * key + shift`` (the exact key in
    tile units) for every reference. ``q_norm`` (m, len(ps)) holds ``|q[:p]|`` (float64,
    to float64 rounding), ``q_inv`` (m, len(ps)) the queries' canonical ``inv_norm`` at
    each p (cosine, correlation; else None), ``kappa``, ``u`` and ``eta`` the references'
    :class:`PrefixReference` ``kappa`` and the scores' GEMM rounding at each p. The Gram
    matrix grows in one block per grid position: up to ``ps[j]`` in ``j + 1`` blocks, each
    a sum of its own length plus one addition, so every entry is a sum of at most
    ``p + j + 1`` rounded terms (``gamma_{p+j+3}``, in any order), as is every prefix sum
    (p terms, :func:`prefix_stats`); the rest follows :mod:`gpuknn.ops.certify`, the
    weights being the exact ones rounded once.

    ``per_row[j]`` (correlation): the error of a reference's score is at most
    ``lift_q * kappa_r`` plus ``bound``; the caller adds ``lift ⊗ kappa_rows`` to the tile
    (an optimistic score, never below the exact key in tile units, up to ``bound``), so a
    few nearly constant rows (large ``kappa_r``, small p) do not loosen every row's bound.
    Otherwise ``bound`` covers every reference.

    Each p's coefficients are host floats, evaluated as one p's own formula would be; they
    go to the device in one array, and every p's bounds come from one pass of elementwise
    operations on (m, len(ps)) arrays.
    """
    xp = array_namespace(q_norm)
    g = [gamma(p + j + 3, uj) for j, (p, uj) in enumerate(zip(ps, u))]
    g64 = [4 * gamma(p + 2, U64) + 8 * U64 for p in ps]
    coef = {
        "kappa": kappa,
        "tiny": [4 * e * (math.sqrt(p) + 2) for e, p in zip(eta, ps)],
        "g64": g64,
        "g64kappa": [a * k for a, k in zip(g64, kappa)],
        "kappa2": [k * k for k in kappa],
        "u4": [4 * uj for uj in u],
        "per_row": [float(r) for r in per_row],
    }
    if metric in ("euclidean", "sqeuclidean", "inner"):
        coef["factor"] = [(gj + 2 * uj) * (1 + 4 * uj) for gj, uj in zip(g, u)]
    elif metric == "correlation":
        coef["factor"] = [(3 * gj + 8 * uj) * (1 + 4 * uj) for gj, uj in zip(g, u)]
    else:
        coef["factor"] = [(gj + 4 * uj) * (1 + 4 * uj) for gj, uj in zip(g, u)]
    rows = from_numpy(np.asarray(list(coef.values()), dtype=np.float64), xp, device=device_of(q_norm))
    c = {name: rows[i : i + 1, :] for i, name in enumerate(coef)}
    tiny = c["tiny"] * (q_norm + c["kappa"] + 1)
    if metric in ("euclidean", "sqeuclidean"):
        # G - n2_r / 2 against (|q|^2 + key) / 2: both sums err by gamma |q||r| resp. gamma |r|^2.
        bound = c["factor"] * (q_norm * c["kappa"] + c["kappa2"]) + c["g64"] * (q_norm + c["kappa"]) ** 2 + tiny
        return bound, 0.5, 0.5 * q_norm * q_norm, None
    if metric == "inner":
        bound = c["factor"] * q_norm * c["kappa"] + c["g64"] * q_norm * c["kappa"] + tiny
        return bound, None, None, None
    # cosine: G w against key |q|; correlation: (G - s_q s_r / p) w against key |q - mean(q)|.
    inv = q_inv
    scale = xp.where(inv > 0, 1.0 / xp.where(inv > 0, inv, xp.ones_like(inv)), xp.zeros_like(inv))
    if metric == "cosine":
        scale = q_norm * xp.astype(inv > 0, q_norm.dtype)
    bound = c["factor"] * q_norm * c["kappa"] + c["g64kappa"] * q_norm + tiny
    lift = None
    if metric == "correlation" and any(per_row):
        lift = c["factor"] * q_norm
        # The lifted score's own rounding: |S| <= |q - mean(q)|, the lift <= lift * kappa.
        lifted = c["g64kappa"] * q_norm + tiny + c["u4"] * (scale + lift * c["kappa"])
        bound = xp.where(c["per_row"] > 0, lifted, bound)
    # Rows whose tile scores are exactly 0 (a zero query) have no error at all, nor has
    # any row when every reference is zero.
    bound = xp.where((q_norm > 0) & (c["kappa"] > 0), bound, xp.zeros_like(bound))
    return bound, scale, None, lift
