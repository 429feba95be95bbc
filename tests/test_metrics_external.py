"""gpuknn.metrics.external against scikit-learn and explicit pair enumeration."""

from itertools import combinations

import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.metrics.cluster import pair_confusion_matrix

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import (
    adjusted_rand_score,
    contingency_matrix,
    fowlkes_mallows_score,
    hubert_gamma,
    pair_counts,
    pair_jaccard_score,
    rand_score,
)

TOL = 1e-10


@pytest.fixture(params=[0, 1, 2])
def partitions(request):
    rng = np.random.default_rng(request.param)
    a = rng.integers(0, 4, 60)
    b = np.where(rng.random(60) < 0.7, a * 10 + 3, rng.integers(0, 6, 60))
    return a, b


def test_contingency_matrix(xp, to_xp, partitions):
    a, b = partitions
    np.testing.assert_array_equal(
        to_numpy(contingency_matrix(to_xp(a), to_xp(b))), skm.cluster.contingency_matrix(a, b)
    )


def test_pair_indices_match_sklearn(xp, to_xp, partitions):
    a, b = partitions
    A, B = to_xp(a), to_xp(b)
    assert rand_score(A, B) == pytest.approx(skm.rand_score(a, b), abs=TOL)
    assert adjusted_rand_score(A, B) == pytest.approx(skm.adjusted_rand_score(a, b), abs=TOL)
    assert fowlkes_mallows_score(A, B) == pytest.approx(skm.fowlkes_mallows_score(a, b), abs=TOL)


def test_rand_formula(xp, to_xp, partitions):
    a, b = partitions
    N = skm.cluster.contingency_matrix(a, b).astype(float)
    n = a.size
    formula = 1 + (np.sum(N**2) - 0.5 * (np.sum(N.sum(1) ** 2) + np.sum(N.sum(0) ** 2))) * 2 / (n * (n - 1))
    assert rand_score(to_xp(a), to_xp(b)) == pytest.approx(formula, abs=TOL)


def test_pair_jaccard_from_pair_confusion(xp, to_xp, partitions):
    a, b = partitions
    (tn, fp), (fn, tp) = pair_confusion_matrix(a, b)  # ordered pairs: twice our counts
    assert pair_jaccard_score(to_xp(a), to_xp(b)) == pytest.approx(tp / (tp + fp + fn), abs=TOL)
    assert pair_counts(to_xp(a), to_xp(b)) == (tp // 2, fn // 2, fp // 2, tn // 2)


def _pair_indicators(labels):
    return np.array([labels[i] == labels[j] for i, j in combinations(range(labels.size), 2)], dtype=float)


def test_hubert_gamma_partitions_is_pair_matthews(xp, to_xp, partitions):
    a, b = partitions
    x, y = _pair_indicators(a), _pair_indicators(b)
    assert hubert_gamma(to_xp(a), to_xp(b)) == pytest.approx(skm.matthews_corrcoef(x, y), abs=TOL)
    assert hubert_gamma(to_xp(a), to_xp(b)) == pytest.approx(np.corrcoef(x, y)[0, 1], abs=TOL)
    assert hubert_gamma(to_xp(a), to_xp(b), normalized=False) == pytest.approx(np.mean(x * y), abs=TOL)


def test_identical_and_degenerate(xp, to_xp):
    a = to_xp(np.array([0, 0, 1, 1, 2]))
    b = to_xp(np.array([5, 5, 7, 7, 9]))
    assert rand_score(a, b) == adjusted_rand_score(a, b) == pair_jaccard_score(a, b) == 1.0
    one = to_xp(np.zeros(5, dtype=np.int64))
    assert hubert_gamma(a, one) == 0.0  # constant pair indicator: stated 0.0
    singles = to_xp(np.arange(5))
    assert pair_jaccard_score(singles, singles) == 1.0
    assert fowlkes_mallows_score(one, singles) == skm.fowlkes_mallows_score(np.zeros(5), np.arange(5))


def test_string_labels():
    a = np.array(["x", "x", "y", "y", "z"])
    b = np.array([1, 1, 1, 2, 2])
    assert adjusted_rand_score(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=TOL)


def test_bad_input(xp, to_xp):
    with pytest.raises(InvalidInputError, match="different lengths"):
        rand_score(to_xp(np.array([0, 1, 1])), to_xp(np.array([0, 1])))
    with pytest.raises(InvalidInputError, match="NaN"):
        rand_score(to_xp(np.array([0.0, np.nan])), to_xp(np.array([0.0, 1.0])))
    with pytest.raises(InvalidInputError, match="at least 2"):
        hubert_gamma(to_xp(np.array([0])), to_xp(np.array([0])))
