"""gpuknn: exact k-nearest neighbours, PCA and model evaluation on CuPy or NumPy.

Inputs decide the array namespace (NumPy, CuPy, any array-API library); results come back in
it. Sub-packages: :mod:`gpuknn.metrics`, :mod:`gpuknn.cluster`, :mod:`gpuknn.model_selection`,
:mod:`gpuknn.linalg`, :mod:`gpuknn.datasets`, :mod:`gpuknn.resampling`, :mod:`gpuknn.neighbors`,
:mod:`gpuknn.decomposition`, :mod:`gpuknn.plots`, :mod:`gpuknn.stats`,
:mod:`gpuknn.distributed`, :mod:`gpuknn.studies`. After ``import gpuknn`` each is reachable as
``gpuknn.<name>``; those not needed by the top-level names are imported on first access.
"""

from __future__ import annotations

import importlib

from . import cluster, datasets, linalg, metrics, model_selection, neighbors
from .cluster import FuzzyCMeans, KMeans
from .datasets import load_fashion_mnist, load_keel
from .decomposition import PCA
from .errors import (
    ConvergenceWarning,
    CorruptDataError,
    DataNotFoundError,
    DeviceUnavailableError,
    EmptyNeighborhoodWarning,
    FewerClustersWarning,
    GpuknnError,
    InvalidInputError,
    InvalidInputTypeError,
    NotFittedError,
    ResamplingError,
    RunDirError,
    WorkingMemoryWarning,
)
from .model_selection import (
    KFold,
    KNeighborsClassifierCV,
    PCAKNeighborsClassifierCV,
    RepeatedStratifiedKFold,
    StratifiedKFold,
    train_test_split,
)
from .neighbors import (
    CDNNClassifier,
    ECDNNClassifier,
    KNeighborsClassifier,
    KNeighborsRegressor,
    KNeighborsTransformer,
    NearestCentroid,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
)
from .ops.distance import pairwise_distances, pairwise_distances_chunked
from .ops.kneighbors import kneighbors
from .ops.partial import PartialNeighbors, finalize_partial, kneighbors_partial, merge_partial
from .ops.votes import vote_counts, votes_for_many_k

__version__ = "0.1.0"

# Sub-packages reachable as ``gpuknn.<name>`` without importing them first (docs/usage.md
# writes ``import gpuknn; gpuknn.resampling.SMOTE``). Those not already imported above are
# imported on first access by ``__getattr__``, not here: ``plots`` pulls matplotlib and
# ``distributed`` dask, and ``import gpuknn`` must stay fast and must not import them (nor
# CuPy / torch).
_SUBPACKAGES = (
    "cluster",
    "datasets",
    "decomposition",
    "distributed",
    "linalg",
    "metrics",
    "model_selection",
    "neighbors",
    "plots",
    "resampling",
    "rules",
    "stats",
    "studies",
)


def __getattr__(name: str):
    """Import the sub-package ``name`` on first access (PEP 562)."""
    if name in _SUBPACKAGES:
        # import_module binds the sub-package as an attribute of this package, so this runs
        # once per name.
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBPACKAGES))


__all__ = [
    "CDNNClassifier",
    "ConvergenceWarning",
    "CorruptDataError",
    "DataNotFoundError",
    "DeviceUnavailableError",
    "ECDNNClassifier",
    "EmptyNeighborhoodWarning",
    "FewerClustersWarning",
    "FuzzyCMeans",
    "GpuknnError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "KFold",
    "KMeans",
    "KNeighborsClassifier",
    "KNeighborsClassifierCV",
    "KNeighborsRegressor",
    "KNeighborsTransformer",
    "NearestCentroid",
    "NearestNeighbors",
    "NotFittedError",
    "ResamplingError",
    "PCA",
    "PCAKNeighborsClassifierCV",
    "PartialNeighbors",
    "RadiusNeighborsClassifier",
    "RadiusNeighborsRegressor",
    "RepeatedStratifiedKFold",
    "StratifiedKFold",
    "RunDirError",
    "WorkingMemoryWarning",
    "cluster",
    "datasets",
    "finalize_partial",
    "kneighbors",
    "kneighbors_partial",
    "linalg",
    "load_fashion_mnist",
    "load_keel",
    "merge_partial",
    "metrics",
    "model_selection",
    "neighbors",
    "pairwise_distances",
    "pairwise_distances_chunked",
    "train_test_split",
    "vote_counts",
    "votes_for_many_k",
    "__version__",
]
