"""NearMiss under-sampling (Mani & Zhang 2003), imbalanced-learn's three versions.

Each class to under-sample is ranked by the sum of distances to minority samples and the
best-ranked samples are kept. Every distance comes from one batched
:func:`gpuknn.ops.kneighbors.kneighbors` call per class (tiled, in X's namespace, on its device);
only the per-sample distance sums and the chosen indices cross to the host.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._backend import check_int, device_of, from_numpy, to_numpy
from ..errors import InvalidInputError
from ..ops.kneighbors import kneighbors
from ._base import BaseSampler, Labels

__all__ = ["NearMiss"]


def _take(X: Any, rows: np.ndarray, xp: Any) -> Any:
    return xp.take(X, from_numpy(np.asarray(rows, dtype=np.int64), xp, device=device_of(X)), axis=0)


def _rank(sums: Any, n_keep: int, farthest: bool) -> np.ndarray:
    """Positions of the ``n_keep`` smallest (largest with ``farthest``) sums; stable, so equal
    sums keep the lower position first (Python's ``sorted``, as imbalanced-learn uses)."""
    s = to_numpy(sums).astype(np.float64)
    order = np.argsort(-s if farthest else s, kind="stable")
    if order.shape[0] < n_keep:
        warnings.warn(
            "The number of the samples to be selected is larger than the number of samples "
            "available. The balancing ratio cannot be ensured and all samples will be returned.",
            UserWarning,
            stacklevel=4,
        )
    return order[:n_keep]


class NearMiss(BaseSampler):
    """NearMiss under-sampling: keep the samples of each class closest to (or, for version 3,
    farthest from) the minority class.

    The minority class (whose samples are the reference) is the smallest, ties -> the class
    seen first in y (imbalanced-learn's ``Counter`` rule); the classes under-sampled come
    from ``sampling_strategy`` (``"auto"`` = all but the smallest, ties -> lowest class).

    * ``version=1``: keep the samples whose mean distance to their ``n_neighbors`` nearest
      minority samples is smallest.
    * ``version=2``: keep the samples whose mean distance to their ``n_neighbors``
      **farthest** minority samples is smallest.
    * ``version=3``: first short-list, for every minority sample, its ``n_neighbors_ver3``
      nearest samples of the class; then keep the short-listed samples whose mean distance
      to their ``n_neighbors`` nearest minority samples is **largest**. The short list can
      be smaller than the target: all of it is then kept, with a ``UserWarning``.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        Samples to keep per class (imbalanced-learn's under-sampling rules).
    version : {1, 2, 3}, default 1
    n_neighbors : int, default 3
        Minority neighbours whose distances are summed (at most the minority size for
        versions 1 and 3).
    n_neighbors_ver3 : int, default 3
        Version 3's short-list size per minority sample (at most each class's size).
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB; the summed
        "distances" are that metric's).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array (m,)
        Classes in sorted-label order; within an under-sampled class the kept samples in
        rank order (best first), within another class all its samples ascending — the
        indices, and the order, of imbalanced-learn.
    sampling_strategy_ : dict

    Notes
    -----
    Searches: one per under-sampled class against the minority samples, k=n_neighbors
    (version 1, and version 3 after its short list, which is one k=n_neighbors_ver3 search
    of the minority samples against the class) or k=n_minority (version 2). Equal distance
    sums rank the lower index first, as imbalanced-learn's stable sort does; equal
    *distances* resolve to the lower index in the engine, whereas imbalanced-learn's
    neighbour order among equal distances is sklearn's (which can differ only for exact
    ties, e.g. duplicated points, in version 3's short list).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.5], [1.0], [1.6], [3.0], [9.0], [4.2], [2.3]])
    >>> y = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    >>> NearMiss().fit(X, y).sample_indices_.tolist()
    [3, 7, 4, 0, 1, 2]
    >>> NearMiss(version=3, n_neighbors=2).fit(X, y).sample_indices_.tolist()
    [4, 7, 3, 0, 1, 2]
    """

    _sampling_type = "under-sampling"

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        version: int = 1,
        n_neighbors: int = 3,
        n_neighbors_ver3: int = 3,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.version = version
        self.n_neighbors = n_neighbors
        self.n_neighbors_ver3 = n_neighbors_ver3
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        version = self.version
        if isinstance(version, bool) or version not in (1, 2, 3):
            raise InvalidInputError(f"version must be 1, 2 or 3, got {version!r}")
        k = check_int(self.n_neighbors, name="n_neighbors", low=1)
        k3 = check_int(self.n_neighbors_ver3, name="n_neighbors_ver3", low=1)
        opts = dict(metric=self.metric, working_memory=self.working_memory)
        c_min = lab.minority_first_seen
        min_rows = np.flatnonzero(lab.codes == c_min)
        n_min = int(min_rows.shape[0])
        if version != 2 and k > n_min:
            raise InvalidInputError(
                f"n_neighbors={k} exceeds the {n_min} samples of the minority class {lab.label(c_min)!r}"
            )
        X_min = _take(X, min_rows, xp)
        out = []
        for c in range(lab.classes.shape[0]):
            rows = np.flatnonzero(lab.codes == c)
            if c not in self._strategy:
                out.append(rows)
                continue
            n_keep = self._strategy[c]
            if version == 3:
                if k3 > rows.shape[0]:
                    raise InvalidInputError(
                        f"n_neighbors_ver3={k3} exceeds the {rows.shape[0]} samples of class {lab.label(c)!r}"
                    )
                near = kneighbors(X_min, _take(X, rows, xp), k3, return_distance=False, **opts)
                rows = rows[np.unique(to_numpy(near).reshape(-1))]
            kk = n_min if version == 2 else k
            dist, _ = kneighbors(_take(X, rows, xp), X_min, kk, **opts)
            sums = xp.sum(dist[:, max(kk - k, 0) :], axis=1)
            out.append(rows[_rank(sums, n_keep, farthest=version == 3)])
        return np.concatenate(out).astype(np.int64)
