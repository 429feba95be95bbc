"""NearMiss under-sampling (Mani & Zhang 2003), imbalanced-learn's three versions.

Each class to under-sample is ranked by the sum of distances to minority samples and the
best-ranked samples are kept. Every distance comes from one batched
:func:`gpuknn.ops.kneighbors.kneighbors` call per class (tiled, in X's namespace, on its device);
only the per-sample distance sums and the chosen indices cross to the host.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import clone

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy
from ..base import BaseEstimator
from ..errors import InvalidInputError
from ..neighbors import NearestNeighbors
from ..ops.kneighbors import kneighbors
from ._base import BaseSampler, Labels

__all__ = ["NearMiss"]


def _take(X: Any, rows: np.ndarray, xp: Any) -> Any:
    return xp.take(X, from_numpy(np.asarray(rows, dtype=np.int64), xp, device=device_of(X)), axis=0)


def _neighbors_object(value: Any, name: str, n_jobs: Any, **opts: Any) -> tuple[int, Any, Any]:
    """``(k, nn, estimator)``: imbalanced-learn's ``check_neighbors_object`` without the extra
    neighbour (NearMiss counts no sample itself). An int k gives an unfitted
    ``gpuknn.NearestNeighbors(k)`` (the engine runs the searches: ``estimator`` None); an
    object with ``fit`` and ``kneighbors`` is cloned and runs them (its ``n_neighbors`` is k)."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        k = check_int(value, name=name, low=1)
        return k, NearestNeighbors(n_neighbors=k, n_jobs=n_jobs, **opts), None
    if not (callable(getattr(value, "fit", None)) and callable(getattr(value, "kneighbors", None))):
        raise InvalidInputError(
            f"{name} must be an int >= 1 or a NearestNeighbors-like object with fit and kneighbors, got {value!r}"
        )
    nn = clone(value)
    if "n_jobs" in nn.get_params():
        nn.set_params(n_jobs=n_jobs)  # imbalanced-learn passes the sampler's n_jobs on
    k = check_int(nn.get_params().get("n_neighbors"), name=f"{name}.n_neighbors", low=1)
    return k, nn, nn


def _search(est: Any, Q: Any, R: Any, k: int, return_distance: bool = True, **opts: Any) -> Any:
    """Q's k nearest rows of R: the engine, or ``est`` fitted on R (scikit-learn's objects on
    host copies), the answer moved to Q's namespace and device."""
    if est is None:
        return kneighbors(Q, R, k, return_distance=return_distance, **opts)
    ours = isinstance(est, BaseEstimator)
    est.fit(R if ours else to_numpy(R))
    out = est.kneighbors(Q if ours else to_numpy(Q), n_neighbors=k, return_distance=return_distance)
    xp, dev = array_namespace(Q), device_of(Q)
    if not return_distance:
        return from_numpy(np.asarray(to_numpy(out), dtype=np.int64), xp, device=dev)
    d, i = out
    d = from_numpy(np.asarray(to_numpy(d), dtype=np.float64), xp, device=dev)
    return d, from_numpy(np.asarray(to_numpy(i), dtype=np.int64), xp, device=dev)


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
    n_neighbors : int or NearestNeighbors-like object, default 3
        Minority neighbours whose distances are summed (at most the minority size for
        versions 1 and 3). An object with ``fit`` and ``kneighbors`` (scikit-learn's or
        gpuknn's ``NearestNeighbors``) is cloned, gives k (its ``n_neighbors``) and runs
        the searches with its own metric, as in imbalanced-learn.
    n_neighbors_ver3 : int or NearestNeighbors-like object, default 3
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
    nn_ : NearestNeighbors-like
        The ``n_neighbors`` search object (gpuknn's ``NearestNeighbors`` for an int), fitted
        on the minority samples, as imbalanced-learn's.
    nn_ver3_ : NearestNeighbors-like
        Version 3 only: the ``n_neighbors_ver3`` object, fitted on the last class searched.

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
        opts = dict(metric=self.metric, working_memory=self.working_memory)
        k, self.nn_, est = _neighbors_object(self.n_neighbors, "n_neighbors", self.n_jobs, **opts)
        k3, nn3, est3 = 0, None, None
        if version == 3:
            k3, nn3, est3 = _neighbors_object(self.n_neighbors_ver3, "n_neighbors_ver3", self.n_jobs, **opts)
            self.nn_ver3_ = nn3
        elif hasattr(self, "nn_ver3_"):
            del self.nn_ver3_  # a refit with another version
        c_min = lab.minority_first_seen
        min_rows = np.flatnonzero(lab.codes == c_min)
        n_min = int(min_rows.shape[0])
        if version != 2 and k > n_min:
            raise InvalidInputError(
                f"n_neighbors={k} exceeds the {n_min} samples of the minority class {lab.label(c_min)!r}"
            )
        X_min = _take(X, min_rows, xp)
        if est is None:  # the engine searches; nn_ fitted as imbalanced-learn's is
            self.nn_.fit(X_min)
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
                X_c = _take(X, rows, xp)
                near = _search(est3, X_min, X_c, k3, return_distance=False, **opts)
                if est3 is None:
                    nn3.fit(X_c)
                rows = rows[np.unique(to_numpy(near).reshape(-1))]
            kk = n_min if version == 2 else k
            dist, _ = _search(est, _take(X, rows, xp), X_min, kk, **opts)
            sums = xp.sum(dist[:, max(kk - k, 0) :], axis=1)
            out.append(rows[_rank(sums, n_keep, farthest=version == 3)])
        return np.concatenate(out).astype(np.int64)
