"""scikit-learn-style estimator plumbing without depending on scikit-learn.

``get_params``/``set_params`` read the ``__init__`` signature, so estimators store their
arguments unchanged and validate them in ``fit`` (scikit-learn's contract).
"""

from __future__ import annotations

import inspect
from typing import Any

from ._delegation import on_input_device
from .errors import InvalidInputError, NotFittedError

__all__ = ["BaseEstimator", "check_is_fitted", "clone"]


# Methods through which arrays enter an estimator: each runs on its inputs' device.
_ENTRY_METHODS = ("fit", "predict", "predict_proba", "transform", "fit_transform",
                  "inverse_transform", "fit_predict", "fit_resample", "kneighbors", "score",
                  "predict_membership", "split")


class BaseEstimator:
    """Base class giving ``get_params``, ``set_params`` and a readable ``repr``.

    Every subclass's entry methods (``fit``, ``predict``, ...) run within
    :func:`gpuknn._delegation.device_scope` of their arguments, so what they create lands on
    the inputs' device on CuPy too (see :func:`gpuknn._delegation.on_input_device`).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _ENTRY_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_on_input_device", False):
                wrapped = on_input_device(method)
                wrapped._on_input_device = True
                setattr(cls, name, wrapped)

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters of this estimator, as passed to ``__init__``."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> "BaseEstimator":
        """Set parameters by name; unknown names raise :class:`InvalidInputError`."""
        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                raise InvalidInputError(
                    f"invalid parameter {key!r} for {type(self).__name__}; valid: {sorted(valid)}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        shown = [
            f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k))
        ]
        return f"{type(self).__name__}({', '.join(shown)})"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def check_is_fitted(estimator: Any, attributes: str | list[str] | None = None) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has its fitted attributes."""
    if attributes is None:
        fitted = [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]
        ok = bool(fitted)
    else:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        ok = all(hasattr(estimator, a) for a in names)
    if not ok:
        raise NotFittedError(
            f"this {type(estimator).__name__} instance is not fitted yet; call 'fit' first"
        )


def clone(estimator: Any) -> Any:
    """An unfitted copy of ``estimator`` with the same parameters (scikit-learn's ``clone``):
    rebuilt from ``get_params(deep=False)``, or a deep copy of an object without them."""
    if hasattr(estimator, "get_params"):
        return type(estimator)(**estimator.get_params(deep=False))
    import copy  # noqa: PLC0415

    return copy.deepcopy(estimator)
