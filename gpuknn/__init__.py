"""gpuknn: exact k-nearest neighbours, PCA and model evaluation on CuPy or NumPy."""

from __future__ import annotations

from .errors import (
    ConvergenceWarning,
    CorruptDataError,
    DataNotFoundError,
    GpuknnError,
    InvalidInputError,
    NotFittedError,
)

__version__ = "0.1.0"

__all__ = [
    "ConvergenceWarning",
    "CorruptDataError",
    "DataNotFoundError",
    "GpuknnError",
    "InvalidInputError",
    "NotFittedError",
    "__version__",
]
