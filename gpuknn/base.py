"""gpuknn's estimators are scikit-learn estimators.

:class:`BaseEstimator` is scikit-learn's ``BaseEstimator`` (``get_params``/``set_params``,
``clone``, ``repr``, pickling, tags), plus two things of gpuknn's own: every entry method
runs on its inputs' device (CuPy), and the tags say what is true of the whole library —
array-API inputs are kept in their namespace and on their device. Subclasses put
scikit-learn's mixins first (``class KNN(ClassifierMixin, BaseEstimator)``), as scikit-learn
requires.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from array_api_compat import is_dask_array  # checks sys.modules: never imports Dask
from sklearn.base import BaseEstimator as _SklearnBaseEstimator
from sklearn.base import clone as _sklearn_clone

from ._backend import array_namespace, device_of, validate_matrix
from ._delegation import on_input_device
from .errors import InvalidInputError, NotFittedError
from .ops.limits import check_values

__all__ = ["BaseEstimator", "check_is_fitted", "clone", "validate_data", "check_query", "uses_dask"]

# The estimators that take dask arrays (lazily, through gpuknn.distributed); the refusal of
# the others names them. Each sets ``_accepts_dask = True`` (PCA takes its own path first).
DASK_ESTIMATORS = ("KNeighborsClassifier", "KNeighborsRegressor", "KNeighborsTransformer", "NearestNeighbors", "PCA")


# Methods through which arrays enter an estimator: each runs on its inputs' device.
_ENTRY_METHODS = (
    "fit",
    "predict",
    "predict_proba",
    "predict_log_proba",
    "transform",
    "fit_transform",
    "inverse_transform",
    "fit_predict",
    "fit_resample",
    "kneighbors",
    "radius_neighbors",
    "kneighbors_graph",
    "radius_neighbors_graph",
    "score",
    "score_samples",
    "decision_function",
    "predict_membership",
    "split",
)


class BaseEstimator(_SklearnBaseEstimator):
    """scikit-learn's ``BaseEstimator`` with gpuknn's device rule and tags.

    Every subclass's entry methods (``fit``, ``predict``, ...) run within
    :func:`gpuknn._delegation.device_scope` of their arguments, so what they create lands on
    the inputs' device on CuPy too (see :func:`gpuknn._delegation.on_input_device`).
    ``set_params`` with an unknown name raises :class:`~gpuknn.errors.InvalidInputError`
    (a ``ValueError``, as in scikit-learn).

    ``_accepts_dask`` (class attribute, default False): whether :func:`validate_data` lets a
    dask array in. The estimators that set it answer dask input through
    :mod:`gpuknn.distributed`; the others refuse it there, with one message, instead of
    computing the whole array or failing deep inside.
    """

    _accepts_dask = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _ENTRY_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_on_input_device", False):
                wrapped = on_input_device(method)
                if not inspect.isgeneratorfunction(method):
                    wrapped = _naming_mismatches(wrapped, name)
                wrapped._on_input_device = True
                setattr(cls, name, wrapped)

    def set_params(self, **params: Any) -> BaseEstimator:
        """Set parameters by name (``step__param`` for nested estimators)."""
        try:
            return super().set_params(**params)
        except InvalidInputError:
            raise
        except ValueError as exc:  # scikit-learn's "Invalid parameter ..." message, our family
            raise InvalidInputError(str(exc)) from None

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Inputs from any array-API namespace stay in it and on their device.
        tags.array_api_support = True
        return tags


def _naming_mismatches(method: Any, name: str) -> Any:
    """Wrap an entry method so that a namespace or device mismatch names it
    (``KNeighborsClassifier.predict(): X must use the same namespace ...``): the method the
    user called, as each enclosing entry method renames the error on its way out."""

    @functools.wraps(method)
    def entry(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except InvalidInputError as exc:
            if getattr(exc, "namespace_mismatch", False):
                exc.bare_message = getattr(exc, "bare_message", exc.args[0])
                exc.args = (f"{type(self).__name__}.{name}(): {exc.bare_message}",) + exc.args[1:]
            raise

    return entry


def check_is_fitted(estimator: Any, attributes: str | list[str] | None = None) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has its fitted attributes."""
    if attributes is None:
        fitted = [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]
        ok = bool(fitted)
    else:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        ok = all(hasattr(estimator, a) for a in names)
    if not ok:
        raise NotFittedError(f"this {type(estimator).__name__} instance is not fitted yet; call 'fit' first")


def clone(estimator: Any) -> Any:
    """An unfitted copy of ``estimator`` with the same parameters: scikit-learn's ``clone``
    (nested estimators cloned too), or a deep copy of an object without ``get_params``."""
    return _sklearn_clone(estimator, safe=False)


