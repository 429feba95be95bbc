"""Tomek links, ENN and NCL against imbalanced-learn (run in the test) on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.resampling import EditedNearestNeighbours, NeighbourhoodCleaningRule, TomekLinks

imb = pytest.importorskip("imblearn.under_sampling")


def _data(seed, n=(60, 25, 10), d=3, spread=1.2):
    """Overlapping Gaussian classes, shuffled: continuous values, so no distance ties."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(i * spread, 1.0, (m, d)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    perm = rng.permutation(y.shape[0])
    return X[perm], y[perm]


def _imblearn_indices(sampler, X, y):
    sampler.fit_resample(X, y)
    return sampler.sample_indices_


FIXTURES = [(0, (60, 25, 10)), (1, (80, 20)), (2, (40, 30, 30, 7))]


@pytest.mark.parametrize("seed,n", FIXTURES)
@pytest.mark.parametrize("strategy", ["auto", "all", "not majority", "majority"])
def test_tomek_matches_imblearn(xp, to_xp, seed, n, strategy):
    X, y = _data(seed, n)
    ours = TomekLinks(sampling_strategy=strategy)
    Xr, yr = ours.fit_resample(to_xp(X), to_xp(y))
    expected = _imblearn_indices(imb.TomekLinks(sampling_strategy=strategy), X, y)
    np.testing.assert_array_equal(ours.sample_indices_, expected)
    np.testing.assert_array_equal(to_numpy(yr), y[expected])
    np.testing.assert_allclose(to_numpy(Xr), X[expected])
    ref = imb.TomekLinks(sampling_strategy=strategy).fit(X, y)
    assert ours.sampling_strategy_ == {int(k): int(v) for k, v in ref.sampling_strategy_.items()}


def test_tomek_small_fixture(xp, to_xp):
    X = np.array([[0.0], [1.0], [1.1], [5.0], [6.0], [6.05]])
    y = np.array([0, 0, 1, 0, 0, 1])
    expected = _imblearn_indices(imb.TomekLinks(), X, y)
    got = TomekLinks().fit(to_xp(X), to_xp(y)).sample_indices_
    np.testing.assert_array_equal(got, expected)
    assert got.tolist() == [0, 2, 3, 5]  # both majority members of the two links removed
    both = TomekLinks(sampling_strategy="all").fit(to_xp(X), to_xp(y)).sample_indices_
    assert both.tolist() == [0, 3]


@pytest.mark.parametrize("seed,n", FIXTURES)
@pytest.mark.parametrize("kind_sel", ["all", "mode"])
@pytest.mark.parametrize("strategy,k", [("auto", 3), ("all", 3), ("not majority", 5), ("all", 1)])
def test_enn_matches_imblearn(xp, to_xp, seed, n, kind_sel, strategy, k):
    X, y = _data(seed, n)
    ours = EditedNearestNeighbours(sampling_strategy=strategy, kind_sel=kind_sel, n_neighbors=k)
    Xr, yr = ours.fit_resample(to_xp(X), to_xp(y))
    expected = _imblearn_indices(
        imb.EditedNearestNeighbours(sampling_strategy=strategy, kind_sel=kind_sel, n_neighbors=k), X, y
    )
    np.testing.assert_array_equal(ours.sample_indices_, expected)  # same (class-grouped) order
    np.testing.assert_array_equal(to_numpy(yr), y[expected])


def test_enn_string_labels_and_list_strategy(xp, to_xp):
    X, y = _data(3, (50, 20, 12))
    names = np.array(["cat", "dog", "eel"])[y]
    ours = EditedNearestNeighbours(sampling_strategy=["dog", "eel"], kind_sel="mode")
    Xr, yr = ours.fit_resample(to_xp(X), names)
    # imblearn's "mode" cannot take string labels (scipy.stats.mode): run it on the codes
    expected = _imblearn_indices(imb.EditedNearestNeighbours(sampling_strategy=[1, 2], kind_sel="mode"), X, y)
    np.testing.assert_array_equal(ours.sample_indices_, expected)
    assert isinstance(yr, np.ndarray) and yr.tolist() == names[expected].tolist()


@pytest.mark.parametrize("seed,n", FIXTURES + [(4, (30, 30))])
@pytest.mark.parametrize(
    "strategy,k,t", [("auto", 3, 0.5), ("all", 3, 0.5), ("auto", 5, 0.1), ("not majority", 3, 1.5)]
)
def test_ncl_matches_imblearn(xp, to_xp, seed, n, strategy, k, t):
    X, y = _data(seed, n)
    ours = NeighbourhoodCleaningRule(sampling_strategy=strategy, n_neighbors=k, threshold_cleaning=t)
    ours.fit(to_xp(X), to_xp(y))
    ref = imb.NeighbourhoodCleaningRule(sampling_strategy=strategy, n_neighbors=k, threshold_cleaning=t)
    expected = _imblearn_indices(ref, X, y)
    np.testing.assert_array_equal(ours.sample_indices_, expected)
    assert sorted(ours.classes_to_clean_) == sorted(int(c) for c in ref.classes_to_clean_)


def test_ncl_removes_majority_around_misclassified_minority(xp, to_xp):
    X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [5.3]])
    y = np.array([0, 0, 0, 0, 0, 1, 1, 0])
    got = NeighbourhoodCleaningRule().fit(to_xp(X), to_xp(y)).sample_indices_
    np.testing.assert_array_equal(got, _imblearn_indices(imb.NeighbourhoodCleaningRule(), X, y))
    assert 4 not in got and 7 not in got


@pytest.mark.parametrize("cls", [TomekLinks, EditedNearestNeighbours, NeighbourhoodCleaningRule])
def test_bad_input(xp, to_xp, cls):
    X, y = _data(5, (20, 10))
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        cls().fit_resample(to_xp(X), to_xp(np.zeros(30, dtype=np.int64)))
    Xn = X.copy()
    Xn[7, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        cls().fit_resample(to_xp(Xn), to_xp(y))
    with pytest.raises(InvalidInputError, match="samples but y has"):
        cls().fit_resample(to_xp(X), to_xp(y[:-1]))
    with pytest.raises(InvalidInputError, match="not present"):
        cls(sampling_strategy=[7]).fit_resample(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="dict"):
        cls(sampling_strategy={0: 3}).fit_resample(to_xp(X), to_xp(y))


def test_enn_bad_kind_and_k(xp, to_xp):
    X, y = _data(6, (20, 10))
    with pytest.raises(InvalidInputError, match="kind_sel"):
        EditedNearestNeighbours(kind_sel="most").fit_resample(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        EditedNearestNeighbours(n_neighbors=0).fit_resample(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="need at least"):
        EditedNearestNeighbours(n_neighbors=30).fit_resample(to_xp(X), to_xp(y))
