"""Reader of delimited text files (CSV, TSV, semicolon- or space-separated) for classification.

Rules (all documented choices):

* **Dialect.** The delimiter and quote character are detected with :class:`csv.Sniffer` on
  the first 64 KiB, among ``,`` ``;`` tab ``|`` and space. The sniffed delimiter is kept
  when it splits the first 100 records of the sample into a constant number (at least 2) of
  fields; otherwise the first of ``,`` tab ``;`` ``|`` space that does is used. Quoted
  fields (with delimiters or doubled quotes inside) follow :mod:`csv`; whitespace around
  fields is stripped; blank lines are skipped; a trailing delimiter on every line (an empty
  last column everywhere) is ignored. Space-delimited files split on runs of spaces.
* **Header.** ``header=None`` decides from the first row against the next 200 rows. Each
  field is of kind *missing*, *int*, *float* or *text*. The first row is a header when, in
  some column, it holds text over numbers only; or when the numeric columns whose first
  field differs in kind from a uniform kind below (``1990`` over floats, a number over text
  labels) outnumber those where it matches. So ``1990,1991,label`` over ``0.5,0.7,cat``
  is a header, and ``3,2.5,x`` over float rows is data. A header of integers over integer
  data cannot be told from data: pass ``header=True``.
* **Target.** ``target`` is a column name, else (for a string of digits such as ``"2"``
  that names no column) a 0-based index; negative indices count from the end; default the
  last column. Target values may be text. Labels that all read as integers become an int64
  array, otherwise the strings as written.
* **Missing values.** ``""``, ``?``, ``NA``, ``N/A``, ``nan``, ``null``, ``<null>`` (any
  case) in any column, and ``inf``/``-inf`` in a feature column, make a row incomplete: an
  error naming the line and column, or, with ``drop_missing=True``, the row is dropped and
  counted in ``n_dropped``.
* Every feature column must be numeric; anything else is a :class:`CorruptDataError`
  naming the file, line and column.
"""

from __future__ import annotations

import csv
import io
import math
import os
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError

__all__ = ["MISSING_VALUES", "DelimitedData", "cast_features", "read_delimited"]

#: Field values (compared case-insensitively, whitespace stripped) read as missing.
MISSING_VALUES = frozenset({"", "?", "na", "n/a", "nan", "null", "<null>"})
_CANDIDATES = (",", "\t", ";", "|", " ")
_SAMPLE_BYTES = 65536


