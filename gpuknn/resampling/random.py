"""Random over- and under-sampling (imbalanced-learn's ``RandomOverSampler`` /
``RandomUnderSampler``), with indices drawn on the host by ``numpy.random.default_rng``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import BaseSampler, Labels

__all__ = ["RandomOverSampler", "RandomUnderSampler"]


class RandomOverSampler(BaseSampler):
    """Duplicate random samples of the classes to over-sample.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        imbalanced-learn's meaning; ``"auto"`` = every class but the majority is brought up
        to the majority's count.
    random_state : int, Generator or None

    Attributes
    ----------
    sample_indices_ : int64 array of shape (m,)
        ``arange(n)`` followed by the drawn (with replacement) indices, class by class in
        sorted-label order — the rows of the output.
    sampling_strategy_ : dict ``{label: samples added}``

    Notes
    -----
    Same algorithm and output order as imbalanced-learn; the random stream differs (NumPy
    ``Generator`` instead of ``RandomState``). imbalanced-learn's smoothed bootstrap
    (``shrinkage``) is not implemented. O(m) host work plus one row gather of X.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(8.0).reshape(4, 2); y = np.array([0, 0, 0, 1])
    >>> Xr, yr = RandomOverSampler(random_state=0).fit_resample(X, y)
    >>> np.bincount(yr).tolist()
    [3, 3]
    """

    _sampling_type = "over-sampling"

    def __init__(self, *, sampling_strategy: Any = "auto", random_state: Any = None):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        rng = np.random.default_rng(self.random_state)
        parts = [np.arange(lab.codes.shape[0], dtype=np.int64)]
        for c, n_new in self._strategy.items():
            parts.append(rng.choice(np.flatnonzero(lab.codes == c), size=n_new, replace=True))
        return np.concatenate(parts)


class RandomUnderSampler(BaseSampler):
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
