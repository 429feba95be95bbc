"""InstanceHardnessThreshold against imbalanced-learn with the same kNN and the same folds."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.errors import InvalidInputError
from gpuknn.model_selection.splitters import StratifiedKFold
from gpuknn.resampling.hardness import InstanceHardnessThreshold

imb_under = pytest.importorskip("imblearn.under_sampling")
datasets = pytest.importorskip("sklearn.datasets")
from sklearn.model_selection import StratifiedKFold as SkFold  # noqa: E402
from sklearn.model_selection import cross_val_predict
from sklearn.neighbors import KNeighborsClassifier as SkKNN  # noqa: E402


def _random(seed=0, n=(120, 50, 15), d=4):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.concatenate([np.full(m, i) for i, m in enumerate(n)]))
    return rng.normal(size=(y.shape[0], d)) + 0.7 * y[:, None], y


def _digits():  # jittered: integer pixels would tie distances
    X, y = datasets.load_digits(return_X_y=True)
    rng = np.random.default_rng(1)
    keep = np.sort(
        np.concatenate(
            [rng.choice(np.flatnonzero(y == c), m, replace=False) for c, m in zip(range(5), (80, 50, 40, 25, 12))]
        )
    )
    return X[keep] + rng.normal(scale=1e-3, size=X[keep].shape), y[keep]


def _cancer():
    return datasets.load_breast_cancer(return_X_y=True)


CASES = {"random": _random, "digits": _digits, "cancer": _cancer}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("strategy", ["auto", "all", "majority"])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_indices_as_imblearn(backend, case, strategy, seed):
    X, y = CASES[case]()
    ref = imb_under.InstanceHardnessThreshold(
        estimator=SkKNN(algorithm="brute"), sampling_strategy=strategy, random_state=seed, cv=5
    )
    Xe, ye = ref.fit_resample(X, y)
    folds = list(SkFold(5, shuffle=True, random_state=np.random.RandomState(seed)).split(X, y))
    iht = InstanceHardnessThreshold(sampling_strategy=strategy, cv=folds)
    Xr, yr = iht.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(iht.sample_indices_, ref.sample_indices_)
    assert iht.sampling_strategy_ == {int(k): int(v) for k, v in ref.sampling_strategy_.items()}
    assert_xp(Xr, Xe, backend)
    assert_xp(yr, ye, backend)


def test_int_cv_uses_gpuknn_folds(backend):
    X, y = _random(3)
    iht = InstanceHardnessThreshold(random_state=2, cv=4).fit(backend.asarray(X), backend.asarray(y))
    folds = list(StratifiedKFold(4, shuffle=True, random_state=2).split(X, y))
    p = cross_val_predict(SkKNN(algorithm="brute"), X, y, cv=folds, method="predict_proba")[np.arange(y.size), y]
    np.testing.assert_allclose(iht.probabilities_, p, rtol=0, atol=1e-15)
    idx = iht.sample_indices_
    for c, n in iht.sampling_strategy_.items():
        m = np.flatnonzero(y == c)
        thr = np.percentile(p[m], (1 - n / m.size) * 100)
        np.testing.assert_array_equal(idx[y[idx] == c], m[p[m] >= thr])
        assert (y[idx] == c).sum() >= n
    np.testing.assert_array_equal(idx[y[idx] == 2], np.flatnonzero(y == 2))  # minority kept
    again = InstanceHardnessThreshold(random_state=2, cv=4).fit(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(again.sample_indices_, idx)


def test_sklearn_estimator_and_string_labels():
    X, y = _random(4, (60, 20))
    names = np.array(["a", "b"])[y]
    folds = list(SkFold(3, shuffle=True, random_state=np.random.RandomState(5)).split(X, y))
    iht = InstanceHardnessThreshold(estimator=SkKNN(n_neighbors=7, algorithm="brute"), cv=folds)
    Xr, yr = iht.fit_resample(X, names)
    ref = imb_under.InstanceHardnessThreshold(estimator=SkKNN(n_neighbors=7, algorithm="brute"), random_state=5, cv=3)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(iht.sample_indices_, ref.sample_indices_)
    assert isinstance(yr, np.ndarray) and set(yr.tolist()) == {"a", "b"}


def test_argument_errors(backend):
    X, y = _random(6)
    Xb, yb = backend.asarray(X), backend.asarray(y)
    half = [(np.arange(0, 100), np.arange(100, y.size))]
    for sampler, msg in [
        (InstanceHardnessThreshold(cv=1), "cv"),
        (InstanceHardnessThreshold(cv=True), "cv"),
        (InstanceHardnessThreshold(cv="five"), "cv"),
        (InstanceHardnessThreshold(cv=half), "cv"),
        (InstanceHardnessThreshold(estimator=object()), "estimator"),
        (InstanceHardnessThreshold(sampling_strategy="minority"), "sampling_strategy"),
    ]:
        with pytest.raises(InvalidInputError, match=msg):
            sampler.fit_resample(Xb, yb)
    assert host(Xb).shape == X.shape
