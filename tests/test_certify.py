"""Certified tile bounds (gpuknn.ops.certify): every tile score within e_q of its exact key."""

import array_api_compat.numpy as xp
import numpy as np
import pytest

from gpuknn._delegation import matmul_unit_roundoff
from gpuknn.ops.certify import certified, gamma, key_rounding, tile_error_bound
from gpuknn.ops.exact import exact_keys, row_kappa
from gpuknn.ops.search import Reference, prepare_queries, score_tile

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]


def _data(kind, rng):
    if kind == "offset":  # large common offset: the euclidean family centres it away
        R = rng.normal(size=(300, 40)) + 1e4
        Q = rng.normal(size=(50, 40)) + 1e4
    elif kind == "rows":  # large row offsets: correlation centres each row
        R = rng.normal(size=(300, 40)) + rng.uniform(-1e3, 1e3, size=(300, 1))
        Q = rng.normal(size=(50, 40)) + 500.0
    elif kind == "rows-huge":  # rows far from 0 against their spread: kappa ~ 1e5
        R = 1e5 + rng.normal(size=(300, 3))
        Q = 1e5 + rng.normal(size=(50, 3))
    elif kind == "cancel":  # near-orthogonal rows: scores cancel
        R = rng.normal(size=(300, 40))
        R[:, 1::2] *= 1e3
        Q = rng.normal(size=(50, 40))
    else:
        R, Q = rng.normal(size=(300, 40)), rng.normal(size=(50, 40))
    return Q, R


@pytest.mark.parametrize("kind", ["plain", "offset", "rows", "rows-huge", "cancel"])
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_tile_score_is_within_its_bound(kind, metric, dtype):
    rng = np.random.default_rng(0)
    Q, R = (a.astype(dtype) for a in _data(kind, rng))
    ref = Reference(R, metric, keep_rows=False)
    for tile in (np.float32, dtype):
        rows, q_stats, q_norm, q_sq = prepare_queries(Q, ref, tile)
        S = score_tile(rows, ref.block(0, R.shape[0], tile).T).astype(np.float64)
        u, eta = matmul_unit_roundoff(tile, xp)
        e = tile_error_bound(
            metric,
            q_norm,
            ref.ref_max,
            width=ref.width,
            n_features=R.shape[1],
            u=u,
            eta=eta,
            key_scale=ref.key_scale,
            q_kappa=row_kappa(q_stats, R.shape[1]),
        )
        idx = np.broadcast_to(np.arange(R.shape[0]), (Q.shape[0], R.shape[0]))
        keys = exact_keys(Q, R, idx, metric, ref.stats, q_stats=q_stats)
        units = keys if q_sq is None else 0.5 * (keys + q_sq[:, None])
        assert (np.abs(S - units) <= e[:, None]).all()
        # The bound is not vacuous: on plain data it is within 100x the worst error seen.
        if tile == np.float32 and kind == "plain":
            assert e.max() < 100 * np.abs(S - units).max()


def test_zero_rows_have_no_error():
    e = tile_error_bound("correlation", np.array([0.0, 1.0]), 1.0, width=5, n_features=5, u=2.0**-24, eta=2.0**-150)
    assert e[0] == 0 and e[1] > 0
    e = tile_error_bound("cosine", np.array([1.0]), 0.0, width=5, n_features=5, u=2.0**-24, eta=2.0**-150)
    assert e[0] == 0


def test_certified_rows():
    last = np.array([0.5, 0.5, 0.9, 0.0], dtype=np.float32)
    bound = np.array([0.1, 0.3, 0.0, 0.1])
    kth = np.array([0.7, 0.7, 0.9, 0.05])
    assert certified(last, bound, kth, complete=False).tolist() == [True, False, True, False]
    assert certified(last, bound, kth, complete=True).all()


def test_gamma_and_key_rounding():
    assert gamma(10, 2.0**-24) == pytest.approx(10 * 2.0**-24, rel=1e-6)
    assert gamma(2**30, 2.0**-24) == np.inf
    assert key_rounding("euclidean", 100) == 0.0
    assert 0 < key_rounding("correlation", 100) < key_rounding("correlation", 100, key_scale=10.0) < 1e-10
