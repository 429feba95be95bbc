"""The "one answer everywhere" contract, end to end.

Neighbour lists (which neighbours, in which order) are the same on every backend, device,
tiling and BLAS thread count: the top k by exact distance, equal distances to the lower
index. Distances are the exact ones up to the certified bound of the tile they came from.
"""

import numpy as np
import pytest
from helpers import assert_xp, host
from threadpoolctl import threadpool_limits

from gpuknn import KNeighborsClassifier, finalize_partial, kneighbors, kneighbors_partial, merge_partial
from gpuknn.ops.kneighbors import search
from gpuknn.ops.psweep import neighbors_for_p_sweep

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]
MIB = 2**20  # working_memory is in MiB: byte budgets below are divided by it


def tricky(n_ref=1500, n_q=200, d=24, seed=0):
    """References with exact duplicates and near-ties (rows scaled by 1 + 1e-7), float32;
    queries include copies of references (their duplicates tie at distance 0)."""
    rng = np.random.default_rng(seed)
    R = rng.normal(size=(n_ref, d)).astype(np.float32)
    a, b, c = n_ref // 3, 2 * n_ref // 3, n_ref - 20
    R[a : a + 100] = R[:100]  # exact duplicates
    R[b : b + 100] = (R[:100].astype(np.float64) * (1 + 1e-7)).astype(np.float32)  # near-ties
    R[c : c + 10] = R[c]  # a tie group of ten
    Q = np.concatenate([rng.normal(size=(n_q - 40, d)), R[:30], R[c : c + 10]]).astype(np.float32)
    return Q, R


def oracle_keys(Q, R, metric):
    """Exact keys of every pair in float64, by plain NumPy (larger = closer)."""
    Q, R = Q.astype(np.float64), R.astype(np.float64)
    if metric in ("euclidean", "sqeuclidean"):
        return -((Q[:, None, :] - R[None, :, :]) ** 2).sum(-1)
    if metric == "correlation":
        Q, R = Q - Q.mean(1, keepdims=True), R - R.mean(1, keepdims=True)
    dots = (Q[:, None, :] * R[None, :, :]).sum(-1)
    if metric == "inner":
        return dots
    return dots / np.sqrt((Q * Q).sum(1))[:, None] / np.sqrt((R * R).sum(1))[None, :]


def assert_exact_order(idx, Q, R, k, metric):
    """``idx`` is the top k by exact key, up to keys within float64 rounding of each other."""
    keys = oracle_keys(Q, R, metric)
    want = np.argsort(-keys, axis=1, kind="stable")[:, :k]
    got_keys = np.take_along_axis(keys, idx, 1)
    want_keys = np.take_along_axis(keys, want, 1)
    np.testing.assert_allclose(got_keys, want_keys, rtol=1e-12, atol=1e-12)
    bad = (idx != want).any(1)
    # Where they differ, only float64-level ties can explain it.
    assert bad.sum() <= 3, f"{bad.sum()} rows differ from the exact order"


@pytest.mark.parametrize("metric", METRICS)
def test_lists_agree_across_tilings_threads_and_backends(backend, metric):
    Q, R = tricky()
    d0, i0 = kneighbors(Q, R, 10, metric=metric)
    assert_exact_order(i0, Q, R, 10, metric)
    Qb, Rb = backend.asarray(Q), backend.asarray(R)
    for wm in (40_000 / MIB, 2, 1024):
        d, i = kneighbors(Qb, Rb, 10, metric=metric, working_memory=wm)
        assert_xp(i, i0, backend)
        assert_xp(d, host(d0), backend, exact=False, rtol=1e-4, atol=1e-5)
    if backend.name == "numpy":
        for threads in (1, 2):
            with threadpool_limits(threads):
                np.testing.assert_array_equal(kneighbors(Q, R, 10, metric=metric, working_memory=2)[1], i0)


