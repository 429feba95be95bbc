"""NearMiss (versions 1-3) against imbalanced-learn (run in the test) on every backend."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_xp, gaussian_classes, subsample_classes

from gpuknn.errors import InvalidInputError
from gpuknn.resampling import NearMiss

imb = pytest.importorskip("imblearn.under_sampling")
datasets = pytest.importorskip("sklearn.datasets")


def _breast_cancer():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    return subsample_classes(X, y, (50, 200), 0)


def _digits():
    X, y = datasets.load_digits(return_X_y=True)
    X, y = subsample_classes(X, y, (90, 60, 40, 25, 12), 1)
    # integer pixels tie exactly (sklearn's order among equal distances is not the
    # engine's lower-index rule): a tiny jitter makes every distance distinct
    return X + np.random.default_rng(2).normal(0.0, 1e-3, X.shape), y


def _reference(X, y, **kw):
    ref = imb.NearMiss(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit_resample(X, y)
    return ref


def _check(backend, X, y, **kw):
    ref = _reference(X, y, **kw)
    ours = NearMiss(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        Xr, yr = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    expected = ref.sample_indices_
    assert ours.sample_indices_.dtype == np.int64
    np.testing.assert_array_equal(ours.sample_indices_, expected)  # same order too
    assert_xp(Xr, X[expected], backend)
    assert_xp(yr, y[expected], backend)
    assert ours.sampling_strategy_ == {int(k): int(v) for k, v in ref.sampling_strategy_.items()}


FIXTURES = [(0, (60, 25, 10)), (1, (80, 20)), (2, (40, 30, 30, 7))]


@pytest.mark.parametrize("seed,n", FIXTURES)
@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("strategy,k,k3", [("auto", 3, 3), ("all", 2, 5), ("not majority", 5, 1), ("majority", 1, 2)])
def test_nearmiss_matches_imblearn(backend, seed, n, version, strategy, k, k3):
    X, y = gaussian_classes(seed, n)
    _check(backend, X, y, sampling_strategy=strategy, version=version, n_neighbors=k, n_neighbors_ver3=k3)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_nearmiss_dict_and_float_strategies(backend, version):
    X, y = gaussian_classes(3, (50, 30, 12))
    _check(backend, X, y, sampling_strategy={0: 20, 1: 15}, version=version)
    Xb, yb = gaussian_classes(4, (70, 20))
    _check(backend, Xb, yb, sampling_strategy=0.5, version=version)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_nearmiss_real_data(backend, version):
    X, y = _breast_cancer()
    _check(backend, X, y, version=version)
    X, y = _digits()
    _check(backend, X, y, version=version, n_neighbors=4, n_neighbors_ver3=2)


def test_nearmiss_first_seen_minority(backend):
    """Tied smallest classes: the reference class is the first seen (Counter), the class
    spared by "auto" the lowest (np.unique) — imbalanced-learn's two rules."""
    X, y = gaussian_classes(5, (40, 15, 15))
    y = np.where(y == 1, 7, y)  # labels 0, 2, 7
    first = y[np.flatnonzero(y != 0)[0]]
    assert first in (2, 7)
    for version in (1, 2, 3):
        _check(backend, X, y, version=version)


def test_nearmiss_version3_short_list_warns(backend):
    X, y = gaussian_classes(6, (60, 10))
    with pytest.warns(UserWarning, match="larger than the number of samples"):
        NearMiss(version=3, n_neighbors_ver3=1).fit_resample(backend.asarray(X), backend.asarray(y))
    _check(backend, X, y, version=3, n_neighbors_ver3=1)


def test_nearmiss_string_labels(backend):
    X, y = gaussian_classes(7, (40, 25, 10))
    names = np.array(["ant", "bee", "cow"])[y]
    ours = NearMiss(version=2)
    Xr, yr = ours.fit_resample(backend.asarray(X), names)
    expected = _reference(X, names, version=2).sample_indices_
    np.testing.assert_array_equal(ours.sample_indices_, expected)
    assert isinstance(yr, np.ndarray) and yr.tolist() == names[expected].tolist()
    assert_xp(Xr, X[expected], backend)


def test_nearmiss_bad_arguments(backend):
    X, y = gaussian_classes(8, (30, 8))
    Xb, yb = backend.asarray(X), backend.asarray(y)
    with pytest.raises(InvalidInputError, match="version"):
        NearMiss(version=4).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="version"):
        NearMiss(version=True).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        NearMiss(n_neighbors=0).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        NearMiss(n_neighbors=2.0).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors=9 exceeds"):
        NearMiss(n_neighbors=9).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors_ver3"):
        NearMiss(version=3, n_neighbors_ver3=0).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors_ver3=31 exceeds"):
        NearMiss(version=3, n_neighbors_ver3=31).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="minority"):
        NearMiss(sampling_strategy="minority").fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        NearMiss().fit_resample(Xb, backend.asarray(np.zeros(38, dtype=np.int64)))
    # version 2 reads every minority distance: n_neighbors may exceed the minority size
    _check(backend, X, y, version=2, n_neighbors=9)
