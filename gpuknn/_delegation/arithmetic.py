"""The canonical pair arithmetic of the exact re-rank, the GEMM rounding bound per namespace,
and an eigen-solve whose rounding does not follow the BLAS thread count (see the package
docstring of :mod:`gpuknn._delegation`)."""

from __future__ import annotations

from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace, device_of
from .precision import one_blas_thread

__all__ = [
    "dot64",
    "sqdist64",
    "sum64",
    "prefix_dot64",
    "masked_dot64",
    "masked_sum64",
    "tree_sums",
    "matmul_unit_roundoff",
    "symmetric_eigh",
]


def dot64(a: Any, b: Any) -> Any:
    """Float64 dot products of ``a`` and ``b`` along the last axis (shapes broadcast).

    Parameters
    ----------
    a, b : arrays of shapes broadcasting to ``(..., d)``, float32 or float64

    Returns
    -------
    float64 array of shape ``(...)``; each entry is a function of its two rows alone.

    Notes
    -----
    Generic: ``sum(a64 * b64, axis=-1)``. torch and CuPy: the same products summed by
    :func:`sum64`'s fixed tree (their GPU reductions change their order with the number
    of rows reduced at once, so ``sum`` would give one pair other bits in another batch:
    seen on an H200 for CuPy at d = 8193). NumPy: ``einsum`` casting float32 operands in its
    buffered loop (no float64 copy of ``a``: 2x faster on gathered float32 rows) and
    ``vecdot`` (BLAS ``ddot``, one call per pair) for float64 operands.

    Examples
    --------
    >>> import numpy as np
    >>> dot64(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32), np.array([1.0, 1.0]))
    array([3., 7.])
    """
    xp = array_namespace(a, b)
    if is_numpy_namespace(xp):
        import numpy as np  # noqa: PLC0415

        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == np.float64 and b.dtype == np.float64:
            return np.vecdot(a, b)
        return np.einsum("...d,...d->...", a, b, dtype=np.float64)
    return _sum_last(xp.astype(a, xp.float64) * xp.astype(b, xp.float64), xp)


def sqdist64(a: Any, b: Any) -> Any:
    """Float64 squared euclidean distances of ``a`` and ``b`` along the last axis.

    The differences are taken in float64 first (exact for float32 input), so the result has
    no cancellation, whatever the offset of the data. Shapes broadcast as in :func:`dot64`.

    Examples
    --------
    >>> import numpy as np
    >>> sqdist64(np.array([[1e6, 1e6 + 3.0]]), np.array([1e6 + 4.0, 1e6 + 3.0]))
    array([16.])
    """
    xp = array_namespace(a, b)
    if is_numpy_namespace(xp):
        import numpy as np  # noqa: PLC0415

        diff = np.subtract(a, b, dtype=np.float64)
        return np.vecdot(diff, diff)
    diff = xp.astype(a, xp.float64) - xp.astype(b, xp.float64)
    return _sum_last(diff * diff, xp)


def sum64(x: Any) -> Any:
    """Float64 sums of ``x`` along the last axis, each a function of its own row alone.

    Parameters
    ----------
    x : array of shape ``(..., d)``, float32 or float64

    Returns
    -------
    float64 array of shape ``(...)``

    Notes
    -----
    Generic: ``sum(x64, axis=-1)`` (NumPy's pairwise sum depends on the row length alone).
    torch and CuPy: a tree of elementwise adds of adjacent pairs, halving the last axis
    ``ceil(log2 d)`` times (:func:`_sum_last`) -- elementwise kernels round each entry alike whatever the
    shape, while their GPU reductions split a row differently with the number of rows
    reduced at once (CuPy: two results for one pair at d = 8193 on an H200). ``ceil(log2 d)``
    launches instead of one; the pairwise error bound.

    Examples
    --------
    >>> import numpy as np
    >>> sum64(np.array([[1.0, 2.0, 3.0]], dtype=np.float32))
    array([6.])
    """
    xp = array_namespace(x)
    return _sum_last(xp.astype(x, xp.float64, copy=False), xp)  # float64 input: no copy


