import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from gpuknn import InvalidInputError, kneighbors
from gpuknn._backend import to_numpy
from gpuknn.ops.kneighbors import plan_tiles

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation"]
MIB = 2**20  # working_memory is in MiB: byte budgets below are divided by it


def _sk(Q, R, k, metric):
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric).fit(R)
    return nn.kneighbors(Q)


@pytest.mark.parametrize("metric", METRICS)
def test_matches_sklearn_brute(xp, to_xp, metric):
    rng = np.random.default_rng(0)
    R, Q = rng.normal(size=(60, 7)), rng.normal(size=(25, 7))
    d, i = kneighbors(to_xp(Q), to_xp(R), 6, metric=metric)
    ed, ei = _sk(Q, R, 6, metric)
    np.testing.assert_array_equal(to_numpy(i), ei)
    np.testing.assert_allclose(to_numpy(d), ed, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_ties_go_to_lower_index_and_k_equals_n(xp, to_xp, metric):
    rng = np.random.default_rng(1)
    R = rng.integers(0, 3, size=(40, 2)).astype(np.float64)  # many exact duplicates
    Q = rng.integers(0, 3, size=(15, 2)).astype(np.float64)
    d, i = kneighbors(to_xp(Q), to_xp(R), 40, metric=metric)
    full = ((Q[:, None, :] - R[None, :, :]) ** 2).sum(-1)
    if metric == "euclidean":
        full = np.sqrt(full)
    order = np.argsort(full, axis=1, kind="stable")
    np.testing.assert_array_equal(to_numpy(i), order)
    np.testing.assert_allclose(to_numpy(d), np.take_along_axis(full, order, 1), atol=1e-12)


def test_inner_metric_descending(xp, to_xp):
    rng = np.random.default_rng(2)
    R, Q = rng.normal(size=(30, 4)), rng.normal(size=(5, 4))
    s, i = kneighbors(to_xp(Q), to_xp(R), 4, metric="inner")
    full = Q @ R.T
    order = np.argsort(-full, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(to_numpy(i), order)
    np.testing.assert_allclose(to_numpy(s), np.take_along_axis(full, order, 1))


@pytest.mark.parametrize("metric", ["euclidean", "correlation"])
def test_tiny_working_memory_gives_identical_results(xp, to_xp, metric):
    rng = np.random.default_rng(3)
    R = rng.integers(0, 4, size=(97, 3)).astype(np.float64)
    Q = rng.integers(0, 4, size=(41, 3)).astype(np.float64)
    d0, i0 = kneighbors(to_xp(Q), to_xp(R), 9, metric=metric)
    wm = 11 * 10 * 10  # a few rows and columns per tile: both queries and references are tiled
    plan = plan_tiles(41, 97, 4, 8, wm)
    assert plan.cols < 9 < 97 and plan.rows < 41 and plan.query_chunk < 41
    d1, i1 = kneighbors(to_xp(Q), to_xp(R), 9, metric=metric, working_memory=wm / MIB)
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
    np.testing.assert_allclose(to_numpy(d1), to_numpy(d0), atol=1e-12)


@pytest.mark.parametrize("wm", [3000 / MIB, 20_000 / MIB, 1])
def test_blocks_narrower_than_k_and_late_better_neighbours(xp, to_xp, wm):
    # References sorted far-to-near make every block improve on the last (the running lists
    # take many candidates), blocks narrower than k are padded, and ties cross blocks.
    rng = np.random.default_rng(11)
    R = np.repeat(rng.integers(0, 6, size=(60, 2)).astype(np.float64), 2, axis=0)
    Q = rng.integers(0, 6, size=(33, 2)).astype(np.float64)
    R = R[np.argsort(-np.abs(R - 2.5).sum(axis=1), kind="stable")]
    for k in (1, 7, 120):
        d, i = kneighbors(to_xp(Q), to_xp(R), k, working_memory=wm)
        exact = np.sqrt(((Q[:, None, :] - R[None, :, :]) ** 2).sum(axis=2))  # small integers
        ei = np.argsort(exact, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(to_numpy(i), ei)
        np.testing.assert_allclose(to_numpy(d), np.take_along_axis(exact, ei, 1), atol=1e-12)


def test_plan_stays_within_budget():
    cases = [
        (10_000, 60_000, 785, 4, 1 << 30, None),
        (10_000, 60_000, 785, 4, 256 << 20, 32 << 20),
        (5, 10**7, 3, 4, 1 << 20, None),
        (1000, 50, 20, 8, 10**5, None),
        (10**6, 10**6, 51, 8, 256 << 20, 32 << 20),
    ]
    for nq, nr, width, item, wm, cap in cases:
        chunk, rows, cols = plan_tiles(nq, nr, width, item, wm, tile_bytes=cap)
        per = item + 2 + max(item, 5)  # score + worst-case selection scratch
        used = (chunk + cols) * width * item + rows * cols * per
        assert used <= wm
        assert 1 <= rows <= chunk <= nq and 1 <= cols <= nr
        if cap is not None:
            assert rows * cols * item <= cap
    # The host plan for the Fashion-MNIST benchmark: all queries prepared once, 1024-row tiles.
    assert plan_tiles(10_000, 60_000, 784, 4, 256 << 20, tile_bytes=18 << 20) == (10_000, 1024, 4608)


def test_out_of_memory_halves_the_tile(monkeypatch):
    import gpuknn.ops.search as nb

    calls = []
    real = nb.score_tile

    def flaky(Qt, block_t):
        calls.append(Qt.shape[0])
        if Qt.shape[0] > 4:
            raise MemoryError("simulated out of memory")
        return real(Qt, block_t)

    monkeypatch.setattr(nb, "score_tile", flaky)
    rng = np.random.default_rng(4)
    R, Q = rng.normal(size=(50, 3)), rng.normal(size=(20, 3))
    d, i = kneighbors(Q, R, 3)
    ed, ei = _sk(Q, R, 3, "euclidean")
    np.testing.assert_array_equal(i, ei)
    np.testing.assert_allclose(d, ed, atol=1e-12)
    assert calls[:4] == [20, 10, 5, 2]  # halved until a tile fits, then kept
    assert set(calls[4:]) == {2}

    def always(Qt, block_t):
        raise MemoryError("simulated out of memory")

    monkeypatch.setattr(nb, "score_tile", always)
    with pytest.raises(MemoryError):
        kneighbors(Q, R, 3)


def test_float32_stays_float32():
    rng = np.random.default_rng(5)
    R, Q = rng.normal(size=(30, 4)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    d, i = kneighbors(Q, R, 3, metric="correlation")
    assert d.dtype == np.float32 and i.dtype == np.int64


def test_bad_input_is_rejected(xp, to_xp):
    R = to_xp(np.zeros((5, 3)))
    Q = to_xp(np.zeros((2, 3)))
    for k in (0, 6, 2.5):
        with pytest.raises(InvalidInputError, match="k"):
            kneighbors(Q, R, k)
    with pytest.raises(InvalidInputError, match="features"):
        kneighbors(to_xp(np.zeros((2, 4))), R, 1)
    with pytest.raises(InvalidInputError, match="empty"):
        kneighbors(to_xp(np.zeros((0, 3))), R, 1)
    with pytest.raises(InvalidInputError, match="2-D"):
        kneighbors(to_xp(np.zeros(3)), R, 1)
    with pytest.raises(InvalidInputError, match="unknown metric"):
        kneighbors(Q, R, 1, metric="l7")
    bad = np.zeros((5, 3))
    bad[1, 0], bad[4, 2] = np.inf, np.nan
    with pytest.raises(InvalidInputError, match=r"2 row\(s\): 1, 4"):
        kneighbors(Q, to_xp(bad), 1)


@pytest.mark.parametrize("metric", ["euclidean", "correlation", "inner"])
def test_prepared_reference_gives_the_same_neighbours(xp, to_xp, metric):
    from gpuknn.ops.kneighbors import PreparedReference

    rng = np.random.default_rng(8)
    R, Q = rng.normal(size=(80, 6)), rng.normal(size=(20, 6))
    ref = PreparedReference(to_xp(R), metric=metric)
    d0, i0 = kneighbors(to_xp(Q), to_xp(R), 5, metric=metric)
    for _ in range(2):  # reusable
        d1, i1 = kneighbors(to_xp(Q), ref, 5, metric=metric, working_memory=2000 / MIB)
        np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
        np.testing.assert_allclose(to_numpy(d1), to_numpy(d0), atol=1e-12)
    np.testing.assert_array_equal(to_numpy(ref.data), R)  # the caller's rows are untouched


def test_prepared_reference_checks(xp, to_xp):
    from gpuknn.ops.kneighbors import PreparedReference

    ref = PreparedReference(to_xp(np.ones((5, 3))), metric="cosine")
    with pytest.raises(InvalidInputError, match="prepared for metric 'cosine'"):
        kneighbors(to_xp(np.ones((2, 3))), ref, 1, metric="euclidean")
    with pytest.raises(InvalidInputError, match="features"):
        kneighbors(to_xp(np.ones((2, 4))), ref, 1, metric="cosine")
    with pytest.raises(InvalidInputError, match="k must be"):
        kneighbors(to_xp(np.ones((2, 3))), ref, 6, metric="cosine")
    with pytest.raises(InvalidInputError, match="NaN"):
        PreparedReference(to_xp(np.array([[np.nan, 1.0]])), metric="cosine")


@pytest.mark.parametrize("metric", METRICS + ["inner"])
def test_second_pass_for_uncertified_rows(xp, to_xp, monkeypatch, metric):
    # No margin beyond k: the k-th and the last candidate coincide, so rows are certified
    # only by a gap, and integer data (exact ties) sends many to the second pass.
    import gpuknn.ops.kneighbors as nb

    rng = np.random.default_rng(2)
    R = rng.integers(0, 5, size=(200, 4)).astype(np.float32)
    Q = rng.integers(0, 5, size=(30, 4)).astype(np.float32)
    d0, i0 = kneighbors(to_xp(Q), to_xp(R), 5, metric=metric)
    calls = []
    real = nb._second_pass
    monkeypatch.setattr(nb, "_second_pass", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    monkeypatch.setattr(nb, "candidate_margin", lambda k: 0)
    d1, i1 = kneighbors(to_xp(Q), to_xp(R), 5, metric=metric, working_memory=20_000 / MIB)
    assert calls
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))


@pytest.mark.parametrize("metric", METRICS + ["inner"])
def test_float64_input_searched_in_float32_tiles_equals_float64_tiles(xp, to_xp, monkeypatch, metric):
    import gpuknn.ops.kneighbors as nb

    rng = np.random.default_rng(1)
    R = rng.normal(size=(300, 9))
    R[150:180] = R[:30]
    Q = np.concatenate([rng.normal(size=(40, 9)), R[:10]])
    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1)
    d1, i1 = kneighbors(to_xp(Q), to_xp(R), 6, metric=metric, working_memory=30_000 / MIB)
    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1 << 62)
    d0, i0 = kneighbors(to_xp(Q), to_xp(R), 6, metric=metric, working_memory=30_000 / MIB)
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
    np.testing.assert_array_equal(to_numpy(d1), to_numpy(d0))  # exact keys both ways
    assert to_numpy(d1).dtype == np.float64


def test_huge_float64_values_get_float64_tiles(monkeypatch):
    import gpuknn.ops.kneighbors as nb

    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1)
    R = np.array([[1e20, 0.0], [0.0, 1e20], [1e20, 1e20]])
    assert nb.tile_dtype_of(R.dtype, 3 * 3 * 3, 1e20, np) == np.float64
    assert nb.tile_dtype_of(R.dtype, 3 * 3 * 3, 1.0, np) == np.float32
    d, i = kneighbors(R[:1], R, 3)
    assert i.tolist() == [[0, 2, 1]]


