"""In-place updates of the p-sweep's score tiles (CuPy/torch kernels; a generic fallback)."""

from __future__ import annotations

from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace

__all__ = ["gram_accumulate", "scale_columns", "add_outer"]


def gram_accumulate(G: Any, A: Any, B: Any, *, first: bool = False) -> Any:
    """``G + A @ B.T`` (``A @ B.T`` when ``first``), written into ``G`` where the backend can.

    The p-sweep grows one Gram tile over the PCA grid; a fresh tile per p would double its
    memory. NumPy: BLAS ``gemm`` with ``beta = 1`` into a C-contiguous G (SciPy's wrapper);
    torch: ``addmm_`` (``matmul(out=G)`` first); CuPy: cuBLAS ``gemm`` with ``beta = 1``
    into G (``matmul(out=G)`` first); generic: a new array. Use the return value: it is G itself where written in place.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.zeros((2, 2))
    >>> gram_accumulate(G, np.eye(2), np.ones((2, 2))) is G, G.tolist()
    (True, [[1.0, 1.0], [1.0, 1.0]])
    """
    xp = array_namespace(G, A, B)
    if is_numpy_namespace(xp) and G.flags.c_contiguous and G.dtype == A.dtype == B.dtype:
        from scipy.linalg import blas  # noqa: PLC0415 - numpy-only fast path

        gemm = blas.sgemm if G.dtype.char == "f" else blas.dgemm
        # G (C order) is G.T in Fortran order: G.T = B @ A.T (+ G.T), written in place.
        out = gemm(1.0, B, A, beta=0.0 if first else 1.0, c=G.T, trans_a=0, trans_b=1, overwrite_c=1)
        return G if out.base is G or out.base is G.base and G.base is not None else out.T
    if is_torch_namespace(xp) and G.dtype == A.dtype == B.dtype:
        import torch  # noqa: PLC0415 - only reached with torch tensors in hand

        return torch.matmul(A, B.mT, out=G) if first else G.addmm_(A, B.mT)
    if is_cupy_namespace(xp) and G.dtype == A.dtype == B.dtype:
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand
        import cupy.cublas  # noqa: PLC0415

        if first:
            return cupy.matmul(A, B.T, out=G)
        # cuBLAS gemm with beta = 1 into G itself (a C-ordered G is written as G.T in
        # Fortran order): no product-sized temporary per p, which the plan does not count.
        return cupy.cublas.gemm("N", "T", A, B, out=G, alpha=1.0, beta=1.0)
    return A @ B.T if first else G + A @ B.T


def scale_columns(G: Any, w: Any, *, shift: bool = False, out: Any = None) -> Any:
    """``G * w[None, :]`` (``G + w[None, :]`` with ``shift``), into ``out`` when given.

    ``out`` (G's shape and dtype) saves a fresh tile per call -- on the host, fresh tiles
    above glibc's mmap threshold are page-faulted in anew each time. NumPy, CuPy, torch:
    the ufunc's ``out``; generic: a new array (``out`` unused).
    """
    xp = array_namespace(G, w)
    if out is not None and (is_numpy_namespace(xp) or is_cupy_namespace(xp) or is_torch_namespace(xp)):
        mod = _native(xp)
        return (mod.add if shift else mod.multiply)(G, w[None, :], out=out)
    return G + w[None, :] if shift else G * w[None, :]


def add_outer(S: Any, alpha: float, x: Any, y: Any) -> Any:
    """``S + alpha * x ⊗ y`` for a tile S (m, n), x (m,), y (n,): in place on NumPy (BLAS
    ``ger`` through SciPy, on a C-contiguous S), torch (``addr_``) and CuPy (cuBLAS
    ``ger``); generic: a new array. Use the return value."""
    xp = array_namespace(S, x, y)
    x, y = xp.astype(x, S.dtype), xp.astype(y, S.dtype)
    if is_numpy_namespace(xp) and S.flags.c_contiguous:
        from scipy.linalg import blas  # noqa: PLC0415 - numpy-only fast path

        ger = blas.sger if S.dtype.char == "f" else blas.dger
        # S.T is Fortran-ordered: S.T += alpha y ⊗ x, in place.
        res = ger(alpha, y, x, a=S.T, overwrite_a=1)
        return S if res.base is S or res.base is S.base and S.base is not None else res.T
    if is_torch_namespace(xp):
        return S.addr_(x, y, alpha=alpha)
    if is_cupy_namespace(xp) and S.dtype.char in "fd":
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand
        import cupy.cublas  # noqa: PLC0415

        # cuBLAS ger into S itself: no tile-sized temporary for the outer product.
        cupy.cublas.ger(alpha, cupy.ascontiguousarray(x), cupy.ascontiguousarray(y), S)
        return S
    return S + alpha * x[:, None] * y[None, :]


def _native(xp: Any) -> Any:
    """The array library behind a NumPy, CuPy or torch namespace (imported only here)."""
    if is_numpy_namespace(xp):
        import numpy  # noqa: PLC0415

        return numpy
    if is_cupy_namespace(xp):
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand

        return cupy
    import torch  # noqa: PLC0415 - only reached with torch tensors in hand

    return torch
