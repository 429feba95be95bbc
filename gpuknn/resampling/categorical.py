"""SMOTE-NC (mixed continuous / categorical features) and SMOTE-N (categorical features only),
with imbalanced-learn 0.14's semantics.

Categories are the values found in X's categorical columns (numbers: X is a numeric matrix of
any namespace). The category bookkeeping (one-hot layout, counts, votes) is done on the host;
the continuous part of X, the encoded matrix searched for neighbours and the Value Difference
Metric distances stay in X's namespace and on its device.

Random draws follow imbalanced-learn's order: for every class to over-sample, a generator is
made from ``random_state`` (an int seed therefore restarts the same stream for every class, as
imbalanced-learn's ``check_random_state`` does) and, for SMOTE-NC, a second one for the random
tie-breaks of the categorical votes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.random import default_rng
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

from .._backend import check_int, device_of, from_numpy, to_numpy
from ..base import clone
from ..errors import InvalidInputError
from ..ops.limits import check_working_memory
from ._base import BaseSampler, Labels, fitted, neighbors_param, self_neighbors
from .smote import check_class_sizes, interpolate, record_segments

__all__ = ["SMOTENC", "SMOTEN"]

_SMOTEN_MIB = 1024  # SMOTEN's default working_memory, MiB


def _categories(X_cat: np.ndarray, encoder: Any, name: str, default: Any, one_hot: bool = False) -> tuple[list, Any]:
    """``(categories, fitted encoder)``: with no ``encoder``, the sorted distinct values per
    column and ``default`` (imbalanced-learn's default encoder) fitted on the columns, for
    ``categorical_encoder_``; else the ``categories_`` of a clone of ``encoder`` fitted on
    the host columns. ``one_hot``: the encoder must keep one column per category (SMOTENC
    activates one column per feature), as imbalanced-learn checks."""
    if encoder is None:
        return [np.unique(X_cat[:, j]) for j in range(X_cat.shape[1])], default.fit(X_cat)
    if not (hasattr(encoder, "fit") and hasattr(encoder, "inverse_transform")):
        raise InvalidInputError(
            f"categorical_encoder must be None or an encoder with fit/inverse_transform and "
            f"categories_, got {encoder!r}"
        )
    enc = clone(encoder).fit(X_cat)
    cats = [np.asarray(c) for c in enc.categories_]
    if len(cats) != X_cat.shape[1]:
        raise InvalidInputError(f"categorical_encoder gave {len(cats)} category lists for {X_cat.shape[1]} {name}")
    if one_hot and hasattr(enc, "transform"):
        width, n_categories = int(enc.transform(X_cat[:1]).shape[1]), sum(int(c.shape[0]) for c in cats)
        if width != n_categories:  # imbalanced-learn's words (its tests match them)
            raise InvalidInputError(
                "SMOTENC requires a one-hot encoding with one column per category for the categorical "
                f"features. The provided `categorical_encoder` produced {width} columns for {n_categories} "
                "categories (it drops columns, e.g. `OneHotEncoder(drop=...)`, or merges infrequent categories)."
            )
    return cats, enc


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _host_values(X: Any) -> bool:
    """X holds categories that are not numbers (strings, objects, pandas categoricals): a
    DataFrame, or a host object / string array or list of rows. Such X is encoded on the host
    (each categorical column's sorted values -> 0, 1, ...) and decoded after resampling."""
    if _is_frame(X):
        return True
    if isinstance(X, (list, tuple)):
        X = np.asarray(X, dtype=object)
        return X.ndim == 2 and any(isinstance(v, (str, bytes)) for v in X.ravel())
    return isinstance(X, np.ndarray) and X.dtype.kind in "OUS"


def _host_matrix(X: Any) -> np.ndarray:
    if _is_frame(X):
        return X.to_numpy(dtype=object)
    return np.asarray(X, dtype=object if isinstance(X, (list, tuple)) else None)


def _sorted_values(col: np.ndarray, j: int) -> np.ndarray:
    try:
        return np.unique(col)
    except TypeError as exc:
        raise InvalidInputError(f"categorical column {j} mixes values that cannot be sorted: {exc}") from exc


def _resample_encoded(sampler: Any, X: Any, y: Any, cat: np.ndarray, numeric_fit: Any) -> tuple[Any, Any]:
    """Resample host X whose columns ``cat`` hold arbitrary categories: the categories are
    replaced by their positions among the column's sorted values (float64, the other columns
    as float64), ``numeric_fit(X_num, y)`` resamples that, and the new rows are decoded back
    (the input rows are returned as they were). The output is an array of X's dtype (object
    for a DataFrame, which the caller turns back into one)."""
    Xh = _host_matrix(X)
    if Xh.ndim != 2:
        raise InvalidInputError(f"X must be 2-D (n_samples, n_features), got shape {Xh.shape}")
    n, d = Xh.shape
    values = {}
    X_num = np.empty((n, d), dtype=np.float64)
    for j in range(d):
        if j in set(cat.tolist()):
            values[j] = _sorted_values(Xh[:, j], j)
            X_num[:, j] = np.searchsorted(values[j], Xh[:, j])
        else:
            try:
                X_num[:, j] = Xh[:, j].astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"X column {j} is not among the categorical features but holds non-numbers ({exc})"
                ) from exc
    X_res, y_res = numeric_fit(X_num, y)
    out = np.empty((int(X_res.shape[0]), d), dtype=Xh.dtype)
    out[:n] = Xh
    new = X_res[n:]
    for j in range(d):
        out[n:, j] = values[j][new[:, j].astype(np.int64)] if j in values else new[:, j]
    sampler.categories_ = [values[j] for j in sorted(values)]
    if hasattr(sampler, "categorical_encoder_"):  # as imbalanced-learn's: fitted on the categories, not codes
        sampler.categorical_encoder_ = clone(sampler.categorical_encoder_).fit(Xh[:, sorted(values)])
    sampler.n_features_in_ = d
    if _is_frame(X) and all(isinstance(c, str) for c in X.columns):
        sampler.feature_names_in_ = np.asarray(X.columns, dtype=object)
    return out, y_res


def _encode(X_cat: np.ndarray, cats: list[np.ndarray]) -> np.ndarray:
    """Host int64 codes (n, m): position of each value in its column's categories."""
    codes = np.empty(X_cat.shape, dtype=np.int64)
    for j, c in enumerate(cats):
        eq = X_cat[:, j][:, None] == c[None, :]
        if not eq.any(axis=1).all():
            raise InvalidInputError(f"categorical_encoder: column {j} holds values outside its categories")
        codes[:, j] = np.argmax(eq, axis=1)
    return codes


class SMOTENC(BaseSampler):
    """SMOTE for data with continuous and categorical features (SMOTE-NC, Chawla et al. 2002).

    For each class to over-sample, the categorical columns are one-hot encoded with the value
    ``median_std / sqrt(2)``, ``median_std`` being the median of the class's continuous
    (population) standard deviations; the ``k_neighbors`` nearest members of every member are
    searched (euclidean, :func:`gpuknn.kneighbors`) on the continuous + encoded columns. A new
    point interpolates the continuous features as :class:`~gpuknn.resampling.SMOTE` does, and
    each categorical feature takes the most frequent category among the k neighbours of its
    base sample (ties broken at random, as imbalanced-learn does).

    Parameters
    ----------
    categorical_features : "auto" or array-like of int, bool or str
        Indices of the categorical columns, a boolean mask of length ``n_features``, column
        names of a pandas DataFrame, or ``"auto"``: the DataFrame's ``category`` columns (as
        imbalanced-learn). At least one column must be continuous (use :class:`SMOTEN`
        otherwise). Categories may be strings or other objects when X is a DataFrame or a host
        object/string array: they are encoded on the host as their positions among the
        column's sorted values, resampled as numbers and decoded (the output has X's kind:
        an object array, a DataFrame with X's dtypes).
    categorical_encoder : None or scikit-learn encoder, default None
        None: the categories are each column's sorted distinct values (and
        ``categorical_encoder_`` is imbalanced-learn's default,
        ``OneHotEncoder(handle_unknown="ignore")``, fitted on them). An encoder (e.g.
        ``OneHotEncoder``) is cloned and fitted on the categorical columns; only its
        ``categories_`` are used, and it must keep one column per category
        (``OneHotEncoder(drop=...)`` is refused with a ValueError, as imbalanced-learn).
    sampling_strategy : str, float, dict or callable, default "auto"
    random_state : int, Generator or None
        Seeds :func:`numpy.random.default_rng`, once per class and once more per class for the
        tie-breaks (see the module notes).
    k_neighbors : int or NearestNeighbors-like object, default 5
        An object with ``fit`` and ``kneighbors`` is cloned and searches the encoded class
        rows (its ``n_neighbors`` counts the sample itself: ``k = n_neighbors - 1``), as in
        imbalanced-learn.
    working_memory : float or None
        MiB, passed to :func:`gpuknn.kneighbors`.

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples added}``
    nn_k_ : NearestNeighbors-like, fitted on the last class's encoded rows
    categorical_features_, continuous_features_ : int64 arrays
    categories_ : list of host arrays, one per categorical feature
    median_std_ : dict ``{label: float}`` for every over-sampled class
    base_indices_, neighbor_indices_ : int64 arrays (n_new,)
        Indices into the input of each new point's base sample and chosen neighbour.

    Raises
    ------
    InvalidInputError
        Bad ``categorical_features`` / ``categorical_encoder`` / ``k_neighbors``, or a class to
        over-sample with fewer than ``k_neighbors + 1`` samples.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [0.5, 1.0], [1.0, 2.0], [0.2, 1.0],
    ...               [5.0, 2.0], [5.5, 2.0], [6.0, 1.0], [5.2, 2.0], [5.9, 2.0], [6.1, 1.0]])
    >>> y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    >>> sm = SMOTENC([1], k_neighbors=2, random_state=0)
    >>> Xr, yr = sm.fit_resample(X, y)
    >>> Xr.shape, int(yr.sum())
    ((12, 2), 6)
    >>> bool(np.isin(Xr[10:, 1], [1.0, 2.0]).all())
    True
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        categorical_features: Any,
        *,
        categorical_encoder: Any = None,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        working_memory: float | None = None,
    ):
        self.categorical_features = categorical_features
        self.categorical_encoder = categorical_encoder
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.working_memory = working_memory

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        """Numeric X as is; a DataFrame or host X of strings/objects through the encoding of
        :func:`_resample_encoded` (its categorical columns found by :meth:`_frame_columns`)."""
        if not _host_values(X):
            return super()._fit_resample(X, y, one_hot)
        cat = self._frame_columns(X)
        self._cat_columns = cat
        try:
            return _resample_encoded(self, X, y, cat, lambda Xn, yn: BaseSampler._fit_resample(self, Xn, yn))
        finally:
            del self._cat_columns

    def _frame_columns(self, X: Any) -> np.ndarray:
        """Categorical column indices for host X: ``"auto"`` = the DataFrame's pandas
        ``category`` columns; column names of a DataFrame; else indices or a mask."""
        cf = self.categorical_features
        d = int(_host_matrix(X).shape[1]) if not _is_frame(X) else len(X.columns)
        if isinstance(cf, str) and cf == "auto":
            if not _is_frame(X):
                raise InvalidInputError(
                    f"categorical_features='auto' needs a pandas DataFrame (its category columns), got {type(X)}"
                )
            cat = np.flatnonzero([getattr(t, "name", None) == "category" for t in X.dtypes]).astype(np.int64)
            if cat.size == 0:
                raise InvalidInputError("categorical_features='auto': the DataFrame has no category column")
            return self._columns(d, cat)[0]
        names = np.atleast_1d(np.asarray(cf, dtype=object)) if not hasattr(cf, "shape") else None
        if names is not None and names.size and all(isinstance(v, str) for v in names):
            if not _is_frame(X):
                raise InvalidInputError(f"categorical_features by name ({cf!r}) needs a pandas DataFrame")
            cols = list(X.columns)
            missing = [v for v in names if v not in cols]
            if missing:
                raise InvalidInputError(f"categorical_features: no column named {missing} in {cols}")
            return self._columns(d, np.array([cols.index(v) for v in names], dtype=np.int64))[0]
        return self._columns(d)[0]

    def _columns(self, d: int, given: Any = None) -> tuple[np.ndarray, np.ndarray]:
        cf = getattr(self, "_cat_columns", None) if given is None else given
        cf = self.categorical_features if cf is None else cf
        if isinstance(cf, str):
            raise InvalidInputError(
                f"categorical_features={cf!r} needs a pandas DataFrame ('auto': its category columns; "
                "names: its columns); for arrays pass column indices or a boolean mask"
            )
        try:
            a = np.asarray(to_numpy(cf) if hasattr(cf, "shape") else cf)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise InvalidInputError(f"categorical_features: cannot read {cf!r}") from exc
        if a.ndim != 1 or a.size == 0:
            raise InvalidInputError(f"categorical_features must be a non-empty 1-D list, got {cf!r}")
        if a.dtype == bool:
            if a.shape[0] != d:
                raise InvalidInputError(f"categorical_features as a boolean mask needs {d} entries, got {a.shape[0]}")
            cat = np.flatnonzero(a).astype(np.int64)
            if cat.size == 0:
                raise InvalidInputError("categorical_features: the boolean mask selects no column")
        else:
            if not np.issubdtype(a.dtype, np.integer):
                raise InvalidInputError(f"categorical_features must be integer indices or booleans, got {cf!r}")
            cat = a.astype(np.int64)
            if ((cat < 0) | (cat >= d)).any():
                raise InvalidInputError(
                    f"categorical_features: indices must be between 0 and {d - 1}, got {cat.tolist()}"
                )
            if np.unique(cat).size != cat.size:
                raise InvalidInputError(f"categorical_features has repeated indices: {cat.tolist()}")
        if cat.size == d:
            raise InvalidInputError(
                "categorical_features selects every column; SMOTENC needs continuous features "
                "(use SMOTEN for categorical data only)"
            )
        return cat, np.setdiff1d(np.arange(d, dtype=np.int64), cat)

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        k, self.nn_k_, est = neighbors_param(self.k_neighbors, "k_neighbors", working_memory=self.working_memory)
        cat, cont = self._columns(int(X.shape[1]))
        self.categorical_features_, self.continuous_features_ = cat, cont
        dev = device_of(X)
        X_cat = to_numpy(xp.take(X, from_numpy(cat, xp, device=dev), axis=1))
        default = OneHotEncoder(handle_unknown="ignore", dtype=np.float64)
        cats, self.categorical_encoder_ = _categories(
            X_cat, self.categorical_encoder, "categorical features", default, one_hot=True
        )
        self.categories_ = cats
        codes = _encode(X_cat, cats)
        sizes = [int(c.shape[0]) for c in cats]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        X_cont = xp.take(X, from_numpy(cont, xp, device=dev), axis=1)
        check_class_sizes(self._strategy, lab, k, f"SMOTENC with k_neighbors={k}")
        order = from_numpy(np.argsort(np.concatenate([cont, cat])), xp, device=dev)
        self.median_std_ = {}
        new_rows, new_codes, bases, nbrs = [], [], [], []
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            members = np.flatnonzero(lab.codes == c)
            n_c = members.shape[0]
            Xc = xp.take(X_cont, from_numpy(members, xp, device=dev), axis=0)
            med = float(np.median(to_numpy(xp.sqrt(xp.var(Xc, axis=0)))))
            self.median_std_[lab.label(c)] = med
            onehot = np.zeros((n_c, int(offsets[-1])), dtype=np.float64)
            cc = codes[members]
            for j in range(len(cats)):
                onehot[np.arange(n_c), offsets[j] + cc[:, j]] = 1.0
            scale = med / math.sqrt(2)
            enc = xp.astype(from_numpy(onehot * scale, xp, device=dev), X.dtype)
            X_enc = xp.concat([Xc, enc], axis=1)
            nn = self_neighbors(X_enc, k, working_memory=self.working_memory, estimator=est)
            fitted(self.nn_k_, est, X_enc)
            rng = default_rng(self.random_state)
            drawn = np.asarray(rng.integers(0, n_c * k, size=n_new), dtype=np.int64)
            steps = np.asarray(rng.uniform(0.0, 1.0, size=n_new), dtype=np.float64)
            rows, cols = drawn // k, drawn % k
            X_new_cont, pick = interpolate(Xc, Xc, nn, rows, cols, steps)
            # categorical votes among the k neighbours of each base sample (host)
            nn_h = to_numpy(nn).astype(np.int64)[rows]  # (n_new, k)
            unit = 1.0 if math.isclose(med, 0) else scale
            rng_tie = default_rng(self.random_state)
            new_cat = np.empty((n_new, len(cats)), dtype=np.float64)
            for j, cj in enumerate(cats):
                votes = (cc[nn_h, j][:, :, None] == np.arange(sizes[j])[None, None, :]).sum(axis=1) * unit
                is_max = np.isclose(votes, votes.max(axis=1, keepdims=True))
                pairs = np.argwhere(is_max)
                pairs = pairs[np.asarray(rng_tie.permutation(pairs.shape[0]), dtype=np.int64)]
                _, first = np.unique(pairs[:, 0], return_index=True)
                new_cat[:, j] = cj[pairs[first, 1]]
            cat_x = xp.astype(from_numpy(new_cat, xp, device=dev), X.dtype)
            new_rows.append(xp.take(xp.concat([X_new_cont, cat_x], axis=1), order, axis=1))
            new_codes.append(np.full(n_new, c, dtype=np.int64))
            bases.append(members[rows])
            nbrs.append(members[to_numpy(pick).astype(np.int64)])
        return record_segments(self, new_rows, new_codes, bases, nbrs, xp)


class SMOTEN(BaseSampler):
    # Strings and objects are encoded on the host, as in SMOTENC (every column categorical).
    """SMOTE for categorical features only (SMOTE-N, Chawla et al. 2002).

    Every feature is categorical (its values are the categories). Distances are the Value
    Difference Metric of imbalanced-learn's ``ValueDifferenceMetric`` (k=1, r=2) fitted on all
    of (X, y): ``d(x, z) = sum_f (sum_c |P(c | x_f) - P(c | z_f)|)^2``. For each class to
    over-sample, the ``k_neighbors + 1`` nearest members of every member (itself included, as
    in imbalanced-learn) are found; a new sample draws a member uniformly and takes, feature by
    feature, the most frequent category among those neighbours (ties: the smallest category).

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
    random_state : int, Generator or None
        Seeds :func:`numpy.random.default_rng` once per class (see the module notes).
    k_neighbors : int or NearestNeighbors-like object, default 5
        An object with ``fit`` and ``kneighbors`` is cloned, fitted on each class's rows of
        the VDM distance matrix and searches them (its ``n_neighbors`` counts the sample
        itself), as imbalanced-learn does.
    working_memory : float or None
        Rows of the class distance matrix computed at once are bounded to about this many MiB
        (default 1024).
    categorical_encoder : None or encoder, default None
        None: each feature's categories are its sorted distinct values (and
        ``categorical_encoder_`` is imbalanced-learn's default, ``OrdinalEncoder(dtype=int32)``,
        fitted on X). An encoder with ``fit`` and ``categories_`` (e.g. scikit-learn's
        ``OrdinalEncoder``) is cloned and fitted on X; only its ``categories_`` are used.

    X may hold strings or other objects (a host object/string array, a DataFrame): they are
    encoded as their positions among each column's sorted values and decoded after (the
    output has X's dtype, or X's DataFrame dtypes).

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples added}``
    categories_ : list of host arrays, one per feature
    proba_per_class_ : list of host arrays (n_categories, n_classes), P(class | category)
    base_indices_ : int64 array (n_new,)
        Index into the input of each new sample's drawn member.

    Notes
    -----
    Neighbour ties (equal distances) are ordered by index here; scikit-learn's precomputed
    search orders them arbitrarily, which can change a vote when the tied rows differ.

    Raises
    ------
    InvalidInputError
        Bad ``k_neighbors`` / ``working_memory``, or a class to over-sample with fewer than
        ``k_neighbors + 1`` samples.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [2.0], [2.0], [2.0], [2.0], [2.0]])
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    >>> Xr, yr = SMOTEN(k_neighbors=2, random_state=0).fit_resample(X, y)
    >>> Xr.shape, int((yr == 0).sum())
    ((12, 1), 6)
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        working_memory: float | None = None,
        categorical_encoder: Any = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.working_memory = working_memory
        self.categorical_encoder = categorical_encoder

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        """Numeric X as is; strings/objects through :func:`_resample_encoded`."""
        if not _host_values(X):
            return super()._fit_resample(X, y, one_hot)
        cat = np.arange(_host_matrix(X).shape[1] if not _is_frame(X) else len(X.columns), dtype=np.int64)
        return _resample_encoded(self, X, y, cat, lambda Xn, yn: BaseSampler._fit_resample(self, Xn, yn))

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        est = None
        if hasattr(self.k_neighbors, "kneighbors") and hasattr(self.k_neighbors, "fit"):
            # imbalanced-learn's object: fitted on each class's VDM distance rows, its
            # n_neighbors counting the sample itself
            est = clone(self.k_neighbors)
            k = check_int(est.get_params().get("n_neighbors"), name="k_neighbors.n_neighbors", low=2) - 1
        else:
            k = check_int(self.k_neighbors, name="k_neighbors", low=1)
        # bytes; SMOTEN's own default is 1024 MiB
        budget = _SMOTEN_MIB << 20 if self.working_memory is None else check_working_memory(self.working_memory, xp)
        check_class_sizes(self._strategy, lab, k, f"SMOTEN with k_neighbors={k}")
        dev = device_of(X)
        X_h = to_numpy(X)
        default = OrdinalEncoder(dtype=np.int32)
        cats, self.categorical_encoder_ = _categories(X_h, self.categorical_encoder, "features", default)
        self.categories_ = cats
        codes = _encode(X_h, cats)
        n_cls = lab.counts.shape[0]
        tables, self.proba_per_class_ = [], []
        for j, cj in enumerate(cats):
            cnt = np.zeros((cj.shape[0], n_cls), dtype=np.float64)
            np.add.at(cnt, (codes[:, j], lab.codes), 1.0)
            with np.errstate(invalid="ignore"):
                p = np.nan_to_num(cnt / cnt.sum(axis=1).reshape(-1, 1))
            self.proba_per_class_.append(p)
            tables.append((np.sum(np.abs(p[:, None, :] - p[None, :, :]), axis=-1) ** 2).ravel())
        sizes = np.array([c.shape[0] for c in cats], dtype=np.int64)
        flat_off = np.concatenate([[0], np.cumsum(sizes**2)[:-1]]).astype(np.int64)
        table = from_numpy(np.concatenate(tables), xp, device=dev)
        new_rows, new_codes, bases = [], [], []
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            members = np.flatnonzero(lab.codes == c)
            n_c = members.shape[0]
            cc = codes[members]
            cc_x = from_numpy(cc, xp, device=dev)
            chunk = max(1, budget // (16 * n_c))
            parts = []
            for s in range(0, n_c, chunk):
                q = cc_x[s : min(s + chunk, n_c), :]
                dist = xp.zeros((int(q.shape[0]), n_c), dtype=xp.float64, device=dev)
                for j in range(cc.shape[1]):
                    idx = int(flat_off[j]) + q[:, j : j + 1] * int(sizes[j]) + cc_x[None, :, j]
                    dist = dist + xp.reshape(xp.take(table, xp.reshape(idx, (-1,))), dist.shape)
                parts.append(dist if est is not None else xp.argsort(dist, axis=1, stable=True)[:, : k + 1])
            if est is None:
                nn = to_numpy(xp.concat(parts, axis=0)).astype(np.int64)
            else:  # the object searches the rows of the (n_c, n_c) distance matrix, on the host
                D = to_numpy(xp.concat(parts, axis=0))
                nn = np.asarray(est.fit(D).kneighbors(D, return_distance=False), dtype=np.int64)
                self.nn_k_ = est
            rng = default_rng(self.random_state)
            rows = np.asarray(rng.integers(0, n_c, size=n_new), dtype=np.int64)
            nbr = cc[nn[rows]]  # (n_new, k + 1, d)
            new = np.empty((n_new, cc.shape[1]), dtype=np.float64)
            for j, cj in enumerate(cats):
                votes = (nbr[:, :, j][:, :, None] == np.arange(cj.shape[0])[None, None, :]).sum(axis=1)
                new[:, j] = cj[np.argmax(votes, axis=1)]
            new_rows.append(xp.astype(from_numpy(new, xp, device=dev), X.dtype))
            new_codes.append(np.full(n_new, c, dtype=np.int64))
            bases.append(members[rows])
        self.base_indices_ = np.concatenate(bases) if bases else np.zeros(0, dtype=np.int64)
        if not new_rows:
            return None, np.zeros(0, dtype=np.int64)
        return xp.concat(new_rows, axis=0), np.concatenate(new_codes)
