"""NumPy's own BLAS, reached directly: its thread controller and a rank-1 update.

The thin dispatch layer for the two things NumPy does not expose and the CPU fast paths
need, each with a plain fallback when NumPy's BLAS cannot be identified:

* :func:`controller` -- a threadpoolctl controller of NumPy's BLAS when it is OpenBLAS on
  pthreads, whose thread limit holds process-wide (the covariance's row chunks run on
  Python threads with BLAS limited to one thread).
* :func:`rank1_update` -- ``A += alpha x y^T`` in place by NumPy's own OpenBLAS
  ``cblas_?ger``, multithreaded like the ``gemv`` chains around it (Hotelling deflation).
  On the CPU machine: 0.22-0.78 ms per 784 x 784 float32 update right after a power
  method's ``gemv`` chain, against 0.68-2.9 ms for the same update in NumPy ufuncs (whose
  single thread shares the CPU with OpenBLAS's still spinning worker).

Only NumPy's library is called, never SciPy's: SciPy's wheels carry a second OpenBLAS with
a thread pool of its own, and interleaving the two pools in one loop made every call
several times slower (see docs/architecture.md).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

__all__ = ["blas_threads", "controller", "rank1_update"]

_CONTROLLER: Any = None  # threadpoolctl controller of NumPy's BLAS, built on first use
_GER: Any = None  # {dtype: cblas ?ger function}, built on first use
_INIT = threading.RLock()  # reentrant: _find_ger asks for the controller
_ROW_MAJOR = 101  # CblasRowMajor


def controller() -> Any:
    """NumPy's own BLAS as a threadpoolctl controller, when it is OpenBLAS on pthreads (whose
    thread limit holds process-wide, so the worker threads really run single-threaded);
    ``None`` otherwise (MKL's and OpenMP builds' limits are per calling thread, and a BLAS
    threadpoolctl cannot see may be NumPy's). Built once: scanning the loaded libraries
    takes ~4 ms in a process that has imported scikit-learn."""
    global _CONTROLLER
    if _CONTROLLER is None:
        with _INIT:
            if _CONTROLLER is None:
                _CONTROLLER = _find_controller()
    return _CONTROLLER or None


def _find_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController

        blas = ThreadpoolController().select(user_api="blas").lib_controllers
        # NumPy's wheels carry their OpenBLAS in numpy.libs (or numpy/.libs); otherwise the
        # only BLAS loaded is taken to be NumPy's
        mine = [lib for lib in blas if "numpy" in os.path.basename(os.path.dirname(lib.filepath))]
        mine = mine or (blas if len(blas) == 1 else [])
        if mine and mine[0].internal_api == "openblas" \
                and getattr(mine[0], "threading_layer", None) == "pthreads":
            return ThreadpoolController().select(filepath=mine[0].filepath)
    except Exception:  # noqa: BLE001 - no threadpoolctl, or it cannot inspect: no fast paths
        pass
    return False


def blas_threads() -> int:
    """Threads NumPy's BLAS is set to use now (1 if unknown)."""
    c = controller()
    return max((int(lib.num_threads or 1) for lib in c.lib_controllers), default=1) if c else 1


def _find_ger() -> dict:
    """``{float32: (cblas_sger, largest int), float64: (cblas_dger, ...)}`` of NumPy's
    OpenBLAS, or ``{}``.

    The symbols' prefix and suffix (``scipy_`` and ``64_`` in NumPy's wheels) are found
    through ``openblas_get_config``, whose text says whether integers are 64-bit
    (``USE64BITINT``): a wrong integer width would corrupt memory, so anything not
    positively identified leaves the fallback in charge.
    """
    c = controller()
    if not c or len(c.lib_controllers) != 1:
        return {}
    try:
        lib = ctypes.CDLL(c.lib_controllers[0].filepath)
    except OSError:
        return {}
    for prefix in ("scipy_", ""):
        for suffix in ("64_", ""):
            config = getattr(lib, f"{prefix}openblas_get_config{suffix}", None)
            if config is None:
                continue
            config.restype = ctypes.c_char_p
            text = (config() or b"").decode(errors="replace").split()
            if "OpenBLAS" not in text:
                return {}
            integer = ctypes.c_int64 if "USE64BITINT" in text else ctypes.c_int
            found = {}
            for dtype, char, real in ((np.float32, "s", ctypes.c_float),
                                      (np.float64, "d", ctypes.c_double)):
                f = getattr(lib, f"{prefix}cblas_{char}ger{suffix}", None)
                if f is None:
                    return {}
                f.restype = None
                f.argtypes = [ctypes.c_int, integer, integer, real, ctypes.c_void_p, integer,
                              ctypes.c_void_p, integer, ctypes.c_void_p, integer]
                found[np.dtype(dtype)] = (f, np.iinfo(np.int64 if integer is ctypes.c_int64
                                                      else np.intc).max)
            return found
    return {}


def rank1_update(A: Any, x: Any, y: Any, alpha: float) -> bool:
    """``A += alpha x y^T`` in place by NumPy's own OpenBLAS ``ger``, when it applies.

    Parameters
    ----------
    A : numpy.ndarray, shape (m, n)
        C-contiguous, aligned, writeable, float32 or float64.
    x : numpy.ndarray, shape (m,)
    y : numpy.ndarray, shape (n,)
        Contiguous and aligned, of A's dtype, not overlapping A.
    alpha : float

    Returns
    -------
    bool
        True when A was updated; False (A untouched) when the arrays or NumPy's BLAS do not
        qualify -- the caller then updates A its own way. O(m n), one pass over A.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.eye(2)
    >>> done = rank1_update(A, np.ones(2), np.array([1.0, 2.0]), -1.0)
    >>> A.tolist() if done else (A - np.outer(np.ones(2), [1.0, 2.0])).tolist()
    [[0.0, -2.0], [-1.0, -1.0]]
    """
    global _GER
    if not (type(A) is np.ndarray and type(x) is np.ndarray and type(y) is np.ndarray):
        return False
    if A.ndim != 2 or x.shape != A.shape[:1] or y.shape != A.shape[1:] or 0 in A.shape:
        return False
    if not (A.flags.c_contiguous and A.flags.writeable and A.flags.aligned
            and x.flags.c_contiguous and x.flags.aligned and y.flags.c_contiguous
            and y.flags.aligned and x.dtype == A.dtype == y.dtype):
        return False
    if np.may_share_memory(A, x) or np.may_share_memory(A, y):
        return False  # BLAS leaves overlapping operands undefined
    if _GER is None:
        with _INIT:
            if _GER is None:
                _GER = _find_ger()
    f, limit = _GER.get(A.dtype, (None, 0))
    m, n = A.shape
    if f is None or max(m, n) > limit:
        return False
    f(_ROW_MAJOR, m, n, float(alpha), x.ctypes.data, 1, y.ctypes.data, 1, A.ctypes.data, n)
    return True
