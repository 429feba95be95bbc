"""The canonical pair arithmetic of the exact re-rank, the GEMM rounding bound per namespace,
and an eigen-solve whose rounding does not follow the BLAS thread count (see the package
docstring of :mod:`gpuknn._delegation`)."""

from __future__ import annotations

from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace

__all__ = ["dot64", "sqdist64", "matmul_unit_roundoff", "symmetric_eigh"]


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


def symmetric_eigh(C: Any) -> tuple[Any, Any]:
    """``xp.linalg.eigh(C)`` (ascending ``(w, V)``) whose rounding does not depend on the
    BLAS thread count.

    A host LAPACK's ``syevd`` rounds the eigenvectors' last bits differently on 1 and on 2
    threads; through PCA projections and near ties that changed the (k, p) tables of a
    study run on a Dask cluster (one thread per worker) against the same study in one
    process. On the host the solve runs on one BLAS thread (threadpoolctl, a scikit-learn
    dependency; d = 784 costs 0.06 s on 2 threads, 0.09 s on one: docs/benchmarks.md).
    cuSOLVER on CuPy is left as it is.
    """
    xp = array_namespace(C)
    if is_cupy_namespace(xp):
        return xp.linalg.eigh(C)
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    with threadpool_limits(limits=1, user_api="blas"):
        return xp.linalg.eigh(C)
