"""Host-sync budgets, counted on torch CPU (each sync stalls a GPU's queue).

* ``kneighbors``: at most 3 syncs per extra score tile;
* the power method: at most 1 per block of ``check_every`` iterations;
* ``score_many_k``: none per k (the same count for 3 and for 40 values of k).
"""

import numpy as np
import pytest
from helpers import HostSyncs

import gpuknn
from gpuknn._backend import preferred_tile_bytes
from gpuknn.linalg import power_method
from gpuknn.model_selection.sweep import score_many_k
from gpuknn.ops.search import plan_tiles

torch = pytest.importorskip("torch")
import array_api_compat.torch as tx  # noqa: E402

RNG = np.random.default_rng(0)
WM = 2_000_000


def _tiles(n_q, n_ref, d):
    plan = plan_tiles(n_q, n_ref, d, 4, WM * 3 // 4, tile_bytes=preferred_tile_bytes(tx))
    return -(-n_q // plan.rows) * -(-n_ref // plan.cols)


def test_kneighbors_syncs_per_tile():
    R = torch.asarray(RNG.normal(size=(3000, 16)).astype(np.float32))
    seen = {}
    for n in (600, 1200, 2400):
        Q = torch.asarray(RNG.normal(size=(n, 16)).astype(np.float32))
        with HostSyncs() as syncs:
            gpuknn.kneighbors(Q, R, 10, working_memory=WM, metric="correlation")
        seen[n] = (syncs.count, _tiles(n, 3000, 16))
    assert seen[2400][1] > seen[1200][1] > seen[600][1]  # the plans do add tiles
    assert seen[2400][0] > seen[1200][0] > seen[600][0] > 0  # and the counter sees syncs
    for small in (600, 1200):
        extra_syncs = seen[2400][0] - seen[small][0]
        extra_tiles = seen[2400][1] - seen[small][1]
        assert extra_syncs <= 3 * extra_tiles, (small, seen)


def test_power_method_syncs_per_block():
    C = torch.asarray(np.cov(RNG.normal(size=(500, 60)), rowvar=False))
    counts = {}
    for it in (128, 256):
        with HostSyncs() as syncs, pytest.warns(gpuknn.ConvergenceWarning):
            res = power_method(C, max_iter=it, tol=1e-300, check_every=16, random_state=0)
        assert int(res.n_iter) == it
        counts[it] = syncs.count
    assert 0 < counts[128] < counts[256] <= counts[128] + (256 - 128) // 16


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_score_many_k_has_no_sync_per_k(weights):
    y = torch.asarray(RNG.integers(0, 5, 300))
    labels = torch.asarray(RNG.integers(0, 5, (300, 40)))
    dist = torch.asarray(np.sort(RNG.random((300, 40)), axis=1))
    counts = []
    for ks in ([1, 2, 3], list(range(1, 41))):
        with HostSyncs() as syncs:
            out = score_many_k(labels, dist, y, ks, n_classes=5, weights=[weights], scoring=["accuracy", "macro_f1"])
        assert out[weights]["macro_f1"].shape == (len(ks),)
        counts.append(syncs.count)
    assert counts[0] == counts[1] > 0
