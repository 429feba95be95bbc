"""Cleaning under-samplers: Tomek links, Wilson's edited nearest neighbours, and the
neighbourhood cleaning rule — imbalanced-learn's semantics, one batched neighbour search each.

Every search is one :func:`gpuknn.ops.kneighbors.kneighbors` call over the rows that need it
(tiled, so it runs on a GPU under CuPy); the decisions are vectorised array operations in
X's namespace. Only the kept indices come back to the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy
from ..base import BaseEstimator, clone
from ..errors import InvalidInputError
from ..neighbors import KNeighborsClassifier
from ..ops.votes import vote_counts
from ._base import BaseSampler, Labels, fitted, gather, neighbors_param, self_neighbors

__all__ = ["TomekLinks", "EditedNearestNeighbours", "NeighbourhoodCleaningRule", "tomek_keep", "enn_keep"]


def _check_k(k: Any, name: str = "n_neighbors") -> int:
    return check_int(k, name=name, low=1)


def tomek_keep(
    X: Any, codes: np.ndarray, clean: np.ndarray, *, metric: str = "euclidean", working_memory: float | None = None
) -> np.ndarray:
    """Host bool mask (n,): False for members of a Tomek link whose class is in ``clean``.

    ``codes`` are host class codes, ``clean`` a host bool per class. A link is a pair of
    mutual nearest neighbours (self excluded; equal distances -> lower index) of different
    classes.
    """
    xp = array_namespace(X)
    dev = device_of(X)
    n = int(X.shape[0])
    nn = self_neighbors(X, 1, metric=metric, working_memory=working_memory)[:, 0]
    y = from_numpy(codes, xp, device=dev)
    mutual = xp.take(nn, nn) == xp.arange(n, dtype=nn.dtype, device=dev)
    link = mutual & (xp.take(y, nn) != y)
    cleanable = xp.take(from_numpy(np.asarray(clean, dtype=bool), xp, device=dev), y)
    return ~to_numpy(link & cleanable).astype(bool)


def enn_keep(
    X: Any,
    codes: np.ndarray,
    clean: np.ndarray,
    n_classes: int,
    *,
    n_neighbors: int = 3,
    kind_sel: str = "all",
    metric: str = "euclidean",
    working_memory: float | None = None,
    estimator: Any = None,
) -> np.ndarray:
    """Host bool mask (n,) of samples kept by Wilson's editing (only ``clean`` classes edited).

    ``estimator`` (a NearestNeighbors-like object, optional) runs the search instead of the
    engine (see :func:`~gpuknn.resampling._base.self_neighbors`).

    ``kind_sel="all"``: kept when all ``n_neighbors`` neighbours share its class;
    ``"mode"``: kept when the neighbours' majority vote (ties -> lowest class) is its class.
    """
    if kind_sel not in ("all", "mode"):
        raise InvalidInputError(f"kind_sel must be 'all' or 'mode', got {kind_sel!r}")
    xp = array_namespace(X)
    dev = device_of(X)
    keep = np.ones(codes.shape[0], dtype=bool)
    rows = np.flatnonzero(np.asarray(clean, dtype=bool)[codes])
    if rows.size == 0:
        return keep
    nb = self_neighbors(X, n_neighbors, rows=rows, metric=metric, working_memory=working_memory, estimator=estimator)
    y = from_numpy(codes, xp, device=dev)
    labels = gather(y, nb)
    own = from_numpy(codes[rows], xp, device=dev)
    if kind_sel == "all":
        ok = xp.all(labels == own[:, None], axis=1)
    else:
        counts = vote_counts(labels, [n_neighbors], n_classes=n_classes)[0, ...]
        ok = xp.argmax(counts, axis=1) == own
    keep[rows] = to_numpy(ok).astype(bool)
    return keep


def _class_order(keep: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Kept indices grouped by class (sorted labels), ascending within a class (imblearn's order)."""
    kept = np.flatnonzero(keep)
    return kept[np.argsort(codes[kept], kind="stable")].astype(np.int64)


class _NeighbourCleaner(BaseSampler):
    _sampling_type = "clean-sampling"

    def _clean_mask(self, lab: Labels) -> np.ndarray:
        clean = np.zeros(lab.classes.shape[0], dtype=bool)
        clean[list(self._strategy)] = True
        return clean


