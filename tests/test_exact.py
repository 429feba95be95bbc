"""Canonical float64 keys of pairs (gpuknn.ops.exact)."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.ops.exact import distance_interval, exact_keys, keys_to_distances, row_stats

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]


def _oracle(Q, R, idx, metric):
    Q, R = Q.astype(np.float64), R.astype(np.float64)
    out = np.empty(idx.shape)
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            q, r = Q[i], R[idx[i, j]]
            if metric in ("euclidean", "sqeuclidean"):
                out[i, j] = -((q - r) ** 2).sum()
                continue
            if metric == "correlation":
                q, r = q - q.mean(), r - r.mean()
            dot = (q * r).sum()
            if metric != "inner":
                nq, nr = np.sqrt((q * q).sum()), np.sqrt((r * r).sum())
                dot = 0.0 if nq == 0 or nr == 0 else dot / nq / nr
            out[i, j] = dot
    return out


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_keys_match_the_definition(backend, metric, dtype):
    rng = np.random.default_rng(0)
    R = (rng.normal(size=(50, 9)) * 3 + 2).astype(dtype)
    R[7] = 0.0  # a zero row: key 0 for cosine and correlation, distance 1
    R[8] = 4.0  # constant: zero after centring
    Q = rng.normal(size=(6, 9)).astype(dtype)
    idx = rng.integers(0, 50, size=(6, 11))
    idx[:, 0], idx[:, 1] = 7, 8
    Rb = backend.asarray(R)
    keys = exact_keys(
        backend.asarray(Q), Rb, backend.asarray(idx), metric, row_stats(Rb, metric), max_bytes=900
    )  # several row blocks
    assert_xp(keys, _oracle(Q, R, idx, metric), backend, dtype=backend.xp.float64, exact=False, rtol=1e-12, atol=1e-12)


def test_top_keys_snap_to_one(backend):
    # A row and its multiple correlate at exactly 1 in real arithmetic; in float64 the key
    # may land an ulp off. It is snapped to 1, so both tie bit for bit with the row itself.
    rng = np.random.default_rng(1)
    r = rng.normal(size=30)
    R = np.stack([r, r * 3.0, r + 7.0, rng.normal(size=30)])
    Rb = backend.asarray(R)
    for metric in ("cosine", "correlation"):
        keys = exact_keys(
            backend.asarray(R[:1]), Rb, backend.asarray(np.array([[0, 1, 2, 3]])), metric, row_stats(Rb, metric)
        )
        got = host(keys)[0]
        assert got[0] == got[1] == 1.0
        assert (got[2] == 1.0) == (metric == "correlation") and got[3] < 1.0


def test_prefix_columns(backend):
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(20, 8))
    idx = rng.integers(0, 20, size=(4, 3))
    Zb = backend.asarray(Z)
    st = row_stats(Zb[:, :5], "correlation")
    keys = exact_keys(backend.asarray(Z[:4]), Zb, backend.asarray(idx), "correlation", st, n_cols=5)
    assert_xp(keys, _oracle(Z[:4, :5], Z[:, :5], idx, "correlation"), backend, exact=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_distances_and_intervals(metric):
    keys = np.array([[-4.0, -1.0], [-0.5, -0.25]]) if metric != "inner" else np.array([[3.0, 1.0], [2.0, 0.0]])
    if metric in ("cosine", "correlation"):
        keys = np.array([[0.9, 0.5], [0.2, -0.3]])
    d = keys_to_distances(keys, metric)
    lo, hi = distance_interval(keys, np.array([0.0, 0.01]), metric)
    np.testing.assert_array_equal(lo[0], d[0])
    np.testing.assert_array_equal(hi[0], d[0])
    assert (lo[1] <= d[1]).all() and (d[1] <= hi[1]).all() and (lo[1] < hi[1]).all()
    if metric == "euclidean":
        np.testing.assert_allclose(d[0], [2.0, 1.0])
