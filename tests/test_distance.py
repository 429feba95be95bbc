import numpy as np
import pytest
from scipy.spatial.distance import cdist

from gpuknn import InvalidInputError, pairwise_distances, pairwise_distances_chunked
from gpuknn._backend import to_numpy
from gpuknn.ops.distance import METRICS

SCIPY = {"euclidean": "euclidean", "sqeuclidean": "sqeuclidean", "cosine": "cosine", "correlation": "correlation"}


@pytest.mark.parametrize("metric", list(SCIPY))
def test_pairwise_matches_scipy(xp, to_xp, metric):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(13, 6)), rng.normal(size=(9, 6))
    D = to_numpy(pairwise_distances(to_xp(X), to_xp(Y), metric=metric))
    np.testing.assert_allclose(D, cdist(X, Y, SCIPY[metric]), rtol=1e-10, atol=1e-10)


def test_inner_is_the_inner_product(xp, to_xp):
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(to_numpy(pairwise_distances(to_xp(X), to_xp(Y), metric="inner")), X @ Y.T)


@pytest.mark.parametrize("metric", ["cosine", "correlation"])
def test_zero_norm_rows_have_distance_one(xp, to_xp, metric):
    X = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]])  # 3rd is constant: zero after centring
    Y = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    D = to_numpy(pairwise_distances(to_xp(X), to_xp(Y), metric=metric))
    assert np.all(np.isfinite(D))
    assert D[0, 0] == 1.0 and D[0, 1] == 1.0 and D[1, 1] == 1.0
    if metric == "correlation":
        assert D[2, 0] == 1.0


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "correlation"])
def test_distances_never_negative_and_self_zero(xp, to_xp, metric):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 5)) * 1e3 + 1e4  # cancellation-prone
    D = to_numpy(pairwise_distances(to_xp(X), metric=metric))
    assert D.min() >= 0.0
    np.testing.assert_array_equal(np.diag(D), 0.0)


def test_chunked_respects_memory_and_matches_full(xp, to_xp):
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(50, 4)), rng.normal(size=(30, 4))
    # The budget holds Y's prepared rows (30 x 5, float64) and per block row its tile, one
    # temporary of the tile's size and the row's preparation: here room for 7 rows.
    ref, per_row = 30 * 5 * 8, (30 * 2 + 4 + 2) * 8
    wm = ref + 7 * per_row  # bytes; working_memory takes MiB (the same budget, exactly)
    blocks = list(pairwise_distances_chunked(to_xp(X), to_xp(Y), working_memory=wm / 2**20))
    assert len(blocks) == 8  # 7 rows per block
    assert all(ref + b.shape[0] * per_row <= wm for _, b in blocks)
    D = np.concatenate([to_numpy(b) for _, b in blocks])
    np.testing.assert_allclose(D, cdist(X, Y), atol=1e-10)
    assert [s for s, _ in blocks] == list(range(0, 50, 7))


def test_bad_input(xp, to_xp):
    X = to_xp(np.ones((3, 2)))
    with pytest.raises(InvalidInputError, match="unknown metric"):
        pairwise_distances(X, metric="l7")
    with pytest.raises(InvalidInputError, match="features"):
        pairwise_distances(X, to_xp(np.ones((3, 3))))
    bad = np.ones((4, 2))
    bad[2, 1] = np.nan
    with pytest.raises(InvalidInputError, match="row.*: 2"):
        pairwise_distances(to_xp(bad))
    assert set(METRICS) == {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}


def test_values_whose_squares_overflow_are_refused(backend):
    """Issue 18: pairwise_distances of [[1e200], [0]] gave inf silently; refused naming X/Y,
    as kneighbors does. Odd working_memory types name the argument."""
    import gpuknn
    from gpuknn.errors import InvalidInputError

    X = backend.asarray(np.array([[1e200], [0.0]]))
    with pytest.raises(InvalidInputError, match=r"^X holds values up to 1e\+200"):
        gpuknn.pairwise_distances(X)
    with pytest.raises(InvalidInputError, match=r"^Y holds values up to 1e\+200"):
        gpuknn.pairwise_distances(backend.asarray(np.array([[1.0]])), X)
    for bad in ("big", True, -1, 0, float("inf")):
        with pytest.raises(InvalidInputError, match="working_memory must be a positive number of MiB"):
            next(iter(gpuknn.pairwise_distances_chunked(backend.asarray(np.eye(2)), working_memory=bad)))
