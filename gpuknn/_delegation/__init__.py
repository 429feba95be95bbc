"""Library-specific fast paths, each with a generic array-API fallback.

Every function here takes arrays of any supported namespace and returns arrays of the same
namespace and device. The generic branch is the definition; a native branch may only be
faster, never different in what it promises (each promise is tested on every backend).

* :func:`dot64` and :func:`sqdist64` are the **canonical pair arithmetic** of the exact
  re-rank (:mod:`gpuknn.ops.exact`): float64 dot products, squared distances and sums
  (:func:`sum64`), reduced
  along the last axis, whose value for one pair of rows depends on those two rows alone —
  not on where the pair sits in a batch, how big the batch is, nor on the thread count.
  That is what makes exact duplicates tie bit for bit wherever they are searched. GEMM and
  GEMV kernels do not promise it (OpenBLAS's ``dgemv`` rounds rows differently by position),
  so none is used; NumPy's pairwise ``sum`` does, and so do their native branches, which
  the test suite checks with duplicates at every position, batch shape and width.

The layer is one package with one import point (``from gpuknn._delegation import ...``), in
files by topic: :mod:`.arithmetic` (pair arithmetic, rounding bounds, the eigen-solve),
:mod:`.arrays` (gathers, selection, ordering, counting), :mod:`.tiles` (the p-sweep's
in-place tile updates), :mod:`.precision` (full-FP32 screening GEMMs) and :mod:`.device`
(the device scope of entry points, sparse results).
"""

from __future__ import annotations

from .arithmetic import (
    dot64,
    masked_dot64,
    masked_sum64,
    matmul_unit_roundoff,
    prefix_dot64,
    sqdist64,
    sum64,
    symmetric_eigh,
    tree_sums,
)
from .arrays import bincount, kth_largest, mask_counts, max_abs, order_rows, take_rows
from .device import csr_matrix, device_scope, on_input_device
from .precision import fp32_matmul, one_blas_thread, one_blas_thread_for
from .tiles import add_outer, gram_accumulate, scale_columns

__all__ = [
    "dot64",
    "sqdist64",
    "sum64",
    "prefix_dot64",
    "masked_dot64",
    "masked_sum64",
    "tree_sums",
    "matmul_unit_roundoff",
    "fp32_matmul",
    "one_blas_thread",
    "one_blas_thread_for",
    "symmetric_eigh",
    "take_rows",
    "kth_largest",
    "order_rows",
    "bincount",
    "mask_counts",
    "max_abs",
    "gram_accumulate",
    "scale_columns",
    "add_outer",
    "device_scope",
    "on_input_device",
    "csr_matrix",
]
