"""Repeated editing: RepeatedEditedNearestNeighbours and AllKNN (Tomek 1976), imbalanced-learn's
semantics, each round one :func:`~gpuknn.resampling.cleaning.enn_keep` pass (the engine of
:class:`~gpuknn.resampling.cleaning.EditedNearestNeighbours`) over the samples still kept.

X stays in its namespace and on its device; only class codes and kept indices live on the
host. Each round re-applies ``sampling_strategy`` to the current labels, as imbalanced-learn
does (its inner ``EditedNearestNeighbours`` is refitted on the data left).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import check_int, device_of, from_numpy
from ..errors import InvalidInputError
from ._base import BaseSampler, Labels, check_sampling_strategy, fitted, neighbors_param
from .cleaning import _class_order, enn_keep

__all__ = ["RepeatedEditedNearestNeighbours", "AllKNN"]

_KIND_SEL = ("all", "mode")


def _sub_labels(lab: Labels, cur: np.ndarray) -> Labels:
    """Labels of the samples ``cur`` (host indices), over all of ``lab``'s classes."""
    codes = lab.codes[cur]
    n_cls = lab.classes.shape[0]
    counts = np.bincount(codes, minlength=n_cls)
    first = np.full(n_cls, codes.shape[0], dtype=np.int64)
    pos = np.arange(codes.shape[0], dtype=np.int64)[::-1]
    first[codes[::-1]] = pos  # the last write per class is its first occurrence
    return Labels(lab.classes, codes, counts, first)


