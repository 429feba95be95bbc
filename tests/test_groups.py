"""Exact keys for near-tie groups only (gpuknn.ops.groups)."""

import numpy as np
import pytest
from helpers import host

from gpuknn.ops.exact import exact_keys, row_stats
from gpuknn.ops.groups import rerank_groups
from gpuknn.ops.rerank import rerank


def _case(seed, noise, metric="correlation", n=400, m=30, kk=20):
    """Candidates as a float32 tile would give them: exact keys plus noise of at most
    ``noise``, the ``kk`` best by that score (ties by index)."""
    rng = np.random.default_rng(seed)
    R = rng.normal(size=(n, 6))
    R[100:130] = R[:30]  # exact duplicates
    R[200:210] = R[0]  # a group of ties
    Q = np.concatenate([rng.normal(size=(m - 3, 6)), R[[0, 5, 7]]])
    st, qs = row_stats(R, metric), row_stats(Q, metric)
    keys = exact_keys(Q, R, np.broadcast_to(np.arange(n), (m, n)), metric, st, q_stats=qs)
    tile = (keys + rng.uniform(-noise, noise, size=keys.shape)).astype(np.float32)
    order = np.lexsort((np.broadcast_to(np.arange(n), (m, n)), -tile), axis=1)[:, :kk]
    bound = np.full(m, noise * 1.0001 + 2.0**-24 * 4)
    return Q, R, st, qs, keys, np.take_along_axis(tile, order, 1), order, bound


@pytest.mark.parametrize("noise", [1e-7, 1e-4, 3e-2])
def test_groups_give_the_exact_order(noise):
    k = 8
    Q, R, st, qs, keys, tile, idx, bound = _case(0, noise)
    res = rerank_groups(Q, R, tile, idx, k, "correlation", st, qs, bound=bound, complete=False)
    full = rerank(Q, R, tile, idx, k, "correlation", st, qs, bound=bound, complete=False)
    want = np.lexsort((np.broadcast_to(np.arange(R.shape[0]), keys.shape), -keys), axis=1)[:, :k]
    ok = host(res.ok)
    np.testing.assert_array_equal(host(res.index)[ok], want[ok])
    np.testing.assert_array_equal(host(full.index)[ok], want[ok])
    # Keys are exact or within the reported error.
    got = np.take_along_axis(keys, host(res.index), 1)
    assert (np.abs(host(res.keys) - got) <= host(res.err)[:, None] + 1e-12).all()
    if noise == 1e-7:
        assert ok.mean() > 0.8 and (host(res.err)[ok] > 0).all()


def test_labels_mode_decides_only_mixed_groups_and_the_k_th_place():
    k = 10
    Q, R, st, qs, keys, tile, idx, bound = _case(1, 2e-3)
    import gpuknn.ops.groups as groups

    counted = []
    real = groups._flagged_keys

    def spy(local, flag, *a):
        counted.append(int(host(flag).sum()))
        return real(local, flag, *a)

    groups._flagged_keys = spy
    try:
        full = rerank_groups(Q, R, tile, idx, k, "correlation", st, qs, bound=bound, complete=False)
        labels = np.zeros(R.shape[0], dtype=np.int64)  # one label: only the k-th place's group
        res = rerank_groups(Q, R, tile, idx, k, "correlation", st, qs, bound=bound, complete=False, labels=labels)
    finally:
        groups._flagged_keys = real
    assert counted[1] < counted[0]
    ok = host(res.ok) & host(full.ok)
    # The top-k sets are the exact ones; ranks' keys are within the error of the exact ranks.
    want = np.lexsort((np.broadcast_to(np.arange(R.shape[0]), keys.shape), -keys), axis=1)[:, :k]
    for r in np.nonzero(ok)[0]:
        assert set(host(res.index)[r]) == set(want[r])
    ranks = -np.sort(-np.take_along_axis(keys, want, 1), axis=1)
    assert (np.abs(host(res.keys) - ranks)[ok] <= host(res.err)[ok, None] + 1e-12).all()


def test_uncertified_rows_get_exact_keys_and_a_threshold():
    k = 18  # the k-th place's group reaches the end of the list for most rows
    Q, R, st, qs, keys, tile, idx, bound = _case(2, 5e-1)
    res = rerank_groups(Q, R, tile, idx, k, "correlation", st, qs, bound=bound, complete=False)
    bad = ~host(res.ok)
    assert bad.any()
    exact = np.take_along_axis(keys, host(res.index), 1)
    np.testing.assert_allclose(host(res.keys)[bad], exact[bad], rtol=0, atol=1e-12)
    assert (host(res.err)[bad] == 0).all()
    kth = host(res.keys)[bad, k - 1]
    np.testing.assert_allclose(host(res.threshold)[bad], kth - bound[bad])