def _sum_last(x: Any, xp: Any) -> Any:
    """Sum of float64 ``x`` along the last axis, in an order fixed by its length alone.

    torch and CuPy: a tree of adjacent pairs, ``x[2i] + x[2i + 1]``, an odd length carrying
    its last entry up unchanged. Carrying is adding ``-0.0``, which changes no float64 value
    (``-0.0`` included), so a row padded on the right with ``-0.0`` sums to the same bits as
    the row itself, whatever the padding: what lets :func:`prefix_dot64` and
    :func:`masked_dot64` sum rows of many lengths at once (a tree pairing ``x[i]`` with
    ``x[i + d // 2]`` would pair other entries once padded)."""
    if not (is_torch_namespace(xp) or is_cupy_namespace(xp)) or x.shape[-1] == 0:
        return xp.sum(x, axis=-1)
    while x.shape[-1] > 1:
        x = _pair_level(x, xp)
    return x[..., 0]


def _pair_level(x: Any, xp: Any) -> Any:
    """One level of :func:`_sum_last`'s tree: adjacent pairs summed, an odd last entry carried."""
    d = x.shape[-1]
    h = d // 2
    head = x[..., 0 : 2 * h : 2] + x[..., 1 : 2 * h : 2]
    return xp.concat([head, x[..., 2 * h :]], axis=-1) if d % 2 else head


def tree_sums(xp: Any) -> bool:
    """Whether :func:`sum64` (and so :func:`dot64`, :func:`sqdist64`) sums in gpuknn's own
    tree on namespace ``xp`` (torch, CuPy): rows padded with ``-0.0`` then sum to the
    same bits as unpadded, so rows of several lengths can share one batch. NumPy's
    ``einsum``/``vecdot`` and a generic ``sum`` promise no such thing: there, callers
    sum each length on its own (on the host, where launches cost nothing)."""
    return is_torch_namespace(xp) or is_cupy_namespace(xp)


def prefix_dot64(a: Any, b: Any, ps: list[int]) -> Any:
    """``dot64(a[..., :p], b[..., :p])`` for every p in ``ps``, stacked on a new last axis.

    Parameters
    ----------
    a, b : arrays of shapes broadcasting to ``(..., d)``, float32 or float64
    ps : list of int
        Lengths in ``[1, d]``.

    Returns
    -------
    float64 array of shape ``(..., len(ps))``, column j bit for bit ``dot64`` of the first
    ``ps[j]`` columns.

    Notes
    -----
    Generic (NumPy included): one :func:`dot64` per p. torch and CuPy (:func:`tree_sums`):
    the tree of ``a[..., :max(ps)] * b[..., :max(ps)]`` once, then every prefix's sum read
    off it -- the prefix ``p``'s tree holds the full tree's nodes left of ``p - 1`` and,
    level by level, one partial node, its left sibling plus the partial node below
    (``-0.0`` where it has none). About ``3 log2(max(ps))`` launches for the whole grid
    instead of ``log2`` of each p per p: a p-sweep's row statistics of 31 sizes.

    Complexity: O(n max(ps)) float64 work and memory.

    Examples
    --------
    >>> import numpy as np
    >>> prefix_dot64(np.array([[1.0, 2.0, 3.0]]), np.ones(3), [1, 3])
    array([[1., 6.]])
    """
    xp = array_namespace(a, b)
    if not tree_sums(xp):
        return xp.stack([dot64(a[..., :p], b[..., :p]) for p in ps], axis=-1)
    top = max(ps)
    x = xp.astype(a[..., :top], xp.float64) * xp.astype(b[..., :top], xp.float64)
    dev = device_of(x)
    ax = x.ndim - 1
    sums = xp.take(x, xp.asarray([p - 1 for p in ps], dtype=xp.int64, device=dev), axis=ax)
    neg0 = xp.full(x.shape[:-1] + (1,), -0.0, dtype=xp.float64, device=dev)
    level, shift = x, 0
    while level.shape[-1] > 1:
        # The partial node of prefix p at the next level is (p - 1) >> (shift + 1); it adds
        # its left sibling where the one below is a right child, else nothing (-0.0).
        below = [(p - 1) >> shift for p in ps]
        if any(c % 2 for c in below):
            n = level.shape[-1]
            at = xp.asarray([c - 1 if c % 2 else n for c in below], dtype=xp.int64, device=dev)
            sums = xp.take(xp.concat([level, neg0], axis=ax), at, axis=ax) + sums
        level, shift = _pair_level(level, xp), shift + 1
    return sums


