"""Process-global numeric switches, scoped and counted: full-FP32 screening GEMMs whatever
the user's TF32/bf16 matmul setting (:func:`fp32_matmul`), and one host BLAS thread
(:func:`one_blas_thread`).

A tile's certified bound grows with the GEMM's unit roundoff: under TF32 (``u = 2**-11``)
it is so loose that no row of a Fashion-MNIST search certifies and every row goes to the
float64 second pass -- exact, but about twice as slow as FP32 screening instead of faster.
So a search runs its float32 GEMMs in full FP32 (:func:`fp32_matmul`) and reads its bound
inside that scope (:func:`gpuknn._delegation.matmul_unit_roundoff` then sees FP32).

The switches are process-global (torch's ``fp32_precision``, CuPy's compute type); there is
no per-call precision argument in either library. So the switch is flipped only when it is
not FP32 already, under one lock, counted: the first search to enter sets FP32, the last to
leave restores the user's setting, and no search's GEMM can run under a setting other than
the one its bound assumed. Code outside gpuknn running matmuls in another thread meanwhile
gets FP32 where it asked for TF32 -- more precise, never less -- and a thread that changes
the switch itself while a search runs is outside what this can guard.

The host BLAS (OpenBLAS) rounds its products differently on one thread and on several --
a LAPACK eigen-solve, and (OpenBLAS 0.3.31 on x86-64) about 2 % of a float32 GEMM's entries,
a PCA projection's among them -- and a call made while another thread's call holds the
BLAS threads may run on fewer. Through a PCA projection and near ties that changes a
study's tables. :func:`one_blas_thread` runs a scope on one BLAS thread. The thread count is
the process's, and only the main thread changes it: threadpoolctl is made for the main
thread (its README), and a limit set or restored from another thread while the main thread
holds one was lost (docs/benchmarks.md). So the main thread's scopes are counted (the first
sets one thread, the last restores the count), and a scope in another thread leaves the
count as it is: inside a run on threads (:mod:`gpuknn.model_selection.runner`) the main
thread holds one BLAS thread for every task; a Dask worker runs on one BLAS thread by its
nanny's default (``distributed.nanny.pre-spawn-environ``: ``OPENBLAS_NUM_THREADS=1``).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager, nullcontext
from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace

__all__ = ["fp32_matmul", "one_blas_thread", "one_blas_thread_for"]

_LOCK = threading.Lock()
# (library, device type) -> [searches inside, the setting to restore]
_HELD: dict[tuple[str, str], list] = {}
# [the main thread's scopes inside one_blas_thread, the limiter that restores the count]
_ONE_THREAD: list = [0, None]


@contextmanager
def one_blas_thread():
    """Scope in which the host BLAS runs on one thread, entered in the main thread; in any
    other thread it leaves the (process-wide) thread count as it is (module docstring).
    Nested scopes are fine: the count comes back when the outermost one leaves.

    Examples
    --------
    >>> with one_blas_thread():
    ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from threadpoolctl import threadpool_limits  # noqa: PLC0415 - a scikit-learn dependency

    # Only the main thread reaches here: the count needs no lock.
    if _ONE_THREAD[0] == 0:
        _ONE_THREAD[1] = threadpool_limits(limits=1, user_api="blas")
    _ONE_THREAD[0] += 1
    try:
        yield
    finally:
        _ONE_THREAD[0] -= 1
        if _ONE_THREAD[0] == 0:
            _ONE_THREAD[1].restore_original_limits()
            _ONE_THREAD[1] = None


def one_blas_thread_for(X: Any) -> Any:
    """:func:`one_blas_thread` for host (NumPy) arrays X; a scope that does nothing for
    others (a GPU's libraries, and torch's own thread pool, are not the host BLAS).

    Examples
    --------
    >>> import numpy as np
    >>> with one_blas_thread_for(np.ones(3)):
    ...     pass
    """
    return one_blas_thread() if is_numpy_namespace(array_namespace(X)) else nullcontext()


@contextmanager
def fp32_matmul(xp: Any, device: Any = None):
    """Scope in which float32 GEMMs on ``xp`` (and ``device``) run in full FP32.

    NumPy and other host namespaces: nothing to do. torch: the backend's
    ``fp32_precision`` switch (``torch.backends.cuda.matmul`` for CUDA tensors,
    ``torch.backends.mkldnn.matmul`` for CPU ones) set to ``"ieee"``; CuPy: the float32
    compute type set to ``COMPUTE_TYPE_FP32``. Restored when the last search in the
    process leaves (see the module docstring on threads).

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> with fp32_matmul(xp):
    ...     pass
    """
    switch = _switch(xp, device)
    if switch is None:
        yield
        return
    key, read, write, fp32 = switch
    with _LOCK:
        held = _HELD.get(key)
        if held is None:
            before = read()
            if before != fp32:
                write(fp32)
            held = _HELD[key] = [0, before]
        held[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            held[0] -= 1
            if held[0] == 0:
                del _HELD[key]
                if held[1] != fp32:
                    write(held[1])


def _switch(xp: Any, device: Any):
    """``(key, read, write, fp32 value)`` of the switch that governs xp's float32 GEMMs."""
    if is_torch_namespace(xp):
        import torch  # noqa: PLC0415 - only reached with torch tensors in hand

        kind = getattr(device, "type", None) or "cpu"
        backend = torch.backends.cuda.matmul if kind == "cuda" else torch.backends.mkldnn.matmul
        if not hasattr(backend, "fp32_precision"):  # torch < 2.9: the legacy global switch
            return (
                ("torch", "legacy"),
                torch.get_float32_matmul_precision,
                torch.set_float32_matmul_precision,
                "highest",
            )

        def write(value: str) -> None:
            backend.fp32_precision = value

        def read() -> str:
            value = backend.fp32_precision
            # "none" defers to the global switch: FP32 unless that says otherwise.
            if value == "none" and getattr(torch.backends, "fp32_precision", "none") in ("none", "ieee"):
                return "ieee"
            return value

        return ("torch", kind), read, write, "ieee"
    if is_cupy_namespace(xp):
        import numpy as np  # noqa: PLC0415
        from cupy._core import _routines_linalg as linalg  # noqa: PLC0415 - CuPy in hand

        if not hasattr(linalg, "set_compute_type"):  # the bound then reads what runs: looser, never wrong
            return None
        # cupy/_core/_routines_linalg.pxd: DEFAULT = 1 and PEDANTIC = 2 keep float32's
        # mantissa, FP32 = 4 asks for it.
        fp32 = getattr(linalg, "COMPUTE_TYPE_FP32", 4)

        def read_cupy() -> int:
            value = int(linalg.get_compute_type(np.float32))
            return fp32 if value in (1, 2) else value

        return ("cupy", "cuda"), read_cupy, lambda v: linalg.set_compute_type(np.float32, v), fp32
    return None