@dataclass(frozen=True, eq=False)
class DelimitedData:
    """A delimited text file read by :func:`read_delimited`.

    Attributes
    ----------
    X : numpy.ndarray, shape (n_samples, n_features)
        Feature columns, in file order, in the requested dtype.
    y : numpy.ndarray, shape (n_samples,)
        Target column: int64 when every label reads as an integer, else str.
    feature_names : list of str or None
        Names of the feature columns (None without a header).
    target_name : str or None
        Name of the target column (None without a header).
    delimiter : str
        The delimiter used.
    has_header : bool
        Whether the first row was read as column names.
    n_dropped : int
        Rows dropped for missing or non-finite values (``drop_missing=True``).
    path : str
        Absolute path of the file read.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str] | None
    target_name: str | None
    delimiter: str
    has_header: bool
    n_dropped: int
    path: str


def _kind(s: str) -> str:
    if s.lower() in MISSING_VALUES:
        return "missing"
    try:
        int(s)
        return "int"
    except ValueError:
        pass
    try:
        float(s)
        return "float"
    except ValueError:
        return "text"


def detect_header(first: list[str], rest: list[list[str]]) -> bool:
    """Whether ``first`` is a row of column names above the rows ``rest`` (module rules)."""
    differ = same = 0
    for j, field in enumerate(first):
        f = _kind(field)
        below = {_kind(r[j]) for r in rest if j < len(r)} - {"missing"}
        if f == "missing" or not below:
            continue
        if f == "text":
            if "text" not in below:
                return True  # a name over numbers
            continue  # text over text labels: no evidence
        if below == {"text"} or (f == "int" and below == {"float"}):
            differ += 1
        else:
            same += 1
    if not rest:
        return any(_kind(f) == "text" for f in first)
    return differ > same


def _records(text: str, delimiter: str, quotechar: str):
    """``(line number, stripped fields)`` of each non-blank record."""
    if delimiter == " ":
        lines = (ln.strip() for ln in text.splitlines())
    else:
        lines = io.StringIO(text)
    reader = csv.reader(
        lines, delimiter=delimiter, quotechar=quotechar, doublequote=True, skipinitialspace=True, strict=False
    )
    try:
        for rec in reader:
            if rec:
                yield reader.line_num, [f.strip() for f in rec]
    except csv.Error as exc:
        raise CorruptDataError(f"line {reader.line_num}: {exc}") from exc


def _dialect(path: Path, text: str) -> tuple[str, str]:
    sample = text[:_SAMPLE_BYTES]
    if len(text) > _SAMPLE_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters="".join(_CANDIDATES))
        first, quotechar = [sniffed.delimiter], sniffed.quotechar or '"'
    except csv.Error:
        first, quotechar = [], '"'
    for delim in dict.fromkeys(first + list(_CANDIDATES)):
        counts = set()
        try:
            for i, (_, rec) in enumerate(_records(sample, delim, quotechar)):
                counts.add(len(rec))
                if i >= 99 or len(counts) > 1:
                    break
        except CorruptDataError:
            continue
        if len(counts) == 1 and counts.pop() >= 2:
            return delim, quotechar
    return (first or [","])[0], quotechar


def _target_index(path: Path, target, names: list[str] | None, n_cols: int) -> int:
    shown = f"the columns are {names}" if names else f"the file has no header and {n_cols} columns"
    if target is None:
        return n_cols - 1
    if isinstance(target, str) and names is not None and target in names:
        if names.count(target) > 1:
            raise InvalidInputError(f"{path}: target {target!r} names {names.count(target)} columns")
        return names.index(target)
    if isinstance(target, str) and target.lstrip("-").isdigit():
        target = int(target)
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if -n_cols <= int(target) < n_cols:
            return int(target) % n_cols
        raise InvalidInputError(f"{path}: target index {int(target)} is out of range; {shown}")
    raise InvalidInputError(f"{path}: no target column {target!r}; {shown}")


def cast_features(X: np.ndarray, dtype: str, where: str, names: list[str] | None = None) -> np.ndarray:
    """Finite float64 features ``X`` in ``dtype``; values float32 cannot hold are an error.

    The cast alone turns them into infinity (with a RuntimeWarning), and the data were later
    refused as "containing NaN or infinity" -- true of the cast, not of the file.

    Raises
    ------
    InvalidInputError
        ``dtype`` is float32 and some ``|x|`` exceeds its largest value (about 3.4e38); the
        message names the first such value, its row and column, and says to read in float64.
    """
    if np.dtype(dtype) == np.float32 and X.size:
        big = np.abs(X) > np.finfo(np.float32).max
        if big.any():
            i, j = (int(v) for v in np.argwhere(big)[0])
            col = f"column {names[j]!r}" if names is not None and j < len(names) else f"feature column index {j}"
            raise InvalidInputError(
                f"{where}: {int(big.sum())} value(s) too large for float32 (|x| > "
                f"{float(np.finfo(np.float32).max):.4g}), e.g. {float(X[i, j])!r} in data row index {i}, "
                f"{col}; they would become infinity: read the data as float64 (dtype='float64'; "
                "gpuknn sweep: --dtype float64), or rescale them"
            )
    return X.astype(dtype, copy=False)


def labels_from_strings(values: list[str]) -> np.ndarray:
    """int64 labels when every value reads as an integer (``"3"``, ``"3.0"``), else str."""
    try:
        nums = [float(v) for v in values]
    except ValueError:
        return np.array(values, dtype=str)
    # Integers beyond 2**53 are no exact int64 labels (1e300 became int64's minimum with a
    # RuntimeWarning): they stay strings, as other non-integer labels do.
    if all(math.isfinite(v) and v.is_integer() and abs(v) < 2**53 for v in nums):
        return np.array(nums, dtype=np.float64).astype(np.int64)
    return np.array(values, dtype=str)


def read_delimited(
    path: str | os.PathLike,
    *,
    target: str | int | None = None,
    header: bool | None = None,
    drop_missing: bool = False,
    dtype: str = "float64",
) -> DelimitedData:
    """Read a CSV/TSV/text file into numeric features and a target column.

    Parameters
    ----------
    path : str or path-like
        The file (UTF-8, a BOM is ignored).
    target : str or int, optional
        Target column: a name from the header, else a 0-based index (``-1`` = last, a
        string of digits counts as an index when it names no column). Default: last column.
    header : bool, optional
        Whether the first row holds column names; ``None`` detects it (module docstring).
    drop_missing : bool, default False
        Drop rows with missing or non-finite values instead of raising.
    dtype : {"float64", "float32"}, default "float64"
        dtype of ``X``.

    Returns
    -------
    DelimitedData

    Raises
    ------
    DataNotFoundError
        ``path`` does not exist.
    CorruptDataError
        Unreadable text, rows of different lengths, a non-numeric feature value, a missing
        value without ``drop_missing``, or no data rows; the message names file, line and
        column.
    InvalidInputError
        Unknown ``target`` (the message lists the columns) or bad ``dtype``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text('1990;1991;kind\\n0.5;1.5;"a;b"\\n2.5;3.5;c\\n')
    >>> d = read_delimited(p)
    >>> d.delimiter, d.feature_names, d.target_name, d.y.tolist()
    (';', ['1990', '1991'], 'kind', ['a;b', 'c'])
    """
    if dtype not in ("float64", "float32"):
        raise InvalidInputError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    path = Path(path).absolute()
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptDataError(f"{path}: cannot read as UTF-8 text ({exc})") from exc
    delimiter, quotechar = _dialect(path, text)
    try:
        records = list(_records(text, delimiter, quotechar))
    except CorruptDataError as exc:
        raise CorruptDataError(f"{path}, {exc}") from exc
    if not records:
        raise CorruptDataError(f"{path}: the file has no data")
    if all(rec[-1] == "" and len(rec) > 1 for _, rec in records):  # trailing delimiters
        records = [(ln, rec[:-1]) for ln, rec in records]
    n_cols = len(records[0][1])
    if header is None:
        header = detect_header(records[0][1], [r for _, r in records[1:201]])
    names = [n or f"column{j}" for j, n in enumerate(records[0][1])] if header else None
    rows = records[1:] if header else records
    for ln, rec in rows:
        if len(rec) != n_cols:
            raise CorruptDataError(
                f"{path}, line {ln}: {len(rec)} field(s), expected {n_cols} (delimiter {delimiter!r})"
            )
    if n_cols < 2:
        raise CorruptDataError(f"{path}: one column; need at least one feature and a target column")
    if not rows:
        raise CorruptDataError(f"{path}: no data rows")
    t = _target_index(path, target, names, n_cols)
    feats = [j for j in range(n_cols) if j != t]

    def where(ln: int, j: int) -> str:
        col = f"column {names[j]!r} (index {j})" if names else f"column index {j}"
        return f"{path}, line {ln}, {col}"

    values, labels, first_missing, n_dropped = array("d"), [], None, 0
    for ln, rec in rows:
        bad = None
        if rec[t].lower() in MISSING_VALUES:
            bad = (t, rec[t])
        try:
            nums = [float(rec[j]) for j in feats]
        except ValueError:
            nums = []
            for j in feats:
                if rec[j].lower() in MISSING_VALUES:
                    bad, v = bad or (j, rec[j]), math.nan
                else:
                    try:
                        v = float(rec[j])
                    except ValueError:
                        raise CorruptDataError(
                            f"{where(ln, j)}: non-numeric value {rec[j]!r} (feature columns must "
                            "be numeric; the target column is chosen with target=)"
                        ) from None
                nums.append(v)
        if bad is None and not all(map(math.isfinite, nums)):
            j = next(j for j, v in zip(feats, nums) if not math.isfinite(v))
            bad = (j, rec[j])
        if bad is not None:
            n_dropped += 1
            first_missing = first_missing or (ln, *bad)
            continue
        values.extend(nums)
        labels.append(rec[t])
    if n_dropped and not drop_missing:
        ln, j, v = first_missing
        raise CorruptDataError(
            f"{where(ln, j)}: missing or non-finite value {v!r} ({n_dropped} row(s) have missing "
            "or non-finite values; pass drop_missing=True to drop them)"
        )
    if not labels:
        raise CorruptDataError(f"{path}: no data rows left after dropping {n_dropped} incomplete row(s)")
    X = np.frombuffer(values, dtype=np.float64).reshape(len(labels), len(feats))
    X = cast_features(X, dtype, str(path), [names[j] for j in feats] if names else None)
    return DelimitedData(
        X=X,
        y=labels_from_strings(labels),
        feature_names=[names[j] for j in feats] if names else None,
        target_name=names[t] if names else None,
        delimiter=delimiter,
        has_header=bool(header),
        n_dropped=n_dropped,
        path=str(path),
    )
