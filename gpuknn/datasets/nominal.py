"""Nominal (categorical) columns for each consumer: :func:`encode_nominal`.

The loaders give every nominal column as integer codes ``0..k-1`` in a float ``X`` and
record its categories (``Table.categories``/``Dataset.categories``: column index -> the
category of each code). One function turns that into what a consumer takes:

* ``"onehot"``: float indicator columns named ``column=value`` in place of each nominal
  column (numeric columns kept in place) -- for kNN, PCA, ``gpuknn sweep``;
* ``"codes"``: ``X`` as given, with ``categorical_features`` listing the nominal columns --
  for SMOTENC (``categorical_features=``) and SMOTEN;
* ``"strings"``: a host NumPy object array with each nominal column's values as written
  (numeric columns as Python floats) -- for rule learning.

Because the categories come with the data (a KEEL/ARFF declaration, or every value of the
file), a train and a test part encode alike without fitting anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, float_dtype, to_numpy
from ..errors import InvalidInputError

__all__ = ["ENCODINGS", "NominalEncoding", "encode_nominal"]

#: The values of ``encoding``.
ENCODINGS = ("onehot", "codes", "strings")


@dataclass(frozen=True, eq=False)
class NominalEncoding:
    """The result of :func:`encode_nominal`.

    Attributes
    ----------
    X : array, shape (n_samples, n_columns)
        The encoded data: same namespace and device as the input for ``"onehot"`` and
        ``"codes"``, a host NumPy object array for ``"strings"``.
    feature_names : list of str
        One name per column of ``X``; indicator columns are named ``column=value``.
    categorical_features : list of int
        Columns of ``X`` that hold categories (codes or strings); empty for ``"onehot"``.
    categories : dict of int to tuple of str
        For each column of ``categorical_features``, the category of each code.
    columns : list of int
        For each column of ``X``, the input column it comes from (several for one nominal
        column in ``"onehot"``).
    """

    X: Any
    feature_names: list[str]
    categorical_features: list[int]
    categories: dict[int, tuple[str, ...]]
    columns: list[int]


def _check_categories(categories: Any, n_features: int) -> dict[int, tuple[str, ...]]:
    if not isinstance(categories, Mapping):
        raise InvalidInputError(
            f"categories must be a mapping of column index to its category values, got {type(categories).__name__}"
        )
    out = {}
    for j, values in categories.items():
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= int(j) < n_features:
            raise InvalidInputError(f"categories: key {j!r} is no column index of X in [0, {n_features - 1}]")
        if isinstance(values, str) or not isinstance(values, Sequence) or len(values) == 0:
            raise InvalidInputError(f"categories[{j}] must be a non-empty sequence of values, got {values!r}")
        values = tuple(str(v) for v in values)
        if len(set(values)) != len(values):
            raise InvalidInputError(f"categories[{j}] repeats a value: {list(values)}")
        out[int(j)] = values
    return dict(sorted(out.items()))


def encode_nominal(
    X: Any,
    categories: Mapping[int, Sequence[str]],
    *,
    encoding: str = "onehot",
    feature_names: Sequence[str] | None = None,
) -> NominalEncoding:
    """Encode the nominal columns of ``X`` (given as codes) for a consumer.

    Parameters
    ----------
    X : array, shape (n_samples, n_features)
        Data as the loaders return it: nominal columns hold codes ``0..k-1``. Any
        supported namespace (NumPy, CuPy, torch, array_api_strict).
    categories : mapping of int to sequence of str
        Column index -> the category of each code (``Table.categories``,
        ``Dataset.categories``); columns not in it are numeric.
    encoding : {"onehot", "codes", "strings"}, default "onehot"
        See the module docstring.
    feature_names : sequence of str, optional
        Names of the columns of ``X``; default ``x0, x1, ...``.

    Returns
    -------
    NominalEncoding
        ``X``, ``feature_names``, ``categorical_features``, ``categories``, ``columns``.

    Raises
    ------
    InvalidInputError
        ``X`` is not a 2-D numeric array, a code is not an integer in ``[0, k)``, a key of
        ``categories`` is no column index, ``feature_names`` has the wrong length, or an
        unknown ``encoding``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.5], [2.0, 0.5]])
    >>> enc = encode_nominal(X, {0: ("red", "green", "blue")}, feature_names=["colour", "size"])
    >>> enc.feature_names
    ['colour=red', 'colour=green', 'colour=blue', 'size']
    >>> enc.X.tolist()
    [[1.0, 0.0, 0.0, 1.5], [0.0, 0.0, 1.0, 0.5]]
    >>> encode_nominal(X, {0: ("red", "green", "blue")}, encoding="codes").categorical_features
    [0]
    >>> encode_nominal(X, {0: ("red", "green", "blue")}, encoding="strings").X.tolist()
    [['red', 1.5], ['blue', 0.5]]
    """
    if encoding not in ENCODINGS:
        raise InvalidInputError(f"encoding must be one of {list(ENCODINGS)}, got {encoding!r}")
    xp = array_namespace(X)
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    if X.ndim != 2 or not xp.isdtype(X.dtype, ("real floating", "integral")):
        raise InvalidInputError(f"X must be a 2-D numeric array, got dtype {X.dtype} and shape {tuple(X.shape)}")
    n_features = X.shape[1]
    cats = _check_categories(categories, n_features)
    names = [f"x{j}" for j in range(n_features)] if feature_names is None else [str(n) for n in feature_names]
    if len(names) != n_features:
        raise InvalidInputError(f"feature_names has {len(names)} names for the {n_features} columns of X")
    for j, values in cats.items():
        col = X[:, j]
        k = len(values)
        bad = (col < 0) | (col > k - 1)
        if xp.isdtype(col.dtype, "real floating"):
            bad = bad | (col != xp.round(col))  # fractions, and NaN (never equal to itself)
        if bool(xp.any(bad)):
            i = int(to_numpy(xp.nonzero(bad)[0])[0])
            raise InvalidInputError(
                f"X[{i}, {j}] = {float(X[i, j])!r} is no code of column {names[j]!r}: codes are the "
                f"integers 0..{k - 1} of its categories {list(values)}"
            )
    if encoding == "codes":
        return NominalEncoding(X, names, list(cats), cats, list(range(n_features)))
    if encoding == "strings":
        host = to_numpy(X)
        out = np.empty(host.shape, dtype=object)
        for j in range(n_features):
            if j in cats:
                out[:, j] = np.asarray(cats[j], dtype=object)[host[:, j].astype(np.int64)]
            else:
                out[:, j] = host[:, j].astype(np.float64).tolist()
        return NominalEncoding(out, names, list(cats), cats, list(range(n_features)))
    dtype = float_dtype(X, xp)
    dev = device_of(X)
    parts, out_names, columns = [], [], []
    for j in range(n_features):
        col = xp.astype(X[:, j : j + 1], dtype)
        if j in cats:
            levels = xp.arange(len(cats[j]), dtype=dtype, device=dev)
            parts.append(xp.astype(col == xp.reshape(levels, (1, -1)), dtype))
            out_names += [f"{names[j]}={v}" for v in cats[j]]
            columns += [j] * len(cats[j])
        else:
            parts.append(col)
            out_names.append(names[j])
            columns.append(j)
    Xo = xp.concat(parts, axis=1) if parts else xp.astype(X, dtype)
    return NominalEncoding(Xo, out_names, [], {}, columns)