def masked_dot64(a: Any, b: Any, lengths: Any) -> Any:
    """``dot64`` of each row's first ``lengths`` columns, rows of many lengths at once.

    ``a * b`` broadcast to ``(..., d)``; ``lengths`` (int array broadcasting to ``(...)``)
    is each row's length. Only where :func:`tree_sums` holds: the columns past a row's
    length are ``-0.0``, which the tree sums to the row's own bits. Callers on other
    namespaces sum each length on its own (:func:`prefix_dot64`'s generic branch).

    Examples
    --------
    >>> import numpy as np
    >>> masked_dot64(np.ones((2, 3), dtype=np.float32), np.ones(3), np.array([1, 3]))
    array([1., 3.])
    """
    xp = array_namespace(a, b)
    x = xp.astype(a, xp.float64) * xp.astype(b, xp.float64)
    return _sum_last(_mask_past(x, lengths, xp), xp)


def masked_sum64(x: Any, lengths: Any) -> Any:
    """:func:`sum64` of each row's first ``lengths`` entries (:func:`masked_dot64`'s terms).

    Examples
    --------
    >>> import numpy as np
    >>> masked_sum64(np.array([[1.0, 2.0, 4.0]]), np.array([2]))
    array([3.])
    """
    xp = array_namespace(x)
    return _sum_last(_mask_past(xp.astype(x, xp.float64), lengths, xp), xp)


def _mask_past(x: Any, lengths: Any, xp: Any) -> Any:
    cols = xp.arange(x.shape[-1], dtype=lengths.dtype, device=device_of(x))
    return xp.where(cols < lengths[..., None], x, xp.asarray(-0.0, dtype=x.dtype, device=device_of(x)))


def matmul_unit_roundoff(dtype: Any, xp: Any, device: Any = None) -> tuple[float, float]:
    """``(u, eta)`` of a GEMM in ``dtype`` on namespace ``xp``: unit roundoff and half the
    smallest subnormal, as the certified bounds of :mod:`gpuknn.ops.certify` need them.

    float64: ``(2**-53, 2**-1075)``; float32: ``(2**-24, 2**-150)`` on the host and
    ``(2**-24, 2**-126)`` on a GPU (whose kernels may flush subnormals to zero), except where the
    library may run float32 products with shorter mantissas: TF32 (10 bits, ``u = 2**-11``)
    or bfloat16 (``u = 2**-8``). The switch is read where the library itself reads it, on
    every call (a certified bound that assumed FP32 while TF32 ran would be a wrong answer):

    * CuPy: its float32 compute type (``cupy._core``'s ``get_compute_type``), which CuPy
      fixes from ``CUPY_TF32`` at its first use and ``set_compute_type`` can change later;
    * torch: the new per-backend switch (``torch.backends.cuda.matmul.fp32_precision`` for
      CUDA tensors, ``torch.backends.mkldnn.matmul.fp32_precision`` for CPU ones, ``"none"``
      deferring to ``torch.backends.fp32_precision``) where this torch has it -- the old
      getters raise once the new switch was used -- else the old ones
      (``get_float32_matmul_precision``, ``backends.cuda.matmul.allow_tf32``).

    A switch that cannot be read gives the bfloat16 bound: looser, never wrong.

    Parameters
    ----------
    dtype : the GEMM's dtype (of ``xp``)
    xp : array namespace
    device : the operands' device, optional
        For torch: which backend's switch applies; None takes the looser of CPU and CUDA.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> matmul_unit_roundoff(xp.float32, xp)
    (5.960464477539063e-08, 7.006492321624085e-46)
    """
    if dtype == xp.float64:
        return 2.0**-53, 2.0**-1075
    u, eta = 2.0**-24, 2.0**-150
    if is_cupy_namespace(xp):
        u, eta = _cupy_float32_roundoff(), _FLUSHED
    elif is_torch_namespace(xp):
        kind = getattr(device, "type", None)
        kinds = ("cpu", "cuda") if kind is None else (kind,)
        u = max(_torch_float32_roundoff(k) for k in kinds)
        eta = _FLUSHED if "cuda" in kinds else eta
    return u, eta


