"""Resampling inside cross-validation, with kNN scorers and their Borda combination.

A sampler must only ever see the training part of a fold: resampling before splitting
leaks (SMOTE points interpolated from validation samples, cleaning decisions that looked at
them). :func:`cross_validate_resampled` splits first, calls ``sampler.fit_resample`` on the
training rows only, and scores the untouched validation rows with kNN scorers: the share
of positive neighbours (``weights="uniform"``) or its ``1/d``-weighted version. One
neighbour search per fold serves every scorer (all k at once, :func:`gpuknn.vote_counts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._backend import array_namespace, check_int, device_of, from_numpy, to_numpy, validate_matrix
from .._delegation import on_input_device, take_rows
from ..errors import InvalidInputError
from ..metrics import borda_rank, roc_auc_score
from ..model_selection import StratifiedKFold
from ..model_selection.cv import check_folds
from ..ops.kneighbors import kneighbors
from ..ops.votes import vote_counts
from ._base import gather

__all__ = ["KNNScorer", "default_knn_scorers", "knn_positive_scores", "ResampledCVResult", "cross_validate_resampled"]

BORDA = "BordaRank"


@dataclass(frozen=True)
class KNNScorer:
    """A kNN scoring rule: ``n_neighbors`` and ``weights`` (``"uniform"`` | ``"distance"``)."""

    n_neighbors: int = 5
    weights: str = "uniform"

    @property
    def name(self) -> str:
        return f"k={self.n_neighbors} {self.weights}"


def default_knn_scorers(
    ks: Sequence[int] = (3, 5, 11), weights: Sequence[str] = ("uniform", "distance")
) -> list[KNNScorer]:
    """Every combination of ``ks`` and ``weights`` (weights outer, k inner)."""
    return [KNNScorer(int(k), w) for w in weights for k in ks]


@on_input_device
def knn_positive_scores(
    X_train: Any,
    y_train: Any,
    X_test: Any,
    scorers: Sequence[KNNScorer],
    *,
    metric: str = "euclidean",
    working_memory: float | None = None,
) -> list[Any]:
    """Positive-class scores of the test rows for each scorer, from one neighbour search.

    Parameters
    ----------
    X_train : array of shape (n, d)
    y_train : array of shape (n,)
        1 = positive, 0 = negative (any namespace, or host).
    X_test : array of shape (m, d), X_train's namespace
    scorers : sequence of KNNScorer
        k larger than n is clipped to n.
    metric, working_memory
        Passed to :func:`gpuknn.kneighbors` (``working_memory`` in MiB).

    Returns
    -------
    list of float64 arrays of shape (m,), in X's namespace
        Share of the (weighted) votes that go to the positive class, in [0, 1].
        Distance weights follow scikit-learn (``1/d``; zero-distance neighbours decide alone).

    Complexity: O(m n d) for the search plus O(m k_max) per weighting.
    """
    if not scorers:
        raise InvalidInputError("scorers is empty")
    xp = array_namespace(X_train, X_test)
    n = int(X_train.shape[0])
    ks = []
    for s in scorers:
        k = check_int(s.n_neighbors, name=f"n_neighbors of scorer {s!r}", low=1)
        if s.weights not in ("uniform", "distance"):
            raise InvalidInputError(f"bad scorer {s!r}: need n_neighbors >= 1 and weights 'uniform'|'distance'")
        if s.weights == "distance" and metric == "inner":
            raise InvalidInputError("weights='distance' is undefined for metric='inner'")
        ks.append(min(k, n))
    D, nbr = kneighbors(X_test, X_train, max(ks), metric=metric, working_memory=working_memory)
    if isinstance(y_train, (np.ndarray, list, tuple)) or array_namespace(y_train) is not xp:
        y01 = from_numpy(np.asarray(to_numpy(y_train)).astype(np.int64), xp, device=device_of(X_train))
    else:
        y01 = xp.astype(y_train, xp.int64)
    lab = gather(y01, nbr)
    out: list[Any] = [None] * len(scorers)
    for w in ("uniform", "distance"):
        pos = [i for i, s in enumerate(scorers) if s.weights == w]
        if not pos:
            continue
        counts = vote_counts(
            lab, [ks[i] for i in pos], n_classes=2, distances=D if w == "distance" else None, weights=w
        )
        counts = xp.astype(counts, xp.float64)
        share = counts[:, :, 1] / xp.sum(counts, axis=2)
        for j, i in enumerate(pos):
            out[i] = share[j, :]
    return out


@dataclass
class ResampledCVResult:
    """Per-fold ROC AUC of each scorer (and of their Borda combination).

    Attributes
    ----------
    names : list of str
        Scorer names, then ``"BordaRank"`` when combined.
    fold_auc : float array of shape (n_folds, len(names))
    train_counts : int array of shape (n_folds, 2)
        Negatives and positives in each training part **after** resampling.
    """

    names: list[str]
    fold_auc: np.ndarray
    train_counts: np.ndarray
    extra: dict = field(default_factory=dict)

    @property
    def mean_auc(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, np.nanmean(self.fold_auc, axis=0))}

    @property
    def std_auc(self) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.names, np.nanstd(self.fold_auc, axis=0))}


@on_input_device
def cross_validate_resampled(
    X: Any,
    y: Any,
    *,
    sampler: Any = None,
    scorers: Sequence[KNNScorer] | None = None,
    cv: Any = None,
    pos_label: Any = None,
    combine: bool = True,
    metric: str = "euclidean",
    working_memory: float | None = None,
    random_state: Any = None,
    callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
) -> ResampledCVResult:
    """Cross-validated ROC AUC of kNN scorers with ``sampler`` applied to training folds only.

    Parameters
    ----------
    X : array of shape (n, d), any namespace
    y : array of shape (n,), binary labels (numeric in any namespace, or host strings)
    sampler : object with ``fit_resample(X, y)``, optional
        Refit in every fold on the training rows (its attributes afterwards are those of the
        last fold). ``None``: no resampling.
    scorers : sequence of KNNScorer, default :func:`default_knn_scorers`
    cv : None, int, splitter or iterable of ``(train, test)`` index pairs
        As scikit-learn's ``cv=`` (:func:`gpuknn.model_selection.cv.check_folds`); default
        ``StratifiedKFold(10, shuffle=True, random_state)``.
    pos_label : label, default the minority class (ties -> lowest label)
    combine : bool
        Also score the Borda-rank combination of the scorers (:func:`gpuknn.metrics.borda_rank`).
    callback : callable ``(fold, train_idx, test_idx)``, optional
        Called before each fold (progress reporting; the library never prints).

    Returns
    -------
    ResampledCVResult

    Complexity: per fold, the sampler plus one O(n_test · n_train · d) neighbour search.

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.resampling import RandomOverSampler
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (90, 2)), rng.normal(3, 1, (10, 2))]; y = np.r_[[0] * 90, [1] * 10]
    >>> r = cross_validate_resampled(X, y, sampler=RandomOverSampler(random_state=0), cv=StratifiedKFold(5))
    >>> r.fold_auc.shape, r.mean_auc["BordaRank"] > 0.9
    ((5, 7), True)
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X")
    y_host = np.asarray(to_numpy(y)) if hasattr(y, "shape") else np.asarray(y)
    if y_host.ndim != 1 or y_host.shape[0] != X.shape[0]:
        raise InvalidInputError(f"y must be 1-D with {X.shape[0]} labels, got shape {y_host.shape}")
    classes, counts = np.unique(y_host, return_counts=True)
    if classes.shape[0] != 2:
        raise InvalidInputError(f"ROC AUC cross-validation needs 2 classes, got {classes.tolist()}")
    if pos_label is None:
        pos_label = classes[int(np.argmin(counts))]
    elif pos_label not in classes:
        raise InvalidInputError(f"pos_label {pos_label!r} is not one of {classes.tolist()}")
    scorers = list(default_knn_scorers() if scorers is None else scorers)
    combine = bool(combine) and len(scorers) > 1
    names = [s.name for s in scorers] + ([BORDA] if combine else [])
    cv = StratifiedKFold(10, shuffle=True, random_state=random_state) if cv is None else cv
    y_in = y if not isinstance(y, (list, tuple)) else y_host
    dev = device_of(X)
    rows, sizes = [], []
    for fold, (tr, te) in enumerate(check_folds(cv, np.zeros((y_host.shape[0], 1)), y_host)):
        if callback is not None:
            callback(fold, tr, te)
        X_tr, y_tr = take_rows(X, tr), take_rows(y_in, tr)
        if sampler is not None:
            X_tr, y_tr = sampler.fit_resample(X_tr, y_tr)
        y_tr01 = (np.asarray(to_numpy(y_tr)) == pos_label).astype(np.int64)
        sizes.append([int((y_tr01 == 0).sum()), int(y_tr01.sum())])
        scores = knn_positive_scores(
            X_tr,
            from_numpy(y_tr01, xp, device=dev),
            take_rows(X, te),
            scorers,
            metric=metric,
            working_memory=working_memory,
        )
        if combine:
            scores.append(borda_rank(scores))
        y_te = from_numpy((y_host[te] == pos_label).astype(np.float64), xp, device=dev)
        rows.append([roc_auc_score(y_te, s) for s in scores])
    return ResampledCVResult(names, np.asarray(rows, dtype=np.float64), np.asarray(sizes, dtype=np.int64))
