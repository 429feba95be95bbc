import numpy as np
import pytest

from gpuknn import InvalidInputError
from gpuknn._backend import to_numpy
from gpuknn.model_selection import KFold, RepeatedStratifiedKFold, StratifiedKFold, train_test_split


def _check_partition(splits, n):
    tests = [t for _, t in splits]
    allt = np.concatenate(tests)
    assert np.array_equal(np.sort(allt), np.arange(n))  # every index once
    for train, test in splits:
        assert np.intersect1d(train, test).size == 0
        assert train.size + test.size == n
        assert train.dtype == np.int64 and test.dtype == np.int64


@pytest.mark.parametrize("shuffle", [False, True])
def test_kfold_partitions(shuffle):
    splits = list(KFold(4, shuffle=shuffle, random_state=0).split(np.zeros((23, 2))))
    _check_partition(splits, 23)
    assert sorted(t.size for _, t in splits) == [5, 6, 6, 6]
    assert KFold(4).get_n_splits() == 4


def test_stratified_within_one_per_class(xp, to_xp):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=257)
    y_xp = to_xp(y)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=3).split(y_xp, y_xp))
    _check_partition(splits, 257)
    for c in range(5):
        per_fold = [np.sum(y[t] == c) for _, t in splits]
        assert max(per_fold) - min(per_fold) <= 1
    sizes = [t.size for _, t in splits]
    assert max(sizes) - min(sizes) <= 1
    # identical on every backend and reproducible with the seed
    again = list(StratifiedKFold(5, shuffle=True, random_state=3).split(y, y))
    for (a, b), (c, d) in zip(splits, again):
        assert np.array_equal(a, c) and np.array_equal(b, d)
    other = list(StratifiedKFold(5, shuffle=True, random_state=4).split(y, y))
    assert any(not np.array_equal(b, d) for (_, b), (_, d) in zip(splits, other))


def test_stratified_string_labels_and_errors():
    y = np.array(["a"] * 6 + ["b"] * 3)
    splits = list(StratifiedKFold(3).split(np.zeros(9), y))
    assert [sorted(y[t].tolist()) for _, t in splits] == [["a", "a", "b"]] * 3
    with pytest.raises(InvalidInputError, match="n_splits"):
        list(StratifiedKFold(7).split(np.zeros(9), y))
    with pytest.raises(InvalidInputError, match="n_splits"):
        list(StratifiedKFold(1).split(np.zeros(9), y))
    with pytest.raises(InvalidInputError, match="samples"):
        list(StratifiedKFold(3).split(np.zeros(8), y))


def test_repeated_stratified():
    y = np.repeat([0, 1], [30, 12])
    cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=4, random_state=1)
    splits = list(cv.split(np.zeros(42), y))
    assert len(splits) == cv.get_n_splits() == 12
    for r in range(4):
        _check_partition(splits[3 * r : 3 * r + 3], 42)
    assert not np.array_equal(splits[0][1], splits[3][1])
    again = list(RepeatedStratifiedKFold(n_splits=3, n_repeats=4, random_state=1).split(np.zeros(42), y))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))


def test_train_test_split(xp, to_xp):
    X = to_xp(np.arange(40.0).reshape(20, 2))
    y = np.arange(20) % 4
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    assert Xtr.shape == (14, 2) and Xte.shape == (6, 2)
    assert type(Xtr) is type(X)
    # rows stay aligned with their labels
    np.testing.assert_array_equal(to_numpy(Xte)[:, 0] / 2 % 4, yte)
    np.testing.assert_array_equal(
        np.sort(np.concatenate([to_numpy(Xtr)[:, 0], to_numpy(Xte)[:, 0]])), np.arange(0, 40, 2)
    )
    assert sorted(np.bincount(yte).tolist()) == [1, 1, 2, 2]
    a = train_test_split(np.arange(10), random_state=5)
    b = train_test_split(np.arange(10), random_state=5)
    assert np.array_equal(a[1], b[1]) and a[1].size == 3
    with pytest.raises(InvalidInputError, match="inconsistent"):
        train_test_split(np.arange(10), np.arange(9))
    with pytest.raises(InvalidInputError, match="test_size"):
        train_test_split(np.arange(10), test_size=1.5)