# GPU float32 GEMMs may flush subnormal products and sums to zero: a tiny product then errs
# by up to the smallest normal number, not half the smallest subnormal.
_FLUSHED = 2.0**-126


# Unit roundoff of a float32 product by the mantissa its inputs are rounded to.
_U_FP32, _U_TF32, _U_BF16 = 2.0**-24, 2.0**-11, 2.0**-8
_TORCH_PRECISION = {"ieee": _U_FP32, "tf32": _U_TF32, "bf16": _U_BF16}


def _cupy_float32_roundoff() -> float:
    try:
        import numpy as np  # noqa: PLC0415
        from cupy._core import _routines_linalg as linalg  # noqa: PLC0415 - CuPy in hand

        kind = int(linalg.get_compute_type(np.float32))
    except Exception:  # noqa: BLE001 - a CuPy without the getter: assume the worst
        return _U_BF16
    # cupy/_core/_routines_linalg.pxd: FP16 = 3, BF16 = 6, TF32 = 7 (DEFAULT, PEDANTIC and
    # FP32 keep float32's mantissa).
    short = {3: _U_TF32, 6: _U_BF16, 7: _U_TF32}
    return short.get(kind, _U_FP32)


def _torch_float32_roundoff(device_type: str) -> float:
    import torch  # noqa: PLC0415 - only reached with torch tensors in hand

    try:
        backends = torch.backends
        switch = backends.cuda.matmul if device_type == "cuda" else backends.mkldnn.matmul
        precision = getattr(switch, "fp32_precision", None)
        if precision is not None:  # torch >= 2.9: the new switch, set or inherited
            if precision == "none":
                precision = getattr(backends, "fp32_precision", "none")
            return _TORCH_PRECISION.get(precision, _U_FP32 if precision == "none" else _U_BF16)
        legacy = torch.get_float32_matmul_precision()
        if legacy == "medium":
            return _U_BF16
        if legacy == "high" or (device_type == "cuda" and backends.cuda.matmul.allow_tf32):
            return _U_TF32
        return _U_FP32
    except Exception:  # noqa: BLE001 - an unreadable switch: the loosest bound
        return _U_BF16


def symmetric_eigh(C: Any) -> tuple[Any, Any]:
    """``xp.linalg.eigh(C)`` (ascending ``(w, V)``) whose rounding does not depend on the
    BLAS thread count.

    A host LAPACK's ``syevd`` rounds the eigenvectors' last bits differently on 1 and on 2
    threads; through PCA projections and near ties that changed the (k, p) tables of a
    study run on a Dask cluster (one thread per worker) against the same study in one
    process. On the host, called from the main thread, the solve runs on one BLAS thread
    (:func:`~gpuknn._delegation.precision.one_blas_thread`; d = 784 costs 0.06 s on 2
    threads, 0.09 s on one: docs/benchmarks.md); from another thread it runs on the
    process's count (a Dask worker's nanny sets one; a threaded run of gpuknn's holds one
    from the main thread). cuSOLVER on CuPy is left as it is.
    """
    xp = array_namespace(C)
    if is_cupy_namespace(xp):
        return xp.linalg.eigh(C)
    with one_blas_thread():
        return xp.linalg.eigh(C)
