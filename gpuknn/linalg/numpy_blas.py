"""NumPy's own BLAS, reached directly: its thread controller and a rank-1 update.

The thin dispatch layer for the two things NumPy does not expose and the CPU fast paths
need, each with a plain fallback whenever NumPy's BLAS is not positively identified as an
OpenBLAS (through threadpoolctl):

* :func:`controller` -- a threadpoolctl controller of NumPy's OpenBLAS when it runs on
  pthreads, whose thread limit holds process-wide (the covariance's row chunks run on
  Python threads with BLAS limited to one thread; MKL's and OpenMP builds' limits are per
  calling thread).
* :func:`rank1_update` -- ``A += alpha x y^T`` in place by NumPy's own OpenBLAS
  ``cblas_?ger`` (any threading layer), multithreaded like the ``gemv`` chains around it
  (Hotelling deflation). On the CPU machine: 0.22-0.78 ms per 784 x 784 float32 update
  right after a power method's ``gemv`` chain, against 0.68-2.9 ms for the same update in
  NumPy ufuncs (whose single thread shares the CPU with OpenBLAS's still spinning worker).

Only NumPy's library is called, never another one loaded beside it (SciPy's wheels carry a
second OpenBLAS with a thread pool of its own; interleaving the two pools in one loop made
every call several times slower, see docs/architecture.md). NumPy's library is the one in
NumPy's own folders (``numpy.libs``, ``numpy/.libs``, ``numpy/.dylibs``), or else the only
BLAS loaded when NumPy's build configuration names the same library and version.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

__all__ = ["blas_threads", "controller", "rank1_update"]

_ROW_MAJOR = 101  # CblasRowMajor


def _is_numpys(libs: list) -> list:
    """The threadpoolctl library entries in ``libs`` that are NumPy's own BLAS."""
    root = os.path.dirname(os.path.realpath(np.__file__))
    homes = (root + os.sep, root + ".libs" + os.sep)  # numpy/.libs, numpy/.dylibs; numpy.libs
    mine = [lib for lib in libs if os.path.realpath(lib.filepath).startswith(homes)]
    if mine or len(libs) != 1:
        return mine
    # a NumPy linked to a shared library outside its folders: the only BLAS loaded, if
    # NumPy's build configuration names that library and version
    try:
        built = np.__config__.CONFIG["Build Dependencies"]["blas"]
        name, version = str(built.get("name", "")).lower(), str(built.get("version", ""))
    except Exception:  # noqa: BLE001 - NumPy < 1.26 or no such record: not identified
        return []
    lib = libs[0]
    # another package's bundled copy (scipy.libs, .dylibs) is never NumPy's
    bundled = os.path.basename(os.path.dirname(lib.filepath)).endswith((".libs", ".dylibs"))
    ok = not bundled and lib.internal_api in name and version and str(lib.version) == version
    return libs if ok else []


@functools.lru_cache(maxsize=None)
def _numpy_openblas() -> Any:
    """threadpoolctl's entry for NumPy's own OpenBLAS, or None. Built once: scanning the
    loaded libraries takes ~4 ms in a process that has imported scikit-learn."""
    try:
        from threadpoolctl import ThreadpoolController

        mine = _is_numpys(ThreadpoolController().select(user_api="blas").lib_controllers)
    except Exception:  # noqa: BLE001 - no threadpoolctl, or it cannot inspect: no fast paths
        return None
    return mine[0] if len(mine) == 1 and mine[0].internal_api == "openblas" else None


@functools.lru_cache(maxsize=None)
def controller() -> Any:
    """NumPy's own BLAS as a threadpoolctl controller, for limiting its threads.

    Returns
    -------
    threadpoolctl.ThreadpoolController or None
        A controller of NumPy's OpenBLAS when it runs on pthreads (its thread limit holds
        process-wide, so worker threads really run single-threaded); ``None`` otherwise
        (MKL's and OpenMP builds' limits are per calling thread; a BLAS not identified as
        NumPy's is left alone).
    """
    lib = _numpy_openblas()
    if lib is None or getattr(lib, "threading_layer", None) != "pthreads":
        return None
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(filepath=lib.filepath)