def validate_data(
    estimator: Any,
    X: Any,
    *,
    reset: bool,
    xp: Any = None,
    device: Any = None,
    dtype: Any = None,
    name: str = "X",
    check_finite: bool = True,
    return_magnitude: bool = False,
) -> Any:
    """Validate an estimator's input: :func:`gpuknn._backend.validate_matrix`, then
    scikit-learn's ``n_features_in_`` / ``feature_names_in_`` bookkeeping.

    ``return_magnitude``: return ``(X, max |X|)``, the values checked by
    :func:`gpuknn.ops.limits.check_values` (finite, squares in range: what every neighbour
    search needs) in one pass and one host transfer, the magnitude handed on to the engine so
    that nothing below re-scans X (None for a dask X, whose tasks check their chunks).

    ``reset=True`` (``fit``) records the number of features and, for a pandas DataFrame
    with string column names, ``feature_names_in_``; ``reset=False`` (``predict``,
    ``transform``, ...) checks them with scikit-learn's messages ("X has 3 features, but
    KNeighborsClassifier is expecting 4 features as input"), raised as
    :class:`~gpuknn.errors.InvalidInputError`. Returns X as a floating array of ``xp`` (X's
    own namespace by default) on ``device``.

    A dask array is refused unless the estimator sets ``_accepts_dask`` (the message names
    the estimators that do). Accepted, it stays lazy: only its metadata is checked (shape,
    dtype, known chunk sizes; values are checked by the tasks that read them, as a finite
    check would be a full pass over the data), it is cast to a float dtype lazily and
    returned chunked by rows only (:func:`gpuknn.distributed._dask.as_row_chunked`).
    """
    from sklearn.utils.validation import validate_data as _sklearn_validate_data  # noqa: PLC0415

    dask_input = is_dask_array(X)
    if dask_input and not getattr(estimator, "_accepts_dask", False):
        raise InvalidInputError(
            f"{type(estimator).__name__} does not accept dask arrays (got {name} of shape {tuple(X.shape)}); "
            f"dask data is accepted by {', '.join(DASK_ESTIMATORS)} (see gpuknn.distributed). "
            f"Compute {name} first ({name}.compute()) if it fits in memory"
        )
    raw = X
    xp = array_namespace(X) if xp is None else xp
    X = validate_matrix(
        X,
        xp,
        name=name,
        dtype=dtype,
        device=device,
        check_finite=check_finite and not dask_input and not return_magnitude,
    )
    magnitude = None
    if return_magnitude and not dask_input:
        magnitude = check_values(X, xp, name=name)
    if dask_input:
        from .distributed._dask import as_row_chunked  # noqa: PLC0415 - Dask only with its arrays

        X = as_row_chunked(X, name)
    try:
        # skip_check_array: only the bookkeeping; the data stays in its namespace.
        _sklearn_validate_data(estimator, raw if hasattr(raw, "columns") else X, skip_check_array=True, reset=reset)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None
    return (X, magnitude) if return_magnitude else X


def uses_dask(estimator: Any, X: Any = None) -> bool:
    """Whether a neighbour estimator answers through :mod:`gpuknn.distributed`: its training
    rows ``_fit_X`` or the query ``X`` are a dask array (never imports Dask)."""
    return is_dask_array(X) or is_dask_array(getattr(estimator, "_fit_X", None))


def check_query(estimator: Any, X: Any, *, return_magnitude: bool = False) -> tuple[Any, ...]:
    """``(X, xp)``: the query of a fitted estimator that keeps its training rows in
    ``_fit_X``, validated in the fitted rows' dtype, namespace and device.

    With dask training data or a dask query (:func:`uses_dask`) X is validated in its own
    namespace instead (NumPy or CuPy queries of dask training data are answered in theirs;
    a dask query stays lazy) and ``xp`` is X's namespace. ``return_magnitude``:
    ``(X, xp, max |X|)`` (see :func:`validate_data`).
    """
    check_is_fitted(estimator, "_fit_X")
    fit = estimator._fit_X
    if uses_dask(estimator, X):
        X = validate_data(estimator, X, reset=False, dtype=fit.dtype)
        return (X, array_namespace(X), None) if return_magnitude else (X, array_namespace(X))
    xp = array_namespace(fit)
    out = validate_data(
        estimator, X, reset=False, xp=xp, dtype=fit.dtype, device=device_of(fit), return_magnitude=return_magnitude
    )
    return (out[0], xp, out[1]) if return_magnitude else (out, xp)


def prediction_accuracy(pred: Any, y: Any, sample_weight: Any = None) -> float:
    """A classifier's ``score``: the (weighted) share of ``pred`` equal to ``y``, on the host.

    ``pred`` (n,) or, for several outputs, (n, n_outputs): a sample counts when every output
    is right (scikit-learn's subset accuracy). ``y`` and ``sample_weight`` may be arrays of
    any namespace, lists or pandas objects.

    Examples
    --------
    >>> import numpy as np
    >>> prediction_accuracy(np.array([0, 1, 1]), [0, 1, 0], sample_weight=[1.0, 1.0, 2.0])
    0.5
    """
    import numpy as np  # noqa: PLC0415 - a score is a host number

    from ._backend import to_numpy  # noqa: PLC0415

    pred = np.asarray(to_numpy(pred))
    y_host = to_numpy(y) if hasattr(y, "shape") and not hasattr(y, "iloc") else np.asarray(y)
    if y_host.shape[0] != pred.shape[0]:
        raise InvalidInputError(f"X has {pred.shape[0]} samples but y has {y_host.shape[0]}")
    if pred.ndim == 2:
        hit = np.all(pred == y_host.reshape(pred.shape), axis=1)
    else:
        hit = pred == y_host
    hit = hit.astype(np.float64)
    if sample_weight is None:
        return float(np.mean(hit))
    w = np.asarray(to_numpy(sample_weight) if hasattr(sample_weight, "shape") else sample_weight, dtype=np.float64)
    return float(np.sum(w * hit) / np.sum(w))
