"""Certified rounding bounds of GEMM score tiles: when the tile's order can be trusted.

A search computes *tile scores* ``s~`` with one GEMM of prepared rows in the tile's dtype
(:mod:`gpuknn.ops.search`); they nominate candidates whose exact keys
(:mod:`gpuknn.ops.exact`) decide the order. This module bounds, per query row and uniformly
over every reference, how far a tile score can be from the exact key expressed in tile
units (``T_q(key)``, :func:`to_tile_units`):

    |s~(q, r) - T_q(key(q, r))| <= e_q    for every reference r.

For prepared rows ``a`` (query) and ``b`` (reference) computed in float64 and rounded once
to the tile dtype (unit roundoff ``u``), a GEMM of width ``w`` in *any* summation order
errs by at most ``(gamma_w + 3u) sum |a_i b_i|`` (``gamma_w = w u / (1 - w u)``: Higham,
*Accuracy and Stability of Numerical Algorithms*, 3.1) plus ``2 eta (sqrt(w)(|a| + |b|) +
2w)`` for results in the subnormal range (``eta`` = half the smallest subnormal). With
``sum |a_i b_i| <= |a| |b|``:

==============  ==================================  ======================================
metric          tile score                          ``sum |a_i b_i|`` bound
==============  ==================================  ======================================
cosine,         ``a . b``, unit rows (0 for zero    ``|a| |b| <= 1``
correlation     rows)
euclidean       ``q_c . r_c - |r_c|^2 / 2``,        ``|q_c| max|r_c| + max|r_c|^2 / 2``
                ``x_c = x - c``, c = the reference
                mean (translation invariance)
inner           ``q . r``                           ``|q| max|r|``
==============  ==================================  ======================================

plus the float64 error of the key itself (``gamma_d`` in float64, scaled as above). A
reference outside a row's candidate list has a tile score at most the list's last, ``s~_l``,
hence an exact key at most ``s~_l + e_q`` in tile units: if that is below the k-th exact key,
no outsider can enter (:func:`certified`). The bound assumes IEEE arithmetic in the tile's
dtype; namespaces whose float32 products may round to fewer bits (TF32 on GPUs) get that
unit roundoff (:func:`gpuknn._delegation.matmul_unit_roundoff`).
"""

from __future__ import annotations

import math
from typing import Any

from .._backend import array_namespace, device_of

__all__ = ["gamma", "tile_error_bound", "reference_bound", "to_tile_units", "certified", "key_rounding", "U64"]

U64 = 2.0**-53


def gamma(n: int, u: float) -> float:
    """``n u / (1 - n u)``: the classical bound of a length-n sum of products' rounding."""
    nu = n * u
    return nu / (1.0 - nu) if nu < 0.5 else math.inf


def reference_bound(ref: Any, q_norm: Any, q_stats: Any, dtype: Any) -> Any:
    """:func:`tile_error_bound` of prepared queries against a whole search reference.

    ``ref`` is a :class:`gpuknn.ops.search.Reference` (its metric, largest row norm, width,
    key scale); ``q_norm``/``q_stats`` come from
    :func:`gpuknn.ops.search.prepare_queries`; ``dtype`` is the tile's. Returns the bound
    per query row, in tile units.
    """
    from .._delegation import matmul_unit_roundoff  # noqa: PLC0415 - _delegation is heavier
    from .exact import row_kappa  # noqa: PLC0415 - exact imports this module's constants

    u, eta = matmul_unit_roundoff(dtype, array_namespace(q_norm), device_of(q_norm))
    return tile_error_bound(
        ref.metric,
        q_norm,
        ref.ref_max,
        width=ref.width,
        n_features=ref.shape[1],
        u=u,
        eta=eta,
        key_scale=ref.key_scale,
        q_kappa=row_kappa(q_stats, ref.shape[1]),
    )