def test_messages_name_the_callers_arguments(backend):
    """Issue 18: the engine's messages use the caller's argument names: kneighbors(Q, R)
    says R for the references, a PreparedReference built by an estimator says X."""
    from gpuknn.ops.kneighbors import PreparedReference, search

    a = backend.asarray
    X = np.random.default_rng(0).normal(size=(6, 3))
    big = X.copy()
    big[2, 1] = 1e200
    nan = X.copy()
    nan[4, 0] = np.nan
    with pytest.raises(InvalidInputError, match=r"^R holds values up to 1e\+200"):
        kneighbors(a(X), a(big), 2)
    with pytest.raises(InvalidInputError, match=r"^R contains NaN or infinity in 1 row\(s\): 4"):
        kneighbors(a(X), a(nan), 2)
    with pytest.raises(InvalidInputError, match=r"^Q holds values"):
        kneighbors(a(big), a(X), 2)
    with pytest.raises(InvalidInputError, match=r"^X holds values up to"):
        PreparedReference(a(big), name="X")
    with pytest.raises(InvalidInputError, match=r"^X_test contains NaN"):
        search(a(nan), a(X), 2, names=("X_test", "X"))
    ref = PreparedReference(a(X), name="X")
    with pytest.raises(InvalidInputError, match=r"^X_test holds values"):
        search(a(big), ref, 2, names=("X_test", "X"))


