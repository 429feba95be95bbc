"""CNN, OSS and CNN+Tomek: imbalanced-learn's indices when given the same seeds.

imbalanced-learn draws seeds with ``RandomState.randint``; gpuknn with ``default_rng``. To
compare the algorithms themselves, imbalanced-learn gets a ``RandomState`` whose ``randint``
returns the seeds gpuknn drew (``seed_indices_``).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.ops.kneighbors import kneighbors
from gpuknn.resampling import CNNTomek, CondensedNearestNeighbour, OneSidedSelection, TomekLinks

imb = pytest.importorskip("imblearn.under_sampling")


class _FixedDraws(np.random.RandomState):
    """A RandomState whose ``randint`` replays given draws (positions within each class)."""

    def __init__(self, draws):
        super().__init__(0)
        self._draws = [np.asarray(d) for d in draws]

    def randint(self, low, high=None, size=None, dtype=int):  # noqa: ARG002 - replayed
        return self._draws.pop(0)


def _data(seed, n=(70, 12), d=2, spread=1.5, shuffle=False):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(i * spread, 1.0, (m, d)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    if shuffle:
        p = rng.permutation(y.shape[0])
        X, y = X[p], y[p]
    return X, y


def _replay(ours, y):
    """Positions within each class of the seeds gpuknn drew, in class order."""
    return [np.searchsorted(np.flatnonzero(y == c), s) for c, s in sorted(ours.seed_indices_.items())]


@pytest.mark.parametrize("seed,k", [(0, None), (1, None), (2, 3), (3, 1)])
def test_cnn_matches_imblearn_majority_first(xp, to_xp, seed, k):
    # the condensed class occupies the first rows of y: imblearn's skip list is then exact
    X, y = _data(seed)
    ours = CondensedNearestNeighbour(random_state=seed, n_neighbors=k).fit(to_xp(X), to_xp(y))
    ref = imb.CondensedNearestNeighbour(random_state=_FixedDraws(_replay(ours, y)), n_neighbors=k)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)


def test_cnn_block_size_does_not_change_result(xp, to_xp):
    X, y = _data(4, (150, 20), shuffle=True)
    a = CondensedNearestNeighbour(random_state=1, block_size=512).fit(to_xp(X), to_xp(y)).sample_indices_
    b = CondensedNearestNeighbour(random_state=1, block_size=7).fit(to_xp(X), to_xp(y)).sample_indices_
    c = CondensedNearestNeighbour(random_state=1, block_size=1).fit(to_xp(X), to_xp(y)).sample_indices_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("k", [1, 3])
def test_cnn_until_no_change_is_consistent(xp, to_xp, k):
    # Hart's defining property: with passes until no change, the store classifies every
    # discarded member of the condensed class correctly (ties -> lower store position).
    X, y = _data(5, (120, 25), shuffle=True)
    cnn = CondensedNearestNeighbour(random_state=0, max_passes=None, n_neighbors=k).fit(to_xp(X), to_xp(y))
    one = CondensedNearestNeighbour(random_state=0, n_neighbors=k).fit(to_xp(X), to_xp(y))
    store = np.concatenate([np.flatnonzero(y == 1), cnn.sample_indices_[y[cnn.sample_indices_] == 0]])
    dropped = np.setdiff1d(np.flatnonzero(y == 0), store)
    assert dropped.size > 50
    idx = to_numpy(kneighbors(to_xp(X[dropped]), to_xp(X[store]), k, return_distance=False))
    votes = (y[store][idx] == 0).sum(axis=1) * 2 > k  # class 0 wins (ties go to class 0 too)
    assert votes.all()
    assert set(one.sample_indices_) <= set(cnn.sample_indices_)
    assert (y[cnn.sample_indices_] == 1).sum() == 25  # the minority is kept whole


@pytest.mark.parametrize("seed,n,shuffle", [(0, (70, 12), False), (1, (60, 25, 10), True), (2, (50, 40, 8), True)])
@pytest.mark.parametrize("strategy", ["auto", "all"])
def test_oss_matches_imblearn(xp, to_xp, seed, n, shuffle, strategy):
    X, y = _data(seed, n, shuffle=shuffle)
    ours = OneSidedSelection(random_state=seed, sampling_strategy=strategy).fit(to_xp(X), to_xp(y))
    ref = imb.OneSidedSelection(random_state=_FixedDraws(_replay(ours, y)), sampling_strategy=strategy)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)


def test_cnn_tomek_is_cnn_then_tomek(xp, to_xp):
    X, y = _data(6, (90, 15), shuffle=True)
    cnn = CondensedNearestNeighbour(random_state=3).fit(to_xp(X), to_xp(y)).sample_indices_
    both = CNNTomek(random_state=3).fit(to_xp(X), to_xp(y)).sample_indices_
    tl = TomekLinks().fit(to_xp(X[cnn]), to_xp(y[cnn])).sample_indices_
    np.testing.assert_array_equal(both, cnn[tl])
    assert both.size < cnn.size or np.array_equal(both, cnn)


def test_seeded_runs_are_reproducible(xp, to_xp):
    X, y = _data(7, (80, 10), shuffle=True)
    for cls in (CondensedNearestNeighbour, OneSidedSelection, CNNTomek):
        a = cls(random_state=11).fit(to_xp(X), to_xp(y)).sample_indices_
        b = cls(random_state=11).fit(to_xp(X), to_xp(y)).sample_indices_
        np.testing.assert_array_equal(a, b)


def test_bad_input(xp, to_xp):
    X, y = _data(8, (30, 6))
    for cls in (CondensedNearestNeighbour, OneSidedSelection, CNNTomek):
        with pytest.raises(InvalidInputError, match="at least 2 classes"):
            cls().fit_resample(to_xp(X), to_xp(np.ones(36, dtype=np.int64)))
        with pytest.raises(InvalidInputError, match="n_seeds_S"):
            cls(n_seeds_S=31).fit_resample(to_xp(X), to_xp(y))
        Xn = X.copy()
        Xn[3, 0] = np.nan
        with pytest.raises(InvalidInputError, match="NaN"):
            cls().fit_resample(to_xp(Xn), to_xp(y))
    with pytest.raises(InvalidInputError, match="max_passes"):
        CondensedNearestNeighbour(max_passes=0).fit_resample(to_xp(X), to_xp(y))
