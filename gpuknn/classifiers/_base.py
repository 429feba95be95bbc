"""Shared plumbing of the neighbour classifiers: label encoding and fitted-data checks."""

from __future__ import annotations

import warnings
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import DataConversionWarning

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy
from ..base import BaseEstimator, check_query, validate_data
from ..errors import InvalidInputError
from ..neighbors import PreparedReference
from ..ops.kdtree import build_tree, neighbors, resolve_algorithm

__all__ = ["NeighborsClassifierMixin", "encode_labels", "check_n_neighbors"]


def check_n_neighbors(value: Any, n_samples: int, name: str = "n_neighbors") -> int:
    """``value`` as an int in ``[1, n_samples]`` or :class:`InvalidInputError`."""
    v = check_int(value, name=name, low=1)
    if v > n_samples:
        raise InvalidInputError(
            f"{name} must be in [1, {n_samples}], got {v}: more neighbours than the "
            f"n_samples = {n_samples} training samples"
        )
    return v


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


class NeighborsClassifierMixin(ClassifierMixin, BaseEstimator):
    """fit-time storage and label decoding shared by the kNN-family classifiers."""

    def _fit_data(self, X: Any, y: Any) -> Any:
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)  # a dask X (if accepted) stays lazy
        # dask training data: the labels on the host (the vote tasks gather them there)
        lxp, dev = (np, None) if array_api_compat.is_dask_array(X) else (xp, device_of(X))
        self.classes_, self._y = encode_labels(y, X.shape[0], lxp, dev)
        self._fit_X = X
        self.n_features_in_ = int(X.shape[1])
        self.n_samples_fit_ = int(X.shape[0])
        return xp

    def _setup_search(self, algorithm: str, metric: str) -> None:
        """Resolve ``algorithm`` (``auto``/``brute``/``kd_tree``) and build a tree if needed."""
        xp = array_namespace(self._fit_X)
        self._fit_method = resolve_algorithm(algorithm, xp, metric, self.n_features_in_)
        if array_api_compat.is_dask_array(self._fit_X):  # searched by gpuknn.distributed per query
            self._tree = self._ref = None
            return
        self._tree = build_tree(self._fit_X, name="X") if self._fit_method == "kd_tree" else None
        # Brute force: prepare the training rows once here, not at every predict.
        self._ref = PreparedReference(self._fit_X, metric=metric, name="X") if self._fit_method == "brute" else None

    def _search(self, X: Any, k: int) -> tuple[Any, Any]:
        """``(distances, indices)`` of the k nearest training rows of validated X."""
        nb = self._neighbors(X, k)
        return nb.output_distances(), nb.indices

    def _neighbors(self, X: Any, k: int) -> Any:
        """The :class:`~gpuknn.neighbors.Neighbors` of validated X (exact decisions need it)."""
        return neighbors(
            X,
            self._ref if self._ref is not None else self._fit_X,
            k,
            metric=self.metric,
            algorithm=self._fit_method,
            working_memory=self.working_memory,
            tree=self._tree,
            names=("X", "X"),
        )

    def _labels_of(self, idx: Any, xp: Any) -> Any:
        """Class indices of the training rows ``idx`` (any shape)."""
        flat = xp.take(self._y, xp.reshape(idx, (-1,)))
        return xp.reshape(flat, idx.shape)

    def _check_query(self, X: Any) -> tuple[Any, Any]:
        return check_query(self, X)

    def _decode(self, class_index: Any) -> Any:
        """Class indices -> labels (xp for numeric labels, NumPy for strings)."""
        if isinstance(self.classes_, np.ndarray) and not _is_numpy_numeric(self.classes_):
            return self.classes_[to_numpy(class_index)]
        xp = array_namespace(self.classes_)
        if isinstance(self.classes_, np.ndarray):
            return self.classes_[to_numpy(class_index)]
        return xp.take(self.classes_, class_index)

    def score(self, X: Any, y: Any) -> float:
        """Mean accuracy of ``predict(X)`` against ``y``."""
        pred = to_numpy(self.predict(X))
        y_host = to_numpy(y) if hasattr(y, "shape") else np.asarray(y)
        if y_host.shape[0] != pred.shape[0]:
            raise InvalidInputError(f"X has {pred.shape[0]} samples but y has {y_host.shape[0]}")
        return float(np.mean(pred == y_host))


def _is_numpy_numeric(a: np.ndarray) -> bool:
    return a.dtype.kind in "biuf"
