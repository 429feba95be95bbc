"""Items: attribute-value tests that rules are conjunctions of.

:class:`ItemEncoder` turns a table (numeric and nominal columns) into a boolean item matrix
``B`` of shape ``(n_rows, n_items)``: one item per (nominal attribute, value) and, for a
numeric attribute, one item per equal-frequency bin. Every later step (coverage, Apriori,
ROCCER) is matrix work on ``B``.
"""

from __future__ import annotations

from typing import Any

import array_api_compat
import numpy as np
from sklearn.base import TransformerMixin

from .._backend import array_namespace, check_namespace, device_of, from_numpy, namespace_name, to_numpy
from ..base import BaseEstimator, check_is_fitted
from ..errors import InvalidInputError, InvalidInputTypeError

__all__ = ["ItemEncoder"]

_RANGE, _EQUAL, _STRING = 0, 1, 2


def _fmt(v: Any) -> str:
    """A threshold or value as it appears in an item's name (4 significant digits for floats)."""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return str(v)


def _is_device_array(X: Any) -> bool:
    """An array of some namespace other than host NumPy (torch, CuPy, array_api_strict)."""
    return array_api_compat.is_array_api_obj(X) and not isinstance(X, np.ndarray)


def _host_columns(X: Any) -> tuple[list[np.ndarray], list[str]]:
    """Columns of host data (DataFrame, NumPy array, list of rows) and their names."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # pandas DataFrame: keep each column's dtype
        cols = []
        for j in range(X.shape[1]):
            s = X.iloc[:, j]
            kind = getattr(s.dtype, "kind", "O")
            if kind in "iuf" and isinstance(s.dtype, np.dtype):
                cols.append(s.to_numpy())
            elif kind in "iuf":  # nullable pandas dtypes: missing values become NaN
                cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
            else:
                cols.append(s.to_numpy(dtype=object))
        return cols, [str(c) for c in X.columns]
    if hasattr(X, "tocsr"):
        raise InvalidInputError("X is a sparse matrix; sparse input is not supported: pass a dense table (X.toarray())")
    try:
        a = np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"X cannot be read as a table: {exc}") from None
    check_2d(a)
    if a.dtype.kind == "c":
        raise InvalidInputError(f"Complex data not supported: X has dtype {a.dtype}")
    return [_numeric_if_numbers(a[:, j]) for j in range(a.shape[1])], [f"x{j}" for j in range(a.shape[1])]


def check_2d(X: Any) -> None:
    """scikit-learn's messages for a table that is not 2-D or is empty."""
    shape = tuple(X.shape)
    if len(shape) != 2:
        hint = ""
        if len(shape) == 1:
            hint = (
                "; Reshape your data either using X.reshape(-1, 1) if it has a single feature "
                "or X.reshape(1, -1) if it is a single sample"
            )
        raise InvalidInputError(f"X must be 2-D, got shape {shape}{hint}")
    for size, what in ((shape[0], "sample(s)"), (shape[1], "feature(s)")):
        if size == 0:
            raise InvalidInputError(f"X is empty: X has 0 {what} (shape={shape}) while a minimum of 1 is required.")


def _numeric_if_numbers(c: np.ndarray) -> np.ndarray:
    """An object column of numbers (and missing values) as float64; others as they are.

    Raises :class:`InvalidInputTypeError` for a value that is neither a string nor a number
    (a dict, a list): no item could name it."""
    if c.dtype.kind != "O":
        return c
    numbers = True
    for v in c:
        if isinstance(v, str):
            numbers = False
        elif not (_is_missing(v) or isinstance(v, (int, float, np.number, np.bool_))):
            raise InvalidInputTypeError(
                f"X holds a value of type {type(v).__name__} ({v!r}); each argument must be a string or a number"
            )
    return c.astype(np.float64) if numbers else c


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and v != v)


