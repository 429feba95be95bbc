"""The canonical arithmetic of the difference metrics: float64 sums over features, feature by
feature, in one fixed order (see :mod:`gpuknn.ops.differences`).

Every value is built from IEEE operations that are correctly rounded on every device
(subtract, add, multiply, divide, abs, max, compare), one feature after the other, so a
pair's value depends on its two rows alone -- not on the tile, the batch, the namespace
or the device. The NumPy branch runs the very same operations in preallocated buffers
(``out=``: no temporaries per feature), so it gives the same bits; faster kernels whose
summation order differs (``torch.cdist``, SciPy's ``cdist``, a GPU reduction) would not,
and are not used.
"""

from __future__ import annotations

from typing import Any

from array_api_compat import is_numpy_namespace

from .._backend import array_namespace, device_of

__all__ = ["feature_sums", "KINDS"]

# "power": |d|**p by repeated multiplication (integer p >= 3); "powf": NumPy's pow
# (non-integer p: host only, pow is not correctly rounded on every device).
KINDS = ("manhattan", "chebyshev", "power", "powf", "canberra", "braycurtis", "hamming")


def feature_sums(q: Any, r: Any, kind: str, p: float | None = None, *, pairs: bool = False) -> tuple[Any, Any]:
    """Per-pair float64 accumulations of a difference metric, feature by feature.

    Parameters
    ----------
    q : array (m, d)
        Query rows (float32 or float64; taken in float64, exactly).
    r : array (n, d), or (m, c, d) with ``pairs``
        Reference rows: a block (every query against every row: result (m, n)), or each
        query's own gathered candidates (result (m, c)).
    kind : one of :data:`KINDS`
    p : float
        The exponent of ``"power"`` (an integer >= 3) and ``"powf"``.

    Returns
    -------
    acc : float64 array (m, n) or (m, c)
        ``sum |q_j - r_j|`` (manhattan), ``max`` (chebyshev), ``sum |q_j - r_j|**p``
        (power, powf), ``sum |q_j - r_j| / (|q_j| + |r_j|)`` with 0/0 -> 0 (canberra),
        ``sum |q_j - r_j|`` (braycurtis), the count of ``q_j != r_j`` (hamming).
    acc2 : float64 array like ``acc`` (braycurtis: ``sum |q_j + r_j|``), else None.

    Complexity: O(m n d) elementwise work in d steps; memory a few (m, n) float64 arrays.
    """
    xp = array_namespace(q, r)
    if is_numpy_namespace(xp):
        return _numpy_sums(q, r, kind, p, pairs)
    if kind == "powf":
        raise ValueError("kind 'powf' runs on the host (NumPy) only")
    q = xp.astype(q, xp.float64)
    r = xp.astype(r, xp.float64)
    m, d = q.shape
    shape = (m, r.shape[1]) if pairs else (m, r.shape[0])
    acc = xp.zeros(shape, dtype=xp.float64, device=device_of(q))
    acc2 = xp.zeros_like(acc) if kind == "braycurtis" else None
    zero = xp.zeros_like(acc)
    for j in range(d):
        a = q[:, j : j + 1]
        b = r[:, :, j] if pairs else xp.reshape(r[:, j], (1, shape[1]))
        t = xp.abs(a - b)
        if kind == "chebyshev":
            acc = xp.maximum(acc, t)
        elif kind == "hamming":
            acc = acc + xp.astype(a != b, xp.float64)
        elif kind == "canberra":
            den = xp.abs(a) + xp.abs(b)
            pos = den > 0
            acc = acc + xp.where(pos, t / xp.where(pos, den, xp.ones_like(den)), zero)
        elif kind == "power":
            acc = acc + _ipow(t, int(p))
        else:
            acc = acc + t
            if acc2 is not None:
                acc2 = acc2 + xp.abs(a + b)
    return acc, acc2


def _ipow(t: Any, p: int) -> Any:
    """``t**p`` as ``t * t * ... * t`` (left to right): correctly rounded steps everywhere."""
    out = t
    for _ in range(p - 1):
        out = out * t
    return out


def _numpy_sums(q, r, kind, p, pairs):
    """:func:`feature_sums` on NumPy: the same operations in the same order, in buffers."""
    import numpy as np  # noqa: PLC0415

    q = np.asarray(q, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    m, d = q.shape
    if pairs:
        shape = (m, r.shape[1])
        cols = np.ascontiguousarray(np.moveaxis(r, 2, 0))  # (d, m, c): one contiguous slab per feature
    else:
        shape = (m, r.shape[0])
        cols = np.ascontiguousarray(r.T)[:, None, :]  # (d, 1, n)
    qt = np.ascontiguousarray(q.T)[:, :, None]  # (d, m, 1)
    acc = np.zeros(shape)
    acc2 = np.zeros(shape) if kind == "braycurtis" else None
    t = np.empty(shape)
    u = np.empty(shape) if kind in ("braycurtis", "power") else None
    for j in range(d):
        a, b = qt[j], cols[j]
        if kind == "hamming":
            acc += a != b
            continue
        np.subtract(a, b, out=t)
        np.abs(t, out=t)
        if kind == "chebyshev":
            np.maximum(acc, t, out=acc)
        elif kind == "canberra":
            den = np.abs(a) + np.abs(b)
            pos = den > 0
            np.divide(t, den, out=t, where=pos)
            t[~pos] = 0.0
            acc += t
        elif kind == "power":
            np.copyto(u, t)
            for _ in range(int(p) - 1):
                np.multiply(u, t, out=u)
            acc += u
        elif kind == "powf":
            np.power(t, p, out=t)
            acc += t
        else:
            acc += t
            if acc2 is not None:
                np.add(a, b, out=u)
                np.abs(u, out=u)
                acc2 += u
    return acc, acc2
