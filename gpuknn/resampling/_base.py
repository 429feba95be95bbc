"""Sampler plumbing shared by every resampling method.

* Labels are encoded **on the host** (``numpy.unique``): y may be a numeric array of any
  namespace or a host array/list of strings. Only class counts and indices cross to the
  host; X never leaves its namespace.
* ``sampling_strategy`` follows imbalanced-learn's ``check_sampling_strategy`` exactly
  (strings, float, dict, list, callable) and gives ``sampling_strategy_``, a dict
  ``{label: n}`` sorted by label.
* Neighbour searches go through :func:`gpuknn.ops.kneighbors.kneighbors`; :func:`self_neighbors`
  removes each sample from its own list **by index** (not by dropping column 0), so an exact
  duplicate with a lower index stays a neighbour.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import OneToOneFeatureMixin

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy
from .._delegation import take_rows
from .._labels import encode_host
from ..base import BaseEstimator, clone, validate_data
from ..errors import InvalidInputError
from ..neighbors import NearestNeighbors
from ..ops.kneighbors import kneighbors

__all__ = [
    "BaseSampler",
    "Labels",
    "encode_labels",
    "check_sampling_strategy",
    "fitted",
    "neighbors_param",
    "self_neighbors",
    "gather",
]

_KINDS = ("minority", "majority", "not minority", "not majority", "all", "auto")


@dataclass
class Labels:
    """Host-side view of y: sorted classes, codes (n,), counts, first occurrence per class."""

    classes: np.ndarray
    codes: np.ndarray
    counts: np.ndarray
    first: np.ndarray

    @property
    def minority(self) -> int:
        """Smallest class; ties -> lowest class (imblearn's ``np.unique``-based counts)."""
        return int(np.argmin(self.counts))

    @property
    def majority(self) -> int:
        return int(np.argmax(self.counts))

    @property
    def minority_first_seen(self) -> int:
        """Smallest class; ties -> the class seen first in y (imblearn's ``Counter(y)`` rule,
        used by CNN, OSS and NCL)."""
        tied = np.flatnonzero(self.counts == self.counts.min())
        return int(tied[np.argmin(self.first[tied])])

    def label(self, code: int) -> Any:
        v = self.classes[code]
        return v.item() if isinstance(v, np.generic) else v

    def codes_xp(self, xp: Any, device: Any = None) -> Any:
        return from_numpy(self.codes, xp, device=device)


def encode_labels(y: Any, n_samples: int) -> Labels:
    """:func:`gpuknn._labels.encode_host`, and at least two classes to resample."""
    classes, codes, counts, first = encode_host(y, n_samples)
    if classes.shape[0] < 2:
        raise InvalidInputError(f"y needs at least 2 classes to resample, got {classes.shape[0]}: {classes.tolist()}")
    return Labels(classes, codes, counts, first)


def _code_of(lab: Labels, label: Any, what: str) -> int:
    pos = np.flatnonzero(lab.classes == label)
    if pos.size == 0:
        raise InvalidInputError(f"{what}: class {label!r} is not present in y {lab.classes.tolist()}")
    return int(pos[0])


def check_sampling_strategy(strategy: Any, lab: Labels, sampling_type: str) -> dict[int, int]:
    """imbalanced-learn's target dict, keyed by class code, sorted.

    ``sampling_type`` is ``"over-sampling"`` (value = samples to **add**), ``"under-sampling"``
    (samples to **keep**) or ``"clean-sampling"`` (the classes that may lose samples; values
    are the minority count, unused). ``"auto"`` = ``"not majority"`` for over-samplers and
    ``"not minority"`` otherwise. Majority/minority ties go to the lowest class.
    """
    cnt, n_cls = lab.counts, lab.counts.shape[0]
    n_min, n_maj, c_min, c_maj = int(cnt.min()), int(cnt.max()), lab.minority, lab.majority
    over = sampling_type == "over-sampling"
    if isinstance(strategy, str):
        if strategy not in _KINDS:
            raise InvalidInputError(f"sampling_strategy string must be one of {_KINDS}, got {strategy!r}")
        if strategy == "auto":
            strategy = "not majority" if over else "not minority"
        if strategy == "minority" and not over:
            raise InvalidInputError("sampling_strategy='minority' cannot be used to under-sample or clean")
        if strategy == "majority" and over:
            raise InvalidInputError("sampling_strategy='majority' cannot be used with an over-sampler")
        chosen = {
            "minority": [c_min],
            "majority": [c_maj],
            "not minority": [c for c in range(n_cls) if c != c_min],
            "not majority": [c for c in range(n_cls) if c != c_maj],
            "all": list(range(n_cls)),
        }[strategy]
        return {c: (n_maj - int(cnt[c])) if over else n_min for c in chosen}
    if isinstance(strategy, (list, tuple)):
        if sampling_type != "clean-sampling":
            raise InvalidInputError("sampling_strategy can be a list only for cleaning samplers")
        return {c: n_min for c in sorted({_code_of(lab, s, "sampling_strategy") for s in strategy})}
    if isinstance(strategy, numbers.Real) and not isinstance(strategy, bool):
        return _float_strategy(float(strategy), lab, sampling_type)
    if callable(strategy) and not isinstance(strategy, dict):
        strategy = strategy(lab.classes[lab.codes])
    if isinstance(strategy, dict):
        return _dict_strategy(strategy, lab, sampling_type)
    raise InvalidInputError(f"unsupported sampling_strategy {strategy!r}")


def _float_strategy(ratio: float, lab: Labels, sampling_type: str) -> dict[int, int]:
    if not 0.0 < ratio <= 1.0:
        raise InvalidInputError(f"a float sampling_strategy must be in (0, 1], got {ratio}")
    if lab.counts.shape[0] != 2:
        raise InvalidInputError("a float sampling_strategy needs a binary y; use a dict")
    cnt = lab.counts
    if sampling_type == "over-sampling":
        out = {c: int(cnt.max() * ratio - cnt[c]) for c in range(2) if c != lab.majority}
        if any(v <= 0 for v in out.values()):
            raise InvalidInputError(f"sampling_strategy={ratio} would remove minority samples; increase it")
        return out
    if sampling_type == "under-sampling":
        out = {c: int(cnt.min() / ratio) for c in range(2) if c != lab.minority}
        if any(v > cnt[c] for c, v in out.items()):
            raise InvalidInputError(f"sampling_strategy={ratio} would add majority samples; increase it")
        return out
    raise InvalidInputError("cleaning samplers do not take a float sampling_strategy")


def _dict_strategy(strategy: dict, lab: Labels, sampling_type: str) -> dict[int, int]:
    if sampling_type == "clean-sampling":
        raise InvalidInputError("cleaning samplers take a list of classes, not a dict")
    out = {}
    for label, n in strategy.items():
        c = _code_of(lab, label, "sampling_strategy")
        n, have = int(n), int(lab.counts[c])
        if n < 0:
            raise InvalidInputError(f"sampling_strategy asks {n} samples for class {label!r}")
        if sampling_type == "over-sampling":
            if n < have:
                raise InvalidInputError(f"class {label!r} has {have} samples; over-sampling cannot ask {n}")
            out[c] = n - have
        else:
            if n > have:
                raise InvalidInputError(f"class {label!r} has {have} samples; under-sampling cannot ask {n}")
            out[c] = n
    return dict(sorted(out.items()))


def neighbors_param(
    value: Any, name: str, *, metric: str = "euclidean", working_memory: Any = None
) -> tuple[int, Any, Any]:
    """``(k, nn, estimator)`` for imbalanced-learn's ``k_neighbors`` / ``n_neighbors`` / ``m_neighbors``.

    An int ``k >= 1`` gives ``nn`` = an unfitted ``gpuknn.NearestNeighbors(k + 1)`` with
    ``metric`` (imbalanced-learn's ``check_neighbors_object`` with ``additional_neighbor=1``:
    the sample itself is counted) and the searches run on the engine directly. An object with
    ``fit`` and ``kneighbors`` (gpuknn's or scikit-learn's ``NearestNeighbors``, fitted or not)
    is cloned; its ``n_neighbors`` counts the sample itself, so ``k = n_neighbors - 1``, and
    the searches go through it (its own metric). ``estimator`` is ``nn`` for an object and
    ``None`` for an int: pass it to :func:`self_neighbors`. The sampler keeps ``nn`` fitted
    on the last rows searched, as imbalanced-learn's ``nn_k_`` (see :func:`fitted`).
    """
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        k = check_int(value, name=name, low=1)
        return k, NearestNeighbors(n_neighbors=k + 1, metric=metric, working_memory=working_memory), None
    if not (callable(getattr(value, "fit", None)) and callable(getattr(value, "kneighbors", None))):
        raise InvalidInputError(
            f"{name} must be an int >= 1 or a NearestNeighbors-like object with fit and kneighbors, got {value!r}"
        )
    nn = clone(value) if hasattr(value, "get_params") else copy.deepcopy(value)
    n = nn.get_params().get("n_neighbors") if hasattr(nn, "get_params") else getattr(nn, "n_neighbors", None)
    if not isinstance(n, (numbers.Integral, np.integer)) or isinstance(n, bool) or int(n) < 2:
        raise InvalidInputError(
            f"{name}={value!r}: its n_neighbors (={n!r}) counts the sample itself, so it must be an int >= 2"
        )
    return int(n) - 1, nn, nn


def fitted(nn: Any, estimator: Any, X: Any) -> Any:
    """``nn`` fitted on X when the searches bypassed it (an int parameter: the engine ran
    them), so the sampler's ``nn_k_``-like attribute is fitted as imbalanced-learn's is."""
    if estimator is None and nn is not None:
        nn.fit(X if isinstance(nn, BaseEstimator) else to_numpy(X))
    return nn


def _estimator_neighbors(nn: Any, Q: Any, X: Any, k: int) -> Any:
    """``nn`` fitted on X, the indices (m, k+1) of Q's neighbours, in X's namespace/device.
    gpuknn's estimators take the arrays as they are, others get host NumPy copies."""
    xp, dev = array_namespace(X), device_of(X)
    ours = isinstance(nn, BaseEstimator)
    nn.fit(X if ours else to_numpy(X))
    idx = nn.kneighbors(Q if ours else to_numpy(Q), n_neighbors=k + 1, return_distance=False)
    return from_numpy(np.asarray(to_numpy(idx), dtype=np.int64), xp, device=dev)


def self_neighbors(
    X: Any,
    k: int,
    *,
    rows: Any = None,
    metric: str = "euclidean",
    working_memory: float | None = None,
    estimator: Any = None,
) -> Any:
    """Indices (m, k) of the k nearest *other* samples of X for each query row.

    ``rows`` (host int array, optional) picks the query rows; default all. One call to
    :func:`kneighbors` with k+1 (or, with ``estimator``, its ``fit(X)`` and
    ``kneighbors(Q, k + 1)``), then the query's own index is removed (the last column when
    the query is not in its list, which only happens among exact duplicates).
    Ties: lower index first (the estimator's order with one).
    """
    xp = array_namespace(X)
    n = int(X.shape[0])
    if k + 1 > n:
        raise InvalidInputError(f"{k} neighbours need at least {k + 1} samples, got {n}")
    dev = device_of(X)
    ids = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    ids_x = from_numpy(ids, xp, device=dev)
    Q = X if rows is None else xp.take(X, ids_x, axis=0)
    if estimator is not None:
        idx = _estimator_neighbors(estimator, Q, X, k)
    else:
        idx = kneighbors(Q, X, k + 1, metric=metric, working_memory=working_memory, return_distance=False)
    is_self = idx == ids_x[:, None]
    last = xp.arange(k + 1, device=dev)[None, :] == k
    drop = xp.where(xp.any(is_self, axis=1, keepdims=True), is_self, last)
    order = xp.argsort(xp.astype(drop, xp.int8), axis=1, stable=True)[:, :k]
    return xp.take_along_axis(idx, order, axis=1)


def gather(v: Any, idx: Any) -> Any:
    """``v[idx]`` for a 1-D ``v`` and an index array of any shape (strict array API)."""
    xp = array_namespace(v, idx)
    return xp.reshape(xp.take(v, xp.reshape(idx, (-1,))), idx.shape)


class BaseSampler(OneToOneFeatureMixin, BaseEstimator):
    """``fit_resample(X, y)`` for every sampler; subclasses implement ``_resample``.

    ``_resample(X, lab, xp)`` returns either host int64 indices (then ``sample_indices_`` is
    set and the output is those rows of X and y) or a tuple ``(X_new, codes_new)`` of
    generated rows (xp) and their class codes (host), appended after the original data.
    """

    _sampling_type = "clean-sampling"
    # Whether the output is a selection of the input rows (``sample_indices_`` is set) rather
    # than holding generated rows: imbalanced-learn's ``sampler_tags.sample_indices``.
    _selects_rows = True

    def __sklearn_tags__(self) -> Any:
        """imbalanced-learn's sampler tags when it is installed (its checks and Pipeline read
        them), else scikit-learn's with ``estimator_type="sampler"``."""
        tags = super().__sklearn_tags__()
        try:
            from imblearn.utils._tags import InputTags, SamplerTags, Tags  # noqa: PLC0415
        except ImportError:  # imbalanced-learn is optional
            tags.estimator_type = "sampler"
            return tags
        out = Tags(
            estimator_type="sampler",
            target_tags=tags.target_tags,
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
            sampler_tags=SamplerTags(sample_indices=self._selects_rows),
            array_api_support=tags.array_api_support,
        )
        out.target_tags.required = True
        out.input_tags = InputTags(dataframe=True)
        return out

    #: Samplers that only pick rows (never compute with X) take NaN and infinity through, as
    #: imbalanced-learn's random samplers do.
    _allow_non_finite = False

    def fit(self, X: Any, y: Any) -> BaseSampler:
        """Run :meth:`fit_resample` and return self (imbalanced-learn's ``fit``)."""
        self.fit_resample(X, y)
        return self

    def fit_resample(self, X: Any, y: Any) -> tuple[Any, Any]:
        """Resample ``(X, y)`` (imbalanced-learn's contract).

        Parameters
        ----------
        X : array of shape (n, d), any array-API namespace (integers become float64), a list
            of rows or a pandas DataFrame
        y : array of shape (n,), numeric in any namespace, or host strings; a list, a pandas
            Series, an (n, 1) column or a one-hot (n, n_classes) indicator

        Returns
        -------
        X_res : array of shape (m, d)
            In X's namespace and on its device; a list for a list and a DataFrame with X's
            columns and dtypes for a DataFrame.
        y_res : array of shape (m,) or (m, n_classes)
            In y's namespace; a list for a list, a Series with y's name for a Series, one-hot
            for one-hot y.
        """
        return _restore_kinds(X, y, *self._fit_resample(X, *_labels_1d(y)))

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        """``fit_resample`` on arrays: X of any namespace, y 1-D (``one_hot`` unused here)."""
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp, check_finite=not self._allow_non_finite)
        lab = encode_labels(y, int(X.shape[0]))
        self._strategy = check_sampling_strategy(self.sampling_strategy, lab, self._sampling_type)
        self.sampling_strategy_ = {lab.label(c): n for c, n in self._strategy.items()}
        self.n_features_in_ = int(X.shape[1])
        out = self._resample(X, lab, xp)
        if isinstance(out, tuple):
            X_new, codes_new = out
            if X_new is None or X_new.shape[0] == 0:
                return X, y if not isinstance(y, (list, tuple)) else np.asarray(y)
            y_new = take_rows(y, lab.first[codes_new])
            return xp.concat([X, X_new], axis=0), _concat_labels(y, y_new)
        self.sample_indices_ = np.asarray(out, dtype=np.int64)
        return take_rows(X, self.sample_indices_), take_rows(y, self.sample_indices_)


