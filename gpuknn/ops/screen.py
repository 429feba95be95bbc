"""Float64 neighbours from a float32 search: screen, re-rank exactly, certify.

A float64 search spends its time in float64 GEMMs (half the float32 rate on CPUs and on
most GPUs) and in selection passes over 8-byte tiles. Screening runs the blocked search on
rows cast to float32 for ``k' = k + margin`` candidates, recomputes the candidates' scores
in float64 (``k'`` dot products per query) and keeps the best k by the float64 score, ties
to the lower index -- the answer of the float64 search (up to the order of scores that differ
only by float64 rounding: the re-rank's dot products round differently from a GEMM), **when a
certificate holds**:

For prepared rows ``a`` (query) and ``b`` (reference), the float32 score of any pair is
within ``e = (gamma_w + 3u) |a| |b| + eta (sqrt(w) (|a| + |b|) + 2 w)`` of the exact one
(``u = 2^-24``, ``gamma_w = w u / (1 - w u)`` for a length-``w`` dot product, ``eta =
2^-150`` the absolute error of a float32 result in the subnormal range: the cast of both rows
and the float32 GEMM's rounding, whatever its summation order, underflow included). The bound
assumes IEEE float32 arithmetic in the GEMM: CuPy with TF32 enabled (``CUPY_TF32=1``) does not
screen. A reference outside the ``k'`` candidates has a
float32 score at most the ``k'``-th candidate's, ``s'_k'``, hence an exact score at most
``s'_k' + e``. If that is *below* the k-th best exact candidate score, no outsider can
enter the top k. Rows where it is not are searched again in float64 (rare: the gap between
the k-th and k'-th neighbour is usually orders of magnitude above ``e``).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from .._backend import array_namespace, device_of, is_cupy_namespace
from .topk import merge_topk

__all__ = ["screen_margin", "score_error_bound", "rerank_exact", "screening_sound"]

_U32 = 2.0**-24
_U64 = 2.0**-53
_ETA32 = 2.0**-150  # half the spacing of float32 subnormals
# Values whose square (the euclidean augmentation -|r|^2/2) stays far inside float32 range.
_FLOAT32_SAFE = 1e15


def screen_margin(k: int) -> int:
    """Extra candidates screened beyond k: enough that the k-th and k'-th neighbours differ."""
    return max(8, k // 2)


def screening_sound(magnitude: float, xp: Any) -> bool:
    """Whether a float32 screen of data with largest ``|value|`` = ``magnitude`` is sound.

    It is when squares stay far inside float32's range and the namespace's float32 GEMMs
    are IEEE (not CuPy with TF32). Underflow needs no check: :func:`score_error_bound`
    covers it (rows it cannot certify are searched again in float64).
    """
    if is_cupy_namespace(xp) and os.environ.get("CUPY_TF32", "0") != "0":
        return False  # TF32 GEMMs round to 10 bits: the bound does not hold
    return magnitude < _FLOAT32_SAFE


def score_error_bound(q_norms: Any, b_max: float, width: int) -> Any:
    """Bound (n,) on |float32 score - float64 score| for queries of norms ``q_norms``.

    ``b_max`` is the largest prepared reference row norm, ``width`` the row length. The
    float64 scores' own rounding is included (twice, for the two sides of the test), and
    so is float32 underflow (an absolute error of at most ``2^-150`` per rounding).
    """
    gamma32 = width * _U32 / (1.0 - width * _U32)
    gamma64 = width * _U64 / (1.0 - width * _U64)
    relative = q_norms * (b_max * 1.01 * (gamma32 + 3 * _U32 + 2 * gamma64))
    absolute = 2.0 * _ETA32 * (width**0.5 * (q_norms + b_max) + 2 * width)
    return relative + absolute


def rerank_exact(
    q_rows: Any,
    index: Any,
    screened: Any,
    k: int,
    ref_rows_of: Callable[[Any], Any],
    b_max: float,
    *,
    n_ref: int,
    max_bytes: int,
) -> tuple[Any, Any, Any]:
    """Exact top k of each query among its screened candidates, and the certificate.

    Parameters
    ----------
    q_rows : float64 array (m, w)
        Prepared query rows.
    index : int array (m, k')
        Candidates from the float32 search, ``screened`` (m, k') their float32 scores
        (sorted descending).
    k : int
    ref_rows_of : callable
        Flat int array of reference indices -> their prepared float64 rows (len, w).
    b_max : float
        Largest prepared reference row norm (over all references).
    n_ref : int
        Number of references: with ``k' == n_ref`` every row is certified.
    max_bytes : int
        Gathered candidate rows are processed in row blocks of at most this size.

    Returns
    -------
    scores : float64 array (m, k), descending, ties to the lower index
    index : int64 array (m, k)
    certified : bool array (m,)
    """
    xp = array_namespace(q_rows, index)
    m, w = q_rows.shape
    kk = index.shape[1]
    per_row = max(1, kk * w * 8 * 2)
    step = max(1, int(max_bytes) // per_row)
    exact = []
    for r0 in range(0, m, step):
        r1 = min(r0 + step, m)
        idx = index[r0:r1, :]
        cand = ref_rows_of(xp.reshape(idx, (-1,)))
        cand = xp.reshape(cand, (r1 - r0, kk, w))
        exact.append(xp.vecdot(cand, q_rows[r0:r1, None, :], axis=-1))
    s64 = exact[0] if len(exact) == 1 else xp.concat(exact, axis=0)
    values, best = merge_topk(s64, index, k)
    if kk >= n_ref:
        return values, best, xp.ones((m,), dtype=xp.bool, device=device_of(q_rows))
    q_norms = xp.sqrt(xp.vecdot(q_rows, q_rows, axis=-1))
    outside = xp.astype(screened[:, kk - 1], xp.float64) + score_error_bound(q_norms, b_max, w)
    return values, best, outside < values[:, k - 1]