def test_working_memory_below_one_row_of_tiles_warns_and_is_raised():
    """Issue 18: a one-byte budget crawled one score at a time, silently; it is raised to the
    minimum with a WorkingMemoryWarning in MiB (same answer), and odd types name the argument."""
    from gpuknn import WorkingMemoryWarning
    from gpuknn.ops.limits import minimum_working_memory

    rng = np.random.default_rng(1)
    Q, R = rng.normal(size=(7, 4)), rng.normal(size=(30, 4))
    want = kneighbors(Q, R, 3)
    low = minimum_working_memory(7, 11, 4 + 4)  # bytes; rows are augmented by a column or two
    msg = r"working_memory=9.537e-07 MiB \(1 bytes\) is too small .*using the minimum, [\d.e-]+ MiB \(\d+ bytes\)"
    with pytest.warns(WorkingMemoryWarning, match=msg):
        got = kneighbors(Q, R, 3, working_memory=1 / MIB)
    np.testing.assert_array_equal(got[1], want[1])
    kneighbors(Q, R, 3, working_memory=low / MIB)  # no warning at the minimum (warnings are errors)
    for bad in ("big", True, float("nan"), float("inf"), -5, 0, [1]):
        with pytest.raises(InvalidInputError, match="working_memory must be a positive number of MiB"):
            kneighbors(Q, R, 3, working_memory=bad)


