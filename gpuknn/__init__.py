"""gpuknn: exact k-nearest neighbours, PCA and model evaluation on CuPy or NumPy."""

from __future__ import annotations

from .classifiers import KNeighborsClassifier
from .errors import (
    ConvergenceWarning,
    CorruptDataError,
    DataNotFoundError,
    GpuknnError,
    InvalidInputError,
    NotFittedError,
)

from .neighbors import kneighbors, vote_counts, votes_for_many_k
from .ops.distance import pairwise_distances, pairwise_distances_chunked

__version__ = "0.1.0"

__all__ = [
    "ConvergenceWarning",
    "CorruptDataError",
    "DataNotFoundError",
    "GpuknnError",
    "InvalidInputError",
    "KNeighborsClassifier",
    "NotFittedError",
    "__version__",
    "kneighbors",
    "pairwise_distances",
    "pairwise_distances_chunked",
    "vote_counts",
    "votes_for_many_k",
]
