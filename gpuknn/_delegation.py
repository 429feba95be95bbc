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

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from array_api_compat import is_cupy_array, is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from ._backend import array_namespace, device_of, from_numpy

__all__ = [
    "dot64",
    "sqdist64",
    "matmul_unit_roundoff",
    "take_rows",
    "kth_largest",
    "order_rows",
    "bincount",
    "gram_accumulate",
    "scale_columns",
    "add_outer",
    "mask_counts",
    "device_scope",
    "on_input_device",
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
    """Rows ``x[index]`` of an array for a 1-D integer index.

    The one row gather of the library. ``index`` may be an array of ``x``'s namespace or a
    host (NumPy) array, as the seeded splits are: it is then moved to ``x``'s device. Host
    input (NumPy arrays, lists) stays on the host.

    NumPy: fancy indexing. ``numpy.take`` first copies a non-contiguous input whole (a
    column slice ``Z[:, :p]``, say), which made gathering a few rows cost a copy of all.

    Examples
    --------
    >>> import numpy as np
    >>> take_rows(np.arange(6.0).reshape(3, 2)[:, :1], np.array([2, 0]))
    array([[4.],
           [0.]])
    """
    import numpy as np  # noqa: PLC0415

    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        return x[np.asarray(index)]
    xp = array_namespace(x)
    if isinstance(index, (np.ndarray, list, tuple)):
        index = from_numpy(np.asarray(index, dtype=np.int64), xp, device=device_of(x))
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


CUPY_SELECT_MAX = 512  # cupy.partition selects for kth below this; it sorts whole rows above
CUPY_SORT_SCRATCH = 256 << 20  # bytes of sort scratch (~24 B/element) per chunk of rows


def kth_largest(S: Any, k: int) -> Any:
    """Exact k-th largest value of each row of ``S`` (rows,).

    NumPy: ``partition``; torch: ``topk``; a namespace with ``top_k``: that; generic: a
    full ``sort``. CuPy: ``-partition(-S, k - 1)``, since CuPy's ``partition`` selects only
    for ``kth < 512`` (:data:`CUPY_SELECT_MAX`) and sorts whole rows beyond -- with ~24 B of
    scratch per element that a tile plan does not budget. For larger k it sorts row chunks of
    at most :data:`CUPY_SORT_SCRATCH` bytes of scratch.

    Examples
    --------
    >>> import numpy as np
    >>> kth_largest(np.array([[3.0, 1.0, 2.0]]), 2)
    array([2.])
    """
    xp = array_namespace(S)
    m = S.shape[1]
    if is_numpy_namespace(xp):
        import numpy  # noqa: PLC0415

        return numpy.partition(S, m - k, axis=1)[:, m - k]
    if is_cupy_namespace(xp):
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand

        if k - 1 < CUPY_SELECT_MAX:
            return -cupy.partition(-S, k - 1, axis=1)[:, k - 1]
        step = max(1, CUPY_SORT_SCRATCH // (24 * m))
        return cupy.concatenate([cupy.sort(S[r : r + step], axis=1)[:, m - k] for r in range(0, S.shape[0], step)])
    if is_torch_namespace(xp):
        import torch  # noqa: PLC0415

        return torch.topk(S, k, dim=1, largest=True, sorted=True).values[:, k - 1]
    top_k = getattr(xp, "top_k", None)
    if top_k is not None:
        return xp.min(top_k(S, k, axis=1, mode="largest")[0], axis=1)
    return xp.sort(S, axis=1)[:, m - k]


def order_rows(rows: Any, values: Any, ties: Any = None) -> Any:
    """Permutation of flat items by (``rows`` ascending, ``values`` descending, ``ties``
    ascending); without ``ties``, equal items keep their order (stable).

    NumPy: one ``lexsort``; generic: stable ``argsort``s, last key first.

    Examples
    --------
    >>> import numpy as np
    >>> order_rows(np.array([1, 0, 0]), np.array([5.0, 1.0, 2.0]), np.array([0, 7, 3]))
    array([2, 1, 0])
    """
    xp = array_namespace(rows, values)
    if is_numpy_namespace(xp):
        import numpy  # noqa: PLC0415

        keys = (-values, rows) if ties is None else (ties, -values, rows)
        return numpy.lexsort(keys)  # stable; the last key is the primary one
    o = xp.argsort(-values, stable=True) if ties is None else None
    if ties is not None:
        o = xp.argsort(ties, stable=True)
        o = xp.take(o, xp.argsort(-xp.take(values, o), stable=True))
    return xp.take(o, xp.argsort(xp.take(rows, o), stable=True))


def bincount(codes: Any, n_bins: int, *, chunk: int = 1 << 16) -> Any:
    """int64 counts of ``0 .. n_bins - 1`` in the int array ``codes`` (negatives ignored).

    NumPy/CuPy/torch: ``bincount``, with the negatives counted in one extra bin that is
    dropped -- no boolean selection, so no host sync and never an empty input (CuPy's
    ``bincount`` raises on one). Generic: one-hot rows summed in chunks of ``chunk`` items
    (memory O(chunk)).

    Examples
    --------
    >>> import numpy as np
    >>> bincount(np.array([0, 2, 2, -1]), 3)
    array([1, 0, 2])
    """
    xp = array_namespace(codes)
    dev = device_of(codes)
    if int(codes.shape[0]) == 0:
        return xp.zeros(n_bins, dtype=xp.int64, device=dev)
    if is_numpy_namespace(xp) or is_cupy_namespace(xp) or is_torch_namespace(xp):
        if is_numpy_namespace(xp):
            import numpy as mod  # noqa: PLC0415
        elif is_cupy_namespace(xp):
            import cupy as mod  # noqa: PLC0415 - only reached with CuPy arrays in hand
        else:
            import torch as mod  # noqa: PLC0415 - only reached with torch tensors in hand
        spill = xp.where(codes >= 0, xp.astype(codes, xp.int64), xp.asarray(n_bins, dtype=xp.int64, device=dev))
        return xp.astype(mod.bincount(spill, minlength=n_bins + 1)[:n_bins], xp.int64)
    bins = xp.arange(n_bins, dtype=xp.int64, device=dev)[None, :]
    total = xp.zeros(n_bins, dtype=xp.int64, device=dev)
    n = int(codes.shape[0])
    step = max(1, chunk // max(1, n_bins))
    for s in range(0, n, step):
        c = codes[s : min(s + step, n)]
        total = total + xp.sum(xp.astype(c[:, None] == bins, xp.int64), axis=0)
    return total


def gram_accumulate(G: Any, A: Any, B: Any, *, first: bool = False) -> Any:
    """``G + A @ B.T`` (``A @ B.T`` when ``first``), written into ``G`` where the backend can.

    The p-sweep grows one Gram tile over the PCA grid; a fresh tile per p would double its
    memory. NumPy: BLAS ``gemm`` with ``beta = 1`` into a C-contiguous G (SciPy's wrapper);
    torch: ``addmm_`` (``matmul(out=G)`` first); CuPy: the product, then an in-place add
    (the product's block comes back to CuPy's pool: no new device allocation per p);
    generic: a new array. Use the return value: it is G itself where written in place.

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

        if first:
            return cupy.matmul(A, B.T, out=G)
        return cupy.add(G, cupy.matmul(A, B.T), out=G)
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
    ``ger`` through SciPy, on a C-contiguous S), torch (``addr_``) and CuPy (an in-place
    add); generic: a new array. Use the return value."""
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
    if is_cupy_namespace(xp):
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand

        return cupy.add(S, alpha * x[:, None] * y[None, :], out=S)
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


def mask_counts(mask: Any) -> tuple[int, int | None, Any]:
    """``(total, widest, per_row)`` of a boolean (rows, m) mask: its True entries in all,
    in the fullest row, and per row -- or ``(total, None, None)``.

    A device pays a host sync per scalar it reports: there, the per-row counts are taken
    and their sum and maximum come back in one transfer. NumPy has no syncs to save and a
    flat count is several times faster than a per-row one (docs/benchmarks.md), so it reports
    the total alone (the caller finds the rest from the positions, on the host, for free).
    """
    xp = array_namespace(mask)
    if is_numpy_namespace(xp):
        import numpy  # noqa: PLC0415

        return int(numpy.count_nonzero(mask)), None, None
    per_row = xp.astype(xp.count_nonzero(mask, axis=1), xp.int64)
    from ._backend import to_numpy  # noqa: PLC0415

    total, widest = (int(v) for v in to_numpy(xp.stack([xp.sum(per_row), xp.max(per_row)])))
    return total, widest, per_row


def device_scope(*arrays: Any) -> Any:
    """A context in which arrays created without a device land on the inputs' device.

    CuPy: the first CuPy array's ``cupy.cuda.Device`` (array-api-compat's creation functions
    ignore ``device=`` and use the *current* CUDA device, so on a machine with several GPUs
    everything a function creates must be made under the input's). Elsewhere ``device=``
    is honoured and nothing is needed: a null context. Arguments that are tuples (a
    :class:`~gpuknn.PartialNeighbors`, say) are looked into one level deep.
    """
    for a in arrays:
        for b in a if isinstance(a, tuple) else (a,):
            if is_cupy_array(b):
                return b.device  # a cupy.cuda.Device is itself the context manager
    return contextlib.nullcontext()


def on_input_device(fn: Callable) -> Callable:
    """Decorator of a public entry point: run ``fn`` within :func:`device_scope` of its
    array arguments (generators: each step, so the caller's own code between steps runs
    on whatever device it chose)."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def steps(*args: Any, **kwargs: Any) -> Any:
            scope = functools.partial(device_scope, *args, *kwargs.values())
            with scope():
                it = fn(*args, **kwargs)
            while True:
                with scope():
                    try:
                        item = next(it)
                    except StopIteration:
                        return
                yield item

        return steps

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with device_scope(*args, *kwargs.values()):
            return fn(*args, **kwargs)

    return run


def csr_matrix(data: Any, indices: Any, indptr: Any, shape: tuple[int, int]) -> Any:
    """A CSR sparse matrix of ``shape`` from its three arrays, in the arrays' library.

    Parameters
    ----------
    data : array of shape (nnz,)
    indices : int array of shape (nnz,)
        Column of each stored value.
    indptr : int array of shape (shape[0] + 1,)
        Row ``i`` holds ``data[indptr[i]:indptr[i + 1]]``.
    shape : (int, int)

    Returns
    -------
    ``cupyx.scipy.sparse.csr_matrix`` on the arrays' device for CuPy arrays (its indices
    are int32: more than ``2**31 - 1`` stored values raise :class:`InvalidInputError`);
    ``scipy.sparse.csr_matrix`` on the host for every other namespace (generic: host
    copies of the three arrays; stored zeros stay stored).

    Examples
    --------
    >>> import numpy as np
    >>> csr_matrix(np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 1, 2]), (2, 2)).toarray()
    array([[0., 1.],
           [2., 0.]])
    """
    shape = (int(shape[0]), int(shape[1]))
    if is_cupy_array(data):
        import cupy  # noqa: PLC0415 - only reached with CuPy arrays in hand
        import cupyx.scipy.sparse  # noqa: PLC0415

        from .errors import InvalidInputError  # noqa: PLC0415

        if int(data.shape[0]) > 2**31 - 1:
            raise InvalidInputError(f"a CuPy CSR matrix holds at most 2**31 - 1 values, got {int(data.shape[0])}")
        # cupyx's sparse kernels take int32 indices only.
        return cupyx.scipy.sparse.csr_matrix(
            (data, cupy.asarray(indices, dtype=cupy.int32), cupy.asarray(indptr, dtype=cupy.int32)), shape=shape
        )
    import scipy.sparse  # noqa: PLC0415 - scipy import is slow, only when used

    from ._backend import to_numpy  # noqa: PLC0415

    return scipy.sparse.csr_matrix((to_numpy(data), to_numpy(indices), to_numpy(indptr)), shape=shape)
