"""Library-specific fast paths, each with a generic array-API fallback.

Every function here takes arrays of any supported namespace and returns arrays of the same
namespace and device. The generic branch is the definition; a native branch may only be
faster, never different in what it promises (each promise is tested on every backend).

* :func:`dot64` and :func:`sqdist64` are the **canonical pair arithmetic** of the exact
  re-rank (:mod:`gpuknn.ops.exact`): float64 dot products and squared distances, reduced
  along the last axis, whose value for one pair of rows depends on those two rows alone —
  not on where the pair sits in a batch, how big the batch is, nor on the thread count.
  That is what makes exact duplicates tie bit for bit wherever they are searched. GEMM and
  GEMV kernels do not promise it (OpenBLAS's ``dgemv`` rounds rows differently by position),
  so none is used; NumPy's pairwise ``sum`` does, and so do the native branches below, which
  the test suite checks with duplicates at every position, batch shape and width.
"""

from __future__ import annotations

from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from ._backend import array_namespace

__all__ = ["dot64", "sqdist64", "matmul_unit_roundoff", "take_rows"]


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
    Generic: ``sum(a64 * b64, axis=-1)``. NumPy: ``einsum`` casting float32 operands in its
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
    return xp.sum(xp.astype(a, xp.float64) * xp.astype(b, xp.float64), axis=-1)


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
    return xp.sum(diff * diff, axis=-1)


def take_rows(x: Any, index: Any) -> Any:
    """Rows ``x[index]`` of a 2-D array for a 1-D integer index array.

    NumPy: fancy indexing. ``numpy.take`` first copies a non-contiguous input whole (a
    column slice ``Z[:, :p]``, say), which made gathering a few rows cost a copy of all.

    Examples
    --------
    >>> import numpy as np
    >>> take_rows(np.arange(6.0).reshape(3, 2)[:, :1], np.array([2, 0]))
    array([[4.],
           [0.]])
    """
    xp = array_namespace(x, index)
    if is_numpy_namespace(xp):
        return x[index]
    return xp.take(x, index, axis=0)


def matmul_unit_roundoff(dtype: Any, xp: Any) -> tuple[float, float]:
    """``(u, eta)`` of a GEMM in ``dtype`` on namespace ``xp``: unit roundoff and half the
    smallest subnormal, as the certified bounds of :mod:`gpuknn.ops.certify` need them.

    float64: ``(2**-53, 2**-1075)``; float32: ``(2**-24, 2**-150)``, except where the
    namespace may run float32 products in TF32 (10-bit mantissas: ``u = 2**-11``) -- CuPy
    with ``CUPY_TF32=1``, torch with TF32 matmuls allowed or a float32 matmul precision
    other than ``"highest"`` (bfloat16 passes: ``u = 2**-8``).

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> matmul_unit_roundoff(xp.float32, xp)
    (5.960464477539063e-08, 7.006492321624085e-46)
    """
    if dtype == xp.float64:
        return 2.0**-53, 2.0**-1075
    u = 2.0**-24
    if is_cupy_namespace(xp):
        import os  # noqa: PLC0415

        if os.environ.get("CUPY_TF32", "0") != "0":
            u = 2.0**-11
    elif is_torch_namespace(xp):
        import torch  # noqa: PLC0415 - only reached with torch tensors in hand

        precision = torch.get_float32_matmul_precision()
        if precision == "medium":
            u = 2.0**-8
        elif precision == "high" or torch.backends.cuda.matmul.allow_tf32:
            u = 2.0**-11
    return u, 2.0**-150