def test_a_budget_that_splits_the_search_into_very_many_tiles_says_so():
    # issue 18: 10 KiB made a 2000 x 30000 search run 89 s (0.15 s by default) without a word
    import warnings

    from gpuknn.errors import WorkingMemoryWarning

    rng = np.random.default_rng(0)
    Q, R = rng.normal(size=(200, 30)), rng.normal(size=(30000, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("error", WorkingMemoryWarning)  # stop at the warning: no slow run
        with pytest.raises(
            WorkingMemoryWarning,
            match=r"working_memory=0.009766 MiB \(10240 bytes\) splits this 200 x 30000 search into \d+ tiles",
        ):
            kneighbors(Q, R, 5, working_memory=10 / 1024)  # 10 KiB
    kneighbors(Q[:20], R[:2000], 5)  # the default budget: no warning (filterwarnings=error)


def test_working_memory_is_mib_converted_once_to_the_byte_plan(monkeypatch):
    """working_memory is in MiB, as in scikit-learn: converted once, at the public boundary,
    to the byte budget the tiles are planned with -- the plan a byte value gave before, for
    an int, a float or a fraction of a MiB; estimators and $GPUKNN_WORKING_MEMORY alike."""
    import gpuknn.ops.kneighbors as nb
    from gpuknn import KNeighborsClassifier
    from gpuknn.ops.limits import check_working_memory, to_mib

    budgets = []
    real = nb.plan_tiles
    monkeypatch.setattr(nb, "plan_tiles", lambda *a, **kw: budgets.append(a[4]) or real(*a, **kw))
    rng = np.random.default_rng(4)
    Q, R, y = rng.normal(size=(200, 8)), rng.normal(size=(500, 8)), rng.integers(0, 3, 500)
    want = kneighbors(Q, R, 5)[1]
    tiny = 200 * 80 * 9  # bytes: a budget that tiles this search
    for mib, nbytes in ((1, 1 << 20), (0.5, 1 << 19), (2.0, 2 << 20), (tiny / MIB, tiny)):
        assert check_working_memory(mib, np) == nbytes
        budgets.clear()
        np.testing.assert_array_equal(kneighbors(Q, R, 5, working_memory=mib)[1], want)
        KNeighborsClassifier(5, algorithm="brute", working_memory=mib).fit(R, y).predict(Q)
        # a quarter is left to the row preparation and the exact pass; the plan is the byte one
        assert budgets == [nbytes * 3 // 4] * 2
    # (rows of width 9: euclidean rows carry one more column) the tiny budget tiles finer
    assert real(200, 500, 9, 8, tiny * 3 // 4).cols < real(200, 500, 9, 8, (1 << 20) * 3 // 4).cols < 500
    budgets.clear()
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", "3")  # MiB too
    kneighbors(Q, R, 5)
    assert budgets == [(3 << 20) * 3 // 4]
    for b in (1, 3, 129_600, 10**9, 2**52 + 1):  # to_mib is exact: internal callers keep their bytes
        assert check_working_memory(to_mib(b), np) == b
    for bad in (0, -5, float("nan"), float("inf"), "1", True):
        with pytest.raises(InvalidInputError, match=rf"working_memory must be a positive number of MiB, got {bad!r}"):
            KNeighborsClassifier(working_memory=bad).fit(R, y)