def tile_error_bound(
    metric: str,
    q_norm: Any,
    ref_max: float,
    *,
    width: int,
    n_features: int,
    u: float,
    eta: float,
    key_scale: float = 1.0,
    q_kappa: Any = None,
) -> Any:
    """``e_q`` (float64, (m,)) for queries whose prepared-row norms are ``q_norm``.

    Parameters
    ----------
    metric : str
    q_norm : float64 array (m,)
        cosine/correlation: 1 for a non-zero query row, 0 for a zero one; euclidean:
        ``|q - c|``; inner: ``|q|``.
    ref_max : float
        Largest of the same over the references (cosine/correlation: 1, or 0 when every
        reference row is zero).
    width : int
        Length of the tile's dot products (``d + 1`` for the euclidean family).
    n_features : int
        ``d``, the length of the exact keys' dot products.
    u, eta : float
        Unit roundoff and half the smallest subnormal of the tile GEMM.
    key_scale : float
        Largest ``kappa_r = |r| / |r - mean(r)|`` over the references (correlation; else 1):
        the float64 error of the correlation key scales with it, and so does the error of
        rows centred in float32 on their mean rounded to float32.
    q_kappa : float64 array (m,), optional
        ``kappa_q`` of the queries (correlation).

    Returns
    -------
    float64 array (m,): 0 exactly where the tile scores are exact (zero query rows of
    cosine/correlation/inner, or all references zero).
    """
    xp = array_namespace(q_norm)
    # The GEMM's own rounding plus that of the prepared rows (each element within 4u).
    g = (gamma(width, u) + 9 * u) * (1 + 4 * u)
    g64 = 4 * gamma(n_features + 2, U64) + 8 * U64
    B = float(ref_max)
    if metric in ("euclidean", "sqeuclidean"):
        a_norm = xp.sqrt(q_norm * q_norm + 1.0)
        b_norm = math.hypot(B, B * B / 2)  # (B * B / 2) ** 2 overflowed from B ~ 1e77 on
        tiny = 2 * eta * (math.sqrt(width) * (a_norm + b_norm) + 2 * width)
        # |r - c|^2 / 2 of the augmented column is itself a length-d sum in the tile dtype.
        aug = (gamma(n_features, u) + 2 * u) * (1 + 4 * u) * B * B / 2
        return g * (q_norm * B + B * B / 2) + aug + g64 * (q_norm + B) ** 2 + tiny
    tiny = 2 * eta * (math.sqrt(width) * (q_norm + B) + 2 * width)
    e = g * q_norm * B + g64 * key_scale * q_norm * B + tiny
    if metric == "correlation" and q_kappa is not None:
        # Centring on a mean rounded to the tile dtype shifts a row by s = (m - fl(m)) / |x~|,
        # |s| sqrt(d) <= u kappa: the rows' norms grow by that much and, since centred rows
        # sum to 0, the product gains only the second-order u^2 (kappa_q kappa_r + ...).
        kq, kr = u * q_kappa, u * key_scale
        e = e + g * q_norm * B * ((1 + kq) * (1 + kr) - 1) + 1.01 * (kq * kr + 4 * u * (kq + kr))
    # Zero rows give tile scores and keys of exactly 0: no error at all.
    return xp.where((q_norm > 0) & (B > 0), e, xp.zeros_like(e))


def to_tile_units(keys: Any, metric: str, q_sqnorm: Any = None) -> Any:
    """Exact keys (m, ...) in the units of the kneighbors tile scores (float64).

    Euclidean family: ``(|q - c|^2 + key) / 2`` (``q_sqnorm`` = ``|q - c|^2``, (m,)); the
    others: the key itself.
    """
    if q_sqnorm is None:
        return keys
    extra = (None,) * (keys.ndim - 1)
    return (q_sqnorm[(slice(None), *extra)] + keys) * 0.5


def certified(last_tile: Any, bound: Any, kth_tile_units: Any, *, complete: bool) -> Any:
    """Rows (bool (m,)) where no reference outside the candidate list can enter the top k.

    ``last_tile``: each row's smallest tile score in its list; ``bound``: ``e_q`` (m,);
    ``kth_tile_units``: the k-th best exact key of the list in tile units; ``complete``: the
    list holds every reference. A row whose bound is 0 is exact already: its tile order, ties
    to the lower index, is the answer.
    """
    xp = array_namespace(last_tile, bound)
    ok = (xp.astype(last_tile, xp.float64) + bound < kth_tile_units) | (bound == 0)
    if complete:
        ok = xp.ones_like(ok)
    return ok


def key_rounding(metric: str, n_features: int, key_scale: float = 1.0) -> float:
    """Bound on the float64 rounding of an exact key near the metric's largest key.

    Cosine/correlation keys (at most 1) err by ``4 gamma_{d+2} key_scale + 8u`` in float64;
    a euclidean key of 0 (a duplicate of the query) is exact: 0.
    """
    if metric in ("cosine", "correlation"):
        return 4 * gamma(n_features + 2, U64) * key_scale + 8 * U64
    return 0.0