class TomekLinks(_NeighbourCleaner):
    """Remove Tomek links: mutual nearest neighbours of different classes (Tomek 1976).

    Parameters
    ----------
    sampling_strategy : str or list, default "auto"
        Classes whose link members are removed; ``"auto"`` = all but the minority (so the
        majority member of each minority–majority link goes), ``"all"`` = both members.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array (m,), ascending — identical to imbalanced-learn's.

    Notes
    -----
    One k=2 search of all n samples: O(n² d) in GEMMs. Equal distances -> lower index;
    the sample itself is removed from its list by index, so among exact duplicates the
    result may differ from imbalanced-learn's (whose order of equal distances is arbitrary).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [1.1], [5.0], [6.0]]); y = np.array([0, 0, 1, 0, 0])
    >>> TomekLinks().fit_resample(X, y)[1].tolist()
    [0, 1, 0, 0]
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        keep = tomek_keep(X, lab.codes, self._clean_mask(lab), metric=self.metric, working_memory=self.working_memory)
        return np.flatnonzero(keep).astype(np.int64)


class EditedNearestNeighbours(_NeighbourCleaner):
    """Wilson's editing: drop samples that their ``n_neighbors`` nearest neighbours reject.

    Parameters
    ----------
    sampling_strategy : str or list, default "auto"
        Classes that are edited (``"auto"`` = all but the minority); others are kept whole.
    n_neighbors : int or NearestNeighbors-like object, default 3
        An object with ``fit`` and ``kneighbors`` is cloned and searches instead (its
        ``n_neighbors`` counts the sample itself: ``k = n_neighbors - 1``), as in
        imbalanced-learn.
        Neighbours examined (the sample itself excluded).
    kind_sel : {"all", "mode"}, default "all"
        ``"all"``: removed unless every neighbour has its class. ``"mode"``: removed unless
        the neighbours' majority vote (ties -> lowest class, as ``scipy.stats.mode``) is its
        class.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    nn_ : NearestNeighbors-like, the search object, fitted on X
    sample_indices_ : int64 array (m,)
        Grouped by class in sorted-label order, ascending within a class — the order of
        imbalanced-learn, whose indices it reproduces.

    Notes
    -----
    One k=n_neighbors+1 search for the rows of the edited classes only: O(m n d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [5.3]])
    >>> y = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    >>> EditedNearestNeighbours(sampling_strategy="all").fit(X, y).sample_indices_.tolist()
    [4, 5, 6, 7]
    >>> EditedNearestNeighbours(sampling_strategy="all", kind_sel="mode").fit(X, y).sample_indices_.tolist()
    [0, 1, 3, 4, 5, 6, 7]
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        n_neighbors: int = 3,
        kind_sel: str = "all",
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.n_neighbors = n_neighbors
        self.kind_sel = kind_sel
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k, self.nn_, est = neighbors_param(
            self.n_neighbors, "n_neighbors", metric=self.metric, working_memory=self.working_memory
        )
        fitted(self.nn_, est, X)
        keep = enn_keep(
            X,
            lab.codes,
            self._clean_mask(lab),
            lab.classes.shape[0],
            n_neighbors=k,
            kind_sel=self.kind_sel,
            metric=self.metric,
            working_memory=self.working_memory,
            estimator=est,
        )
        return _class_order(keep, lab.codes)


