"""Fashion-MNIST loader: the four IDX files into ``(X_train, y_train, X_test, y_test)``.

Pixel values are returned as they are stored, 0..255, only cast to the requested dtype:
they are NOT rescaled to [0, 1]. Correlation and cosine distances are scale-invariant, and
a rescaling would only multiply Euclidean distances by a constant, so kNN results do not
depend on it; callers who want [0, 1] divide by 255.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import array_api_compat
import numpy as np

from .._backend import from_numpy
from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError
from .download import OFFICIAL_URL, download_fashion_mnist
from .idx import read_idx

__all__ = [
    "FASHION_MNIST_CLASSES",
    "SYSTEM_DATA_DIR",
    "fashion_mnist_search_path",
    "find_fashion_mnist",
    "load_fashion_mnist",
]

#: Class names, index = label (Zalando's order).
FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
#: Where the Debian package ``dataset-fashion-mnist`` installs the files.
SYSTEM_DATA_DIR = Path("/usr/share/datasets/fashion-mnist")
_LOCAL_DIR = Path("data") / "fashion-mnist"
_IMAGE_MAGIC, _LABEL_MAGIC = 2051, 2049  # uint8 3-D, uint8 1-D
_SIDE = 28
# split -> (images stem, labels stem, official row count)
_SPLITS = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 10000),
}
_STEMS = tuple(stem for img, lab, _ in _SPLITS.values() for stem in (img, lab))
_DTYPES = {"float32": np.float32, "float64": np.float64, "uint8": np.uint8}


def fashion_mnist_search_path(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Directories searched, in order: ``data_dir``, ``$GPUKNN_DATA``, ``./data/fashion-mnist``,
    ``/usr/share/datasets/fashion-mnist``. Relative paths are taken from the current directory.
    """
    dirs = [data_dir, os.environ.get("GPUKNN_DATA") or None, _LOCAL_DIR, SYSTEM_DATA_DIR]
    out: list[Path] = []
    for d in dirs:
        if d is not None and Path(d) not in out:
            out.append(Path(d))
    return out


def _locate(directory: Path, stem: str) -> Path | None:
    """``stem`` (raw, preferred: no decompression) or ``stem.gz`` in ``directory``."""
    for name in (stem, stem + ".gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def find_fashion_mnist(data_dir: str | os.PathLike | None = None) -> Path:
    """First directory of :func:`fashion_mnist_search_path` holding all four IDX files.

    Each file may be gzipped (``*.gz``) or raw; a directory missing any of them is skipped.

    Raises
    ------
    DataNotFoundError
        No directory has all four files; the message lists every directory tried, what it
        lacks, and how to get the data.
    """
    tried = []
    for d in fashion_mnist_search_path(data_dir):
        missing = [s for s in _STEMS if _locate(d, s) is None]
        if not missing:
            return d
        what = "directory does not exist" if not d.is_dir() else "missing " + ", ".join(missing)
        tried.append(f"  {d.resolve() if not d.is_absolute() else d} ({what})")
    target = fashion_mnist_search_path(data_dir)[0]
    raise DataNotFoundError(
        "Fashion-MNIST not found: need train-images-idx3-ubyte, train-labels-idx1-ubyte, "
        "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each raw or .gz). Tried:\n"
        + "\n".join(tried)
        + "\nGet the data with one of:\n"
        f"  sudo apt-get install dataset-fashion-mnist   (installs to {SYSTEM_DATA_DIR})\n"
        "  export GPUKNN_DATA=/dir/with/the/idx/files\n"
        f"  load_fashion_mnist(download=True)   (about 30 MB from {OFFICIAL_URL} into {target},"
        " SHA-256 verified)"
    )


def _read_split(directory: Path, split: str, expected_n: int | None) -> tuple[np.ndarray, np.ndarray]:
    img_stem, lab_stem, _ = _SPLITS[split]
    img_path, lab_path = _locate(directory, img_stem), _locate(directory, lab_stem)
    if img_path is None or lab_path is None:  # removed between find and read
        raise DataNotFoundError(f"{directory}: {img_stem} or {lab_stem} disappeared while loading")
    images = read_idx(img_path, magic=_IMAGE_MAGIC)
    labels = read_idx(lab_path, magic=_LABEL_MAGIC)
    if images.shape[1:] != (_SIDE, _SIDE):
        raise CorruptDataError(f"{img_path}: images are {images.shape[1]}x{images.shape[2]}, expected {_SIDE}x{_SIDE}")
    if images.shape[0] != labels.shape[0]:
        raise CorruptDataError(f"{img_path} has {images.shape[0]} images but {lab_path} has {labels.shape[0]} labels")
    if expected_n is not None and images.shape[0] != expected_n:
        raise CorruptDataError(
            f"{img_path}: {images.shape[0]} images, the {split} split of Fashion-MNIST has {expected_n}"
        )
    bad = np.flatnonzero(labels > 9)  # uint8: never negative
    if bad.size:
        raise CorruptDataError(
            f"{lab_path}: {bad.size} label(s) outside 0..9, first at index {int(bad[0])} (value {int(labels[bad[0]])})"
        )
    return images.reshape(images.shape[0], _SIDE * _SIDE), labels.astype(np.int64)


def _subset_sizes(subset: Any) -> tuple[int | None, int | None]:
    if subset is None:
        return None, None
    sizes = (subset, subset) if isinstance(subset, (int, np.integer)) else tuple(subset)
    if len(sizes) != 2 or not all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0 for s in sizes
    ):
        raise InvalidInputError(f"subset must be a positive int or a pair (n_train, n_test) of them, got {subset!r}")
    return int(sizes[0]), int(sizes[1])


