"""Condensing under-samplers: Hart's condensed nearest neighbour (CNN), one-sided selection
(OSS) and CNN followed by Tomek-link removal.

CNN is inherently sequential (each addition changes the store that classifies the next
candidate). It is batched as follows: candidates are taken in blocks of ``block_size``; one
:func:`gpuknn.ops.kneighbors.kneighbors` call gives the whole block's k nearest store members; the
block is then scanned with vectorised votes for the *first* misclassified candidate, which is
added to the store, and only the rest of the block is updated against the new member. The
distances among a block's candidates come from one more search per block (the block against
itself), so an addition costs a column of that matrix and a vote -- no search and one host
sync per addition, not a ``kneighbors`` call each. Python work is O(additions + blocks), the
arithmetic O(n · |store| · d + n · block_size · d), and the result does not depend on
``block_size``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from .._backend import check_int, device_of, from_numpy, to_numpy
from ..base import BaseEstimator
from ..errors import InvalidInputError
from ..neighbors import KNeighborsClassifier
from ..ops.kneighbors import kneighbors
from ..ops.votes import votes_for_many_k
from ._base import BaseSampler, Labels, gather
from .cleaning import tomek_keep

__all__ = ["CondensedNearestNeighbour", "OneSidedSelection", "CNNTomek"]


def _positive_int(v: Any, name: str, default: int | None = None) -> int:
    if v is None and default is not None:
        return default
    return check_int(v, name=name, low=1)


def _vote(labels: Any, k: int, n_classes: int) -> np.ndarray:
    """Host predictions of a uniform k-NN vote (ties -> lowest class)."""
    if k == 1:
        return to_numpy(labels[:, 0]).astype(np.int64)
    return to_numpy(votes_for_many_k(labels, [k], n_classes=n_classes)[0, ...]).astype(np.int64)


_SEARCH_METRICS = ("euclidean", "sqeuclidean", "cosine", "correlation")


class _SeededCondenser(BaseSampler):
    """Shared seeding: per resampled class, ``n_seeds_S`` members drawn without replacement;
    the ``n_neighbors`` classifier (int or object) and the fitted ``estimators_``."""

    _sampling_type = "clean-sampling"

    def _classifier(self) -> tuple[int, str, Any]:
        """``(k, metric, template)`` of ``n_neighbors``: None or an int k gives gpuknn's
        ``KNeighborsClassifier(k)`` with the sampler's ``metric``; a k-neighbours classifier
        object (scikit-learn's or gpuknn's, uniform weights) is cloned and gives k and its
        metric (scikit-learn's ``minkowski`` with p=2: euclidean), as imbalanced-learn's
        ``n_neighbors`` does. The votes run on the engine either way."""
        value = 1 if self.n_neighbors is None else self.n_neighbors
        if not hasattr(value, "get_params"):
            k = _positive_int(value, "n_neighbors")
            opts = dict(metric=self.metric, working_memory=self.working_memory, n_jobs=self.n_jobs)
            return k, self.metric, KNeighborsClassifier(n_neighbors=k, **opts)
        if not all(callable(getattr(value, m, None)) for m in ("fit", "predict", "kneighbors")):
            raise InvalidInputError(f"n_neighbors must be None, an int >= 1 or a KNeighborsClassifier, got {value!r}")
        p = value.get_params()
        k = check_int(p.get("n_neighbors"), name="n_neighbors.n_neighbors", low=1)
        if p.get("weights", "uniform") not in ("uniform", None):
            raise InvalidInputError(f"n_neighbors={value!r}: only uniform weights are supported")
        metric = p.get("metric", "euclidean")
        if metric == "minkowski":  # both libraries' default (p=2 is euclidean)
            metric = "euclidean" if p.get("p", 2) == 2 and not p.get("metric_params") else None
        if metric not in _SEARCH_METRICS:
            raise InvalidInputError(
                f"n_neighbors={value!r}: its metric is not one of gpuknn's {_SEARCH_METRICS} (or minkowski, p=2)"
            )
        return k, metric, clone(value)

    def _fit_estimator(self, template: Any, X: Any, lab: Labels, rows: np.ndarray, xp: Any) -> Any:
        """A clone of ``template`` fitted on the rows ``rows`` and their labels (scikit-learn's
        estimators on host copies), for ``estimators_``."""
        Xc = xp.take(X, from_numpy(np.asarray(rows, dtype=np.int64), xp, device=device_of(X)), axis=0)
        yc = lab.classes[lab.codes[rows]]
        est = clone(template)
        return est.fit(Xc, yc) if isinstance(est, BaseEstimator) else est.fit(to_numpy(Xc), yc)

    def _seeds(self, lab: Labels) -> dict[int, np.ndarray]:
        rng = np.random.default_rng(self.random_state)
        n_seeds = _positive_int(self.n_seeds_S, "n_seeds_S")
        out = {}
        for c in self._strategy:
            members = np.flatnonzero(lab.codes == c)
            if n_seeds > members.shape[0]:
                raise InvalidInputError(
                    f"n_seeds_S={n_seeds} exceeds the {members.shape[0]} samples of class {lab.label(c)!r}"
                )
            out[c] = members[rng.choice(members.shape[0], size=n_seeds, replace=False)].astype(np.int64)
        self.seed_indices_ = {lab.label(c): s for c, s in out.items()}
        return out


class CondensedNearestNeighbour(_SeededCondenser):
    """Hart's condensed nearest neighbour rule, per class, as in imbalanced-learn.

    For each class to resample: the store C starts as all minority samples plus
    ``n_seeds_S`` random members of the class; the class's members are visited in index
    order, and each one that C's ``n_neighbors``-NN vote misclassifies is added to C. The
    kept samples of the class are the seeds followed by the additions, in order.

    Parameters
    ----------
    sampling_strategy : str or list, default "auto"
        Classes to condense (``"auto"`` = all but the minority); others are kept whole.
    random_state : int, Generator or None
    n_neighbors : int, KNeighborsClassifier or None, default None (= 1)
        A k-neighbours classifier object (scikit-learn's or gpuknn's, uniform weights; its
        metric euclidean-family, cosine or correlation) gives k and the metric of the votes,
        and is cloned into ``estimators_``, as imbalanced-learn's.
    n_seeds_S : int, default 1
    max_passes : int or None, default 1
        imbalanced-learn makes **one pass**. Hart's original repeats passes over the
        remaining members until one adds nothing: ``max_passes=None``.
    block_size : int, default 512
        Candidates per batched neighbour search (speed only; results do not depend on it).
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array (m,), grouped by class (sorted labels).
    seed_indices_ : dict ``{label: int64 array}`` of the drawn seeds.
    estimators_ : list of KNeighborsClassifier
        One per resampled class (sorted labels), fitted on its final store (minority samples,
        seeds, additions), as imbalanced-learn's; gpuknn's for an int ``n_neighbors``.

    Notes
    -----
    Differences from imbalanced-learn: seeds are drawn with ``numpy.random.default_rng``
    without replacement (imbalanced-learn: ``RandomState.randint``, with replacement);
    members already in the store are skipped. imbalanced-learn's skip list mixes indices
    *within* the class with indices *into y* (it can skip misclassified members whose
    position in the class equals a store member's index in y); this implementation does not
    reproduce that, so both agree exactly when the condensed class occupies the first rows
    of y (tested) and may differ otherwise. The minority class: smallest, ties -> first
    seen in y. Equal distances -> earlier store member (minority in index order, seeds,
    additions).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [3.0], [3.1], [1.0]]); y = np.array([0, 0, 0, 0, 0, 1])
    >>> cnn = CondensedNearestNeighbour(random_state=0).fit(X, y)
    >>> sorted(cnn.sample_indices_.tolist())[-1]
    5
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        n_neighbors: int | None = None,
        n_seeds_S: int = 1,
        max_passes: int | None = 1,
        block_size: int = 512,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.n_seeds_S = n_seeds_S
        self.max_passes = max_passes
        self.block_size = block_size
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k, self._search_metric, template = self._classifier()
        self.estimators_ = []
        passes = None if self.max_passes is None else _positive_int(self.max_passes, "max_passes")
        block = _positive_int(self.block_size, "block_size")
        seeds = self._seeds(lab)
        c_min = lab.minority_first_seen
        y = from_numpy(lab.codes, xp, device=device_of(X))
        parts = []
        for c in range(lab.classes.shape[0]):
            members = np.flatnonzero(lab.codes == c)
            if c not in self._strategy:
                parts.append(members)
                continue
            store = list(np.flatnonzero(lab.codes == c_min)) + list(seeds[c])
            added = self._condense(X, y, members, store, c, k, passes, block, lab.classes.shape[0], xp)
            # imbalanced-learn's estimator of the class: fitted on the final store
            self.estimators_.append(self._fit_estimator(template, X, lab, np.asarray(store), xp))
            parts.append(np.concatenate([seeds[c], np.asarray(added, dtype=np.int64)]))
        return np.concatenate(parts).astype(np.int64)

    def _condense(self, X, y, members, store, c, k, passes, block, n_cls, xp) -> list[int]:
        in_store = np.zeros(int(X.shape[0]), dtype=bool)
        in_store[store] = True
        added: list[int] = []
        done = 0
        while passes is None or done < passes:
            before = len(added)
            todo = members[~in_store[members]]
            for b0 in range(0, todo.shape[0], block):
                for g in self._scan_block(X, y, todo[b0 : b0 + block], store, c, k, n_cls, xp):
                    store.append(g)
                    in_store[g] = True
                    added.append(g)
            done += 1
            if len(added) == before:
                break
        return added

    def _scan_block(self, X, y, cand, store, c, k, n_cls, xp):
        """Yield, in order, the candidates of one block that the growing store misclassifies."""
        dev = device_of(X)
        opts = dict(metric=self._search_metric, working_memory=self.working_memory)
        sign = -1.0 if self._search_metric == "inner" else 1.0  # "inner": larger = closer
        store_x = from_numpy(np.asarray(store, dtype=np.int64), xp, device=dev)
        kk = min(k, len(store))
        Xr = xp.take(X, from_numpy(cand, xp, device=dev), axis=0)
        D, nbr = kneighbors(Xr, xp.take(X, store_x, axis=0), kk, **opts)
        D, L = sign * D, gather(y, gather(store_x, nbr))
        # Distances among the block's candidates, (n_b, n_b) in candidate order: the column
        # of a candidate that joins the store updates the rows after it.
        Db, Ib = kneighbors(Xr, Xr, int(cand.shape[0]), **opts)
        M = sign * xp.take_along_axis(Db, xp.argsort(Ib, axis=1), axis=1)
        del Db, Ib
        first = 0  # candidates before this block position have been decided
        while cand.shape[0]:
            wrong = np.flatnonzero(_vote(L, kk, n_cls) != c)
            if wrong.size == 0:
                return
            j = int(wrong[0])
            g = int(cand[j])
            yield g
            cand, D, L = cand[j + 1 :], D[j + 1 :, :], L[j + 1 :, :]
            first += j + 1
            if cand.shape[0] == 0:
                return
            d_new = M[first:, first - 1 : first]
            l_new = xp.full((cand.shape[0], 1), c, dtype=L.dtype, device=dev)
            D, L = xp.concat([D, d_new], axis=1), xp.concat([L, l_new], axis=1)
            if kk < k:
                kk += 1  # the store was smaller than k: the new member simply joins
                order = xp.argsort(D, axis=1, stable=True)
            else:
                order = xp.argsort(D, axis=1, stable=True)[:, :k]  # new member last: ties keep older
            D, L = xp.take_along_axis(D, order, axis=1), xp.take_along_axis(L, order, axis=1)


