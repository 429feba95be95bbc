"""The cKDTree path gives exactly the brute-force neighbours, ties included."""

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.ops.kdtree import KD_TREE_MAX_DIM, kdtree_kneighbors, neighbors, resolve_algorithm
from gpuknn.ops.kneighbors import kneighbors


@pytest.mark.parametrize("k", [1, 3, 17, 120])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_integer_ties_equal_brute_force(k, metric):
    rng = np.random.default_rng(k)
    # Many exact distance ties: points on a 3x3x3 grid, duplicates included.
    R = rng.integers(0, 3, size=(120, 3)).astype(np.float64)
    Q = rng.integers(0, 3, size=(40, 3)).astype(np.float64)
    d, i = kdtree_kneighbors(Q, R, k, metric=metric)
    d_ref, i_ref = kneighbors(Q, R, k, metric=metric)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_array_equal(d, d_ref)


def test_tie_group_larger_than_first_query():
    # 50 identical references: the k-th distance is tied far beyond k + extra.
    R = np.zeros((60, 2))
    R[50:] = 5.0
    d, i = kdtree_kneighbors(np.array([[0.0, 0.0], [5.0, 5.0]]), R, 3, extra=1)
    np.testing.assert_array_equal(i, [[0, 1, 2], [50, 51, 52]])
    np.testing.assert_array_equal(d, np.zeros((2, 3)))


def test_continuous_data_matches_brute_force():
    rng = np.random.default_rng(3)
    R, Q = rng.normal(size=(500, 5)), rng.normal(size=(80, 5))
    d, i = kdtree_kneighbors(Q, R, 10)
    d_ref, i_ref = kneighbors(Q, R, 10)
    np.testing.assert_array_equal(i, i_ref)
    np.testing.assert_allclose(d, d_ref, rtol=1e-10, atol=1e-10)


def test_neighbors_dispatch_keeps_dtype_and_namespace(xp, to_xp):
    rng = np.random.default_rng(4)
    R, Q = rng.normal(size=(50, 3)), rng.normal(size=(7, 3))
    nb = neighbors(to_xp(Q), to_xp(R), 4)
    d, i = nb.output_distances(), nb.indices
    d_ref, i_ref = kneighbors(Q, R, 4)
    assert type(d) is type(to_xp(Q))
    np.testing.assert_array_equal(to_numpy(i), i_ref)
    # The same exact pass on both paths: bit for bit on NumPy, to rounding elsewhere.
    np.testing.assert_allclose(to_numpy(d), d_ref, rtol=0 if xp.__name__.endswith("numpy") else 1e-15)
    nb32 = neighbors(Q.astype(np.float32), R.astype(np.float32), 4, algorithm="kd_tree")
    assert nb32.output_distances().dtype == np.float32


def test_resolve_algorithm_rules(xp):
    is_np = xp.__name__.endswith("numpy")
    assert resolve_algorithm("auto", xp, "euclidean", KD_TREE_MAX_DIM) == ("kd_tree" if is_np else "brute")
    assert resolve_algorithm("auto", xp, "euclidean", KD_TREE_MAX_DIM + 1) == "brute"
    assert resolve_algorithm("auto", xp, "cosine", 2) == "brute"
    assert resolve_algorithm("brute", xp, "euclidean", 2) == "brute"
    with pytest.raises(InvalidInputError):
        resolve_algorithm("kd_tree", xp, "inner", 2)
    with pytest.raises(InvalidInputError):
        resolve_algorithm("ball", xp, "euclidean", 2)


def test_bad_k_and_metric():
    R = np.zeros((5, 2))
    with pytest.raises(InvalidInputError, match="k must"):
        kdtree_kneighbors(R, R, 6)
    with pytest.raises(InvalidInputError, match="kd_tree"):
        kdtree_kneighbors(R, R, 2, metric="cosine")


def test_kd_tree_predict_never_reads_the_training_rows():
    """After fit, a kd-tree predict touches the training set only through the tree: its
    magnitude was kept at fit (no re-scan per predict, whose cost would grow with the
    training set). Rows replaced by NaN after fit would break any read of them."""
    from gpuknn import KNeighborsClassifier, KNeighborsRegressor

    rng = np.random.default_rng(3)
    X, Q = rng.normal(size=(2000, 4)), rng.normal(size=(50, 4))
    y = rng.integers(0, 3, 2000)
    for est in (KNeighborsClassifier(5), KNeighborsRegressor(5, weights="distance")):
        est.fit(X, y)
        assert est._fit_method == "kd_tree"
        want = est.predict(Q)
        est._fit_X = np.broadcast_to(np.float64(np.nan), X.shape)  # poisoned, same metadata
        np.testing.assert_array_equal(est.predict(Q), want)
