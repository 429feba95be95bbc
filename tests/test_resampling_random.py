"""Random over/under-sampling and the sampling_strategy rules (imbalanced-learn as oracle)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.resampling import RandomOverSampler, RandomUnderSampler

imb_over = pytest.importorskip("imblearn.over_sampling")
imb_under = pytest.importorskip("imblearn.under_sampling")


def _data(seed=0, n=(50, 20, 8)):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.concatenate([np.full(m, i) for i, m in enumerate(n)]))
    return rng.normal(size=(y.shape[0], 2)), y


OVER = ["auto", "minority", "not minority", "not majority", "all", {1: 30, 2: 25}, lambda y: {2: 20}]
UNDER = ["auto", "majority", "not minority", "not majority", "all", {0: 10, 1: 5}]


@pytest.mark.parametrize("strategy", OVER)
def test_over_sampler(xp, to_xp, strategy):
    X, y = _data()
    ros = RandomOverSampler(sampling_strategy=strategy, random_state=0)
    Xr, yr = ros.fit_resample(to_xp(X), to_xp(y))
    ref = imb_over.RandomOverSampler(sampling_strategy=strategy, random_state=0)
    Xe, ye = ref.fit_resample(X, y)
    assert ros.sampling_strategy_ == {int(k): int(v) for k, v in ref.sampling_strategy_.items()}
    np.testing.assert_array_equal(np.bincount(to_numpy(yr)), np.bincount(ye))
    idx = ros.sample_indices_
    np.testing.assert_array_equal(idx[: y.shape[0]], np.arange(y.shape[0]))
    np.testing.assert_array_equal(to_numpy(Xr), X[idx])
    np.testing.assert_array_equal(to_numpy(yr), y[idx])
    np.testing.assert_array_equal(y[idx[y.shape[0] :]], ye[y.shape[0] :])  # same class blocks


@pytest.mark.parametrize("strategy", UNDER)
@pytest.mark.parametrize("replacement", [False, True])
def test_under_sampler(xp, to_xp, strategy, replacement):
    X, y = _data(1)
    rus = RandomUnderSampler(sampling_strategy=strategy, random_state=0, replacement=replacement)
    Xr, yr = rus.fit_resample(to_xp(X), to_xp(y))
    ref = imb_under.RandomUnderSampler(sampling_strategy=strategy, random_state=0, replacement=replacement)
    Xe, ye = ref.fit_resample(X, y)
    np.testing.assert_array_equal(to_numpy(yr), ye)  # class-grouped order, same counts
    idx = rus.sample_indices_
    np.testing.assert_array_equal(to_numpy(Xr), X[idx])
    if not replacement:
        assert np.unique(idx).size == idx.size


def test_float_strategies_and_reproducibility(xp, to_xp):
    X, y = _data(2, (60, 15))
    _, yo = RandomOverSampler(sampling_strategy=0.5, random_state=1).fit_resample(to_xp(X), to_xp(y))
    _, yu = RandomUnderSampler(sampling_strategy=0.5, random_state=1).fit_resample(to_xp(X), to_xp(y))
    assert np.bincount(to_numpy(yo)).tolist() == [60, 30]
    assert np.bincount(to_numpy(yu)).tolist() == [30, 15]
    a = RandomUnderSampler(random_state=3).fit(to_xp(X), to_xp(y)).sample_indices_
    b = RandomUnderSampler(random_state=3).fit(to_xp(X), to_xp(y)).sample_indices_
    np.testing.assert_array_equal(a, b)


def test_string_labels_stay_host(xp, to_xp):
    X, y = _data(3, (30, 10))
    names = np.array(["no", "yes"])[y]
    Xr, yr = RandomOverSampler(random_state=0).fit_resample(to_xp(X), names)
    assert isinstance(yr, np.ndarray) and (yr == "yes").sum() == 30
    assert Xr.shape == (60, 2)


def test_bad_strategies(xp, to_xp):
    X, y = _data(4)
    bad = [
        (RandomOverSampler(sampling_strategy="majority"), "majority"),
        (RandomUnderSampler(sampling_strategy="minority"), "minority"),
        (RandomUnderSampler(sampling_strategy=0.5), "binary"),
        (RandomUnderSampler(sampling_strategy={0: 100}), "under-sampling cannot"),
        (RandomOverSampler(sampling_strategy={5: 100}), "not present"),
        (RandomOverSampler(sampling_strategy=[1]), "list"),
        (RandomOverSampler(sampling_strategy="most"), "must be one of"),
        (RandomOverSampler(sampling_strategy=1.5), r"\(0, 1\]"),
    ]
    for sampler, msg in bad:
        with pytest.raises(InvalidInputError, match=msg):
            sampler.fit_resample(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        RandomOverSampler().fit_resample(to_xp(X), to_xp(np.zeros(y.shape[0], dtype=np.int64)))