class NeighbourhoodCleaningRule(_NeighbourCleaner):
    """Laurikkala's neighbourhood cleaning rule, as imbalanced-learn implements it.

    1. **A1** = samples removed by ``EditedNearestNeighbours(kind_sel="mode")`` with the same
       ``sampling_strategy`` and ``n_neighbors``.
    2. Each minority sample is classified by a ``n_neighbors``-NN vote **that includes the
       sample itself** (imbalanced-learn predicts the training points with a classifier
       fitted on them; ties -> lowest class). For each misclassified one, its
       ``n_neighbors`` nearest other samples belonging to a class to clean form **A2**.
       Classes to clean: in ``sampling_strategy`` and with more than
       ``threshold_cleaning × n_minority`` samples.
    3. A1 ∪ A2 is removed.

    The minority class is the smallest, ties -> the class seen first in y (imbalanced-learn's
    ``Counter`` rule).

    Parameters
    ----------
    sampling_strategy : str or list, default "auto"
    edited_nearest_neighbours : sampler, optional
        Step 1's sampler instead of the default (imbalanced-learn 0.14's parameter): cloned
        and run on (X, y) with its own options (an imbalanced-learn one on host copies).
    n_neighbors : int or NearestNeighbors-like object, default 3
        An object (scikit-learn's or gpuknn's ``NearestNeighbors``) counts the sample itself,
        as imbalanced-learn's: k = its ``n_neighbors - 1``; it runs step 1's search (it is
        handed to the edited-nearest-neighbours step), the engine step 2's.
    threshold_cleaning : float > 0, default 0.5
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array (m,), ascending — identical to imbalanced-learn's.
    classes_to_clean_ : list of labels
    nn_ : gpuknn.KNeighborsClassifier
        ``n_neighbors=k``, fitted on (X, y): the classifier of step 2 (imbalanced-learn's).
    edited_nearest_neighbours_ : EditedNearestNeighbours
        Step 1's sampler (by default ``kind_sel="mode"``, the same strategy and
        ``n_neighbors``), fitted.

    Notes
    -----
    Two batched searches (edited rows, minority rows): O((m_edit + n_min) n d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [5.3]])
    >>> y = np.array([0, 0, 0, 0, 0, 1, 1, 0])
    >>> NeighbourhoodCleaningRule().fit(X, y).sample_indices_.tolist()
    [0, 1, 2, 3, 5, 6]
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        edited_nearest_neighbours: Any = None,
        n_neighbors: int = 3,
        threshold_cleaning: float = 0.5,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.edited_nearest_neighbours = edited_nearest_neighbours
        self.n_neighbors = n_neighbors
        self.threshold_cleaning = threshold_cleaning
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _edit(self, X: Any, lab: Labels, xp: Any, opts: dict) -> Any:
        """Step 1's sampler, fitted: a clone of ``edited_nearest_neighbours`` run on (X, y)
        (scikit-learn-style samplers on host copies), or by default an
        ``EditedNearestNeighbours(kind_sel="mode")`` on this sampler's classes."""
        given = self.edited_nearest_neighbours
        if given is not None:
            if not callable(getattr(given, "fit_resample", None)):
                raise InvalidInputError(
                    f"edited_nearest_neighbours must be None or a sampler with fit_resample, got {given!r}"
                )
            enn = clone(given)
            ours = isinstance(enn, BaseEstimator)
            enn.fit_resample(X if ours else to_numpy(X), lab.classes[lab.codes])
            return enn
        enn = EditedNearestNeighbours(
            sampling_strategy=self.sampling_strategy,
            n_neighbors=self.n_neighbors,
            kind_sel="mode",
            n_jobs=self.n_jobs,
            **opts,
        )
        # the classes of this sampler's strategy, resolved once
        enn._strategy, enn.sampling_strategy_ = self._strategy, dict(self.sampling_strategy_)
        enn.n_features_in_ = int(X.shape[1])
        enn.sample_indices_ = enn._resample(X, lab, xp)
        return enn

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k = neighbors_param(self.n_neighbors, "n_neighbors")[0]
        t = float(self.threshold_cleaning)
        if not t > 0.0:
            raise InvalidInputError(f"threshold_cleaning must be > 0, got {t}")
        opts = dict(metric=self.metric, working_memory=self.working_memory)
        n_cls = lab.classes.shape[0]
        self.edited_nearest_neighbours_ = enn = self._edit(X, lab, xp, opts)
        removed = np.ones(lab.codes.shape[0], dtype=bool)
        removed[enn.sample_indices_] = False
        c_min = lab.minority_first_seen
        to_clean = self._clean_mask(lab) & (lab.counts > lab.counts[c_min] * t)
        self.classes_to_clean_ = [lab.label(c) for c in np.flatnonzero(to_clean)]
        rows = np.flatnonzero(lab.codes == c_min)
        nb = self_neighbors(X, k, rows=rows, **opts)
        dev = device_of(X)
        y = from_numpy(lab.codes, xp, device=dev)
        own = from_numpy(lab.codes[rows], xp, device=dev)
        voters = xp.concat([own[:, None], gather(y, nb[:, : k - 1])], axis=1)
        pred = xp.argmax(vote_counts(voters, [k], n_classes=n_cls)[0, ...], axis=1)
        wrong = to_numpy(pred != own).astype(bool)
        a2 = np.unique(to_numpy(nb)[wrong].reshape(-1))
        removed[a2[to_clean[lab.codes[a2]]]] = True
        self.nn_ = KNeighborsClassifier(n_neighbors=k, n_jobs=self.n_jobs, **opts).fit(X, lab.classes[lab.codes])
        return np.flatnonzero(~removed).astype(np.int64)
