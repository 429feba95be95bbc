"""scikit-learn-style estimator plumbing without depending on scikit-learn.

``get_params``/``set_params`` read the ``__init__`` signature, so estimators store their
arguments unchanged and validate them in ``fit`` (scikit-learn's contract).
"""

from __future__ import annotations

import inspect
from typing import Any

from .errors import InvalidInputError, NotFittedError

__all__ = ["BaseEstimator", "check_is_fitted"]


class BaseEstimator:
    """Base class giving ``get_params``, ``set_params`` and a readable ``repr``."""

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
