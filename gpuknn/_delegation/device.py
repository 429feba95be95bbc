"""The device rule of public entry points (CuPy's current device) and sparse results on the
input's library."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from array_api_compat import is_cupy_array

__all__ = ["device_scope", "on_input_device", "csr_matrix"]


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

        from ..errors import InvalidInputError  # noqa: PLC0415

        if int(data.shape[0]) > 2**31 - 1:
            raise InvalidInputError(f"a CuPy CSR matrix holds at most 2**31 - 1 values, got {int(data.shape[0])}")
        # cupyx's sparse kernels take int32 indices only.
        return cupyx.scipy.sparse.csr_matrix(
            (data, cupy.asarray(indices, dtype=cupy.int32), cupy.asarray(indptr, dtype=cupy.int32)), shape=shape
        )
    import scipy.sparse  # noqa: PLC0415 - scipy import is slow, only when used

    from .._backend import to_numpy  # noqa: PLC0415

    return scipy.sparse.csr_matrix((to_numpy(data), to_numpy(indices), to_numpy(indptr)), shape=shape)
