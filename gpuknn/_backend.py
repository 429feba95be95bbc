"""Array-namespace rules shared by every module.

* Inputs decide the namespace: :func:`array_namespace` of the arrays passed in.
  Results go back in that namespace and on that device.
* Only loaders and the CLI choose a device, through :func:`resolve_device`.
* CuPy is imported lazily, never when ``gpuknn`` is imported.
"""

from __future__ import annotations

import math
import operator
import os
from typing import Any

import array_api_compat
import array_api_compat.numpy as compat_numpy
import numpy as np
from array_api_compat import (
    is_cupy_namespace,
    is_numpy_namespace,
    is_torch_namespace,
)

from .errors import DeviceUnavailableError, InvalidInputError, InvalidInputTypeError

__all__ = [
    "array_namespace",
    "resolve_device",
    "to_numpy",
    "from_numpy",
    "device_of",
    "is_numpy_namespace",
    "is_cupy_namespace",
    "is_torch_namespace",
    "validate_matrix",
    "float_dtype",
    "check_int",
    "check_namespace",
    "namespace_name",
    "convert_hint",
    "host_array",
]


def array_namespace(*arrays: Any) -> Any:
    """Return the (compat-wrapped) namespace of ``arrays``; plain Python/NumPy input -> NumPy.

    ``None`` and Python scalars are ignored. Lists and tuples count as NumPy input.
    """
    # Anything that is not an array of some namespace (lists, DataFrames, objects with
    # __array__, sparse matrices) is host data: NumPy's (validate_matrix converts or refuses it).
    arrs = [
        a
        for a in arrays
        if a is not None and array_api_compat.is_array_api_obj(a) and not isinstance(a, (int, float, bool, str))
    ]
    if not arrs:
        return compat_numpy
    try:
        xp = array_api_compat.array_namespace(*arrs)
    except TypeError:
        names = sorted({namespace_name(array_api_compat.array_namespace(a)) for a in arrs})
        raise InvalidInputError(
            f"arrays of different namespaces given together: {', '.join(names)}; convert them "
            f"to one first (e.g. {convert_hint(array_api_compat.array_namespace(arrs[0]))})"
        ) from None
    if len(arrs) > 1:
        first = device_of(arrs[0])
        for a in arrs[1:]:
            if device_of(a) != first:
                raise InvalidInputError(
                    f"arrays on different devices given together: {first} and {device_of(a)}; "
                    f"move them to one device first (e.g. {convert_hint(xp, first)})"
                )
    return xp


def namespace_name(xp: Any) -> str:
    """Short name of a namespace for messages: ``numpy``, ``cupy``, ``torch``, ``array_api_strict``."""
    return xp.__name__.removeprefix("array_api_compat.")


def convert_hint(xp: Any, device: Any = None) -> str:
    """How a user moves an array ``x`` into namespace ``xp`` (on ``device``), for messages."""
    name = namespace_name(xp)
    if name == "numpy":
        return "numpy.asarray(x), or x.get() for CuPy, x.cpu().numpy() for torch"
    if name == "torch":
        return f"torch.asarray(x, device={str(device or 'cpu')!r})"
    where = "" if device is None else f", device={device!r}"
    return f"{name}.asarray(x{where})"


def check_namespace(X: Any, xp: Any, *, name: str, device: Any = None) -> None:
    """Raise :class:`InvalidInputError` unless array ``X`` is of ``xp`` (and on ``device``).

    Estimators call it with the namespace and device of their fitted data: a model fitted on
    NumPy asked about a CuPy array (or the other way round) says so, and how to convert,
    instead of failing deep inside with the array library's own message.
    """
    have = array_namespace(X)
    if have is not xp:
        exc = InvalidInputError(
            f"{name} must use the same namespace as the fitted data or the other inputs: "
            f"expected an array of {namespace_name(xp)}, got one of {namespace_name(have)}; "
            f"convert it first: {convert_hint(xp, device)}"
        )
        exc.namespace_mismatch = True  # estimators prefix the method's name (gpuknn.base)
        raise exc
    if device is not None and device_of(X) != device:
        exc = InvalidInputError(
            f"{name} is on device {device_of(X)}, but the fitted data or the other inputs are "
            f"on {device}; move it first: {convert_hint(xp, device)}"
        )
        exc.namespace_mismatch = True
        raise exc


def device_of(x: Any) -> Any:
    """Device of array ``x`` (array-API ``device()``)."""
    return array_api_compat.device(x)


def input_device(arrays: Any) -> Any:
    """The device of the first array among ``arrays`` that is not host data (lists, tuples,
    NumPy arrays, DataFrames have no device to join); None when all are host data. Where
    host-given data must be created to meet the other inputs: the namespace's default
    device may be another one (the CPU for torch, strict's default for its second device)."""
    return next(
        (device_of(a) for a in arrays if array_api_compat.is_array_api_obj(a) and not isinstance(a, np.ndarray)), None
    )


