import numpy as np
import pytest

from gpuknn import InvalidInputError, vote_counts, votes_for_many_k
from gpuknn._backend import to_numpy


def test_votes_for_many_k_equal_one_k_at_a_time(xp, to_xp):
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 4, size=(200, 15))
    dist = np.sort(rng.random(size=(200, 15)), axis=1)
    dist[:5, :2] = 0.0  # exact matches decide alone
    ks = [1, 2, 5, 8, 15]
    for weights in ("uniform", "distance"):
        many = to_numpy(votes_for_many_k(to_xp(labels), ks, n_classes=4, distances=to_xp(dist),
                                         weights=weights))
        for row, k in enumerate(ks):
            if weights == "uniform":
                w = np.ones((200, k))
            else:
                with np.errstate(divide="ignore"):
                    w = 1.0 / dist[:, :k]
                inf = np.isinf(w).any(axis=1)
                w[inf] = np.isinf(w[inf]).astype(float)
            tot = np.zeros((200, 4))
            for c in range(4):
                tot[:, c] = (w * (labels[:, :k] == c)).sum(axis=1)
            np.testing.assert_array_equal(many[row], np.argmax(tot, axis=1))


def test_vote_ties_go_to_lowest_class(xp, to_xp):
    labels = to_xp(np.array([[3, 1, 1, 3], [2, 0, 0, 2]]))
    assert to_numpy(votes_for_many_k(labels, [4, 2], n_classes=4)).tolist() == [[1, 0], [1, 0]]
    counts = to_numpy(vote_counts(labels, [4], n_classes=4))
    assert counts.tolist() == [[[0, 2, 0, 2], [2, 0, 2, 0]]]


def test_votes_bad_input(xp, to_xp):
    labels = to_xp(np.zeros((3, 4), dtype=np.int64))
    with pytest.raises(InvalidInputError):
        votes_for_many_k(labels, [5], n_classes=2)
    with pytest.raises(InvalidInputError):
        votes_for_many_k(labels, [2], n_classes=2, weights="distance")
    with pytest.raises(InvalidInputError):
        votes_for_many_k(labels, [2], n_classes=2, weights="gaussian")
