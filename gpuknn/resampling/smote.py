"""SMOTE (Chawla et al. 2002) and its two cleaned variants, SMOTE + Tomek links and
SMOTE + ENN (Batista et al. 2004), as in imbalanced-learn.

The k minority neighbours of every minority sample come from one batched
:func:`gpuknn.ops.kneighbors.kneighbors` call per class; the random choices (base sample,
neighbour, step) are drawn on the host and all new rows are built in one vectorised
expression in X's namespace.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from ..errors import InvalidInputError
from ._base import BaseSampler, Labels, fitted, neighbors_param, self_neighbors
from .cleaning import EditedNearestNeighbours, TomekLinks

__all__ = ["SMOTE", "SMOTETomek", "SMOTEENN"]


def check_class_sizes(strategy: dict, lab: Labels, k: int, what: str) -> None:
    """Every class to over-sample has at least ``k + 1`` members (a sample and k neighbours
    of its class); else :class:`InvalidInputError` saying ``what`` needs how many."""
    for c, n_new in strategy.items():
        if n_new > 0 and lab.counts[c] < k + 1:
            raise InvalidInputError(
                f"{what} needs at least {k + 1} samples in class {lab.label(c)!r}, which has {int(lab.counts[c])}"
            )


def interpolate(
    X_base: Any, X_nbr: Any, nn: Any, rows: np.ndarray, cols: np.ndarray, steps: np.ndarray, gap: Any = None
) -> tuple[Any, Any]:
    """``X_base[rows] + steps * gap * (X_nbr[nn[rows, cols]] - X_base[rows])`` in X's namespace.

    ``rows``, ``cols`` and ``steps`` are host arrays; ``gap`` (optional, xp array (n_new,) of
    X's dtype) scales each difference. Returns the new rows and the picked neighbour indices
    (xp, into X_nbr).
    """
    xp = array_namespace(X_base)
    dev = device_of(X_base)
    k = int(nn.shape[1])
    rows_x = from_numpy(rows.astype(np.int64), xp, device=dev)
    cols_x = from_numpy(cols.astype(np.int64), xp, device=dev)
    pick = xp.take(xp.reshape(nn, (-1,)), rows_x * k + cols_x)
    base = xp.take(X_base, rows_x, axis=0)
    diff = xp.take(X_nbr, pick, axis=0) - base
    if gap is not None:
        diff = diff * gap[:, None]
    step = xp.astype(from_numpy(steps, xp, device=dev), X_base.dtype)[:, None]
    return base + step * diff, pick


def record_segments(
    sampler: Any, new_rows: list, new_codes: list, bases: list, nbrs: list, xp: Any
) -> tuple[Any, np.ndarray]:
    """Set ``base_indices_`` / ``neighbor_indices_`` (each new point's segment, host int64)
    and return the new rows (or None) and their class codes, as ``_resample`` does."""
    sampler.base_indices_ = np.concatenate(bases) if bases else np.zeros(0, dtype=np.int64)
    sampler.neighbor_indices_ = np.concatenate(nbrs) if nbrs else np.zeros(0, dtype=np.int64)
    if not new_rows:
        return None, np.zeros(0, dtype=np.int64)
    return xp.concat(new_rows, axis=0), np.concatenate(new_codes)


class SMOTE(BaseSampler):
    """Synthetic minority over-sampling: new points on segments between neighbours.

    For each class to over-sample, a new point is ``x_i + u (x_nn - x_i)`` with ``x_i`` a
    uniformly drawn member of the class, ``x_nn`` one of its ``k_neighbors`` nearest
    members (uniform; the point itself excluded) and ``u ~ U[0, 1)``.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        ``"auto"`` = every class but the majority is brought to the majority's count.
    random_state : int, Generator or None
    k_neighbors : int or NearestNeighbors-like object, default 5
        An int: the neighbours of each sample, itself excluded. An object with ``fit`` and
        ``kneighbors`` (gpuknn's or scikit-learn's ``NearestNeighbors``) is cloned and used
        for the searches; its ``n_neighbors`` counts the sample itself (imbalanced-learn's
        meaning), and its own metric replaces ``metric``.
        Each over-sampled class needs at least ``k + 1`` samples.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples added}``
    nn_k_ : NearestNeighbors-like
        The search object (``gpuknn.NearestNeighbors(k + 1)`` for an int ``k_neighbors``),
        fitted on the last over-sampled class, as imbalanced-learn's.
    base_indices_, neighbor_indices_ : int64 arrays (n_new,)
        Indices into the input of each new point's base sample and chosen neighbour
        (not in imbalanced-learn; they make the construction checkable).

    Notes
    -----
    The output is X followed by the new rows, class by class (sorted labels), as in
    imbalanced-learn. The random stream differs (``numpy.random.default_rng``: base rows,
    neighbour columns and steps drawn per class), so the points differ for the same seed.
    Complexity: O(n_c² d) per class for the search, O(n_new d) to build.

    Raises
    ------
    InvalidInputError
        A class to over-sample has fewer than ``k_neighbors + 1`` samples.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0], [6.0, 6.0]])
    >>> y = np.array([1, 1, 1, 0, 0, 0, 0])
    >>> Xr, yr = SMOTE(k_neighbors=2, random_state=0).fit_resample(X, y)
    >>> Xr.shape, int(yr.sum())
    ((8, 2), 4)
    """

    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        metric: str = "euclidean",
        working_memory: float | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.metric = metric
        self.working_memory = working_memory

    def _resample(self, X: Any, lab: Labels, xp: Any) -> tuple[Any, np.ndarray]:
        k, self.nn_k_, est = neighbors_param(
            self.k_neighbors, "k_neighbors", metric=self.metric, working_memory=self.working_memory
        )
        check_class_sizes(self._strategy, lab, k, f"SMOTE with k_neighbors={k}")
        rng = np.random.default_rng(self.random_state)
        dev = device_of(X)
        new_rows, new_codes, bases, nbrs = [], [], [], []
        for c, n_new in self._strategy.items():
            if n_new == 0:
                continue
            members = np.flatnonzero(lab.codes == c)
            Xc = xp.take(X, from_numpy(members, xp, device=dev), axis=0)
            nn = self_neighbors(Xc, k, metric=self.metric, working_memory=self.working_memory, estimator=est)
            fitted(self.nn_k_, est, Xc)
            rows = rng.integers(0, members.shape[0], size=n_new)
            cols = rng.integers(0, k, size=n_new)
            steps = rng.random(n_new)
            X_new, pick = interpolate(Xc, Xc, nn, rows, cols, steps)
            new_rows.append(X_new)
            new_codes.append(np.full(n_new, c, dtype=np.int64))
            bases.append(members[rows])
            nbrs.append(members[to_numpy(pick).astype(np.int64)])
        return record_segments(self, new_rows, new_codes, bases, nbrs, xp)


class _SmoteThenClean(BaseSampler):
    _sampling_type = "over-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def _validate_estimator(self) -> None:
        """Set ``smote_`` and the cleaner's attribute (``tomek_``/``enn_``) to the steps
        ``fit_resample`` runs: the given objects, or the defaults built from this sampler's
        parameters (``n_jobs`` passed to the default cleaner), as imbalanced-learn's private
        method of the same name, which its tests call."""
        self.smote_ = (
            self.smote
            if self.smote is not None
            else SMOTE(
                sampling_strategy=self.sampling_strategy,
                random_state=self.random_state,
                k_neighbors=self.k_neighbors,
                metric=self.metric,
                working_memory=self.working_memory,
            )
        )
        setattr(self, self._cleaner_attr, self._cleaner())

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        """SMOTE, then the cleaner on SMOTE's output (see the class docstring)."""
        self._validate_estimator()
        smote = self.smote_
        self.sampling_strategy_ = None
        X_s, y_s = smote.fit_resample(X, y)
        self.sampling_strategy_ = smote.sampling_strategy_
        self.n_features_in_ = smote.n_features_in_
        if hasattr(smote, "feature_names_in_"):
            self.feature_names_in_ = smote.feature_names_in_
        return getattr(self, self._cleaner_attr).fit_resample(X_s, y_s)


