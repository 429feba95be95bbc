"""Resampling methods compared under kNN, and the Borda combination of kNN scorers.

Each sampler is applied inside the training folds only
(:func:`gpuknn.resampling.cross_validate_resampled`); the validation fold is scored by
several kNN scorers and by their Borda-rank combination; ROC AUC is averaged over a
stratified 10-fold CV. Methods are ranked per data set (1 = best AUC, ties share the mean
rank) and the ranks averaged over data sets.

Data sets are available offline: scikit-learn's bundled sets made imbalanced by a
one-vs-rest split (minority subsampled where it is not rare), and generated ones. All are
standardised with the statistics of the whole set (label-free, so no label leak).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy
from ..model_selection import StratifiedKFold
from ..resampling import (
    SMOTE,
    SMOTEENN,
    CNNTomek,
    CondensedNearestNeighbour,
    EditedNearestNeighbours,
    NeighbourhoodCleaningRule,
    OneSidedSelection,
    RandomOverSampler,
    RandomUnderSampler,
    SMOTETomek,
    TomekLinks,
)
from ..resampling.cv import KNNScorer, cross_validate_resampled, default_knn_scorers
from .overlap_study import make_overlap_domain

__all__ = ["imbalanced_datasets", "default_samplers", "mean_ranks", "ResamplingStudyResult", "resampling_study"]


def _one_vs_rest(X, y, positive, rng, keep_share=None):
    pos = np.flatnonzero(y == positive)
    neg = np.flatnonzero(y != positive)
    if keep_share is not None:  # subsample the positives to keep_share of the negatives
        pos = np.sort(rng.choice(pos, size=max(10, int(round(keep_share * neg.size))), replace=False))
    idx = np.sort(np.concatenate([neg, pos]))
    return X[idx], (y[idx] == positive).astype(np.int64)


def imbalanced_datasets(*, random_state: Any = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Host ``{name: (X, y)}``, y 1 = positive (minority), X standardised.

    ``digits-0``/``digits-8`` (one digit vs rest, ~10 %), ``wine-0`` and ``breast-cancer``
    (minority subsampled to 10 % of the majority), ``iris-versicolor`` (12 of 112),
    ``gauss-overlap`` (5-D Gaussians 0.5 sd apart, 5 % positives, 2000 rows) and
    ``make-classification`` (scikit-learn generator, 5 % positives, 2 % label noise).
    """
    from sklearn import datasets as skd  # noqa: PLC0415 - bundled data, study only

    rng = np.random.default_rng(random_state)
    out = {}
    d = skd.load_digits()
    out["digits-0"] = _one_vs_rest(d.data, d.target, 0, rng)
    out["digits-8"] = _one_vs_rest(d.data, d.target, 8, rng)
    w = skd.load_wine()
    out["wine-0"] = _one_vs_rest(w.data, w.target, 0, rng, keep_share=0.1)
    b = skd.load_breast_cancer()
    out["breast-cancer"] = _one_vs_rest(b.data, b.target, 0, rng, keep_share=0.1)  # 0 = malignant
    i = skd.load_iris()
    out["iris-versicolor"] = _one_vs_rest(i.data, i.target, 1, rng, keep_share=0.12)
    X, y = make_overlap_domain(2000, 0.5, 0.05, random_state=int(rng.integers(2**31)))
    out["gauss-overlap"] = (np.asarray(X), np.asarray(y))
    X, y = skd.make_classification(
        n_samples=2000,
        n_features=10,
        n_informative=4,
        weights=[0.95, 0.05],
        flip_y=0.02,
        class_sep=0.8,
        random_state=int(rng.integers(2**31)),
    )
    out["make-classification"] = (X, y.astype(np.int64))
    for name, (X, y) in out.items():
        sd = X.std(axis=0)
        out[name] = ((X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), y)
    return out


