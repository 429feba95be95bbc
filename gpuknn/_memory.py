"""Memory: the default working memory, the host's score-tile cap, free device memory and
out-of-memory errors -- what a search plans its tiles with (:mod:`gpuknn.ops.limits` turns a
user's ``working_memory`` in MiB into the bytes planned here)."""

from __future__ import annotations

import os
from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .errors import InvalidInputError

__all__ = ["default_working_memory", "free_device_memory", "preferred_tile_bytes", "is_out_of_memory"]

_CPU_WORKING_MEMORY = 256 << 20
# Score tiles on the host (scores alone; selection scratch comes on top): cache-sized (faiss
# uses 4096 x 1024 floats) so the compare after the GEMM reads the tile while it is warm, and
# glibc recycles the buffers instead of mapping fresh, page-faulting memory for every tile (it
# does for blocks above its 32 MiB mmap threshold).
_HOST_TILE_BYTES = 18 << 20


def free_device_memory(xp: Any, device: Any = None) -> int | None:
    """Free bytes on the current CuPy device or on a torch CUDA ``device``; ``None`` for
    host namespaces (and torch without a CUDA device named)."""
    if is_cupy_namespace(xp):
        import cupy  # noqa: PLC0415

        free, _total = cupy.cuda.runtime.memGetInfo()
        # Memory held by CuPy's pool is reusable by us, so count it as free.
        return int(free + cupy.get_default_memory_pool().free_bytes())
    if is_torch_namespace(xp) and getattr(device, "type", None) == "cuda":
        import torch  # noqa: PLC0415 - only reached with CUDA tensors in hand

        free, _total = torch.cuda.mem_get_info(device)
        # Blocks torch's caching allocator holds but does not use are ours to reuse too.
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free + max(0, cached))
    return None


def default_working_memory(xp: Any, device: Any = None) -> int:
    """Default tile budget in **bytes** (what ``working_memory=None`` stands for): half the
    free GPU memory (CuPy; torch on the CUDA ``device`` given), or 256 MiB on the host.

    ``$GPUKNN_WORKING_MEMORY`` (MiB, like the ``working_memory`` argument) replaces the host
    default and caps the GPU's: several processes sharing one GPU (test workers, say) would
    otherwise each plan with half of what is free and run out together.
    """
    env = os.environ.get("GPUKNN_WORKING_MEMORY")
    cap = _env_mib(env) if env else None
    free = free_device_memory(xp, device)
    if free is not None:
        device_default = max(64 << 20, free // 2)
        return device_default if cap is None else min(device_default, cap)
    return _CPU_WORKING_MEMORY if cap is None else cap


def _env_mib(env: str) -> int:
    """Bytes of ``$GPUKNN_WORKING_MEMORY`` (MiB); a clear error if it is no positive number."""
    try:
        mib = float(env)
    except ValueError:
        mib = -1.0
    if not 0 < mib < float("inf"):  # NaN fails too
        raise InvalidInputError(f"GPUKNN_WORKING_MEMORY must be a positive number of MiB, got {env!r}")
    return max(1, int(mib * (1 << 20)))


def preferred_tile_bytes(xp: Any) -> int | None:
    """Cap on one score tile for this namespace: cache-sized on NumPy, none elsewhere.

    GPUs want the largest tiles the budget allows (few kernel launches and host syncs).
    """
    return _HOST_TILE_BYTES if is_numpy_namespace(xp) else None


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation failure worth retrying with a smaller tile."""
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return "OutOfMemory" in name or "out of memory" in str(exc).lower()