class SMOTETomek(_SmoteThenClean):
    """SMOTE, then :class:`TomekLinks` with ``sampling_strategy="all"`` (both members of
    every link removed) on the over-sampled set — imbalanced-learn's defaults.

    Parameters
    ----------
    sampling_strategy, random_state, k_neighbors, metric, working_memory
        For the default :class:`SMOTE`.
    smote : SMOTE, optional
        Use this over-sampler instead.
    tomek : TomekLinks, optional
        Use this cleaner instead.
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    smote_, tomek_ : the fitted steps (``tomek_.sample_indices_`` index SMOTE's output).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0], [6.0, 6.0]])
    >>> y = np.array([1, 1, 1, 0, 0, 0, 0])
    >>> SMOTETomek(k_neighbors=2, random_state=0).fit_resample(X, y)[0].shape
    (8, 2)
    """

    _cleaner_attr = "tomek_"

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        smote: Any = None,
        tomek: Any = None,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.smote = smote
        self.tomek = tomek
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _cleaner(self) -> Any:
        if self.tomek is not None:
            return self.tomek
        return TomekLinks(
            sampling_strategy="all", metric=self.metric, working_memory=self.working_memory, n_jobs=self.n_jobs
        )


class SMOTEENN(_SmoteThenClean):
    """SMOTE, then :class:`EditedNearestNeighbours` with ``sampling_strategy="all"``
    (every class edited, 3 neighbours, ``kind_sel="all"``) — imbalanced-learn's defaults.

    Parameters
    ----------
    sampling_strategy, random_state, k_neighbors, metric, working_memory
        For the default :class:`SMOTE`.
    smote : SMOTE, optional
    enn : EditedNearestNeighbours, optional
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the neighbour searches
        are batched on X's device).

    Attributes
    ----------
    smote_, enn_ : the fitted steps (``enn_.sample_indices_`` index SMOTE's output).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [6.0, 5.0], [5.0, 6.0], [6.0, 6.0]])
    >>> y = np.array([1, 1, 1, 0, 0, 0, 0])
    >>> SMOTEENN(k_neighbors=2, random_state=0).fit_resample(X, y)[0].shape
    (8, 2)
    """

    _cleaner_attr = "enn_"

    def __init__(
        self,
        *,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        k_neighbors: int = 5,
        smote: Any = None,
        enn: Any = None,
        metric: str = "euclidean",
        working_memory: float | None = None,
        n_jobs: int | None = None,
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.k_neighbors = k_neighbors
        self.smote = smote
        self.enn = enn
        self.metric = metric
        self.working_memory = working_memory
        self.n_jobs = n_jobs

    def _cleaner(self) -> Any:
        if self.enn is not None:
            return self.enn
        return EditedNearestNeighbours(
            sampling_strategy="all", metric=self.metric, working_memory=self.working_memory, n_jobs=self.n_jobs
        )
