"""Instance hardness threshold (imbalanced-learn's ``InstanceHardnessThreshold``): drop the
samples a cross-validated classifier finds hardest, by default gpuknn's kNN classifier."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._delegation import take_rows
from ..base import clone
from ..errors import InvalidInputError
from ..model_selection.cv import check_folds
from ..model_selection.splitters import StratifiedKFold
from ..neighbors import KNeighborsClassifier
from ._base import BaseSampler, Labels

__all__ = ["InstanceHardnessThreshold"]


_SEED_HIGH = np.iinfo(np.int32).max


def _seeded(est: Any, random_state: Any) -> Any:
    """``est`` with every ``random_state`` parameter (nested ``*__random_state`` too) set
    from ``random_state``, one draw per parameter in sorted name order: scikit-learn's
    ``_set_random_states``, which imbalanced-learn applies to its estimator (the same draws
    for an int seed, so both get the same forest)."""
    keys = sorted(k for k in est.get_params(deep=True) if k == "random_state" or k.endswith("__random_state"))
    if not keys:
        return est
    if isinstance(random_state, np.random.Generator):
        draw = lambda: int(random_state.integers(_SEED_HIGH))  # noqa: E731
    else:
        rs = check_random_state(random_state)
        draw = lambda: int(rs.randint(_SEED_HIGH))  # noqa: E731
    return est.set_params(**{k: draw() for k in keys})


class InstanceHardnessThreshold(BaseSampler):
    """Keep, in each class to under-sample, the samples whose cross-validated probability of
    their own class is highest.

    The probabilities come from ``cross_val_predict(estimator, X, y, method="predict_proba")``
    over stratified folds. A class with ``N`` samples asked to keep ``n`` keeps the samples
    whose probability is ``>=`` the ``100 (1 - n/N)``-th percentile (``numpy.percentile``,
    linear interpolation) of its probabilities -- so ties at the threshold may keep more
    than ``n``, as in imbalanced-learn.

    Parameters
    ----------
    estimator : object with ``fit`` and ``predict_proba``, optional
        Default ``gpuknn.KNeighborsClassifier()`` (5 neighbours, euclidean, uniform).
        **imbalanced-learn's default is a 100-tree random forest**; give its estimator to
        gpuknn (or gpuknn's kNN to imbalanced-learn) to compare them. A fresh copy (same
        ``get_params``) is fitted per fold on the rows of X (X's namespace) and the class
        codes ``0..K-1`` (int64, X's namespace and device); ``classes_`` gives the order of
        the ``predict_proba`` columns (a class absent from a training fold has probability 0).
    sampling_strategy : str, float, dict or callable, default "auto"
        imbalanced-learn's meaning for under-samplers; ``"auto"`` = every class but the
        minority.
    random_state : int, numpy Generator or None
        Seed of the fold shuffle and of the estimator's ``random_state`` parameters (see Notes).
    cv : int, splitter or iterable of (train, test) pairs, default 5
        An int ``k >= 2``: ``gpuknn.model_selection.StratifiedKFold(k, shuffle=True,
        random_state=random_state)``. A splitter with ``split(X, y)`` (gpuknn's or
        scikit-learn's, e.g. ``sklearn.model_selection.StratifiedKFold``) or index pairs are
        used as given; every sample must be in exactly one test fold.
    n_jobs : int or None, default None
        Accepted for imbalanced-learn compatibility; it has no effect (the folds run one
        after the other, each search batched on X's device).

    Attributes
    ----------
    sample_indices_ : int64 array of shape (m,)
        Class by class in sorted-label order, index order within a class.
    sampling_strategy_ : dict ``{label: samples asked to keep}``
    probabilities_ : float64 host array of shape (n,)
        Cross-validated probability of each sample's own class.
    estimator_ : the unfitted estimator cloned for every fold (seeded as in Notes).

    Notes
    -----
    imbalanced-learn shuffles its folds with ``StratifiedKFold(cv, shuffle=True,
    random_state=RandomState(random_state))``; gpuknn's ``StratifiedKFold`` deals classes to
    folds differently (``numpy.random.default_rng``), so with an int ``cv`` the folds -- and
    hence the kept samples -- differ. Passing scikit-learn's ``StratifiedKFold(cv,
    shuffle=True, random_state=numpy.random.RandomState(seed))`` as ``cv`` reproduces
    imbalanced-learn's folds for ``random_state=seed`` and gives the same ``sample_indices_``
    with an equivalent estimator. Unlike imbalanced-learn (which indexes the probability
    columns by the label values), the column of each sample's class is found through
    ``classes_``, so any labels work. As imbalanced-learn (scikit-learn's
    ``_set_random_states``), every ``random_state`` parameter of a given estimator (nested
    ones too, in sorted ``get_params(deep=True)`` order) is set to
    ``RandomState(random_state).randint(2**31 - 1)`` draws, so the result depends on this
    sampler's ``random_state`` only, not on the estimator's own seed (a ``numpy.random.Generator``
    ``random_state`` draws them with ``integers``).

    Only the n probabilities (and class counts) cross to the host; X stays in its namespace.
    Cost: ``cv`` fits and ``predict_proba`` calls (for kNN: one search of each test fold in
    its training folds).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 1, (30, 2)), rng.normal(2, 1, (10, 2))])
    >>> y = np.array([0] * 30 + [1] * 10)
    >>> iht = InstanceHardnessThreshold(random_state=0).fit(X, y)
    >>> bool(np.all(np.diff(iht.sample_indices_) > 0)), int((y[iht.sample_indices_] == 1).sum())
    (True, 10)
    """

    _sampling_type = "under-sampling"

    def __init__(
        self,
        *,
        estimator: Any = None,
        sampling_strategy: Any = "auto",
        random_state: Any = None,
        cv: Any = 5,
        n_jobs: int | None = None,
    ):
        self.estimator = estimator
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.cv = cv
        self.n_jobs = n_jobs

    def _checked_estimator(self) -> Any:
        est = self.estimator
        if est is None:
            return KNeighborsClassifier()
        for attr in ("fit", "predict_proba", "get_params"):
            if not callable(getattr(est, attr, None)):
                raise InvalidInputError(
                    f"estimator must be a classifier with fit, predict_proba and get_params; {est!r} has no {attr}"
                )
        return _seeded(clone(est), self.random_state)

    def _folds(self, X: Any, codes: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        cv = self.cv
        if isinstance(cv, bool) or cv is None:
            raise InvalidInputError(f"cv must be an int >= 2, a splitter or (train, test) pairs, got {cv!r}")
        if isinstance(cv, numbers.Integral):
            if int(cv) < 2:
                raise InvalidInputError(f"cv must be an int >= 2, got {cv}")
            cv = StratifiedKFold(int(cv), shuffle=True, random_state=self.random_state)
        folds = check_folds(cv, X, codes)
        tests = np.sort(np.concatenate([te for _, te in folds]))
        if tests.shape[0] != codes.shape[0] or np.any(tests != np.arange(codes.shape[0])):
            raise InvalidInputError("cv: every sample must be in exactly one test fold (cross_val_predict)")
        return folds

    def _resample(self, X: Any, lab: Labels, xp: Any) -> np.ndarray:
        template = self._checked_estimator()
        self.estimator_ = template
        codes = lab.codes
        folds = self._folds(X, codes)
        codes_x = lab.codes_xp(xp, device_of(X))
        proba = np.zeros(codes.shape[0], dtype=np.float64)
        for train, test in folds:
            est = clone(template)
            est.fit(take_rows(X, train), take_rows(codes_x, train))
            P = est.predict_proba(take_rows(X, test))
            cls = np.asarray(to_numpy(est.classes_)).astype(np.int64)
            want = codes[test]
            pos = np.clip(np.searchsorted(cls, want), 0, cls.shape[0] - 1)
            present = cls[pos] == want
            pp = array_namespace(P)
            col = from_numpy(pos[:, None], pp, device=device_of(P))
            p_true = to_numpy(pp.take_along_axis(P, col, axis=1)[:, 0]).astype(np.float64)
            proba[test] = np.where(present, p_true, 0.0)
        self.probabilities_ = proba
        parts = []
        for c in range(lab.classes.shape[0]):
            members = np.flatnonzero(codes == c)
            if c in self._strategy:
                p = proba[members]
                thr = np.percentile(p, (1.0 - self._strategy[c] / members.shape[0]) * 100.0)
                members = members[p >= thr]
            parts.append(members)
        return np.concatenate(parts).astype(np.int64)