class OneSidedSelection(_SeededCondenser):
    """Kubat & Matwin's one-sided selection, as in imbalanced-learn.

    For each class to resample: C = all minority samples + ``n_seeds_S`` random members;
    the other members are classified by C's ``n_neighbors``-NN vote (one batched search, no
    store growth) and the misclassified ones are kept with the seeds. Tomek links are then
    removed from the result (only members of the resampled classes are dropped).

    Parameters
    ----------
    sampling_strategy : str or list, default "auto"
    random_state : int, Generator or None
    n_neighbors : int, KNeighborsClassifier or None, default None (= 1)
        A k-neighbours classifier object (scikit-learn's or gpuknn's, uniform weights; its
        metric euclidean-family, cosine or correlation) gives k and the metric of the votes,
        and is cloned into ``estimators_``, as imbalanced-learn's.
    n_seeds_S : int, default 1
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array (m,)
        imbalanced-learn's order: class by class (sorted labels), seeds first, then the
        misclassified members ascending; minus the Tomek-link members.
    seed_indices_ : dict ``{label: int64 array}``
    estimators_ : list of KNeighborsClassifier
        One per resampled class (sorted labels), fitted on its minority samples and seeds,
        as imbalanced-learn's; gpuknn's for an int ``n_neighbors``.

    Notes
    -----
    Seeds come from ``numpy.random.default_rng`` without replacement (imbalanced-learn:
    ``RandomState.randint``); with the same seeds the indices are imbalanced-learn's
    (tested). Minority: smallest class, ties -> first seen in y. O(n (n_min + 1) d) plus
    the Tomek search O(m² d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [3.0], [3.1], [1.0]]); y = np.array([0, 0, 0, 0, 0, 1])
    >>> OneSidedSelection(random_state=0).fit_resample(X, y)[1].tolist()[-1]
    1
    """

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        n_neighbors: int | None = None,
        n_seeds_S: int = 1,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.n_seeds_S = n_seeds_S
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        k, metric, template = self._classifier()
        self.estimators_ = []
        seeds = self._seeds(lab)
        dev = device_of(X)
        opts = dict(metric=self.metric, working_memory=self.working_memory)
        minority = np.flatnonzero(lab.codes == lab.minority_first_seen)
        parts = []
        for c in range(lab.classes.shape[0]):
            members = np.flatnonzero(lab.codes == c)
            if c not in self._strategy:
                parts.append(members)
                continue
            store = np.concatenate([minority, seeds[c]])
            self.estimators_.append(self._fit_estimator(template, X, lab, store, xp))
            rest = members[~np.isin(members, seeds[c])]
            kept = seeds[c]
            if rest.size:
                take = lambda idx: xp.take(X, from_numpy(idx, xp, device=dev), axis=0)  # noqa: E731
                kk = min(k, store.shape[0])
                nbr = kneighbors(
                    take(rest),
                    take(store),
                    kk,
                    return_distance=False,
                    metric=metric,
                    working_memory=self.working_memory,
                )
                L = from_numpy(lab.codes[store], xp, device=dev)
                pred = _vote(gather(L, nbr), kk, lab.classes.shape[0])
                kept = np.concatenate([kept, rest[pred != c]])
            parts.append(kept)
        idx = np.concatenate(parts).astype(np.int64)
        clean = np.zeros(lab.classes.shape[0], dtype=bool)
        clean[list(self._strategy)] = True
        sub = xp.take(X, from_numpy(idx, xp, device=dev), axis=0)
        return idx[tomek_keep(sub, lab.codes[idx], clean, **opts)]


class CNNTomek(CondensedNearestNeighbour):
    """:class:`CondensedNearestNeighbour` followed by :class:`~gpuknn.resampling.TomekLinks`
    on the condensed set (only members of the condensed classes are removed).

    Not in imbalanced-learn; the second step mirrors :class:`OneSidedSelection`'s. Same
    parameters and attributes as :class:`CondensedNearestNeighbour`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [3.0], [3.1], [1.0]]); y = np.array([0, 0, 0, 0, 0, 1])
    >>> int(CNNTomek(random_state=0).fit_resample(X, y)[1].sum())
    1
    """

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        idx = super()._resample(X, lab, xp)
        clean = np.zeros(lab.classes.shape[0], dtype=bool)
        clean[list(self._strategy)] = True
        sub = xp.take(X, from_numpy(idx, xp, device=device_of(X)), axis=0)
        return idx[tomek_keep(sub, lab.codes[idx], clean, metric=self.metric, working_memory=self.working_memory)]
