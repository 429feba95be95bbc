"""The one label encoder: class labels (any namespace, lists, pandas, strings) to class
indices, with the checks scikit-learn makes of classification targets.

:func:`encode` encodes one or several label vectors jointly (the sorted union of their
values, or a given ``labels`` order) and checks the label types: strings and numbers never
mixed, no complex values, no NaN or infinity, and for class labels (``discrete``) no
non-integer floats. The metrics call it directly; :func:`encode_host` and
:func:`encode_labels` are the estimators' layers over it (y given, 1-D, as long as X, and
each class's count and first sample).
"""

from __future__ import annotations

import warnings
from typing import Any

import array_api_compat
import array_api_compat.numpy as _npx
import numpy as np
from sklearn.exceptions import DataConversionWarning

from ._backend import array_namespace, from_numpy, input_device, to_numpy
from ._backend import device_of as _device
from .errors import InvalidInputError

__all__ = [
    "as_array_input",
    "encode",
    "encode_host",
    "encode_labels",
    "check_label_types",
    "check_finite_labels",
    "is_host_nonnumeric",
    "as_1d",
]

MIX = "Mix of label input types (string and number)"
_ONE_KIND = "give every label as a string or every label as a number"


# --------------------------------------------------------------------------- conversion
def as_array_input(y: Any) -> Any:
    """``y`` with every host array-like that is not an array of some namespace (a pandas
    Series, also of the nullable ``Int64`` / ``boolean`` / ``string`` dtypes, an object
    with ``__array__`` but no ``dtype``) turned into a NumPy array, as scikit-learn's
    ``check_array`` does; arrays of any namespace, lists, tuples and ``None`` pass as they
    are. Called where labels and scores enter, so that no later step meets an object
    without NumPy's ``dtype``, ``device`` or indexing."""
    if y is None or isinstance(y, (list, tuple, np.ndarray, str, bytes)) or array_api_compat.is_array_api_obj(y):
        return y
    if not (hasattr(y, "__array__") or hasattr(y, "to_numpy")):
        return y
    dtype = getattr(y, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype) and hasattr(y, "to_numpy"):
        # pandas extension dtypes: missing values (pd.NA) become NaN in a float array (then
        # refused as NaN labels); without any, the values keep their NumPy dtype.
        if getattr(dtype, "kind", "O") in "biuf":
            has_na = bool(np.asarray(y.isna()).any()) if hasattr(y, "isna") else False
            return y.to_numpy(dtype=np.float64 if has_na else getattr(dtype, "numpy_dtype", None), na_value=np.nan)
    return np.asarray(y)


# --------------------------------------------------------------------------- checks
def is_host_nonnumeric(y: Any) -> bool:
    """Whether ``y`` is host data (a NumPy array, list or tuple) of non-numeric labels
    (strings, objects, complex): encoded with NumPy on the host."""
    y = as_array_input(y)
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    return isinstance(y, np.ndarray) and y.dtype.kind not in "biuf"


def as_1d(y: Any, xp: Any, name: str, device: Any = None) -> Any:
    """``y`` as an array of ``xp`` (host lists on ``device``); :class:`InvalidInputError`
    unless it is 1-D."""
    y = as_array_input(y)
    if isinstance(y, (list, tuple)):
        y = from_numpy(np.asarray(y), xp, device=device)
    if y.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got shape {tuple(y.shape)}")
    return y


def _label_kind(y: Any) -> tuple[str, Any]:
    """``(kind, dtype)``: kind ``"string"``, ``"number"``, ``"mixed"`` or ``"complex"``.
    Arrays of namespaces other than NumPy hold numbers (or complex numbers) only."""
    y = as_array_input(y)
    if isinstance(y, (list, tuple)):
        try:
            y = np.asarray(y)
        except ValueError:  # ragged
            y = np.asarray(y, dtype=object)
    if not isinstance(y, np.ndarray):
        if array_api_compat.is_array_api_obj(y) and array_api_compat.array_namespace(y).isdtype(
            y.dtype, "complex floating"
        ):
            return "complex", y.dtype
        return "number", getattr(y, "dtype", None)
    if y.dtype.kind in "USa":
        return "string", y.dtype
    if y.dtype.kind == "c":
        return "complex", y.dtype
    if y.dtype.kind == "O":
        is_str = {isinstance(v, (str, bytes)) for v in y.ravel().tolist()}
        return ("mixed" if len(is_str) > 1 else ("string" if True in is_str else "number")), y.dtype
    return "number", y.dtype


