"""Row gathers, selection, ordering and counting: native fast paths with generic fallbacks."""

from __future__ import annotations

import math
from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace, device_of, from_numpy
from .._backend import max_abs as _generic_max_abs

__all__ = ["take_rows", "kth_largest", "order_rows", "bincount", "mask_counts"]


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


CUPY_SELECT_MAX = 512  # cupy.partition selects for kth below this; it sorts whole rows above
CUPY_SORT_SCRATCH = 256 << 20  # bytes of sort scratch (~24 B/element) per chunk of rows


def kth_largest(S: Any, k: int) -> Any:
    """Exact k-th largest value of each row of ``S`` (rows,).

    NumPy: ``partition``; torch: ``topk``; a namespace with ``top_k``: that; generic: a
    full ``sort``. CuPy: ``-S`` partitioned in place at ``k - 1``, since CuPy's ``partition`` selects only
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
            # One copy of the tile, partitioned in place: the scratch the plan counts
            # (``cupy.partition(-S)`` would make a second).
            neg = -S
            neg.partition(k - 1, axis=1)
            return -neg[:, k - 1]
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


def mask_counts(mask: Any, *, axis: int = 1) -> tuple[int, int | None, Any]:
    """``(total, widest, per_row)`` of a boolean (rows, m) mask: its True entries in all,
    in the fullest row, and per row -- or ``(total, None, None)``. ``axis=0``: the same of
    its columns (``per_row`` then counts each column).

    A device pays a host sync per scalar it reports: there, the per-row counts are taken
    and their sum and maximum come back in one transfer. NumPy has no syncs to save and a
    flat count is several times faster than a per-row one (docs/benchmarks.md), so it reports
    the total alone (the caller finds the rest from the positions, on the host, for free).
    """
    xp = array_namespace(mask)
    if is_numpy_namespace(xp):
        import numpy  # noqa: PLC0415

        return int(numpy.count_nonzero(mask)), None, None
    per_row = xp.astype(xp.count_nonzero(mask, axis=axis), xp.int64)
    from .._backend import to_numpy  # noqa: PLC0415

    total, widest = (int(v) for v in to_numpy(xp.stack([xp.sum(per_row), xp.max(per_row)])))
    return total, widest, per_row


def max_abs(X: Any, xp: Any) -> float:
    """``max |X|`` as a Python float: no copy of X, one host transfer.

    NaN propagates and an infinity is its own absolute value, so the result is finite
    exactly when every value of X is (the one value check of validation,
    :func:`gpuknn.ops.limits.check_values`). torch: ``linalg.vector_norm(ord=inf)``, one
    fused reduction (one launch on a GPU). Generic: the maximum and the minimum, two
    reductions stacked into one transfer (:func:`gpuknn._backend.max_abs`).

    Examples
    --------
    >>> import numpy as np
    >>> max_abs(np.array([[1.0, -3.0], [2.0, 0.5]]), np)
    3.0
    """
    if math.prod(X.shape) and is_torch_namespace(xp):
        import torch  # noqa: PLC0415 - only with torch input

        return float(torch.linalg.vector_norm(X, ord=math.inf))
    return _generic_max_abs(X, xp)