def _labels_1d(y: Any) -> tuple[Any, int | None]:
    """y as 1-D labels, and the number of columns when y was a one-hot indicator.

    An (n, 1) column is taken as its labels without a warning and a one-hot (n, c) matrix
    as its argmax, as imbalanced-learn does; pandas Series and lists become host arrays.
    """
    if y is None or array_api_compat.is_array_api_obj(y) and getattr(y, "ndim", 1) == 1:
        return y, None
    if not array_api_compat.is_array_api_obj(y):
        y = np.asarray(y)
    if y.ndim == 2 and int(y.shape[1]) == 1:
        return y[:, 0], None
    if y.ndim == 2:
        yh = to_numpy(y)
        if yh.dtype.kind in "biuf" and np.all((yh == 0) | (yh == 1)) and np.all(yh.sum(axis=1) == 1):
            return np.argmax(yh, axis=1), int(yh.shape[1])
    return y, None


def _restore_kinds(X_in: Any, y_in: Any, X_res: Any, y_res: Any) -> tuple[Any, Any]:
    """Give the outputs the kinds of the inputs: lists, pandas objects (imbalanced-learn's
    contract), one-hot labels for one-hot y; arrays stay as they are."""
    _, one_hot = _labels_1d(y_in)
    if one_hot is not None:
        y_res = np.eye(one_hot, dtype=to_numpy(y_in).dtype)[to_numpy(y_res)]
    if isinstance(X_in, list):
        X_res = to_numpy(X_res).tolist()
    elif hasattr(X_in, "columns") and hasattr(X_in, "iloc") and not hasattr(X_res, "iloc"):  # a pandas DataFrame
        X_res = type(X_in)(to_numpy(X_res), columns=X_in.columns).astype(X_in.dtypes.to_dict())
    if isinstance(y_in, list):
        y_res = to_numpy(y_res).tolist()
    elif hasattr(y_in, "name") and hasattr(y_in, "iloc") and getattr(y_in, "ndim", 0) == 1:
        y_res = type(y_in)(to_numpy(y_res), name=y_in.name, dtype=y_in.dtype)
    elif hasattr(y_in, "columns") and hasattr(y_in, "iloc"):  # a one-column DataFrame
        y_res = type(y_in)(to_numpy(y_res).reshape(-1, 1), columns=y_in.columns).astype(y_in.dtypes.to_dict())
    return X_res, y_res


def _concat_labels(y: Any, y_new: Any) -> Any:
    if isinstance(y, (np.ndarray, list, tuple)):
        return np.concatenate([np.asarray(y), y_new])
    return array_namespace(y).concat([y, y_new], axis=0)
