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
        many = to_numpy(votes_for_many_k(to_xp(labels), ks, n_classes=4, distances=to_xp(dist), weights=weights))
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


def _fraction_winner(lab, d, n_classes):
    from fractions import Fraction

    tot = [Fraction(0)] * n_classes
    zero = d == 0
    for c, x, z in zip(lab, d, zero):
        tot[c] += (1 if z else 0) if zero.any() else Fraction(1.0 / x)
    return max(range(n_classes), key=lambda c: (tot[c], -c))


def test_weighted_hinges_are_decided_exactly(xp, to_xp):
    # Distances built so that class totals tie exactly or differ by a few ulps.
    rng = np.random.default_rng(3)
    n, k = 400, 6
    d = np.sort(rng.choice([1.0, 2.0, 4.0, 3.0, 1.5, 6.0], size=(n, k)), axis=1)
    labels = rng.integers(0, 3, size=(n, k))
    d[:5, 0] = 0.0
    ks = [1, 2, 3, 4, 5, 6]
    pred = to_numpy(votes_for_many_k(to_xp(labels), ks, n_classes=3, distances=to_xp(d), weights="distance"))
    for j, kk in enumerate(ks):
        want = [_fraction_winner(labels[r, :kk], d[r, :kk], 3) for r in range(n)]
        np.testing.assert_array_equal(pred[j], want)


def test_bounds_send_open_rows_to_refine(xp, to_xp):
    # Approximate distances within known intervals: rows the intervals cannot settle get
    # their exact distances from refine, and the votes are those of the exact distances.
    rng = np.random.default_rng(4)
    exact = np.sort(rng.uniform(0.5, 1.0, size=(300, 5)), axis=1)
    labels = rng.integers(0, 2, size=(300, 5))
    approx = exact * (1 + rng.uniform(-3e-2, 3e-2, size=exact.shape))
    lo, hi = exact * (1 - 3e-2), exact * (1 + 3e-2)
    asked = []

    def refine(rows):
        asked.append(to_numpy(rows))
        return xp.take(to_xp(exact), rows, axis=0)

    pred = to_numpy(
        votes_for_many_k(
            to_xp(labels),
            [3, 5],
            n_classes=2,
            distances=to_xp(approx),
            weights="distance",
            bounds=(to_xp(lo), to_xp(hi)),
            refine=refine,
        )
    )
    want = to_numpy(votes_for_many_k(to_xp(labels), [3, 5], n_classes=2, distances=to_xp(exact), weights="distance"))
    np.testing.assert_array_equal(pred, want)
    assert asked and 0 < asked[0].size < 300  # only the open rows


# ---------------------------------------------------------------- issue 18: argument checks
@pytest.mark.parametrize("fn", [votes_for_many_k, vote_counts])
def test_vote_arguments_are_validated(backend, fn):
    """Labels outside [0, n_classes), non-integer labels, NaN/negative/mis-shaped distances
    and non-integer k are refused with the argument's name, on every backend."""
    a = backend.asarray
    lab = a(np.array([[0, 1, 1], [1, 0, 0]]))
    d = a(np.array([[0.1, 0.2, 0.3], [0.1, 0.5, 0.6]]))
    cases = [
        (dict(neighbor_labels=a(np.array([[0, -1, 1], [1, 0, 0]]))), r"neighbor_labels .*\[-1, 1\]"),
        (dict(neighbor_labels=a(np.array([[0, 2, 1], [1, 0, 0]]))), r"neighbor_labels .*\[0, 1\].*n_classes = 2"),
        (dict(neighbor_labels=a(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))), "integer class indices"),
        (
            dict(distances=a(np.array([[0.1, np.nan, 0.3], [0.1, 0.5, 0.6]])), weights="distance"),
            "distances contain NaN",
        ),
        (
            dict(distances=a(np.array([[-0.1, 0.2, 0.3], [0.1, 0.5, 0.6]])), weights="distance"),
            "distances must be >= 0",
        ),
        (
            dict(distances=a(np.array([[0.1, 0.2], [0.1, 0.5]])), weights="distance"),
            r"shape of neighbor_labels \(2, 3\)",
        ),
        (dict(ks=[2.999]), r"ks must hold integers.*2\.999"),
        (dict(ks=[2.0]), r"ks must hold integers.*2\.0"),
        (dict(ks=[True]), "ks must hold integers.*True"),
        (dict(ks="3"), "ks must"),
        (dict(n_classes=2.0), "n_classes must be an integer"),
        (dict(weights=["distance"]), "weights must be"),
    ]
    for change, match in cases:
        args = dict(neighbor_labels=lab, ks=[1, 3], n_classes=2, distances=d, weights="uniform")
        args.update(change)
        with pytest.raises(InvalidInputError, match=match):
            fn(args.pop("neighbor_labels"), args.pop("ks"), **args)
    # valid input still votes, integer ks of NumPy types too
    assert to_numpy(votes_for_many_k(lab, [np.int64(1), 3], n_classes=2)).tolist() == [[0, 1], [1, 0]]


def test_no_rows_give_no_votes(backend):
    """Zero neighbour rows (an empty test fold) give empty results, not a concat error."""
    lab = backend.asarray(np.zeros((0, 3), dtype=np.int64))
    assert tuple(votes_for_many_k(lab, [1, 2], n_classes=2).shape) == (2, 0)
    assert tuple(vote_counts(lab, [1, 2], n_classes=2).shape) == (2, 0, 2)
