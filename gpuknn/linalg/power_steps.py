"""The steps of the power method, one block of ``K`` iterations at a time.

A block turns a unit start vector ``v_0`` into the iterates ``v_1 .. v_K`` of
``v_t = B v_{t-1} / ||B v_{t-1}||`` and tests each against its predecessor. Three ways to
make the iterates, all equal up to rounding:

* **lazy** (the default): the products ``w_i = B w_{i-1}`` from ``w_0 = 2^k v_0`` without
  normalising in between -- the directions of ``B^i v_0`` do not depend on the norms --, then
  all ``K`` rows divided by their norms at once. On NumPy the per-step normalisation (a dot,
  a square root and a division) was a sizeable share of a step for n = 784 (docs/pca.md); on
  a GPU it was three more kernel launches per step. Norms grow like
  ``|lambda|^i``: the block is centred with the power of two ``2^k`` (exact, no rounding)
  from the growth ``2^g`` per step measured in the block before; a growth steep enough to
  shorten the block (beyond ``2^(+-2 SPREAD / (K - 1))``) makes the driver go on with a copy
  of the matrix divided by ``2^round(g)`` (exact too), and deflation divides its working
  matrix the same way with each eigenpair. Norms that still leave ``[2^-60, 2^60]`` (a wrong
  estimate, a zero or non-finite product) send the block to the careful path. That range
  keeps the squares normal numbers in float32, so the norms are taken in the data's dtype
  like the seed's.
* **careful**: the seed's step exactly, each product normalised by :func:`normalize`, which
  survives zero and tiny products. The first block of a run when no growth is known yet
  (deflation passes it from one eigenpair to the next), and the fallback.
* **powers**: for tiny ``n`` (the 5 x 5 matrices of the power study), ``B^1 .. B^K``
  formed once per matrix and all iterates from one batched product.

(A NumPy copy of the whole iteration for one matrix was removed by the delegation layer's
10 % rule: it served the deflation solver, not a default job; docs/benchmarks.md.)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import device_of, from_numpy, to_numpy

FIRST_BLOCK = 8  # steps of a run's first block, before any prediction (short runs waste less)
SPREAD = 45.0  # log2 of the largest factor between a lazy block's norms and 1
_LO, _HI = 2.0**-60, 2.0**60  # lazy norms outside this range: redo the block carefully


def normalize(W: Any, fallback: Any, xp: Any) -> Any:
    """Rows of ``W`` divided by their norms; a zero row is replaced by ``fallback``.

    ``B v = 0`` means ``v`` is an eigenvector for eigenvalue 0: keeping ``v`` makes the
    iteration stop at once with a finite result instead of dividing by zero.
    """
    # Scaled by the largest |entry| first, so tiny vectors (squares below the smallest
    # normal number) keep their direction.
    big = xp.max(xp.abs(W), axis=-1, keepdims=True)
    ok = big > 0
    one = xp.ones((), dtype=big.dtype, device=device_of(big))
    W = W / xp.where(ok, big, one)
    nrm = xp.sqrt(xp.sum(W * W, axis=-1, keepdims=True))
    return xp.where(ok, W / xp.where(ok, nrm, one), fallback)


def lazy_length(g: float, K: int) -> int:
    """Longest lazy block (at most ``K`` steps) for a growth of ``2^g`` per step; 0: none.

    The norms of a centred block span ``2^(+-|g| (K - 1) / 2)``; ``|g| <= SPREAD`` keeps
    the centring factor ``2^k``, ``|k| <= 2 SPREAD``, a normal float32 number.
    """
    if not math.isfinite(g) or abs(g) > SPREAD:
        return 0
    if abs(g) * (K - 1) <= 2 * SPREAD:
        return K
    return int(2 * SPREAD / abs(g)) + 1


def exponent_limit(dtype: Any, xp: Any) -> int:
    """Largest ``e`` with ``2^e`` and ``2^-e`` normal numbers of ``dtype`` (126 for float32)."""
    return int(math.log2(float(xp.finfo(dtype).max))) - 1


def rescale_exponent(g: float, K: int, limit: int) -> int:
    """``e`` (``|e| <= limit``) such that the matrix divided by ``2^e`` (exact) gives lazy
    blocks their full ``K`` steps: ``round(g)`` when a growth of ``2^g`` would shorten the
    block, else 0. (Full length needs ``K <= 181``, the most a growth of ``2^0.5`` allows.)"""
    if not math.isfinite(g) or lazy_length(g, K) == K:
        return 0
    return max(-limit, min(limit, int(round(g))))


def _log2(x: np.ndarray) -> np.ndarray:
    """log2 of non-negative host values, NaN (growth unknown) for 0 and non-finite."""
    ok = np.isfinite(x) & (x > 0)
    return np.where(ok, np.log2(np.where(ok, x, 1.0)), np.nan)


def _centre(g: np.ndarray, K: int) -> np.ndarray:
    """Exponents ``k`` putting the norms ``2^(k + i g)``, i = 1..K, around 1."""
    return -np.round(g * (K + 1) / 2)


def lazy_steps(B: Any, V: Any, K: int, g: np.ndarray, xp: Any) -> tuple[Any, Any, np.ndarray]:
    """``K`` lazy steps from unit rows ``V`` (m, n) of a stack ``B`` (m, n, n).

    Returns the iterates (m, K, n), the products' norms (m, K) on the device and the
    centring exponents ``k`` (host). The caller reads the norms with the step test, in
    one transfer, and redoes the block carefully if one left ``[2^-60, 2^60]``
    (:func:`lazy_ok`); the growth for the next block is :func:`lazy_growth`.
    """
    k = _centre(g, K)
    w = V * xp.astype(from_numpy(np.exp2(k)[:, None], xp, device=device_of(V)), V.dtype)
    products = []
    if B.shape[0] == 1:
        # One matrix: 1-D vectors and a 2-D product (BLAS gemv, ~2x faster than a stack of one)
        B2, w = B[0, ...], w[0, :]
        for _ in range(K):
            w = xp.matmul(B2, w)
            products.append(w)
        S = xp.stack(products, axis=0)[None, ...]
    else:
        for _ in range(K):
            w = xp.matmul(B, w[..., None])[..., 0]
            products.append(w)
        S = xp.stack(products, axis=1)
    nrm = xp.sqrt(xp.sum(S * S, axis=-1))  # (m, K)
    return S / nrm[..., None], nrm, k


def lazy_ok(nrm: np.ndarray) -> bool:
    """Whether every norm of a lazy block is in range (NaN is not)."""
    return bool(np.all((nrm >= _LO) & (nrm <= _HI)))


def lazy_growth(nrm: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log2 of the growth per step over a lazy block, from its norms (m, K) and centring
    exponents: the block's average, which clustered eigenvalues do not make swing."""
    K = nrm.shape[1]
    if K > 1:
        return _log2(nrm[:, -1] / nrm[:, 0]) / (K - 1)
    return _log2(nrm[:, 0]) - k


