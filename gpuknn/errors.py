"""One exception family for gpuknn.

Every error the library raises on purpose derives from :class:`GpuknnError`, and also from
the built-in class a caller would expect (``ValueError`` for bad values, ``FileNotFoundError``
for missing data), so ``except ValueError`` keeps working. Messages carry the shapes and
values that were wrong.
"""

from __future__ import annotations

__all__ = [
    "GpuknnError",
    "InvalidInputError",
    "NotFittedError",
    "DataNotFoundError",
    "CorruptDataError",
    "DeviceUnavailableError",
    "ConvergenceWarning",
]


class GpuknnError(Exception):
    """Base class of every error raised on purpose by gpuknn."""


class InvalidInputError(GpuknnError, ValueError):
    """An argument has a bad shape, dtype, value or option (NaN, k out of range, ...)."""


class NotFittedError(GpuknnError, AttributeError):
    """An estimator was used before ``fit``."""


class DataNotFoundError(GpuknnError, FileNotFoundError):
    """A data set is not on disk; the message lists the paths tried and how to get it."""


class CorruptDataError(GpuknnError, ValueError):
    """A data file exists but cannot be trusted (bad magic number, shape, checksum, line)."""


class DeviceUnavailableError(GpuknnError, RuntimeError):
    """``device="gpu"`` was asked for but CuPy or a CUDA device is missing."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting its tolerance."""
