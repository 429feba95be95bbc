"""The one label encoder: class labels (any namespace, lists, pandas, strings) to class
indices, with the checks scikit-learn makes of classification targets."""

from __future__ import annotations

import warnings
from typing import Any

import array_api_compat
import numpy as np
from sklearn.exceptions import DataConversionWarning

from ._backend import from_numpy, to_numpy
from .errors import InvalidInputError

__all__ = ["encode_host", "encode_labels"]


def encode_host(y: Any, n_samples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The one label encoder: ``(classes, codes, counts, first)`` of ``y`` on the host.

    ``classes`` sorted (NumPy's ``unique`` order), ``codes`` int64 class indices of each
    sample, ``counts`` per class, ``first`` the first sample of each class. Done on the host:
    labels are small and string labels cannot live on a GPU (a dask ``y`` is computed). Raises
    :class:`InvalidInputError` for a y that is not 1-D, of another length than X, or with
    NaN or infinity (naming the positions).
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
    if y_host.dtype.kind == "f" and not np.all(np.isfinite(y_host)):
        bad = np.flatnonzero(~np.isfinite(y_host))
        raise InvalidInputError(f"y contains NaN or infinity at {bad.size} position(s): {bad[:10].tolist()}")
    if y_host.dtype.kind == "f" and np.any(y_host != np.floor(y_host)):
        bad = np.flatnonzero(y_host != np.floor(y_host))
        raise InvalidInputError(
            f"Unknown label type: continuous (y has non-integer values at {bad.size} "
            f"position(s), e.g. y[{int(bad[0])}] = {y_host[bad[0]]!r}); classes must be discrete "
            "labels: integers, strings, or floats with integer values"
        )
    if y_host.dtype.kind == "c":
        raise InvalidInputError(f"Complex data not supported: y has dtype {y_host.dtype}")
    if y_host.dtype.kind == "O":
        kinds = {isinstance(v, str) for v in y_host.tolist()}
        if len(kinds) > 1:
            raise InvalidInputError(
                "Mix of label input types (string and number) in y; "
                "give every label as a string or every label as a number"
            )
    classes, first, codes, counts = np.unique(y_host, return_index=True, return_inverse=True, return_counts=True)
    return classes, codes.astype(np.int64).reshape(-1), counts.astype(np.int64), first


def encode_labels(y: Any, n_samples: int, xp: Any, device: Any) -> tuple[Any, Any]:
    """``(classes, y_encoded)`` of :func:`encode_host`, for the estimators: ``classes`` in
    ``xp`` on ``device`` when the labels are numeric (a host NumPy array for strings and
    objects), ``y_encoded`` int64 in ``xp`` on ``device`` (the data's)."""
    classes, codes, _, _ = encode_host(y, n_samples)
    if classes.dtype.kind in "biuf" and not isinstance(y, (list, tuple)):
        classes = from_numpy(classes, xp, device=device)
    return classes, from_numpy(codes, xp, device=device)