@pytest.mark.parametrize("metric", METRICS)
def test_distances_within_the_reported_bound(metric):
    Q, R = tricky(seed=1)
    nb = search(Q, R, 10, metric=metric, working_memory=100_000 / MIB)
    exact = np.take_along_axis(oracle_keys(Q, R, metric), nb.indices, 1)
    err = nb.err[:, None] + 1e-12 * (1 + np.abs(exact))
    assert (np.abs(nb.keys - exact) <= err).all()
    assert nb.output_distances().dtype == np.float32


@pytest.mark.parametrize("offset", [1e2, 1e3, 1e4, 1e5, 1e6])
def test_large_offsets_give_the_float64_answer(offset):
    rng = np.random.default_rng(2)
    X = (rng.normal(size=(60, 40)) + offset).astype(np.float32)
    y = np.arange(60) % 3
    d32, i32 = kneighbors(X, X, 5)
    d64, i64 = kneighbors(X.astype(np.float64), X.astype(np.float64), 5)
    np.testing.assert_array_equal(i32, i64)
    np.testing.assert_allclose(d32, d64, rtol=1e-4, atol=1e-4)
    assert KNeighborsClassifier(1).fit(X, y).score(X, y) == 1.0


@pytest.mark.parametrize("metric", METRICS)
def test_any_split_merged_in_any_order_is_the_single_search(backend, metric):
    Q, R = tricky(n_ref=700, n_q=60, seed=3)
    d0, i0 = kneighbors(Q, R, 12, metric=metric)
    rng = np.random.default_rng(4)
    Qb = backend.asarray(Q)
    for _ in range(3):
        cuts = np.sort(rng.choice(np.arange(1, 700), size=rng.integers(1, 6), replace=False))
        edges = [0, *cuts.tolist(), 700]
        parts = [
            kneighbors_partial(Qb, backend.asarray(R[a:b]), 12, offset=a, metric=metric)
            for a, b in zip(edges[:-1], edges[1:])
        ]
        rng.shuffle(parts)
        while len(parts) > 1:  # a random merge tree
            j = int(rng.integers(0, len(parts) - 1))
            parts[j : j + 2] = [merge_partial(parts[j], parts[j + 1])]
        d, i = finalize_partial(parts[0])
        assert_xp(i, i0, backend)
        assert_xp(d, d0, backend, exact=False, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("metric", ["correlation", "euclidean", "cosine"])
def test_p_sweep_lists_are_the_searches_of_each_prefix(backend, metric):
    rng = np.random.default_rng(5)
    Ztr = rng.normal(size=(400, 12)).astype(np.float32)
    Ztr[200:220] = Ztr[:20]
    Zte = np.concatenate([rng.normal(size=(50, 12)), Ztr[:10]]).astype(np.float32)
    ps = [1, 2, 3, 5, 8, 12]
    for wm in (30_000 / MIB, 64):
        out = neighbors_for_p_sweep(backend.asarray(Ztr), backend.asarray(Zte), ps, 7, metric=metric, working_memory=wm)
        for p in ps:
            assert_xp(out[p][1], kneighbors(Zte[:, :p], Ztr[:, :p], 7, metric=metric)[1], backend)


def test_weighted_votes_that_tie_exactly_go_to_the_lower_class(backend):
    # sqeuclidean on integer points: class 1 at distance 1 (weight 1) against two class-0
    # neighbours at distance 2 (weights 1/2 + 1/2): an exact tie, decided for class 0.
    R = np.array([[1, 0], [1, 1], [-1, 1], [5, 5]], dtype=np.float32)
    y = np.array([1, 0, 0, 1])
    Q = np.zeros((1, 2), dtype=np.float32)
    clf = KNeighborsClassifier(3, metric="sqeuclidean", weights="distance", algorithm="brute")
    clf.fit(backend.asarray(R), backend.asarray(y))
    assert host(clf.predict(backend.asarray(Q))).tolist() == [0]


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_a_point_on_the_radius_counts_on_every_backend(backend, weights):
    from gpuknn import RadiusNeighborsClassifier

    # Exactly at distance 5 (a 3-4-5 triangle) behind an offset of 3e4: a float32 GEMM of the
    # raw rows puts it at 8 (the previous engine called it an outlier); centring and the exact
    # pass keep it inside, everywhere.
    X = np.array([[3e4, 0.0], [3e4 + 30, 0.0], [3e4 + 3, 44.0]], dtype=np.float32)
    y = np.array([1, 0, 0])
    Q = np.array([[3e4 + 3, 4.0]], dtype=np.float32)
    for wm in (100 / MIB, 1):
        clf = RadiusNeighborsClassifier(5.0, weights=weights, outlier_label=-1, algorithm="brute", working_memory=wm)
        clf.fit(backend.asarray(X), backend.asarray(y))
        assert host(clf.predict(backend.asarray(Q))).tolist() == [1]
    if backend.name == "numpy":
        clf = RadiusNeighborsClassifier(5.0, weights=weights, outlier_label=-1, algorithm="kd_tree")
        assert clf.fit(X, y).predict(Q).tolist() == [1]
        with pytest.warns(UserWarning, match="Outlier label -1"):
            assert RadiusNeighborsClassifier(4.999, outlier_label=-1).fit(X, y).predict(Q).tolist() == [-1]


def test_constant_rows_are_at_correlation_distance_one():
    R = np.array([[1.0, 2.0, 4.0], [1.0, 2.0, 4.1], [0.1, 0.1, 0.1], [0.3, 0.3, 0.3]])
    Q = np.array([[1.0, 2.0, 4.0]])
    for dtype in (np.float64, np.float32):
        d, i = kneighbors(Q.astype(dtype), R.astype(dtype), 4, metric="correlation")
        assert i.tolist() == [[0, 1, 2, 3]] and d[0, 2] == d[0, 3] == 1.0


def test_rows_far_from_zero_against_their_spread(backend):
    # Correlation centres each row on its mean: in float32, on a mean rounded to float32.
    rng = np.random.default_rng(9)
    R = (1e5 + rng.normal(size=(60, 3))).astype(np.float32)
    Q = (1e5 + rng.normal(size=(6, 3))).astype(np.float32)
    i = kneighbors(backend.asarray(Q), backend.asarray(R), 5, metric="correlation")[1]
    assert_xp(i, np.argsort(-oracle_keys(Q, R, "correlation"), axis=1, kind="stable")[:, :5], backend)


def test_ties_at_the_top_are_real_ties_only():
    # One nearly constant reference must not make near-ties (1e-10 apart) count as ties at
    # the top: the exact duplicate of the query wins, in one search and in any split.
    q = np.array([0.0, 1.0, 3.0], dtype=np.float32)
    near = [q + np.array([0, 0, m * 2.0**-22], dtype=np.float32) for m in range(20, 45)]
    R = np.array([[5.0, 5.0, 5.0 + 2.0**-17]] + near + [q], dtype=np.float32)
    Q = q[None, :]
    assert kneighbors(Q, R, 1, metric="correlation")[1].tolist() == [[len(R) - 1]]
    m = merge_partial(
        kneighbors_partial(Q, R[:1], 1, metric="correlation"),
        kneighbors_partial(Q, R[1:], 1, offset=1, metric="correlation"),
    )
    assert finalize_partial(m)[1].tolist() == [[len(R) - 1]]


def test_sweep_weighted_votes_are_the_classifiers():
    # Exact distances: reference 0 at 0.5 (class 1), references 2..5 at exactly 1, reference 1
    # a hair beyond (class 0): the sweep reads labels only, yet votes on the exact distances.
    from gpuknn.model_selection.cv import fold_k_scores

    R = np.array(
        [[0.5, -1.0], [-0.03707813, -1.9993124], [1.0, -1.0], [-1.0, -1.0], [0.0, 0.0], [0.0, -2.0]], dtype=np.float32
    )
    Q = np.array([[0.0, -1.0]], dtype=np.float32)
    y = np.array([1, 0, 0, 0, 0, 0])
    s = fold_k_scores(
        R, y, Q, np.array([0]), [3], n_classes=2, metric="euclidean", weights=("distance",), scoring=("accuracy",)
    )
    pred = KNeighborsClassifier(n_neighbors=3, weights="distance").fit(R, y).predict(Q)
    assert s["distance"]["accuracy"].tolist() == [1.0] and pred.tolist() == [0]