def check_label_types(*ys: Any, names: tuple[str, ...] = ()) -> None:
    """scikit-learn's rules of label types: string and number labels are never mixed, in
    one vector or across them (NumPy would silently turn the numbers into strings, which
    then match nothing), and complex labels are refused. ``None`` entries are skipped."""
    names = names or tuple(f"y{i}" for i in range(len(ys)))
    kinds = {}
    for y, nm in zip(ys, names):
        if y is None:
            continue
        kind, dtype = _label_kind(y)
        if kind == "complex":
            raise InvalidInputError(f"Complex data not supported: {nm} has dtype {dtype}")
        if kind == "mixed":
            raise InvalidInputError(f"{MIX} in {nm}; {_ONE_KIND}")
        kinds.setdefault(kind, []).append(nm)
    if len(kinds) > 1:
        raise InvalidInputError(
            f"{MIX}: strings in {', '.join(kinds['string'])} and numbers in {', '.join(kinds['number'])}; {_ONE_KIND}"
        )


def check_finite_labels(y: Any, xp: Any, name: str, discrete: bool = False) -> None:
    """NaN/infinity in float labels raise; with ``discrete`` (class labels) so do non-integer
    values (continuous targets). One reduction; the positions are found only to be named."""
    if not xp.isdtype(y.dtype, "real floating") or y.shape[0] == 0:
        return
    finite = xp.isfinite(y)
    ok = finite & (y == xp.floor(xp.where(finite, y, xp.zeros_like(y)))) if discrete else finite
    if bool(xp.all(ok)):
        return
    if not bool(xp.all(finite)):
        bad = to_numpy(xp.nonzero(~finite)[0])
        raise InvalidInputError(f"{name} contains NaN or infinity at {bad.size} position(s): {bad[:10].tolist()}")
    bad = to_numpy(xp.nonzero(~ok)[0])
    first = float(to_numpy(y[int(bad[0]) : int(bad[0]) + 1])[0])
    raise InvalidInputError(
        f"Unknown label type: continuous ({name} has non-integer values at {bad.size} position(s), "
        f"e.g. {name}[{int(bad[0])}] = {first!r}); classes must be discrete labels: integers, "
        "strings, or floats with integer values"
    )


# --------------------------------------------------------------------------- encoder
def encode(*ys: Any, labels: Any = None, names: tuple[str, ...] = (), discrete: bool = False) -> tuple[Any, Any, list]:
    """Encode label vectors to class indices ``0..C-1``.

    Returns ``(xp, classes, codes)``: ``classes`` the sorted union (or ``labels`` in the
    given order) and one int64 code vector per input; values not in ``labels`` get ``-1``.
    Non-numeric host labels are encoded with NumPy; numeric ones stay in their namespace
    (and on their device). The label types are checked (:func:`check_label_types`), NaN
    labels raise, and with ``discrete`` (class labels) non-integer float labels too.
    """
    names = names or tuple(f"y{i}" for i in range(len(ys)))
    ys = tuple(as_array_input(y) for y in ys)
    labels = as_array_input(labels)
    check_label_types(*ys, labels, names=(*names, "labels"))
    if any(is_host_nonnumeric(y) for y in ys) or (labels is not None and is_host_nonnumeric(labels)):
        arrs = [np.asarray(to_numpy(y)) for y in ys]
        for a, nm in zip(arrs, names):
            if a.ndim != 1:
                raise InvalidInputError(f"{nm} must be 1-D, got shape {a.shape}")
        try:
            classes = np.unique(np.concatenate(arrs)) if labels is None else np.asarray(labels)
            sorter = np.argsort(classes, kind="stable")
            codes = []
            for a in arrs:
                pos = np.searchsorted(classes, a, sorter=sorter)
                pos = np.clip(pos, 0, len(classes) - 1)
                idx = sorter[pos]
                codes.append(np.where(classes[idx] == a, idx, -1).astype(np.int64))
        except TypeError as exc:
            raise InvalidInputError(f"{MIX}: labels of unorderable types ({exc})") from None
        return _npx, classes, codes
    xp = array_namespace(*ys)
    dev = input_device(ys)
    ys = [as_1d(y, xp, nm, dev) for y, nm in zip(ys, names)]
    for y, nm in zip(ys, names):
        check_finite_labels(y, xp, nm, discrete)
    sizes = [int(y.shape[0]) for y in ys]
    if labels is None:
        classes, inv = xp.unique_inverse(xp.concat(ys))
        inv = xp.astype(inv, xp.int64)
        codes, s = [], 0
        for n in sizes:
            codes.append(inv[s : s + n])
            s += n
        return xp, classes, codes
    lab = labels if hasattr(labels, "shape") else from_numpy(np.asarray(labels), xp, device=dev)
    lab = as_1d(lab, xp, "labels")
    L = int(lab.shape[0])
    if L == 0:
        raise InvalidInputError("labels is empty")
    if int(xp.unique_values(lab).shape[0]) != L:
        raise InvalidInputError("labels contains duplicates")
    common = xp.result_type(lab.dtype, *[y.dtype for y in ys])
    allv = xp.concat([xp.astype(lab, common)] + [xp.astype(y, common) for y in ys])
    uniq, inv = xp.unique_inverse(allv)
    inv = xp.astype(inv, xp.int64)
    # map unique index -> position in `labels` (or -1): a tiny (L, n_unique) one-hot sum
    dev = _device(inv)
    onehot = inv[:L, None] == xp.arange(uniq.shape[0], dtype=xp.int64, device=dev)[None, :]
    pos = xp.arange(1, L + 1, dtype=xp.int64, device=dev)[:, None]
    lookup = xp.sum(xp.where(onehot, pos, xp.zeros_like(pos)), axis=0) - 1
    codes, s = [], L
    for n in sizes:
        codes.append(xp.take(lookup, inv[s : s + n]))
        s += n
    return xp, lab, codes


