import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.ops import topk
from gpuknn.ops.topk import kth_largest, merge_topk, topk_largest, update_topk


def _reference(S, k):
    order = np.argsort(-S, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(S, order, axis=1), order


@pytest.mark.parametrize("k", [1, 3, 17])
def test_topk_with_heavy_ties(xp, to_xp, k):
    rng = np.random.default_rng(k)
    S = rng.integers(0, 5, size=(40, 300)).astype(np.float64)
    vals, cols = topk_largest(to_xp(S), k)
    ev, ec = _reference(S, k)
    np.testing.assert_array_equal(to_numpy(cols), ec)
    np.testing.assert_array_equal(to_numpy(vals), ev)


def test_topk_sample_threshold_path(xp, to_xp, monkeypatch):
    # Force the sampled-threshold path on a small tile, including rows sorted ascending
    # (the strided sample then sees only small values: the exact fallback must kick in).
    monkeypatch.setattr(topk, "_SAMPLE_MIN", 16)
    monkeypatch.setattr(topk, "_SAMPLE_BALANCE", 0.5)
    rng = np.random.default_rng(7)
    S = rng.normal(size=(30, 500))
    S[0] = np.arange(500.0)
    S[1] = 1.0  # all tied
    vals, cols = topk_largest(to_xp(S), 5)
    ev, ec = _reference(S, 5)
    np.testing.assert_array_equal(to_numpy(cols), ec)
    np.testing.assert_array_equal(to_numpy(vals), ev)


def test_k_equals_width_and_bounds(xp, to_xp):
    S = np.array([[2.0, 1.0, 2.0]])
    vals, cols = topk_largest(to_xp(S), 3)
    assert to_numpy(cols).tolist() == [[0, 2, 1]]
    with pytest.raises(ValueError):
        topk_largest(to_xp(S), 4)


def test_kth_largest(xp, to_xp):
    S = np.array([[5.0, 1.0, 3.0, 4.0], [0.0, 0.0, 1.0, -1.0]])
    np.testing.assert_array_equal(to_numpy(kth_largest(to_xp(S), 2)), [4.0, 0.0])


def test_merge_breaks_ties_by_global_index(xp, to_xp):
    vals = np.array([[3.0, 2.0, 3.0, 2.0]])
    idx = np.array([[9, 4, 1, 2]])
    v, i = merge_topk(to_xp(vals), to_xp(idx), 3)
    assert to_numpy(i).tolist() == [[1, 9, 2]]
    assert to_numpy(v).tolist() == [[3.0, 3.0, 2.0]]


def test_massive_ties_take_the_first_columns(xp, to_xp):
    S = np.zeros((3, 50))
    S[1, 40] = 1.0
    vals, cols = topk_largest(to_xp(S), 4)
    assert to_numpy(cols).tolist() == [[0, 1, 2, 3], [40, 0, 1, 2], [0, 1, 2, 3]]


def test_given_threshold_is_used(xp, to_xp):
    rng = np.random.default_rng(11)
    S = rng.normal(size=(20, 400))
    prev = np.argsort(-S[:, ::3], axis=1, kind="stable")[:, :6] * 3  # any 6 columns per row
    t = np.take_along_axis(S, prev, axis=1).min(axis=1)
    vals, cols = topk_largest(to_xp(S), 6, threshold=to_xp(t))
    ev, ec = _reference(S, 6)
    np.testing.assert_array_equal(to_numpy(cols), ec)


def test_loose_threshold_with_ties_still_exact(xp, to_xp):
    S = np.zeros((2, 40))
    S[:, 7] = 2.0
    S[:, 30] = 1.0
    vals, cols = topk_largest(to_xp(S), 3, threshold=to_xp(np.array([-5.0, 0.0])))
    assert to_numpy(cols).tolist() == [[7, 30, 0], [7, 30, 0]]


def test_massive_ties_beyond_the_head_columns(xp, to_xp):
    S = np.full((2, 300), -1.0)
    S[0, :] = 0.0
    S[1, 250:] = 0.0  # row 1's ties only appear late
    vals, cols = topk_largest(to_xp(S), 3)
    assert to_numpy(cols).tolist() == [[0, 1, 2], [250, 251, 252]]


def test_uneven_candidate_counts_use_the_global_sort(xp, to_xp, monkeypatch):
    # One row lets every column through, the others a handful: the padded per-row block
    # would be mostly padding, so the (row, value) sort path is taken. Same answer.
    calls = []
    real = topk.order_rows
    monkeypatch.setattr(topk, "order_rows", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(5)
    S = rng.integers(0, 50, size=(40, 400)).astype(np.float64)  # narrow: no sample tightening
    t = np.sort(S, axis=1)[:, -4]
    t[0] = -1.0
    vals, cols = topk_largest(to_xp(S), 4, threshold=to_xp(t))
    ev, ec = _reference(S, 4)
    np.testing.assert_array_equal(to_numpy(cols), ec)
    np.testing.assert_array_equal(to_numpy(vals), ev)
    assert calls


def _run_blocks(S, k, width, to_xp, *, seed_poorly=False):
    """Walk S's columns in blocks of ``width`` through update_topk, like kneighbors does."""
    rows = S.shape[0]
    values = to_xp(np.full((rows, k), -np.inf))
    index = to_xp(np.full((rows, k), -1, dtype=np.int64))
    start = 0
    if not seed_poorly:
        v, c = topk_largest(to_xp(S[:, :width]), min(k, width))
        values, index = update_topk(values, index, to_xp(S[:, :width]), 0)
        np.testing.assert_array_equal(to_numpy(index)[:, : min(k, width)], to_numpy(c))
        start = width
    for c0 in range(start, S.shape[1], width):
        values, index = update_topk(values, index, to_xp(S[:, c0 : c0 + width]), c0)
    return to_numpy(values), to_numpy(index)


@pytest.mark.parametrize("width", [3, 40, 1000])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_update_topk_blocks_equal_one_pass(xp, to_xp, width, k):
    rng = np.random.default_rng(width + k)
    S = rng.integers(0, 20, size=(25, 600)).astype(np.float64)  # many ties across blocks
    S[3] = np.arange(600.0)  # every block beats the last: many candidates each time
    S[4] = 7.0  # all tied: the lowest columns must stay
    ev, ec = _reference(S, k)
    for poorly in (False, True):
        vals, cols = _run_blocks(S, k, width, to_xp, seed_poorly=poorly)
        np.testing.assert_array_equal(cols, ec)
        np.testing.assert_array_equal(vals, ev)


def test_update_topk_paths(xp, to_xp, monkeypatch):
    # Good lists: the sparse path (no top-k of the tile); one row with many candidates and
    # the rest with none: the uneven fallback (top-k of the tile, merged).
    calls = []
    real = topk.topk_largest
    monkeypatch.setattr(topk, "topk_largest", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    rng = np.random.default_rng(3)
    old = rng.normal(size=(30, 200))
    new = rng.normal(size=(30, 200))
    values, index = topk_largest(to_xp(old), 4)
    values, index = update_topk(values, index, to_xp(new), 200)
    ev, ec = _reference(np.concatenate([old, new], axis=1), 4)
    np.testing.assert_array_equal(to_numpy(index), ec)
    assert not calls  # sparse path
    low = np.full((30, 200), -10.0)
    low[7] = 10.0 + np.arange(200.0)
    v2, i2 = update_topk(values, index, to_xp(low), 400)
    assert calls  # uneven: the tile's own top k
    np.testing.assert_array_equal(to_numpy(i2)[7], [599, 598, 597, 596])
    np.testing.assert_array_equal(np.delete(to_numpy(i2), 7, 0), np.delete(ec, 7, 0))
    same_v, same_i = update_topk(values, index, to_xp(low - 1000), 400)  # nothing enters
    np.testing.assert_array_equal(to_numpy(same_i), ec)


@pytest.mark.parametrize("width", [3, 40, 1000])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_update_topk_columns_equals_the_transposed_tile(xp, to_xp, width, k):
    # columns=True reads the lists' scores from a tile's columns: the same lists as the
    # row-major transposed tile gives, on the sparse, uneven and dense paths alike.
    rng = np.random.default_rng(width * k)
    S = rng.integers(0, 20, size=(25, 600)).astype(np.float64)
    S[3] = np.arange(600.0)
    S[4] = 7.0
    rows = S.shape[0]
    by_rows = (to_xp(np.full((rows, k), -np.inf)), to_xp(np.full((rows, k), -1, dtype=np.int64)))
    by_cols = by_rows
    for c0 in range(0, S.shape[1], width):
        tile = S[:, c0 : c0 + width]
        by_rows = update_topk(*by_rows, to_xp(tile), c0)
        by_cols = update_topk(*by_cols, to_xp(np.ascontiguousarray(tile.T)), c0, columns=True)
    ev, ec = _reference(S, k)
    for got in (by_rows, by_cols):
        np.testing.assert_array_equal(to_numpy(got[1]), ec)
        np.testing.assert_array_equal(to_numpy(got[0]), ev)


def test_update_topk_columns_sparse_path(xp, to_xp, monkeypatch):
    # Good lists and a tile that lets a few through: no top-k of the tile, no transposed copy.
    calls = []
    real = topk.topk_largest
    monkeypatch.setattr(topk, "topk_largest", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    rng = np.random.default_rng(5)
    old, new = rng.normal(size=(30, 200)), rng.normal(size=(30, 200))
    values, index = topk_largest(to_xp(old), 4)
    calls.clear()
    values, index = update_topk(values, index, to_xp(np.ascontiguousarray(new.T)), 200, columns=True)
    ev, ec = _reference(np.concatenate([old, new], axis=1), 4)
    np.testing.assert_array_equal(to_numpy(index), ec)
    np.testing.assert_array_equal(to_numpy(values), ev)
    assert not calls