def load_fashion_mnist(
    *,
    data_dir: str | os.PathLike | None = None,
    dtype: str = "float32",
    download: bool = False,
    subset: int | tuple[int, int] | None = None,
    expected_sizes: tuple[int, int] | None = (60000, 10000),
    xp: Any = None,
) -> tuple[Any, Any, Any, Any]:
    """Load Fashion-MNIST from IDX files (see :func:`fashion_mnist_search_path`).

    Parameters
    ----------
    data_dir : str or path-like, optional
        Searched first; then ``$GPUKNN_DATA``, ``./data/fashion-mnist`` and
        ``/usr/share/datasets/fashion-mnist`` (Debian package ``dataset-fashion-mnist``).
    dtype : {"float32", "float64", "uint8"}, default "float32"
        dtype of the images. Values stay 0..255 (not rescaled; see the module docstring).
    download : bool, default False
        When no directory has the files, download them (SHA-256 verified) into the first
        directory of the search path, then load. Never happens unless asked.
    subset : int or (int, int), optional
        Keep only the first ``n`` rows of each split (an int applies to both; a pair is
        ``(n_train, n_test)``), capped at the split size. The files are in random class
        order, so the first rows are roughly balanced; use a stratified split for exact
        balance.
    expected_sizes : (int, int) or None, default (60000, 10000)
        Row counts the train and test files must have; ``None`` accepts any (small
        hand-made IDX directories in tests).
    xp : array namespace, optional
        Namespace of the returned arrays; ``None`` means NumPy.

    Returns
    -------
    X_train : array, shape (n_train, 784)
    y_train : array of int64, shape (n_train,), values 0..9 (see ``FASHION_MNIST_CLASSES``)
    X_test : array, shape (n_test, 784)
    y_test : array of int64, shape (n_test,)

    Raises
    ------
    DataNotFoundError
        The files are in none of the directories (message: paths tried, how to get them),
        or the download failed.
    CorruptDataError
        A file is damaged: bad gzip, bad magic number, truncated, wrong shape, image/label
        count mismatch, label outside 0..9. The message names the file.
    InvalidInputError
        Bad ``dtype`` or ``subset``.

    Notes
    -----
    Reads each file once with ``numpy.frombuffer``: the full set loads in well under a
    second on a laptop (decompression dominates). Peak host memory is about the float
    images (188 MB in float32) plus the 55 MB of raw bytes.

    Examples
    --------
    >>> X, y, Xt, yt = load_fashion_mnist()  # doctest: +SKIP
    >>> X.shape, X.dtype, int(X.max()), yt.shape  # doctest: +SKIP
    ((60000, 784), dtype('float32'), 255, (10000,))
    """
    if dtype not in _DTYPES:
        raise InvalidInputError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
    n_train, n_test = _subset_sizes(subset)
    try:
        directory = find_fashion_mnist(data_dir)
    except DataNotFoundError:
        if not download:
            raise
        directory = download_fashion_mnist(fashion_mnist_search_path(data_dir)[0])
    if xp is None:
        xp = array_api_compat.numpy
    exp_train, exp_test = (None, None) if expected_sizes is None else expected_sizes
    out = []
    for split, n_keep, n_exp in (("train", n_train, exp_train), ("test", n_test, exp_test)):
        images, labels = _read_split(directory, split, n_exp)
        if n_keep is not None:
            images, labels = images[:n_keep], labels[:n_keep]
        # astype copies, so the result never aliases the read-only file buffer.
        out += [from_numpy(images.astype(_DTYPES[dtype]), xp), from_numpy(labels, xp)]
    return tuple(out)  # type: ignore[return-value]