def careful_steps(B: Any, V: Any, K: int, xp: Any) -> tuple[Any, np.ndarray]:
    """``K`` steps normalising every product (zero products keep ``v``): the iterates
    (m, K, n) and the growth ``log2 ||B v_{K-1}||`` per matrix (host; NaN if unknown)."""
    steps, v, nrm = [], V, None
    for _ in range(K):
        w = xp.matmul(B, v[..., None])[..., 0]
        nrm = w
        v = normalize(w, v, xp)
        steps.append(v)
    # log2 ||w|| = log2 max|w| + log2 ||w / max|w|||: no square overflows or underflows
    w64 = xp.astype(nrm, xp.float64)
    big = xp.max(xp.abs(w64), axis=-1)
    unit = w64 / xp.where(big > 0, big, xp.ones_like(big))[:, None]
    h = to_numpy(xp.stack([big, xp.sqrt(xp.sum(unit * unit, axis=-1))]))
    return xp.stack(steps, axis=1), _log2(h[0]) + _log2(h[1])


def matrix_powers(B: Any, K: int, xp: Any) -> Any:
    """``(m, K, n, n)`` stack of B^1..B^K, each scaled to max-abs 1 (directions unchanged)."""

    def scaled(P: Any) -> Any:
        s = xp.max(xp.abs(P), axis=(-2, -1), keepdims=True)
        return P / xp.where(s > 0, s, xp.ones_like(s))

    P = scaled(B)[:, None, ...]
    while P.shape[1] < K:  # doubling: [B^1..B^k] -> [B^1..B^2k] with one batched product
        last = P[:, -1:, ...]
        P = xp.concat([P, scaled(xp.matmul(last, P))], axis=1)
    return P[:, :K, ...]


def step_test(Vs: Any, Va: Any, xp: Any) -> tuple[Any, Any]:
    """Step differences ``D = v_t - s_t v_{t-1}`` (m, K, n) of iterates ``Vs`` started from
    ``Va`` (m, n), ``s_t = sign(v_t . v_{t-1})``, and their max-norms (m, K)."""
    prev = xp.concat([Va[:, None, :], Vs[:, :-1, :]], axis=1)
    dots = xp.sum(Vs * prev, axis=-1, keepdims=True)
    D = Vs - xp.where(dots < 0, -prev, prev)
    return D, xp.max(xp.abs(D), axis=-1)


def decay_rate(r0: float, r1: float, span: int) -> float:
    """Rate per step of a geometric decay from ``r0`` to ``r1`` over ``span`` steps; NaN
    when there is none (not decreasing, zero, non-finite)."""
    if not (0 < r1 < r0) or not math.isfinite(r0) or span < 1:
        return math.nan
    return (r1 / r0) ** (1.0 / span)


def decay_steps(r1: float, rate: float, target: float, most: int) -> int:
    """Steps until a quantity now at ``r1``, falling by ``rate`` per step, is below
    ``target``: at least 1, at most ``most`` (also when there is no usable rate)."""
    if not (0.0 < rate < 1.0) or not (0 < r1 < math.inf) or not target > 0:
        return most
    return max(1, min(most, math.ceil(math.log(target / r1) / math.log(rate))))


def predict_steps(dmax: Any, tol: float, most: int, rate: float = math.nan) -> tuple[int, float]:
    """Steps until ``max|D| < tol`` predicted from the geometric decay of the last block's
    differences ``dmax`` (K,) over its second half (a block of one step reuses the previous
    ``rate``); at most ``most``. Returns the steps and the rate, to pass on.

    A short prediction costs one more block (~1 step of overhead), a long one wasted
    steps; without it a block of 16 wasted 7.5 steps per run on average.
    """
    K = len(dmax)
    r1 = float(dmax[K - 1])
    if K >= 2:
        h = K // 2
        rate = decay_rate(float(dmax[h - 1]), r1, K - h)
    steps = decay_steps(r1, rate, tol, most)
    usable = 0.0 < rate < 1.0 and 0 < r1 < math.inf
    return steps, (rate if usable else math.nan)
