"""Full-FP32 screening GEMMs whatever the user's TF32/bf16 matmul setting.

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
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

from array_api_compat import is_cupy_namespace, is_torch_namespace

__all__ = ["fp32_matmul"]

_LOCK = threading.Lock()
# (library, device type) -> [searches inside, the setting to restore]
_HELD: dict[tuple[str, str], list] = {}


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