# --------------------------------------------------------------------------- estimators
def encode_host(y: Any, n_samples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`encode` of a classifier's ``y`` on the host: ``(classes, codes, counts, first)``.

    ``classes`` sorted (NumPy's ``unique`` order), ``codes`` int64 class indices of each
    sample, ``counts`` per class, ``first`` the first sample of each class. Done on the host:
    labels are small and string labels cannot live on a GPU (a dask ``y`` is computed). Raises
    :class:`InvalidInputError` for a missing y, one that is not 1-D (a column vector is
    accepted with scikit-learn's warning), of another length than X, or that :func:`encode`
    refuses as class labels (NaN or infinity, continuous values, mixed or complex types).
    """
    if y is None:
        raise InvalidInputError("requires y to be passed, but the target y is None")
    if array_api_compat.is_dask_array(y):  # labels are small: computed (dask stays unimported otherwise)
        y = y.compute()
    # pandas Series and lists are host data; arrays of any namespace come to the host.
    y_host = to_numpy(y) if array_api_compat.is_array_api_obj(y) else np.asarray(y)
    if y_host.ndim == 2 and y_host.shape[1] == 1:
        warnings.warn(  # scikit-learn's behaviour and warning: accepted, but said
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y_host = y_host[:, 0]
    if y_host.ndim != 1:
        raise InvalidInputError(f"y must be 1-D, got shape {y_host.shape}")
    if y_host.shape[0] != n_samples:
        raise InvalidInputError(f"X has {n_samples} samples but y has {y_host.shape[0]} labels")
    _, classes, (codes,) = encode(y_host, names=("y",), discrete=True)
    classes, codes = np.asarray(classes), np.asarray(codes)
    counts = np.bincount(codes, minlength=classes.shape[0]).astype(np.int64)
    first = np.argsort(codes, kind="stable")[np.cumsum(counts) - counts]  # each class's first sample
    return classes, codes, counts, first


def encode_labels(y: Any, n_samples: int, xp: Any, device: Any) -> tuple[Any, Any]:
    """``(classes, y_encoded)`` of :func:`encode_host`, for the estimators: ``classes`` in
    ``xp`` on ``device`` when the labels are numeric (a host NumPy array for strings and
    objects), ``y_encoded`` int64 in ``xp`` on ``device`` (the data's)."""
    classes, codes, _, _ = encode_host(y, n_samples)
    if classes.dtype.kind in "biuf" and not isinstance(y, (list, tuple)):
        classes = from_numpy(classes, xp, device=device)
    return classes, from_numpy(codes, xp, device=device)
