"""The tile pass (gpuknn.ops.search): references, query preparation, nomination, collection."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.ops.exact import row_stats
from gpuknn.ops.search import Reference, TilePlan, collect, nominate, prepare_queries, score_tile

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]


@pytest.mark.parametrize("metric", METRICS)
def test_lazy_statistics_equal_eager_ones(backend, metric):
    rng = np.random.default_rng(0)
    R = backend.asarray(rng.normal(size=(2500, 7)).astype(np.float32))
    lazy = Reference(R, metric, keep_rows=False)
    kept = Reference(R, metric, keep_rows=True)
    for c0, c1 in ((0, 1500), (1500, 2500)):  # a search's first sweep gathers them
        assert_xp(
            lazy.block(c0, c1, backend.xp.float32),
            host(kept.block(c0, c1, backend.xp.float32)),
            backend,
            exact=False,
            rtol=1e-6,
            atol=1e-6,
        )
    eager = row_stats(R, metric)
    for got, want in zip(lazy.stats, eager):
        if want is not None:
            assert_xp(got, host(want), backend)
    assert lazy.ref_max == pytest.approx(kept.ref_max) and lazy.key_scale == pytest.approx(kept.key_scale)


def test_statistics_without_a_search_sweep_the_rows():
    R = np.arange(30.0).reshape(10, 3)
    ref = Reference(R, "cosine", keep_rows=False)
    np.testing.assert_allclose(ref.stats.norm, np.linalg.norm(R, axis=1))


def test_float64_tiles_of_float32_rows_are_prepared_afresh():
    rng = np.random.default_rng(1)
    R = rng.normal(size=(20, 5)).astype(np.float32)
    kept = Reference(R, "correlation", keep_rows=True)
    b64 = kept.block(0, 20, np.float64)
    X = R.astype(np.float64) - R.astype(np.float64).mean(1, keepdims=True)
    np.testing.assert_allclose(b64, X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-14)


def test_euclidean_rows_are_centred_on_the_reference():
    R = np.array([[1e6, 1e6], [1e6 + 2, 1e6]], dtype=np.float32)
    ref = Reference(R, "euclidean", keep_rows=True)
    rows, _, q_norm, q_sq = prepare_queries(R[:1], ref, np.float32)
    np.testing.assert_array_equal(ref.centre, [1e6 + 1, 1e6])
    np.testing.assert_array_equal(ref.rows, [[-1, 0, -0.5], [1, 0, -0.5]])
    np.testing.assert_array_equal(rows, [[-1, 0, 1]])
    assert q_sq[0] == 1.0


@pytest.mark.parametrize("metric", ["correlation", "euclidean"])
def test_nominate_and_collect(metric):
    rng = np.random.default_rng(2)
    R, Q = rng.normal(size=(300, 6)), rng.normal(size=(40, 6))
    ref = Reference(R, metric, keep_rows=False)
    rows, *_ = prepare_queries(Q, ref, np.float64)
    S = score_tile(rows, ref.block(0, 300, np.float64).T)
    for plan in (TilePlan(40, 40, 300), TilePlan(40, 7, 33)):
        vals, idx = nominate(rows, ref, 9, plan, np.float64)
        np.testing.assert_array_equal(idx, np.argsort(-S, axis=1, kind="stable")[:, :9])
        t = vals[:, 4]
        pairs = [(r, c) for rr, cc in collect(rows, ref, t, plan, np.float64) for r, c in zip(rr, cc)]
        want = {(r, c) for r, c in zip(*np.nonzero(S >= t[:, None]))}
        assert set(pairs) == want and len(pairs) == len(want)


def test_round_down_keeps_every_score_that_reaches_the_threshold(backend):
    from helpers import assert_xp

    from gpuknn.ops.search import round_down

    t64 = np.array([1.0, 1 + 1e-9, 1 - 1e-9, 0.1, -0.3])
    got = round_down(backend.asarray(t64), backend.xp.float32)
    want = np.float32(t64)
    want = np.where(want.astype(np.float64) > t64, np.nextafter(want, np.float32(-np.inf)), want)
    assert_xp(got, want, backend, dtype=backend.xp.float32)
    assert (want.astype(np.float64) <= t64).all()  # never above the threshold ...
    assert (np.nextafter(want, np.float32(np.inf)).astype(np.float64) > t64).all()  # ... the largest such


def test_pad_lists(backend):
    from helpers import assert_xp

    from gpuknn.ops.topk import pad_lists

    v, i = pad_lists(backend.asarray(np.array([[3.0], [1.0]])), backend.asarray(np.array([[4], [0]])), 3)
    assert_xp(v, np.array([[3.0, -np.inf, -np.inf], [1.0, -np.inf, -np.inf]]), backend)
    assert_xp(i, np.array([[4, -1, -1], [0, -1, -1]]), backend)
