"""Canonical float64 keys of pairs (gpuknn.ops.exact)."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.ops.exact import (
    RowStats,
    distance_interval,
    exact_keys,
    grid_exact_keys,
    keys_to_distances,
    prefix_row_stats,
    row_stats,
)

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


def _prefix_data(d, seed):
    """Rows of decreasing column scales (like PCA scores), some far from 0 against their
    spread (row_stats' two-pass sum), a constant, a zero and a duplicated row."""
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(60, d)) * np.linspace(20, 0.5, d)).astype(np.float32)
    X[:12] += 40
    X[12], X[13], X[15] = 3.0, 0.0, X[14]
    return X


def _same_bits(a, b):
    a, b = host(a), host(b)
    return a.shape == b.shape and np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("d", [1, 7, 64])
def test_prefix_row_stats_are_each_prefixs_own(backend, metric, d):
    """The whole grid at once (gpuknn's tree on torch/CuPy, a loop elsewhere) gives every
    prefix the bits row_stats gives it alone: the exact keys of a p-sweep must be
    kneighbors' keys on ``Z[:, :p]``."""
    X = backend.asarray(_prefix_data(d, d))
    ps = sorted({p for p in (1, 2, d, d // 3, d - 1) if 1 <= p <= d})
    got = prefix_row_stats(X, ps, metric)
    assert len(got) == len(ps)
    for p, stats in zip(ps, got):
        want = row_stats(X[:, :p], metric)
        for name, a, b in zip(RowStats._fields, stats, want):
            assert (a is None) == (b is None), (p, name)
            if a is not None:
                assert_xp(a, host(b), backend, dtype=backend.xp.float64)
                assert _same_bits(a, b), (p, name)


@pytest.mark.parametrize("metric", [*METRICS, "manhattan"])
def test_grid_exact_keys_are_each_sizes_keys(backend, metric):
    """Rows of many column prefixes in one call: each row's keys are exact_keys' in its
    own prefix, bit for bit, in the caller's row order (a small block size: many blocks)."""
    d = 40
    rng = np.random.default_rng(5)
    Zn, Qn = _prefix_data(d, 1), _prefix_data(d, 2)[:20]
    Qn[3] = Zn[14]  # a query equal to a reference: the snapped top key
    ps = [1, 2, 9, 25, 40]
    Z, Q = backend.asarray(Zn), backend.asarray(Qn)
    rs = [row_stats(Z[:, :p], metric) for p in ps]
    qs = [row_stats(Q[:, :p], metric) for p in ps]
    rows = 50
    sets, q_rows = rng.integers(0, len(ps), rows), rng.integers(0, 20, rows)
    index = rng.integers(0, 60, (rows, 6))
    index[:, 0], index[:, 1] = 14, 15
    on = backend.asarray
    got = grid_exact_keys(Q, Z, on(index), metric, on(q_rows), on(sets), ps, rs, qs, max_bytes=4_000)
    assert_xp(got, host(got), backend, dtype=backend.xp.float64)  # namespace, device, dtype
    assert tuple(got.shape) == (rows, 6)
    for i in range(rows):
        s = int(sets[i])
        want = exact_keys(
            Q[:, : ps[s]],
            Z[:, : ps[s]],
            backend.asarray(index[i : i + 1]),
            metric,
            rs[s],
            q_stats=qs[s],
            q_index=backend.asarray(q_rows[i : i + 1]),
        )
        assert _same_bits(got[i : i + 1, :], want), (i, ps[s])
