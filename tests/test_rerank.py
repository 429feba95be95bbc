"""Exact re-rank of candidate lists and the second pass (gpuknn.ops.rerank)."""

import numpy as np
import pytest

from gpuknn.ops.exact import exact_keys, row_stats
from gpuknn.ops.rerank import KEY_MAX, collect_top, rerank, top_pairs


def test_top_pairs_orders_by_key_then_column():
    rows = np.array([1, 0, 0, 1, 0, 1, 0])
    keys = np.array([0.5, 0.9, 0.9, 0.7, 0.1, 0.5, 0.95])
    cols = np.array([8, 4, 2, 3, 1, 6, 9])
    r, kv, c = top_pairs(rows, keys, cols, 2, 2)
    assert r.tolist() == [0, 0, 1, 1] and c.tolist() == [9, 2, 3, 6]
    _, kv, c = top_pairs(rows, keys, cols, 2, 2, final=True)
    assert c.tolist() == [[9, 2], [3, 6]] and kv.shape == (2, 2)


def _all_pairs(m, n, width):
    def make(progress):
        for c0 in range(0, n, width):
            c1 = min(c0 + width, n)
            rr, cc = np.meshgrid(np.arange(m), np.arange(c0, c1), indexing="ij")
            keep = ~progress.done[rr.ravel()]
            yield rr.ravel()[keep], cc.ravel()[keep]

    return make


@pytest.mark.parametrize("metric", ["correlation", "euclidean"])
def test_collect_top_equals_the_exact_top_k(metric):
    rng = np.random.default_rng(0)
    R = rng.integers(0, 3, size=(300, 2)).astype(np.float64)  # massive exact ties
    Q = rng.integers(0, 3, size=(12, 2)).astype(np.float64)
    st, qs = row_stats(R, metric), row_stats(Q, metric)
    keys = exact_keys(Q, R, np.broadcast_to(np.arange(300), (12, 300)), metric, st, q_stats=qs)
    want = np.lexsort((np.broadcast_to(np.arange(300), keys.shape), -keys), axis=1)[:, :5]
    kth = np.take_along_axis(keys, want, 1)[:, -1]
    for width in (7, 64, 300):
        kv, idx = collect_top(_all_pairs(12, 300, width), Q, R, metric, st, qs, 5, kth=kth)
        np.testing.assert_array_equal(idx, want)
        np.testing.assert_array_equal(kv, np.take_along_axis(keys, want, 1))


def test_rows_tied_at_the_top_stop_early():
    R = np.ones((1000, 3))
    R[::2] *= -1.0  # correlation-free toy: cosine keys are exactly +1 or -1
    Q = np.ones((2, 3))
    st, qs = row_stats(R, "cosine"), row_stats(Q, "cosine")
    batches = []

    def make(progress):
        for c0 in range(0, 1000, 50):
            batches.append(c0)
            rr, cc = np.meshgrid(np.arange(2), np.arange(c0, c0 + 50), indexing="ij")
            keep = ~progress.done[rr.ravel()]
            yield rr.ravel()[keep], cc.ravel()[keep]

    kv, idx = collect_top(make, Q, R, "cosine", st, qs, 4, kth=np.full(2, KEY_MAX["cosine"]))
    assert idx.tolist() == [[1, 3, 5, 7]] * 2 and (kv == 1.0).all()
    assert batches == [0]  # settled by the first batch


def test_rerank_certifies_rows_with_room_below_the_k_th():
    rng = np.random.default_rng(1)
    R, Q = rng.normal(size=(50, 4)), rng.normal(size=(3, 4))
    st, qs = row_stats(R, "inner"), row_stats(Q, "inner")
    keys = exact_keys(Q, R, np.broadcast_to(np.arange(50), (3, 50)), "inner", st, q_stats=qs)
    order = np.argsort(-keys, axis=1, kind="stable")[:, :6]
    tile = np.take_along_axis(keys, order, 1).astype(np.float32)
    res = rerank(Q, R, tile, order, 4, "inner", st, qs, bound=np.full(3, 1e-6), complete=False)
    np.testing.assert_array_equal(res.index, order[:, :4])
    gap = tile[:, 5] + 1e-6 < res.keys[:, 3]
    np.testing.assert_array_equal(res.ok, gap)
    res = rerank(Q, R, tile, order, 4, "inner", st, qs, bound=np.full(3, 10.0), complete=False)
    assert not res.ok.any()