def default_samplers(random_state: Any = 0) -> dict[str, Any]:
    """``{name: sampler}``; ``"none"`` (no resampling) is ``None``."""
    r = random_state
    return {
        "none": None,
        "ROS": RandomOverSampler(random_state=r),
        "RUS": RandomUnderSampler(random_state=r),
        "Tomek": TomekLinks(),
        "ENN": EditedNearestNeighbours(),
        "NCL": NeighbourhoodCleaningRule(),
        "CNN": CondensedNearestNeighbour(random_state=r),
        "OSS": OneSidedSelection(random_state=r),
        "CNN+Tomek": CNNTomek(random_state=r),
        "SMOTE": SMOTE(random_state=r),
        "SMOTE+Tomek": SMOTETomek(random_state=r),
        "SMOTE+ENN": SMOTEENN(random_state=r),
    }


def mean_ranks(values: np.ndarray, axis: int) -> np.ndarray:
    """Ranks along ``axis`` (1 = largest value, ties share the mean rank), averaged over the
    other leading axis. ``values`` is 2-D; returns the mean rank of each entry of ``axis``."""
    from scipy.stats import rankdata  # noqa: PLC0415

    r = rankdata(-np.asarray(values), axis=axis)
    return r.mean(axis=1 - axis)


@dataclass
class ResamplingStudyResult:
    """``auc[d, m, s]``: mean CV AUC of data set ``datasets[d]``, sampler ``samplers[m]``,
    scorer ``scorers[s]`` (last = ``"BordaRank"``); ``train_size[d, m]`` the mean training
    size after resampling."""

    datasets: list[str]
    samplers: list[str]
    scorers: list[str]
    auc: np.ndarray
    train_size: np.ndarray
    seconds: np.ndarray

    def sampler_ranks(self, scorer: str = "BordaRank") -> dict[str, float]:
        """Mean rank of each sampler over the data sets, for one scorer (1 = best)."""
        s = self.scorers.index(scorer)
        return dict(zip(self.samplers, mean_ranks(self.auc[:, :, s], axis=1).tolist()))

    def scorer_ranks(self) -> dict[str, float]:
        """Mean rank of each scorer (Borda included) over every (data set, sampler) pair."""
        flat = self.auc.reshape(-1, self.auc.shape[2])
        return dict(zip(self.scorers, mean_ranks(flat, axis=1).tolist()))


def resampling_study(
    *,
    datasets: dict[str, tuple[Any, Any]] | None = None,
    samplers: dict[str, Any] | None = None,
    scorers: Sequence[KNNScorer] | None = None,
    n_splits: int = 10,
    random_state: Any = 0,
    xp: Any = None,
    callback: Callable[[str, str], None] | None = None,
) -> ResamplingStudyResult:
    """Run every sampler on every data set (see the module docstring).

    ``callback(dataset, sampler)`` is called before each cell. Data are moved to ``xp``
    (default NumPy); folds are the same for every sampler of a data set.

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.resampling import RandomOverSampler
    >>> X, y = make_overlap_domain(200, 1.0, 0.1, random_state=0)
    >>> r = resampling_study(datasets={"toy": (X, y)}, samplers={"none": None, "ROS": RandomOverSampler()}, n_splits=3)
    >>> r.auc.shape
    (1, 2, 7)
    """
    import time  # noqa: PLC0415

    datasets = imbalanced_datasets(random_state=random_state) if datasets is None else datasets
    samplers = default_samplers(random_state) if samplers is None else samplers
    scorers = default_knn_scorers() if scorers is None else list(scorers)
    xp = array_namespace() if xp is None else xp
    names = [s.name for s in scorers] + ["BordaRank"]
    auc = np.zeros((len(datasets), len(samplers), len(names)))
    size = np.zeros((len(datasets), len(samplers)))
    secs = np.zeros_like(size)
    for d, (dname, (X, y)) in enumerate(datasets.items()):
        Xx, yx = from_numpy(np.asarray(X, dtype=np.float64), xp), from_numpy(np.asarray(y), xp)
        for m, (mname, sampler) in enumerate(samplers.items()):
            if callback is not None:
                callback(dname, mname)
            cv = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
            t0 = time.perf_counter()
            r = cross_validate_resampled(Xx, yx, sampler=sampler, scorers=scorers, cv=cv, pos_label=1)
            secs[d, m] = time.perf_counter() - t0
            auc[d, m] = np.nanmean(r.fold_auc, axis=0)
            size[d, m] = r.train_counts.sum(axis=1).mean()
    return ResamplingStudyResult(list(datasets), list(samplers), names, auc, size, secs)