def to_numpy(x: Any) -> np.ndarray:
    """Copy/convert an array of any supported namespace to a host NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    if array_api_compat.is_cupy_array(x):
        return x.get()
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if isinstance(x, (list, tuple, int, float, np.generic)):
        return np.asarray(x)
    try:
        return np.from_dlpack(x)
    except (TypeError, RuntimeError, BufferError, AttributeError):
        return np.asarray(x)


def from_numpy(a: Any, xp: Any, *, device: Any = None) -> Any:
    """Put host data ``a`` into namespace ``xp`` (on ``device`` when given)."""
    a = np.asarray(a)
    if is_numpy_namespace(xp):
        return a
    if device is None:
        return xp.asarray(a)
    return xp.asarray(a, device=device)


def into_namespace(a: Any, xp: Any, *, device: Any = None) -> Any:
    """``a`` in namespace ``xp`` on ``device``: itself when it is there already, else through
    host NumPy (an array of another namespace or device, a list, a user's callable's answer)."""
    if hasattr(a, "shape"):  # a list is no array (array_namespace may still name NumPy for it)
        try:
            if array_namespace(a) is xp and device_of(a) == device:
                return a
        except TypeError:  # not an array of any namespace
            pass
    return from_numpy(to_numpy(a) if hasattr(a, "shape") else np.asarray(a), xp, device=device)


def resolve_device(device: str = "auto") -> Any:
    """Map ``"auto" | "cpu" | "gpu"`` to an array namespace (for loaders and the CLI only).

    ``auto`` is CuPy when it imports and ``cupy.is_available()``; NumPy otherwise. The
    environment variable ``GPUKNN_DEVICE``, when set to a non-empty value, overrides the
    argument.

    Raises
    ------
    DeviceUnavailableError
        ``"gpu"`` was asked for and CuPy or a CUDA device is missing.
    InvalidInputError
        Any other value.
    """
    # The variable overrides the argument only when set to something: an empty value (as
    # `GPUKNN_DEVICE= cmd` leaves it) must not turn an explicit "gpu" into "auto".
    device = (os.environ.get("GPUKNN_DEVICE", "").strip() or device or "auto").strip().lower()
    if device not in ("auto", "cpu", "gpu"):
        raise InvalidInputError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    if device == "cpu":
        return compat_numpy
    cp = _import_cupy()
    if cp is not None:
        return array_api_compat.array_namespace(cp.empty(1))
    if device == "gpu":
        raise DeviceUnavailableError(
            "device='gpu' needs CuPy and a CUDA device (pip install 'gpuknn[cuda12]', or "
            "'gpuknn[cuda13]' for a CUDA 13 driver); none found"
        )
    return compat_numpy


def _import_cupy():
    try:
        import cupy  # noqa: PLC0415 - lazily, never at import gpuknn
    except Exception:  # ImportError, or a broken CUDA install raising at import
        return None
    try:
        return cupy if cupy.is_available() else None
    except Exception:
        return None


# ndarray subclasses (np.matrix, masked arrays) are converted to plain arrays: np.matrix's
# ``*`` is a matrix product and its reductions stay 2-D, which would silently change results.
_PLAIN_ARRAYS = (np.ndarray, np.memmap)


def float_dtype(X: Any, xp: Any, dtype: Any = None) -> Any:
    """The float dtype to compute in: ``dtype`` if given, X's own if float32 or float64,
    float32 for half precision (float16, torch's bfloat16), else float64.

    Half precision is computed in float32: its 11 (bfloat16: 8) significant bits cannot
    hold squared norms or products, and its range ends at 65504 (issue 32). The results
    are float32; an explicit ``dtype="float16"`` stays refused (:func:`_dtype_from`).
    """
    if dtype is not None:
        return _dtype_from(dtype, xp)
    if xp.isdtype(X.dtype, "real floating"):
        return xp.float32 if int(xp.finfo(X.dtype).bits) < 32 else X.dtype
    return xp.float64


# Integers beyond these are not all exact in the float dtype (its significand's bits + 1).
_EXACT_INT = {"float32": 2**24, "float64": 2**53}


def check_exact_integers(hi: int, lo: int, target: str, *, name: str) -> None:
    """:class:`InvalidInputError` unless integers in ``[lo, hi]`` are all exact in the
    float dtype ``target`` (``"float32"`` or ``"float64"``).

    Integer input is converted to floats to be computed on; beyond ``2**53`` (float64) or
    ``2**24`` (float32) neighbouring integers round to one float, and distances between
    them silently become 0 or wrong (``2**64 - 11`` and its neighbours, issue 32).
    """
    limit = _EXACT_INT[target]
    big = max(abs(int(hi)), abs(int(lo)))
    if big > limit:
        exp = limit.bit_length() - 1
        raise InvalidInputError(
            f"{name} holds integers up to {big} in magnitude; {target} (the dtype computed in) "
            f"represents integers exactly only up to 2**{exp} = {limit}, so these would be "
            f"rounded: subtract an offset first (e.g. {name} - {name}.min()), or pass floats if "
            "the rounding is acceptable"
        )


def _check_integer_array(X: Any, xp: Any, target: Any, *, name: str) -> None:
    """:func:`check_exact_integers` of an integer array ``X`` about to become ``target``:
    one min/max reduction, and only for integer dtypes wider than the target's significand
    (int32 and smaller into float64 never need it; float input costs nothing)."""
    tname = "float32" if target == xp.float32 else "float64"
    info = xp.iinfo(X.dtype)
    magnitude_bits = int(info.bits) - (1 if int(info.min) < 0 else 0)
    if 2**magnitude_bits <= _EXACT_INT[tname] or not math.prod(X.shape):
        return
    hi, lo = (int(v) for v in to_numpy(xp.stack([xp.max(X), xp.min(X)])).tolist())
    check_exact_integers(hi, lo, tname, name=name)


def _dtype_from(dtype: Any, xp: Any) -> Any:
    """``xp.float32`` or ``xp.float64`` for a ``dtype=`` argument of any spelling (the names,
    NumPy's dtypes and scalar types, ``float``, a namespace's float dtypes); anything else
    (integers, float16, complex, objects) raises :class:`InvalidInputError` naming it."""
    allowed = ("float32", "float64")
    for nm in allowed:
        target = getattr(xp, nm)
        try:
            if dtype is target or (type(dtype) is type(target) and bool(dtype == target)):
                return target
        except Exception:  # noqa: BLE001 - odd objects whose == raises or is no bool
            pass
    name = None
    if isinstance(dtype, str):
        name = dtype if dtype in allowed else None
    else:
        try:
            nd = np.dtype(dtype)
        except Exception:  # noqa: BLE001 - not a dtype NumPy knows: maybe another namespace's
            nd = None
        if nd is not None and nd.kind == "f" and nd.itemsize in (4, 8):
            name = nd.name
        elif nd is None and str(dtype).rsplit(".", 1)[-1] in allowed:  # torch.float32, ...
            name = str(dtype).rsplit(".", 1)[-1]
    if name is None:
        raise InvalidInputError(
            f"dtype must be None, 'float32' or 'float64' (or the matching NumPy/namespace dtype), got {dtype!r}"
        )
    return getattr(xp, name)


def host_array(X: Any, *, name: str = "X") -> np.ndarray:
    """Host data that is not an array of any namespace, as a plain NumPy array.

    Lists, tuples, pandas DataFrames/Series, ``numpy.matrix`` and objects with
    ``__array__`` are converted; object arrays of numbers become float64. Sparse matrices,
    masked arrays with masked entries, complex values and non-numeric objects raise
    :class:`InvalidInputError` saying so (scikit-learn's wording, which its tools match).
    """
    if hasattr(X, "tocsr"):  # scipy.sparse (and cupyx.scipy.sparse) matrices and arrays
        raise InvalidInputError(
            f"{name} is a sparse matrix ({type(X).__name__} of shape {getattr(X, 'shape', '?')}); "
            f"sparse input is not supported: pass a dense array, e.g. {name}.toarray()"
        )
    if isinstance(X, np.ma.MaskedArray):
        if np.ma.count_masked(X):
            raise InvalidInputError(
                f"{name} is a masked array with {np.ma.count_masked(X)} masked entries; fill "
                f"them first, e.g. {name}.filled(value), or drop those rows"
            )
        X = X.data
    try:
        a = np.asarray(X)
    except (TypeError, ValueError) as exc:  # ragged lists, odd objects
        raise InvalidInputError(f"{name} cannot be read as an array: {exc}") from None
    if a.dtype.kind == "O":
        # Python ints beyond the int64/uint64 range make an object array, whose conversion
        # to float64 would round them silently.
        ints = [int(v) for v in a.flat if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))]
        if ints:
            check_exact_integers(max(ints), min(ints), "float64", name=name)
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInputTypeError(
                f"{name} holds values that are not numbers ({exc}); each argument must be a "
                "string or a number convertible to float"
            ) from None
    if a.dtype.kind == "c":
        raise InvalidInputError(f"Complex data not supported: {name} has dtype {a.dtype}")
    return a


def validate_matrix(
    X: Any,
    xp: Any,
    *,
    name: str = "X",
    dtype: Any = None,
    ndim: int = 2,
    allow_empty: bool = False,
    check_finite: bool = True,
    device: Any = None,
) -> Any:
    """Check a data matrix and return it as a floating array of ``xp`` (on ``device``).

    Host input (lists, tuples) is put into ``xp`` on ``device``; an array of another
    namespace or on another device is refused (:func:`check_namespace`).

    Raises :class:`InvalidInputError` (no partial result) for a wrong ndim, an empty array,
    a non-numeric dtype, non-finite values, or a namespace or device other than ``xp`` and
    ``device``; the message names the offending rows.
    """
    if not array_api_compat.is_array_api_obj(X) or (
        isinstance(X, np.ndarray) and (type(X) not in _PLAIN_ARRAYS or X.dtype.kind == "O")
    ):
        X = from_numpy(host_array(X, name=name), xp, device=device)
    else:
        check_namespace(X, xp, name=name, device=device)
    if X.ndim != ndim:
        hint = ""
        if ndim == 2 and X.ndim == 1:
            hint = (
                f"; Reshape your data either using {name}.reshape(-1, 1) if it has a single "
                f"feature or {name}.reshape(1, -1) if it is a single sample"
            )
        raise InvalidInputError(f"{name} must be {ndim}-D, got shape {tuple(X.shape)}{hint}")
    if not allow_empty and any(s == 0 for s in X.shape):
        shape = tuple(X.shape)
        what = "sample(s)" if shape[0] == 0 else "feature(s)"
        raise InvalidInputError(
            f"{name} is empty: {name} has 0 {what} (shape={shape}) while a minimum of 1 is required."
        )
    if xp.isdtype(X.dtype, "complex floating"):
        raise InvalidInputError(f"Complex data not supported: {name} has dtype {X.dtype}")
    if not (xp.isdtype(X.dtype, "numeric") or xp.isdtype(X.dtype, "bool")):
        raise InvalidInputError(f"{name} must be numeric, got dtype {X.dtype}")
    target = float_dtype(X, xp, dtype)
    if xp.isdtype(X.dtype, "integral"):
        _check_integer_array(X, xp, target, name=name)
    if X.dtype != target:
        X = xp.astype(X, target)
    if check_finite:
        check_finite_rows(X, xp, name=name)
    return X


def max_abs(X: Any, xp: Any) -> float:
    """``max |X|`` as a Python float (0.0 for an empty X), with no copy of X: the maximum and
    minimum in one host transfer.

    NaN propagates through both and an infinity is one of them, so the result is finite
    exactly when every value is: the finite check and the magnitude of input validation in
    one transfer. The generic form of :func:`gpuknn._delegation.max_abs` (one pass where the
    library has a fused reduction).
    """
    if not math.prod(X.shape):  # (torch's ``size`` is a method)
        return 0.0
    hi, lo = to_numpy(xp.stack([xp.max(X), xp.min(X)])).tolist()
    return max(hi, -lo) if hi == hi and lo == lo else math.nan


def check_finite_rows(
    X: Any, xp: Any, *, name: str, first_row: int = 0, where: str = "", magnitude: float | None = None
) -> float:
    """:class:`InvalidInputError` naming the rows of X that hold NaN or infinity, numbered
    from ``first_row`` (a chunk's place in the whole array), ``where`` appended to "row(s)".

    Returns ``max |X|`` (:func:`max_abs`, or ``magnitude`` when the caller has it): one
    reduction and one transfer clear the usual all-finite input; only a failing one is
    scanned row by row.
    """
    top = max_abs(X, xp) if magnitude is None else magnitude
    if math.isfinite(top):
        return top
    finite = xp.isfinite(X)
    if bool(xp.all(finite)):
        return top
    bad = finite if X.ndim == 1 else xp.all(finite, axis=tuple(range(1, X.ndim)))
    rows = to_numpy(xp.nonzero(~bad)[0]) + first_row
    shown = ", ".join(str(int(r)) for r in rows[:10]) + (" ..." if rows.size > 10 else "")
    raise InvalidInputError(f"{name} contains NaN or infinity in {rows.size} row(s){where}: {shown}")


def check_int(value: Any, *, name: str, low: int | None = 1, high: int | None = None) -> int:
    """``value`` as a Python int within ``[low, high]`` (either bound optional).

    Raises :class:`InvalidInputError` naming ``name``, the bounds and the value otherwise
    (floats such as ``2.0`` and bools are rejected: counts must be integers).
    """
    try:
        if isinstance(value, (bool, np.bool_)):  # True is no count (scikit-learn agrees)
            raise TypeError
        v = operator.index(value)
    except TypeError:
        raise InvalidInputError(f"{name} must be an integer, got {value!r}") from None
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise InvalidInputError(f"{name} must be in [{lo}, {hi}], got {v}")
    return v