class _RepeatedENN(BaseSampler):
    _sampling_type = "clean-sampling"

    def _check_common(self) -> int:
        if self.kind_sel not in _KIND_SEL:
            raise InvalidInputError(f"kind_sel must be 'all' or 'mode', got {self.kind_sel!r}")
        k, self.nn_, self._nn_search = neighbors_param(
            self.n_neighbors, "n_neighbors", metric=self.metric, working_memory=self.working_memory
        )
        return k

    def _round(
        self, X: Any, lab: Labels, cur: np.ndarray, k: int, xp: Any, estimator: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """One ENN pass over the samples ``cur``: (new cur, class counts after it)."""
        sub = _sub_labels(lab, cur)
        n_cls = lab.classes.shape[0]
        clean = np.zeros(n_cls, dtype=bool)
        clean[list(check_sampling_strategy(self.sampling_strategy, sub, "clean-sampling"))] = True
        if np.array_equal(cur, np.arange(int(X.shape[0]))):
            Xc = X  # every sample, in order (the first round)
        else:
            Xc = xp.take(X, from_numpy(cur, xp, device=device_of(X)), axis=0)
        keep = enn_keep(
            Xc,
            sub.codes,
            clean,
            n_cls,
            n_neighbors=k,
            kind_sel=self.kind_sel,
            metric=self.metric,
            working_memory=self.working_memory,
            estimator=estimator,
        )
        fitted(self.nn_, estimator, Xc)
        order = _class_order(keep, sub.codes)
        return cur[order], np.bincount(sub.codes[order], minlength=n_cls)

    @staticmethod
    def _stops(lab: Labels, counts: np.ndarray, allow_minority: bool = False) -> bool:
        """imbalanced-learn's criteria: a class other than the (first-seen) minority fell
        below the original minority count, or a class disappeared."""
        c_min = lab.minority_first_seen
        present = counts > 0
        others = present & (np.arange(counts.shape[0]) != c_min)
        below = bool(np.any(counts[others] < lab.counts[c_min])) and not allow_minority
        return below or bool(np.count_nonzero(present) < counts.shape[0])


class RepeatedEditedNearestNeighbours(_RepeatedENN):
    """Repeat :class:`~gpuknn.resampling.cleaning.EditedNearestNeighbours` until it stops
    removing samples, ``max_iter`` rounds are done, a class other than the minority falls
    below the minority's original size, or a class disappears.

    The minority class of the stopping rule is the smallest, ties -> the class seen first in
    y (imbalanced-learn's ``Counter`` rule); the edited classes are re-derived from
    ``sampling_strategy`` on the labels left at every round.

    Parameters
    ----------
    sampling_strategy : str, list or callable, default "auto"
        Classes edited (``"auto"`` = all but the smallest).
    n_neighbors : int or NearestNeighbors-like object, default 3
        An object with ``fit`` and ``kneighbors`` is cloned and searches every round (its
        ``n_neighbors`` counts the sample itself: ``k = n_neighbors - 1``), as in
        imbalanced-learn.
        Neighbours examined (the sample itself excluded).
    max_iter : int >= 1, default 100
    kind_sel : {"all", "mode"}, default "all"
        As in :class:`~gpuknn.resampling.cleaning.EditedNearestNeighbours`.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    nn_ : NearestNeighbors-like, the search object, fitted on the rows of the last round
    sample_indices_ : int64 array (m,)
        Grouped by class in sorted-label order, ascending within a class.
    n_iter_ : int
        Rounds run (the last one included).

    Notes
    -----
    One k=n_neighbors+1 search per round, over the remaining rows of the edited classes.
    ``sample_indices_`` always indexes ``X_res``: when the very first round removes nothing,
    imbalanced-learn 0.14 composes that round's class-grouping permutation twice, so its
    ``sample_indices_`` then differs from ours (and from the rows it returns) unless y is
    already grouped by class; the returned ``X_res``/``y_res`` agree.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4], [5.0], [5.1], [5.2], [5.3], [0.25]])
    >>> y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> renn = RepeatedEditedNearestNeighbours(sampling_strategy="all", n_neighbors=2)
    >>> renn.fit(X, y).sample_indices_.tolist(), renn.n_iter_
    ([0, 1, 5, 6, 7, 8], 1)
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        n_neighbors: int = 3,
        max_iter: int = 100,
        kind_sel: str = "all",
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.kind_sel = kind_sel
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k = self._check_common()
        max_iter = check_int(self.max_iter, name="max_iter", low=1)
        cur = np.arange(lab.codes.shape[0], dtype=np.int64)
        for it in range(max_iter):  # noqa: B007 - the count is read after the loop
            prev = cur.shape[0]
            cur, counts = self._round(X, lab, cur, k, xp, self._nn_search)
            if cur.shape[0] == prev or self._stops(lab, counts):
                break
        self.n_iter_ = it + 1
        return cur


class AllKNN(_RepeatedENN):
    """Apply :class:`~gpuknn.resampling.cleaning.EditedNearestNeighbours` with 1, 2, …,
    ``n_neighbors`` neighbours in turn, each round on the samples left by the previous one.

    Stops early when a class other than the minority falls below the minority's original
    size (unless ``allow_minority``) or a class disappears. The minority class is the
    smallest, ties -> the class seen first in y; the edited classes are re-derived from
    ``sampling_strategy`` on the labels left at every round.

    Parameters
    ----------
    sampling_strategy : str, list or callable, default "auto"
        Classes edited (``"auto"`` = all but the smallest).
    n_neighbors : int or NearestNeighbors-like object, default 3
        Largest neighbourhood (rounds use 1 .. n_neighbors). An object (imbalanced-learn's
        meaning: its ``n_neighbors`` counts the sample itself) sets the largest
        neighbourhood to ``n_neighbors - 1``; the rounds then search with the engine, as
        imbalanced-learn's rounds use int neighbourhoods.
    kind_sel : {"all", "mode"}, default "all"
    allow_minority : bool, default False
        Do not stop when a class becomes smaller than the minority.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    nn_ : NearestNeighbors-like, the search object, fitted on the rows of the last round
    sample_indices_ : int64 array (m,)
        Grouped by class in sorted-label order, ascending within a class — imbalanced-learn's.

    Notes
    -----
    One k+1 search per round k, over the remaining rows of the edited classes.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4], [5.0], [5.1], [5.2], [5.3], [0.25]])
    >>> y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> AllKNN(sampling_strategy="all", n_neighbors=2).fit(X, y).sample_indices_.tolist()
    [0, 1, 4, 5, 6, 7, 8]
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        n_neighbors: int = 3,
        kind_sel: str = "all",
        allow_minority: bool = False,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.n_neighbors = n_neighbors
        self.kind_sel = kind_sel
        self.allow_minority = allow_minority
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k = self._check_common()
        if not isinstance(self.allow_minority, (bool, np.bool_)):
            raise InvalidInputError(f"allow_minority must be a bool, got {self.allow_minority!r}")
        cur = np.arange(lab.codes.shape[0], dtype=np.int64)
        for kk in range(1, k + 1):
            cur, counts = self._round(X, lab, cur, kk, xp)
            if self._stops(lab, counts, bool(self.allow_minority)):
                break
        return cur
