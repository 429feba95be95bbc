"""Adaptive SMOTE variants: ADASYN (He et al. 2008) and Borderline-SMOTE (Han et al. 2005),
with imbalanced-learn 0.14's semantics.

Both decide *where* to generate from the classes of each sample's neighbours in the whole
data set (one batched :func:`gpuknn.ops.kneighbors.kneighbors` call per class), then build every
new point in one vectorised expression in X's namespace, as :class:`~gpuknn.resampling.SMOTE`
does. The random numbers are drawn on the host with :func:`numpy.random.default_rng` **in the
order imbalanced-learn draws them from its ``RandomState``** (same calls, same sizes, same
re-seeding), so a stream that replays ``RandomState`` gives imbalanced-learn's points.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.random import default_rng

from .._backend import device_of, from_numpy, to_numpy
from ..errors import InvalidInputError
from ..ops.limits import check_working_memory
from ._base import BaseSampler, Labels, fitted, gather, neighbors_param, self_neighbors
from .smote import check_class_sizes, interpolate, record_segments

__all__ = ["ADASYN", "BorderlineSMOTE"]

_KINDS = ("borderline-1", "borderline-2")


def _check_metric_args(self: Any) -> None:
    if not isinstance(self.metric, str):
        raise InvalidInputError(f"metric must be a string, got {self.metric!r}")
    if self.working_memory is not None:
        check_working_memory(self.working_memory, None)  # refuses all but a positive number of MiB


class ADASYN(BaseSampler):
    """Adaptive synthetic over-sampling: more new points where the class is surrounded by others.

    For each class ``c`` to over-sample by ``n`` samples: every member ``x_i`` gets the share
    ``r_i = m_i / n_neighbors`` of its ``n_neighbors`` nearest samples (whole data set, the
    point itself excluded) that are **not** of class ``c`` (one-vs-rest), normalised to sum
    to 1; it seeds ``g_i = rint(r_i * n)`` new points ``x_i + u (x_nn - x_i)``, ``x_nn`` one
    of its ``n_neighbors`` nearest members of ``c`` (uniform) and ``u ~ U[0, 1)``. The class
    thus gains ``sum(g_i)`` samples, which rounding may make differ from ``n``.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        ``"auto"`` = every class but the majority is brought (about) to the majority's count.
    random_state : int, Generator or None
        Seeds :func:`numpy.random.default_rng`; one stream for the whole fit.
    n_neighbors : int or NearestNeighbors-like object, default 5
        Used for the weights (whole data) and for the interpolation (the class only): each
        over-sampled class needs at least ``k + 1`` samples. An object with ``fit`` and
        ``kneighbors`` is cloned and searches instead (its ``n_neighbors`` counts the sample
        itself, so ``k = n_neighbors - 1``; its own metric), as in imbalanced-learn.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples asked}`` (imbalanced-learn's, before rounding)
    nn_ : NearestNeighbors-like
        The search object (``gpuknn.NearestNeighbors(k + 1)`` for an int ``n_neighbors``),
        fitted on the last over-sampled class, as imbalanced-learn's.
    weights_ : dict ``{label: float64 array (n_c,)}``
        The normalised ratios ``r_i`` of the class's members (in index order).
    n_generated_ : dict ``{label: int64 array (n_c,)}``
        ``g_i``, the number of new points seeded by each member.
    base_indices_, neighbor_indices_ : int64 arrays (n_new,)
        Indices into the input of each new point's seed and chosen neighbour.

    Notes
    -----
    Draws, per class in label order: the neighbour column of each new point
    (``integers(0, n_neighbors, n_new)``), then the steps (``random(n_new)``) — the order and
    sizes of imbalanced-learn's ``choice`` and ``uniform`` on its ``RandomState``. The point
    itself is removed from its neighbour list by index (imbalanced-learn drops the first
    column), which only differs among exact duplicates.

    Raises
    ------
    InvalidInputError
        A class to over-sample has fewer than ``n_neighbors + 1`` samples; no neighbour of
        any member is of another class (imbalanced-learn's ``RuntimeError``); the rounding
        leaves nothing to generate (its ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5], [0.2, 0.8],
    ...               [0.9, 0.4], [5.0, 5.0], [0.6, 0.1], [0.8, 0.7], [5.0, 5.5]])
    >>> y = np.array([0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1])
    >>> ada = ADASYN(n_neighbors=2, random_state=0).fit(X, y)
    >>> ada.weights_[1].tolist(), ada.n_generated_[1].tolist(), ada.base_indices_.tolist()
    ([0.25, 0.5, 0.25], [1, 2, 1], [7, 9, 9, 10])
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        n_neighbors: int = 5,
        metric: str = "euclidean",
        working_memory: float | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.working_memory = working_memory

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        k, self.nn_, est = neighbors_param(
            self.n_neighbors, "n_neighbors", metric=self.metric, working_memory=self.working_memory
        )
        _check_metric_args(self)
        check_class_sizes(self._strategy, lab, k, f"ADASYN with n_neighbors={k}")
        rng = default_rng(self.random_state)
        dev = device_of(X)
        codes_x = lab.codes_xp(xp, dev)
        kw = dict(metric=self.metric, working_memory=self.working_memory)
        new_rows, new_codes, bases, nbrs = [], [], [], []
        self.weights_, self.n_generated_ = {}, {}
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            members = np.flatnonzero(lab.codes == c)
            nn_all = self_neighbors(X, k, rows=members, estimator=est, **kw)
            other = to_numpy(xp.sum(xp.astype(gather(codes_x, nn_all) != c, xp.int64), axis=1))
            ratio = other.astype(np.float64) / k
            if not np.sum(ratio):
                raise InvalidInputError(
                    f"ADASYN: no neighbour of class {lab.label(c)!r} belongs to another class "
                    f"(n_neighbors={k}), so its weights are 0/0; use SMOTE for this data"
                )
            ratio /= np.sum(ratio)
            n_gen = np.rint(ratio * n_new).astype(np.int64)
            total = int(n_gen.sum())
            if not total:
                raise InvalidInputError(
                    f"ADASYN: the weights of class {lab.label(c)!r} round to no new sample "
                    f"for sampling_strategy={self.sampling_strategy!r}"
                )
            self.weights_[lab.label(c)] = ratio
            self.n_generated_[lab.label(c)] = n_gen
            Xc = xp.take(X, from_numpy(members, xp, device=dev), axis=0)
            nn = self_neighbors(Xc, k, estimator=est, **kw)
            fitted(self.nn_, est, Xc)
            rows = np.repeat(np.arange(members.shape[0], dtype=np.int64), n_gen)
            cols = rng.integers(0, k, size=total)
            steps = rng.random(total)
            X_new, pick = interpolate(Xc, Xc, nn, rows, cols, steps)
            new_rows.append(X_new)
            new_codes.append(np.full(total, c, dtype=np.int64))
            bases.append(members[rows])
            nbrs.append(members[to_numpy(pick).astype(np.int64)])
        return record_segments(self, new_rows, new_codes, bases, nbrs, xp)