def blas_threads() -> int:
    """Threads NumPy's BLAS is set to use now (1 if unknown)."""
    c = controller()
    return max((int(lib.num_threads or 1) for lib in c.lib_controllers), default=1) if c else 1


def _ger_functions(dll: Any) -> dict:
    """``{float32: (cblas_sger, largest int), float64: (cblas_dger, ...)}`` of an OpenBLAS
    loaded as ``dll`` (a ``ctypes.CDLL``), or ``{}``.

    The symbols' prefix and suffix (``scipy_`` and ``64_`` in NumPy's wheels) are found
    through ``openblas_get_config``, whose text says whether integers are 64-bit
    (``USE64BITINT``): a wrong integer width would corrupt memory, so anything not
    positively identified leaves the fallback in charge.
    """
    import ctypes

    for prefix in ("scipy_", ""):
        for suffix in ("64_", ""):
            config = getattr(dll, f"{prefix}openblas_get_config{suffix}", None)
            if config is None:
                continue
            config.restype = ctypes.c_char_p
            text = (config() or b"").decode(errors="replace").split()
            if "OpenBLAS" not in text:
                return {}
            wide = "USE64BITINT" in text
            integer = ctypes.c_int64 if wide else ctypes.c_int
            found = {}
            for dtype, char, real in ((np.float32, "s", ctypes.c_float),
                                      (np.float64, "d", ctypes.c_double)):
                f = getattr(dll, f"{prefix}cblas_{char}ger{suffix}", None)
                if f is None:
                    return {}
                f.restype = None
                f.argtypes = [ctypes.c_int, integer, integer, real, ctypes.c_void_p, integer,
                              ctypes.c_void_p, integer, ctypes.c_void_p, integer]
                found[np.dtype(dtype)] = (f, int(np.iinfo(np.int64 if wide else np.intc).max))
            return found
    return {}


@functools.lru_cache(maxsize=None)
def _ger() -> dict:
    """NumPy's own ``?ger`` functions (see :func:`_ger_functions`), ``{}`` when unreachable."""
    lib = _numpy_openblas()
    if lib is None:
        return {}
    try:
        import ctypes

        return _ger_functions(ctypes.CDLL(lib.filepath))
    except (ImportError, OSError):  # no ctypes here, or the library cannot be opened
        return {}


def rank1_update(A: Any, x: Any, y: Any, alpha: float) -> bool:
    """``A += alpha x y^T`` in place by NumPy's own OpenBLAS ``ger``, when it applies.

    Parameters
    ----------
    A : numpy.ndarray, shape (m, n)
        C-contiguous, aligned, writeable, float32 or float64 in native byte order.
    x, y : numpy.ndarray, shapes (m,) and (n,)
        Contiguous and aligned, of A's dtype, not overlapping A.
    alpha : float
        Scale of the outer product (rounded to A's dtype by BLAS).

    Returns
    -------
    bool
        True when A was updated; False (A untouched) when the arrays (subclasses such as
        ``np.memmap`` included) or NumPy's BLAS do not qualify: the caller then updates A
        its own way.

    Notes
    -----
    O(m n), one pass over A, on BLAS's threads. With ``alpha == 0`` BLAS returns at once,
    so NaN or inf in x or y do not reach A.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.eye(2)
    >>> done = rank1_update(A, np.ones(2), np.array([1.0, 2.0]), -1.0)
    >>> A.tolist() if done else (A - np.outer(np.ones(2), [1.0, 2.0])).tolist()
    [[0.0, -2.0], [-1.0, -1.0]]
    """
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
    f, limit = _ger().get(A.dtype, (None, 0))  # keys are native dtypes: '>f8' finds none
    m, n = A.shape
    if f is None or max(m, n) > limit:
        return False
    f(_ROW_MAJOR, m, n, float(alpha), x.ctypes.data, 1, y.ctypes.data, 1, A.ctypes.data, n)
    return True