class ItemEncoder(TransformerMixin, BaseEstimator):
    """Encode a table as a boolean item matrix (one column per attribute-value test).

    Nominal attributes give one item per value seen in ``fit`` (``colour = red``); numeric
    attributes are cut into ``n_bins`` equal-frequency bins, one item per bin
    (``a <= 1.5``, ``1.5 < a <= 3``, ``a > 3``). Every row sets exactly one item of each
    attribute, except for a missing value (NaN, None) or a nominal value unseen in ``fit``,
    which set none.

    Parameters
    ----------
    n_bins : int, default=4
        Equal-frequency bins per numeric attribute (fewer where the data has ties: repeated
        thresholds are merged).
    nominal : list of int or str, optional
        Columns (positions, or names of a DataFrame's columns) to treat as nominal. Default:
        inferred: columns of strings, objects, categories or bools are nominal, and so are
        numeric columns with at most two distinct values (flags); other numeric columns are
        binned.

    Attributes
    ----------
    items_ : list of str
        Item names, in column order of the output.
    item_attribute_ : list of int
        The input column of each item.
    n_features_in_ : int
        Number of input columns.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame given to ``fit``.

    Notes
    -----
    ``fit`` sorts each numeric column once (O(n log n) per column, on the input's device) and
    reads the thresholds back (a few numbers per column); ``transform`` is one gather and two
    comparisons, O(n * n_items), on the input's device. Host tables (NumPy, pandas, lists) give
    a NumPy result; an array of another namespace (torch, CuPy) gives one of that namespace on
    its device (all its columns are numeric; ``nominal`` columns are compared by value).

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.rules import ItemEncoder
    >>> X = np.array([[1.0, 0], [2.0, 1], [3.0, 1], [4.0, 0]])
    >>> enc = ItemEncoder(n_bins=2).fit(X)
    >>> list(enc.get_feature_names_out())
    ['x0 <= 2', 'x0 > 2', 'x1 = 0', 'x1 = 1']
    >>> enc.transform(X).astype(int)
    array([[1, 0, 1, 0],
           [1, 0, 0, 1],
           [0, 1, 0, 1],
           [0, 1, 1, 0]])
    """

    def __init__(self, n_bins: int = 4, nominal: Any = None) -> None:
        self.n_bins = n_bins
        self.nominal = nominal

    # ------------------------------------------------------------------ helpers
    def _bookkeeping(self, X: Any, reset: bool) -> None:
        from sklearn.utils.validation import validate_data as _sk_validate  # noqa: PLC0415

        try:
            _sk_validate(self, X, skip_check_array=True, reset=reset)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None

    def _nominal_set(self, names: list[str], n_cols: int) -> set[int] | None:
        if self.nominal is None:
            return None
        out = set()
        for c in self.nominal:
            if isinstance(c, str):
                if c not in names:
                    raise InvalidInputError(f"nominal column {c!r} is not a column of X (columns: {names})")
                out.add(names.index(c))
            else:
                j = int(c)
                if not -n_cols <= j < n_cols:
                    raise InvalidInputError(f"nominal column {c!r} is out of range for X with {n_cols} columns")
                out.add(j % n_cols)
        return out

    def _thresholds(self, v: np.ndarray) -> np.ndarray:
        """Equal-frequency cut points of the sorted finite values ``v`` (host, a few numbers)."""
        n = v.shape[0]
        if n == 0:
            return np.empty(0)
        pos = (np.arange(1, self.n_bins) * n) // self.n_bins
        t = np.unique(v[np.clip(pos - 1, 0, n - 1)])
        return t[t < v[-1]]  # a cut at the maximum would leave the top bin empty

    # ------------------------------------------------------------------ fit / transform
    def fit(self, X: Any, y: Any = None) -> ItemEncoder:
        """Learn the items of each column.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        if not isinstance(self.n_bins, (int, np.integer)) or isinstance(self.n_bins, bool) or self.n_bins < 2:
            raise InvalidInputError(f"n_bins must be an integer >= 2, got {self.n_bins!r}")
        device_input = _is_device_array(X)
        if device_input:
            xp = array_namespace(X)
            check_2d(X)
            names = [f"x{j}" for j in range(X.shape[1])]
            n_rows, n_cols = int(X.shape[0]), int(X.shape[1])
        else:
            X = list(X) if isinstance(X, (tuple,)) else X
            cols, names = _host_columns(X)
            n_rows, n_cols = (len(cols[0]) if cols else 0), len(cols)
        check_2d(np.empty((n_rows, n_cols), dtype=bool))
        self._bookkeeping(X if hasattr(X, "columns") or device_input else np.asarray(X, dtype=object), reset=True)
        given = self._nominal_set(names, n_cols)
        items, attr, kind, lo, hi, val = [], [], [], [], [], []

        def add(name, j, k, a=-np.inf, b=np.inf, v=None):
            items.append(name)
            attr.append(j)
            kind.append(k)
            lo.append(a)
            hi.append(b)
            val.append(v)

        if device_input:
            if not (xp.isdtype(X.dtype, "numeric") or xp.isdtype(X.dtype, "bool")):
                raise InvalidInputError(f"X must be numeric, got dtype {X.dtype}")
            # One sort of every column on the device; only the cut points come to the host.
            S = to_numpy(xp.sort(xp.astype(X, xp.float64), axis=0))
            host_cols = [S[:, j] for j in range(n_cols)]
        else:
            host_cols = cols
        for j in range(n_cols):
            c = host_cols[j]
            numeric = c.dtype.kind in "iuf"
            if numeric:
                if np.isinf(c).any():
                    raise InvalidInputError(f"X column {names[j]!r} contains infinity")
                c = np.sort(c[~np.isnan(c)])
                distinct = np.unique(c)
                is_nominal = (j in given) if given is not None else distinct.shape[0] <= 2
            else:
                is_nominal = True
            if is_nominal:
                if numeric:
                    for v in distinct:
                        v = v.item()
                        add(f"{names[j]} = {_fmt(int(v) if float(v).is_integer() else v)}", j, _EQUAL, v=v)
                else:
                    present = [v for v in c if not _is_missing(v)]
                    try:
                        values = sorted(set(present))
                    except TypeError:  # mixed types: a stable order all the same
                        values = sorted(set(present), key=lambda v: (type(v).__name__, str(v)))
                    for v in values:
                        add(f"{names[j]} = {_fmt(v)}", j, _STRING, v=v)
                continue
            t = self._thresholds(c)
            if t.shape[0] == 0:
                add(f"{names[j]} = {_fmt(c[0]) if c.shape[0] else 'any'}", j, _RANGE)
                continue
            edges = [-np.inf, *t.tolist(), np.inf]
            for a, b in zip(edges[:-1], edges[1:]):
                if a == -np.inf:
                    nm = f"{names[j]} <= {_fmt(b)}"
                elif b == np.inf:
                    nm = f"{names[j]} > {_fmt(a)}"
                else:
                    nm = f"{_fmt(a)} < {names[j]} <= {_fmt(b)}"
                add(nm, j, _RANGE, a, b)
        self.items_ = items
        self.item_attribute_ = [int(a) for a in attr]
        # The item tables, host NumPy in a dict (scikit-learn's array-API checks want every
        # fitted array attribute in X's namespace; these are bookkeeping, not results).
        self._spec = {
            "attr": np.asarray(attr, dtype=np.int64),
            "kind": np.asarray(kind, dtype=np.int64),
            "lo": np.asarray(lo, dtype=np.float64),
            "hi": np.asarray(hi, dtype=np.float64),
            "values": val,
        }
        self._column_names = names
        # An array of the fitted namespace on the fitted device (None for host tables): what
        # transform checks its input against.
        self._anchor = from_numpy(np.zeros(1), xp, device=device_of(X)) if device_input else None
        return self

    def transform(self, X: Any) -> Any:
        """The boolean item matrix of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)

        Returns
        -------
        B : bool array, shape (n_samples, n_items)
            In X's namespace and on its device (NumPy for host tables).
        """
        check_is_fitted(self, "items_")
        device_input = _is_device_array(X)
        if device_input:
            xp = array_namespace(X)
            dev = device_of(X)
            check_2d(X)
            if self._anchor is None:
                raise InvalidInputError(
                    f"X is an array of {namespace_name(xp)}, but this ItemEncoder was fitted on a host table "
                    "(NumPy, pandas); give transform the same kind of input as fit"
                )
            check_namespace(X, array_namespace(self._anchor), name="X", device=device_of(self._anchor))
            if (self._spec["kind"] == _STRING).any():
                raise InvalidInputError(
                    f"X is a {type(X).__name__}, but this ItemEncoder was fitted on string columns; "
                    "give it the same kind of table as in fit"
                )
            self._bookkeeping(X, reset=False)
            return self._numeric_items(xp.astype(X, xp.float64), xp, dev)
        if self._anchor is not None:
            check_namespace(X, array_namespace(self._anchor), name="X", device=device_of(self._anchor))
        cols, _ = _host_columns(X)
        self._bookkeeping(X if hasattr(X, "columns") else np.asarray(X, dtype=object), reset=False)
        n = len(cols[0])
        B = np.zeros((n, len(self.items_)), dtype=bool)
        numeric_items = np.flatnonzero(self._spec["kind"] != _STRING)
        if numeric_items.size:
            used = sorted(set(self._spec["attr"][numeric_items].tolist()))
            M = np.empty((n, max(used) + 1))
            for j in used:
                c = cols[j]
                if c.dtype.kind not in "iufb":
                    try:
                        c = np.asarray([np.nan if _is_missing(v) else float(v) for v in c], dtype=np.float64)
                    except (TypeError, ValueError):
                        raise InvalidInputError(
                            f"X column {self._column_names[j]!r} was numeric in fit but holds non-numbers"
                        ) from None
                M[:, j] = c
            B[:, numeric_items] = self._numeric_items(M, array_api_compat.numpy, None, numeric_items)
        for i in np.flatnonzero(self._spec["kind"] == _STRING):
            c = cols[self._spec["attr"][i]]
            B[:, i] = np.asarray([v == self._spec["values"][i] if not _is_missing(v) else False for v in c], dtype=bool)
        return B

    def _numeric_items(self, M: Any, xp: Any, dev: Any, which: np.ndarray | None = None) -> Any:
        """Range and equality items of float matrix ``M``: one gather, two comparisons."""
        which = np.arange(len(self.items_)) if which is None else which
        cols = from_numpy(self._spec["attr"][which], xp, device=dev)
        lo = from_numpy(self._spec["lo"][which], xp, device=dev)
        hi = from_numpy(self._spec["hi"][which], xp, device=dev)
        eq = from_numpy(self._spec["kind"][which] == _EQUAL, xp, device=dev)
        v = from_numpy(
            np.asarray(
                [np.nan if self._spec["values"][i] is None else self._spec["values"][i] for i in which],
                dtype=np.float64,
            ),
            xp,
            device=dev,
        )
        G = xp.take(M, cols, axis=1)  # (n, n_items): each item's attribute value
        in_range = (G > lo) & (G <= hi)  # NaN (missing) compares False: no item set
        return xp.where(eq, G == v, in_range)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Item names (``"a <= 1.5"``, ``"colour = red"``), one per output column."""
        check_is_fitted(self, "items_")
        return np.asarray(self.items_, dtype=object)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value sets no item of its attribute
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []  # the output is a boolean item matrix
        return tags


def check_items(B: Any, xp: Any, *, name: str = "B") -> Any:
    """A boolean item matrix of ``xp`` (0/1 numbers are accepted and compared with 0)."""
    if B.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D item matrix, got shape {tuple(B.shape)}")
    check_namespace(B, xp, name=name)
    return B if B.dtype == xp.bool else B != 0  # (strict refuses bool != 0)
