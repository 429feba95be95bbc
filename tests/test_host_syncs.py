"""Host-sync budgets, counted on torch CPU (each sync stalls a GPU's queue).

* ``kneighbors``: at most 3 syncs per extra score tile;
* the power method: at most 1 per block of ``check_every`` iterations;
* ``score_many_k``: none per k (the same count for 3 and for 40 values of k).
"""

import numpy as np
import pytest
from helpers import HostSyncs

import gpuknn
from gpuknn._memory import preferred_tile_bytes
from gpuknn.linalg import power_method
from gpuknn.model_selection.sweep import score_many_k
from gpuknn.ops.search import plan_tiles

torch = pytest.importorskip("torch")
import array_api_compat.torch as tx  # noqa: E402

RNG = np.random.default_rng(0)
WM = 2_000_000  # bytes (working_memory takes MiB: WM / 2**20)


def _tiles(n_q, n_ref, d):
    plan = plan_tiles(n_q, n_ref, d, 4, WM * 3 // 4, tile_bytes=preferred_tile_bytes(tx))
    return -(-n_q // plan.rows) * -(-n_ref // plan.cols)


def test_kneighbors_syncs_per_tile():
    R = torch.asarray(RNG.normal(size=(3000, 16)).astype(np.float32))
    seen = {}
    for n in (600, 1200, 2400):
        Q = torch.asarray(RNG.normal(size=(n, 16)).astype(np.float32))
        with HostSyncs() as syncs:
            gpuknn.kneighbors(Q, R, 10, working_memory=WM / 2**20, metric="correlation")
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


# --------------------------------------------------------------- validate once (issue 30)
def _sync_count(fn):
    fn()  # warm-up: lazy imports and caches are not the call's syncs
    with HostSyncs() as syncs:
        fn()
    return syncs.count


def _predict_case():
    """The issue's case: fit 5 000 x 20 float32, predict 1 000 x 20, brute force, torch CPU."""
    X = torch.asarray(RNG.normal(size=(5000, 20)).astype(np.float32))
    y = torch.asarray(RNG.integers(0, 3, 5000))
    Q = torch.asarray(RNG.normal(size=(1000, 20)).astype(np.float32))
    return X, y, Q


def test_public_calls_validate_with_one_sync():
    """A public call's validation is one host sync (finite values and magnitude in one
    reduction and transfer); the engine below it checks nothing again."""
    from gpuknn.base import check_query
    from gpuknn.ops.kneighbors import PreparedReference, search_validated
    from gpuknn.ops.limits import check_values, check_working_memory
    from gpuknn.ops.search import Reference
    from gpuknn.ops.votes import predict_votes

    X, y, Q = _predict_case()
    clf = gpuknn.KNeighborsClassifier(5, algorithm="brute").fit(X, y)
    assert _sync_count(lambda: check_query(clf, Q, return_magnitude=True)) == 1

    def engine_only():
        nb = clf._neighbors(Q, 5, clf._fit_magnitude)
        predict_votes(clf._labels_of(nb.indices, tx), [5], 3, None, "uniform", tx)

    total, engine = _sync_count(lambda: clf.predict(Q)), _sync_count(engine_only)
    assert total - engine == 1, (total, engine)
    assert total <= 10  # 14 before issue 30: 4 of them validation

    # The engine's public kneighbors: one sync for both inputs, nothing in its internal entry.
    mag = max(PreparedReference(X, metric="euclidean").magnitude, check_values(Q, tx, name="Q"))
    wm = check_working_memory(None, tx)

    def internal():  # the reference prepared as the public call prepares it, then the engine
        ref = Reference(X, "euclidean", keep_rows=False)
        return search_validated(Q, ref, 5, magnitude=mag, working_memory=wm).output_distances()

    public = _sync_count(lambda: gpuknn.kneighbors(Q, X, 5))
    assert public - _sync_count(internal) == 1, public


def test_cv_fold_trusts_the_boundary():
    """A fold of cross_validate_k scores rows validated once for the whole X: no re-check of
    the rows in the search nor of the lists in the votes (25 syncs per fold before issue 30)."""
    from gpuknn.model_selection.cv import fold_k_scores
    from gpuknn.ops.limits import check_values

    X, y, _ = _predict_case()
    mag = check_values(X, tx, name="X")
    args = (X[:4000], y[:4000], X[4000:], y[4000:], [1, 3, 5, 7])
    opts = dict(n_classes=3, metric="euclidean", weights=["uniform", "distance"], scoring=["accuracy"])
    opts["working_memory"] = 1024  # MiB
    trusted = _sync_count(lambda: fold_k_scores(*args, **opts, magnitude=mag))
    checked = _sync_count(lambda: fold_k_scores(*args, **opts))
    assert trusted <= 19, trusted
    assert checked - trusted == 1, (checked, trusted)  # the rows' one check; the lists' never
