"""One exception family for gpuknn.

Every error the library raises on purpose derives from :class:`GpuknnError`, and also from
the built-in class a caller would expect (``ValueError`` for bad values, ``FileNotFoundError``
for missing data), so ``except ValueError`` keeps working. Messages carry the shapes and
values that were wrong.
"""

from __future__ import annotations

from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = [
    "GpuknnError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "NotFittedError",
    "DataNotFoundError",
    "CorruptDataError",
    "DeviceUnavailableError",
    "ConvergenceWarning",
    "EmptyNeighborhoodWarning",
]


class GpuknnError(Exception):
    """Base class of every error raised on purpose by gpuknn."""


class InvalidInputError(GpuknnError, ValueError):
    """An argument has a bad shape, dtype, value or option (NaN, k out of range, ...)."""


class InvalidInputTypeError(InvalidInputError, TypeError):
    """An input holds values of a type that cannot be used (a dict where numbers belong):
    both ``ValueError`` (as every bad input) and ``TypeError`` (as NumPy raises there)."""


class NotFittedError(GpuknnError, _SklearnNotFittedError):
    """An estimator was used before ``fit`` (also scikit-learn's ``NotFittedError``, hence a
    ``ValueError`` and an ``AttributeError``)."""


class DataNotFoundError(GpuknnError, FileNotFoundError):
    """A data set is not on disk; the message lists the paths tried and how to get it."""


class CorruptDataError(GpuknnError, ValueError):
    """A data file exists but cannot be trusted (bad magic number, shape, checksum, line)."""


class DeviceUnavailableError(GpuknnError, RuntimeError):
    """``device="gpu"`` was asked for but CuPy or a CUDA device is missing."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting its tolerance."""


class EmptyNeighborhoodWarning(UserWarning):
    """A :class:`~gpuknn.regression.RadiusNeighborsRegressor` query had no training row within
    the radius (or only neighbours of total weight 0) and was predicted as NaN, where
    scikit-learn warns with a plain ``UserWarning`` (this is one, so filters for that apply)."""
