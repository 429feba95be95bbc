"""Reader of ARFF files (Weka's format) for :func:`gpuknn.datasets.load_table`.

The file is parsed by :func:`scipy.io.arff.loadarff`. Rules:

* Numeric attributes (``numeric``, ``real``, ``integer``) become float columns; nominal
  attributes ``{v1, v2, ...}`` become integer codes in their DECLARED order, recorded as
  the column's categories (see :func:`gpuknn.datasets.encode_nominal`).
* The target is the attribute named by ``target`` (a name, else a 0-based index; negative
  indices count from the end); default the last attribute, Weka's convention. A nominal
  target gives str labels in the declared order (``class_order``); a numeric one integer
  labels.
* ``?`` (missing) in any attribute makes a row incomplete: an error naming the data row and
  the attribute, or, with ``drop_missing=True``, the row is dropped and counted.
* ``string``, ``date`` and ``relational`` attributes and sparse data (``{i v, ...}`` rows)
  are not supported (:class:`~gpuknn.errors.CorruptDataError` saying which). SciPy's
  parser reads quoted nominal values only when the file's first data row quotes alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import CorruptDataError, InvalidInputError

__all__ = ["read_arff"]


def _target_index(where: str, target, names: list[str]) -> int:
    n = len(names)
    if target is None:
        return n - 1
    if isinstance(target, str) and target in names:
        return names.index(target)
    if isinstance(target, str) and target.lstrip("-").isdigit():
        target = int(target)
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool) and -n <= int(target) < n:
        return int(target) % n
    raise InvalidInputError(f"{where}: no target attribute {target!r}; the attributes are {names}")


def read_arff(path: Path, target, drop_missing: bool) -> dict:
    """An ARFF file as :class:`~gpuknn.datasets.Table` fields (module rules)."""
    from scipy.io import arff  # noqa: PLC0415 - only ARFF sources need it

    where = str(path)
    try:
        data, meta = arff.loadarff(str(path))
    except NotImplementedError as exc:  # string or relational attributes
        raise CorruptDataError(
            f"{where}: unsupported ARFF content ({exc}); numeric and nominal attributes only"
        ) from exc
    except (ValueError, arff.ParseArffError, UnicodeDecodeError, IndexError) as exc:
        raise CorruptDataError(
            f"{where}: cannot read as ARFF ({exc}); sparse rows and string/date attributes are not "
            "supported, and quoted nominal values are read only when the first data row quotes alike"
        ) from exc
    names = list(meta.names())
    if len(names) < 2:
        raise CorruptDataError(f"{where}: {len(names)} attribute(s); need at least one feature and a target")
    kinds = dict(zip(names, meta.types()))
    for name, kind in kinds.items():
        if kind not in ("numeric", "nominal"):
            raise CorruptDataError(
                f"{where}: attribute {name!r} is of type {kind}; numeric and nominal attributes only"
            )
    t = _target_index(where, target, names)
    columns, bads = [], []
    for name in names:
        col = data[name]
        if kinds[name] == "nominal":
            values = tuple(meta[name][1])
            text = np.char.decode(col, "utf-8") if col.dtype.kind == "S" else col.astype(str)
            lookup = {v: i for i, v in enumerate(values)}
            # "?" (missing) is the only value outside the declaration scipy lets through
            codes = np.array([lookup.get(v, -1) for v in text.tolist()], dtype=np.float64)
            columns.append((name, text, codes, values))
            bads.append(codes < 0)
        else:
            num = np.asarray(col, dtype=np.float64)
            columns.append((name, None, num, None))
            bads.append(~np.isfinite(num))
    bad = np.stack(bads, axis=1)
    missing = bad.any(axis=1)
    if missing.any() and not drop_missing:
        i = int(np.flatnonzero(missing)[0])
        j = int(np.flatnonzero(bad[i])[0])
        raise CorruptDataError(
            f"{where}: data row index {i}, attribute {names[j]!r} is missing ('?') "
            f"({int(missing.sum())} row(s) have missing values; pass drop_missing=True to drop them)"
        )
    keep = ~missing
    feats = [j for j in range(len(names)) if j != t]
    X = np.stack([columns[j][2][keep] for j in feats], axis=1)
    categories = {k: columns[j][3] for k, j in enumerate(feats) if columns[j][3] is not None}
    name_t, text_t, num_t, values_t = columns[t]
    out = {}
    if values_t is not None:
        y = text_t[keep].astype(str)
        out["class_order"] = [v for v in values_t if v in set(y.tolist())]
    else:
        y = num_t[keep]  # the caller makes labels of them (gpuknn.datasets._sources.as_labels)
    return out | {
        "X": np.ascontiguousarray(X),
        "y": y,
        "feature_names": [names[j] for j in feats],
        "target_name": name_t,
        "categories": categories,
        "name": str(meta.name),
        "n_dropped": int(missing.sum()),
    }
