"""Scores of a projected tile for many PCA sizes from one accumulated Gram matrix.

For projected rows z (components sorted by variance), the similarity of the first p
components is ``G_p = Z_q[:, :p] @ Z_r[:, :p].T = G_{p'} + Z_q[:, p':p] @ Z_r[:, p':p].T``.
Row sums ``s`` and squared norms ``n2`` over the first p components accumulate the same way,
and every metric's ranking score follows from ``(G_p, s, n2)``:

* correlation: ``(G_p - s_q s_r / p) / |r̃|`` with ``|r̃|² = n2_r - s_r²/p`` (the query's own
  factor ``1/|q̃|`` does not change its ranking and is applied to the k winners only);
* cosine: ``G_p / |r|``; euclidean family: ``G_p - n2_r/2``; inner: ``G_p``.

So a whole grid of p costs one projection-sized GEMM plus one scoring pass and one top-k per
p, instead of a GEMM of depth p per p.
"""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, is_numpy_namespace

__all__ = ["gram_accumulate", "prefix_stats", "score_from_gram", "distances_from_scores"]


def gram_accumulate(G: Any, A: Any, B: Any) -> Any:
    """Return ``G + A @ B.T``, in place where the backend allows (NumPy: BLAS ``beta=1``)."""
    xp = array_namespace(G, A, B)
    if is_numpy_namespace(xp) and G.flags.c_contiguous and G.dtype in (A.dtype,):
        from scipy.linalg import blas  # noqa: PLC0415 - numpy-only fast path

        gemm = blas.sgemm if G.dtype.char == "f" else blas.dgemm
        # G (C order) is G.T in Fortran order: G.T += B @ A.T, written in place.
        out = gemm(1.0, B, A, beta=1.0, c=G.T, trans_a=0, trans_b=1, overwrite_c=1)
        return G if out.base is G or out.base is G.base and G.base is not None else out.T
    return G + A @ B.T


def prefix_stats(Z: Any, ps: list[int]) -> tuple[list[Any], list[Any]]:
    """Row sums and squared norms of ``Z[:, :p]`` for every p in ``ps`` (ascending)."""
    xp = array_namespace(Z)
    sums, norms = [], []
    s = xp.zeros(Z.shape[0], dtype=Z.dtype)
    n2 = xp.zeros(Z.shape[0], dtype=Z.dtype)
    prev = 0
    for p in ps:
        block = Z[:, prev:p]
        s = s + xp.sum(block, axis=1)
        n2 = n2 + xp.sum(block * block, axis=1)
        sums.append(s)
        norms.append(n2)
        prev = p
    return sums, norms


def _inv_norm(n2: Any, xp: Any) -> Any:
    n2 = xp.clip(n2, min=0.0)
    return xp.where(n2 > 0, 1.0 / xp.sqrt(xp.where(n2 > 0, n2, xp.ones_like(n2))), xp.zeros_like(n2))


def score_from_gram(
    G: Any, p: int, metric: str, q_sum: Any, r_sum: Any, r_n2: Any, *, out: Any = None
) -> Any:
    """Ranking scores (larger = closer) of a tile from its Gram matrix at size p.

    ``out`` (NumPy only): a buffer of G's shape to write into, which avoids allocating (and
    page-faulting) a fresh tile for every p. The euclidean family and ``inner`` return G's
    own (shifted or unchanged) values without a copy when no shift is needed.
    """
    xp = array_namespace(G)
    fast = out is not None and is_numpy_namespace(xp)
    if metric == "correlation":
        w = _inv_norm(r_n2 - r_sum * r_sum / p, xp)
        if fast:
            import numpy as np  # noqa: PLC0415 - numpy-only fast path

            from scipy.linalg import blas  # noqa: PLC0415

            np.multiply(G, w[None, :], out=out)
            ger = blas.sger if out.dtype.char == "f" else blas.dger
            # out -= q_sum ⊗ (w r_sum / p), in place (out.T is Fortran-ordered).
            res = ger(-1.0, (w * r_sum / p).astype(out.dtype), q_sum.astype(out.dtype),
                      a=out.T, overwrite_a=1)
            return out if res.base is out else res.T
        return (G - q_sum[:, None] * (r_sum / p)[None, :]) * w[None, :]
    if metric == "cosine":
        w = _inv_norm(r_n2, xp)
        if fast:
            import numpy as np  # noqa: PLC0415

            return np.multiply(G, w[None, :], out=out)
        return G * w[None, :]
    if metric in ("euclidean", "sqeuclidean"):
        if fast:
            import numpy as np  # noqa: PLC0415

            return np.subtract(G, 0.5 * r_n2[None, :], out=out)
        return G - 0.5 * r_n2[None, :]
    return G


def distances_from_scores(vals: Any, p: int, metric: str, q_sum: Any, q_n2: Any) -> Any:
    """Distances of the selected neighbours, (rows, k), from their ranking scores."""
    xp = array_namespace(vals)
    if metric == "correlation":
        w = _inv_norm(q_n2 - q_sum * q_sum / p, xp)
        return xp.clip(1.0 - vals * w[:, None], min=0.0, max=2.0)
    if metric == "cosine":
        return xp.clip(1.0 - vals * _inv_norm(q_n2, xp)[:, None], min=0.0, max=2.0)
    if metric in ("euclidean", "sqeuclidean"):
        d2 = xp.clip(q_n2[:, None] - 2.0 * vals, min=0.0)
        return xp.sqrt(d2) if metric == "euclidean" else d2
    return vals
