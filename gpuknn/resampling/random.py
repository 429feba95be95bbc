"""Random over- and under-sampling (imbalanced-learn's ``RandomOverSampler`` /
``RandomUnderSampler``), with indices drawn on the host by ``numpy.random.default_rng``."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._backend import device_of, from_numpy
from .._delegation import take_rows
from ..errors import InvalidInputError
from ._base import BaseSampler, Labels, check_sampling_strategy, encode_labels

__all__ = ["RandomOverSampler", "RandomUnderSampler"]


def _non_numeric(X: Any) -> bool:
    """Whether X is host data holding strings or other objects (a DataFrame with a non-numeric
    column, an object / string NumPy array, a list of such rows): the random samplers then
    pick rows on the host, as imbalanced-learn does, instead of validating X as numbers."""
    if hasattr(X, "dtypes") and hasattr(X, "iloc"):
        return not all(_numeric_dtype(t) for t in X.dtypes)
    if isinstance(X, (list, tuple)):
        X = np.asarray(X, dtype=object)
        return X.ndim == 2 and any(not isinstance(v, (numbers.Number, np.generic)) for v in X.ravel())
    return isinstance(X, np.ndarray) and X.dtype.kind in "OUS"


def _numeric_dtype(t: Any) -> bool:
    try:
        return np.dtype(t).kind in "biufc"
    except TypeError:  # a pandas extension dtype (string, category, nullable): kept as is
        return False


class _RowPicker(BaseSampler):
    """Random samplers pass rows through untouched, so X may hold strings or objects, NaN or
    infinity (a smoothed bootstrap of such rows gives NaN or infinity)."""

    _allow_non_finite = True

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        if not _non_numeric(X):
            return super()._fit_resample(X, y, one_hot)
        return self._fit_resample_host(X, y)

    def _fit_resample_host(self, X: Any, y: Any) -> tuple[Any, Any]:
        """Rows of host object data: no numeric validation, the same draws as for numbers."""
        frame = hasattr(X, "columns") and hasattr(X, "iloc")
        Xh = (
            X.to_numpy(dtype=object) if frame else np.asarray(X, dtype=object if isinstance(X, (list, tuple)) else None)
        )
        if Xh.ndim != 2:
            raise InvalidInputError(f"X must be 2-D (n_samples, n_features), got shape {Xh.shape}")
        if frame:
            cols = np.asarray(X.columns, dtype=object)
            if all(isinstance(c, str) for c in cols):
                self.feature_names_in_ = cols
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = int(Xh.shape[1])
        lab = encode_labels(y, int(Xh.shape[0]))
        self._strategy = check_sampling_strategy(self.sampling_strategy, lab, self._sampling_type)
        self.sampling_strategy_ = {lab.label(c): n for c, n in self._strategy.items()}
        out = self._resample(None, lab, None)
        if isinstance(out, tuple):
            raise InvalidInputError(
                "shrinkage needs numeric X (a smoothed bootstrap adds noise to the rows); X holds non-numeric values"
            )
        self.sample_indices_ = np.asarray(out, dtype=np.int64)
        if frame:  # the frame's own rows: every column keeps its dtype (a NaT timedelta column too)
            return X.iloc[self.sample_indices_].reset_index(drop=True), take_rows(y, self.sample_indices_)
        return Xh[self.sample_indices_], take_rows(y, self.sample_indices_)


class RandomOverSampler(_RowPicker):
    """Duplicate random samples of the classes to over-sample.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        imbalanced-learn's meaning; ``"auto"`` = every class but the majority is brought up
        to the majority's count.
    random_state : int, Generator or None
    shrinkage : float, dict or None, default None
        ``None``: a plain bootstrap (the drawn rows are copied). A float ``>= 0`` (for every
        class over-sampled) or a dict ``{label: float}`` (a factor for each over-sampled
        class): a smoothed bootstrap, as imbalanced-learn: each drawn row ``x`` of class
        ``c`` becomes ``x + z * shrinkage[c] * h * std_c``, ``z ~ N(0, 1)`` per feature,
        ``std_c`` the class's per-feature (population) standard deviation and
        ``h = (4 / ((d + 2) n)) ** (1 / (d + 4))`` for ``n`` samples of ``d`` features.
        Needs numeric X.

    Attributes
    ----------
    sample_indices_ : int64 array of shape (m,)
        ``arange(n)`` followed by the drawn (with replacement) indices, class by class in
        sorted-label order — the rows of the output (the base rows of the smoothed ones).
    sampling_strategy_ : dict ``{label: samples added}``
    shrinkage_ : dict ``{label: float}`` or None
        The factor used for each over-sampled class.

    Notes
    -----
    Same algorithm and output order as imbalanced-learn; the random stream differs (NumPy
    ``Generator`` instead of ``RandomState``; per class the indices are drawn, then the
    smoothing noise). X holding strings or other objects (an object or string NumPy array, a
    DataFrame with such columns) is passed through row by row on the host, unchanged, as
    imbalanced-learn does (not with ``shrinkage``). O(m) host work plus one row gather of X;
    the noise is drawn on the host and added in X's namespace.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(8.0).reshape(4, 2); y = np.array([0, 0, 0, 1])
    >>> Xr, yr = RandomOverSampler(random_state=0).fit_resample(X, y)
    >>> np.bincount(yr).tolist()
    [3, 3]
    """

    _sampling_type = "over-sampling"

    def __init__(self, *, sampling_strategy: Any = "auto", random_state: Any = None, shrinkage: Any = None):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.shrinkage = shrinkage

    def _check_shrinkage(self) -> dict | None:
        """``shrinkage_``: a factor >= 0 for every class to over-sample, or None."""
        s = self.shrinkage
        if s is None:
            return None
        if isinstance(s, numbers.Real) and not isinstance(s, bool):
            s = dict.fromkeys(self.sampling_strategy_, s)
        elif not isinstance(s, Mapping):
            raise InvalidInputError(f"shrinkage must be None, a float or a dict {{label: float}}, got {s!r}")
        missing = [c for c in self.sampling_strategy_ if c not in s]
        if missing:
            raise InvalidInputError(
                f"shrinkage should contain a shrinkage factor for each class that will be resampled; "
                f"missing classes: {missing}"
            )
        for c, f in s.items():
            if isinstance(f, bool) or not isinstance(f, numbers.Real) or not f >= 0:
                raise InvalidInputError(f"shrinkage factors must be >= 0; got {f!r} for class {c!r}")
        return {c: float(f) for c, f in s.items()}

    def _resample(self, X: Any, lab: Labels, xp: Any) -> Any:
        self.shrinkage_ = self._check_shrinkage()
        rng = np.random.default_rng(self.random_state)
        parts = [np.arange(lab.codes.shape[0], dtype=np.int64)]
        smooth = self.shrinkage_ is not None
        new_rows = []
        for c, n_new in self._strategy.items():
            members = np.flatnonzero(lab.codes == c)
            boot = rng.choice(members, size=n_new, replace=True)
            parts.append(boot)
            if smooth and X is not None:
                n, d = (int(v) for v in X.shape)
                h = (4.0 / ((d + 2) * n)) ** (1.0 / (d + 4))
                dev = device_of(X)
                scale = self.shrinkage_[lab.label(c)] * h * xp.std(take_rows(X, members), axis=0)
                z = xp.astype(from_numpy(rng.standard_normal((n_new, d)), xp, device=dev), X.dtype)
                new_rows.append(take_rows(X, boot) + z * scale[None, :])
        indices = np.concatenate(parts).astype(np.int64)
        if not smooth:
            return indices
        if X is None:  # non-numeric X: refused by the caller
            return None, None
        # Generated rows: the base appends them after X; the drawn rows stay recorded.
        self.sample_indices_ = indices
        codes = lab.codes[indices[lab.codes.shape[0] :]]
        return xp.concat(new_rows, axis=0) if new_rows else None, codes


class RandomUnderSampler(_RowPicker):
    """Keep a random subset of each class to under-sample.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        ``"auto"`` = every class but the minority is cut down to the minority's count.
    random_state : int, Generator or None
    replacement : bool, default False
        Draw with replacement.

    Attributes
    ----------
    sample_indices_ : int64 array of shape (m,)
        Class by class in sorted-label order; within a resampled class the drawn order.

    Notes
    -----
    imbalanced-learn's algorithm and output order; the random stream differs.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(8.0).reshape(4, 2); y = np.array([0, 0, 0, 1])
    >>> RandomUnderSampler(random_state=0).fit_resample(X, y)[1].tolist()
    [0, 1]
    """

    _sampling_type = "under-sampling"

    def __init__(self, *, sampling_strategy: Any = "auto", random_state: Any = None, replacement: bool = False):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.replacement = replacement

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        rng = np.random.default_rng(self.random_state)
        parts = []
        for c in range(lab.classes.shape[0]):
            members = np.flatnonzero(lab.codes == c)
            if c in self._strategy:
                pick = rng.choice(members.shape[0], size=self._strategy[c], replace=bool(self.replacement))
                members = members[pick]
            parts.append(members)
        return np.concatenate(parts).astype(np.int64)
