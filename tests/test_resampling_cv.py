"""Resampling inside cross-validation: the sampler never sees a validation row."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score as sk_auc
from sklearn.neighbors import KNeighborsClassifier as SkKNN

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import borda_rank
from gpuknn.model_selection import StratifiedKFold
from gpuknn.resampling import SMOTE, KNNScorer, cross_validate_resampled, default_knn_scorers, knn_positive_scores


def _data(seed=0, n_neg=120, n_pos=20, d=3):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 1, (n_neg, d)), rng.normal(1.2, 1, (n_pos, d))]
    y = np.r_[np.zeros(n_neg, dtype=np.int64), np.ones(n_pos, dtype=np.int64)]
    return X, y


class SpySampler:
    """Records the rows it is given (column 0 holds each row's id), then over-samples."""

    def __init__(self, seen):
        self.seen = seen

    def fit_resample(self, X, y):
        self.seen.append(np.asarray(to_numpy(X)[:, 0]).astype(np.int64))
        return SMOTE(random_state=0).fit_resample(X, y)


def test_sampler_sees_training_rows_only(xp, to_xp):
    X, y = _data()
    X[:, 0] = np.arange(X.shape[0])  # a row id the spy can read back
    seen, folds = [], []
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    res = cross_validate_resampled(
        to_xp(X), to_xp(y), sampler=SpySampler(seen), cv=cv, callback=lambda f, tr, te: folds.append((tr, te))
    )
    assert len(seen) == len(folds) == 5
    for ids, (tr, te) in zip(seen, folds):
        np.testing.assert_array_equal(np.sort(ids), tr)  # exactly the training rows
        assert np.intersect1d(ids, te).size == 0
    # SMOTE balanced every training part: 96 negatives, 96 positives after resampling
    np.testing.assert_array_equal(res.train_counts, np.tile([96, 96], (5, 1)))


def test_knn_scores_match_sklearn_predict_proba(xp, to_xp):
    X, y = _data(1)
    Xt, yt, Xv = X[::2], y[::2], X[1::2]
    scorers = default_knn_scorers((1, 4, 9))
    got = knn_positive_scores(to_xp(Xt), to_xp(yt), to_xp(Xv), scorers)
    for s, g in zip(scorers, got):
        ref = SkKNN(n_neighbors=s.n_neighbors, weights=s.weights).fit(Xt, yt).predict_proba(Xv)[:, 1]
        np.testing.assert_allclose(to_numpy(g), ref, rtol=1e-12, atol=1e-12)


def test_fold_aucs_match_sklearn(xp, to_xp):
    X, y = _data(2)
    cv = StratifiedKFold(4, shuffle=True, random_state=1)
    scorers = [KNNScorer(3), KNNScorer(7, "distance")]
    res = cross_validate_resampled(to_xp(X), to_xp(y), scorers=scorers, cv=cv)
    assert res.names == ["k=3 uniform", "k=7 distance", "BordaRank"]
    for f, (tr, te) in enumerate(cv.split(X, y)):
        p = [
            SkKNN(n_neighbors=s.n_neighbors, weights=s.weights).fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
            for s in scorers
        ]
        expected = [sk_auc(y[te], q) for q in p] + [sk_auc(y[te], to_numpy(borda_rank([np.asarray(q) for q in p])))]
        np.testing.assert_allclose(res.fold_auc[f], expected, rtol=1e-12)
    assert set(res.mean_auc) == set(res.names)


def test_string_labels_and_pos_label(xp, to_xp):
    X, y = _data(3)
    names = np.array(["healthy", "sick"])[y]
    a = cross_validate_resampled(to_xp(X), names, cv=StratifiedKFold(3), scorers=[KNNScorer(5)], combine=False)
    b = cross_validate_resampled(to_xp(X), to_xp(y), cv=StratifiedKFold(3), scorers=[KNNScorer(5)], pos_label=1)
    np.testing.assert_allclose(a.fold_auc, b.fold_auc)
    assert a.names == ["k=5 uniform"]


def test_bad_input(xp, to_xp):
    X, y = _data(4)
    with pytest.raises(InvalidInputError, match="2 classes"):
        cross_validate_resampled(to_xp(X), to_xp(np.zeros_like(y)))
    with pytest.raises(InvalidInputError, match="pos_label"):
        cross_validate_resampled(to_xp(X), to_xp(y), pos_label=7)
    Xn = X.copy()
    Xn[5, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        cross_validate_resampled(to_xp(Xn), to_xp(y))
    with pytest.raises(InvalidInputError, match="scorer"):
        knn_positive_scores(to_xp(X), to_xp(y), to_xp(X), [KNNScorer(0)])