class BorderlineSMOTE(BaseSampler):
    """SMOTE from the samples in danger: those whose neighbours are mostly, not all, of other classes.

    For each class ``c`` to over-sample, a member is **in danger** when ``m'`` of its
    ``m_neighbors`` nearest samples (whole data set, itself excluded) are not of class ``c``
    with ``m_neighbors / 2 <= m' < m_neighbors`` (all of them: noise, left out). A class
    with no sample in danger is not over-sampled. Otherwise ``n`` new points
    ``x_i + u (x_nn - x_i)`` are made from uniformly drawn (seed, neighbour) pairs, seeds in
    danger, ``u ~ U[0, 1)``, and ``x_nn`` one of the seed's ``k_neighbors`` nearest

    * ``"borderline-1"``: members of class ``c``;
    * ``"borderline-2"``: samples of any class; for a neighbour of another class the
      difference is also scaled by ``v ~ U[0, 0.5)`` (the point stays nearer the seed).

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
    random_state : int, Generator or None
        Seeds :func:`numpy.random.default_rng` (see Notes).
    k_neighbors : int or NearestNeighbors-like object, default 5
        Borderline-1: each over-sampled class needs at least ``k + 1`` samples.
    m_neighbors : int or NearestNeighbors-like object, default 10
        Neighbours deciding the danger; needs ``m + 1`` samples in all. For either, an object
        with ``fit`` and ``kneighbors`` is cloned and searches instead (its ``n_neighbors``
        counts the sample itself: ``k = n_neighbors - 1``; its own metric), as in
        imbalanced-learn.
    kind : {"borderline-1", "borderline-2"}, default "borderline-1"
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples asked}``
    in_danger_indices_ : dict ``{label: int64 array}``
        Indices into the input of the class's samples in danger (only classes that have
        some); ``in_danger_indices`` is the same dict under imbalanced-learn's name.
    nn_k_, nn_m_ : NearestNeighbors-like
        The search objects (``gpuknn.NearestNeighbors(k + 1)`` for an int), fitted on the
        rows last searched, as imbalanced-learn's.
    base_indices_, neighbor_indices_ : int64 arrays (n_new,)
        Indices into the input of each new point's seed and chosen neighbour.

    Notes
    -----
    As in imbalanced-learn, the stream is **re-created from ``random_state`` for each class**
    (an int seed gives every class the same draws; a Generator is shared): pair indices
    ``integers(0, n_danger * k_neighbors, n)``, then steps ``random(n)``; borderline-2 then
    re-creates it once more for the scales ``uniform(0, 0.5, n_other)`` of the pairs with
    another class, in order. The point itself is removed from its neighbour lists by index.

    Raises
    ------
    InvalidInputError
        Bad ``kind``; too few samples for ``k_neighbors`` or ``m_neighbors``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[2.5, 1.1], [0.2, 0.1], [3.3, 3.7], [2.4, 2.9], [2.2, 3.7], [3.3, 0.0],
    ...               [4.4, 1.1], [3.9, 1.7], [4.5, 3.2], [2.2, 2.7]])
    >>> y = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    >>> bs = BorderlineSMOTE(k_neighbors=2, m_neighbors=3, random_state=0)
    >>> Xr, yr = bs.fit_resample(X, y)
    >>> Xr.shape, bs.in_danger_indices_[1].tolist(), sorted(set(bs.base_indices_.tolist()))
    ((12, 2), [6], [6])
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        m_neighbors: int = 10,
        kind: str = "borderline-1",
        metric: str = "euclidean",
        working_memory: float | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.m_neighbors = m_neighbors
        self.kind = kind
        self.metric = metric
        self.working_memory = working_memory

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        kw = dict(metric=self.metric, working_memory=self.working_memory)
        k, self.nn_k_, est_k = neighbors_param(self.k_neighbors, "k_neighbors", **kw)
        m, self.nn_m_, est_m = neighbors_param(self.m_neighbors, "m_neighbors", **kw)
        if not isinstance(self.kind, str) or self.kind not in _KINDS:
            raise InvalidInputError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        _check_metric_args(self)
        n = int(X.shape[0])
        if m + 1 > n:
            raise InvalidInputError(f"m_neighbors={m} needs at least {m + 1} samples, got {n}")
        two = self.kind == "borderline-2"
        if two and k + 1 > n:
            raise InvalidInputError(f"k_neighbors={k} needs at least {k + 1} samples, got {n}")
        if not two:
            for c, n_new in self._strategy.items():
                if n_new > 0 and lab.counts[c] < k + 1:
                    raise InvalidInputError(
                        f"BorderlineSMOTE with k_neighbors={k} needs at least {k + 1} samples "
                        f"in class {lab.label(c)!r}, which has {int(lab.counts[c])}"
                    )
        dev = device_of(X)
        codes_x = lab.codes_xp(xp, dev)
        kw = dict(metric=self.metric, working_memory=self.working_memory)
        new_rows, new_codes, bases, nbrs = [], [], [], []
        self.in_danger_indices_ = {}
        self.in_danger_indices = {}  # imbalanced-learn's name (no trailing underscore)
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            members = np.flatnonzero(lab.codes == c)
            nn_m = self_neighbors(X, m, rows=members, estimator=est_m, **kw)
            fitted(self.nn_m_, est_m, X)
            other = xp.sum(xp.astype(gather(codes_x, nn_m) != c, xp.int64), axis=1)
            danger = to_numpy((2 * other >= m) & (other < m)).astype(bool)
            if not danger.any():
                continue
            seeds = members[danger]
            self.in_danger_indices_[lab.label(c)] = seeds
            self.in_danger_indices[lab.label(c)] = seeds
            rng = default_rng(self.random_state)
            flat = rng.integers(0, seeds.shape[0] * k, size=n_new)
            steps = rng.random(n_new)
            rows, cols = flat // k, flat % k
            if two:
                nn = self_neighbors(X, k, rows=seeds, estimator=est_k, **kw)
                fitted(self.nn_k_, est_k, X)
                pick_h = to_numpy(nn)[rows, cols]
                mask = lab.codes[pick_h] != c
                scale = np.ones(n_new, dtype=np.float64)
                scale[mask] = default_rng(self.random_state).uniform(0.0, 0.5, size=int(mask.sum()))
                scale_x = xp.astype(from_numpy(scale, xp, device=dev), X.dtype)
                X_seed = xp.take(X, from_numpy(seeds, xp, device=dev), axis=0)
                X_new, pick = interpolate(X_seed, X, nn, rows, cols, steps, gap=scale_x)
                nbrs.append(pick_h.astype(np.int64))
            else:
                Xc = xp.take(X, from_numpy(members, xp, device=dev), axis=0)
                pos = np.flatnonzero(danger)
                nn = self_neighbors(Xc, k, rows=pos, estimator=est_k, **kw)
                fitted(self.nn_k_, est_k, Xc)
                X_seed = xp.take(Xc, from_numpy(pos, xp, device=dev), axis=0)
                X_new, pick = interpolate(X_seed, Xc, nn, rows, cols, steps)
                nbrs.append(members[to_numpy(pick).astype(np.int64)])
            new_rows.append(X_new)
            new_codes.append(np.full(n_new, c, dtype=np.int64))
            bases.append(seeds[rows])
        return record_segments(self, new_rows, new_codes, bases, nbrs, xp)
