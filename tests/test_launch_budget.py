"""Kernel-launch and host-sync budgets of the engine at a GPU-sized ``working_memory``.

Counted on torch CPU (:class:`helpers.Launches`, :class:`helpers.HostSyncs`): on a GPU
each launch costs ~5-15 µs of host time and each sync stalls the queue, so these counts
are the engine's host overhead there. Data of Fashion-MNIST's shape (784 features, pixel
values 0..255, ten classes), made here: the budgets run in CI without the data package.
The budgets are issue 31's; what a path costs today is in ``docs/benchmarks.md``.
"""

import numpy as np
import pytest
from helpers import HostSyncs, Launches

import gpuknn
from gpuknn.model_selection import StratifiedKFold, cross_validate_k, cross_validate_kp

torch = pytest.importorskip("torch")

WM = 37193  # MiB: half an H100's memory, what the default plans with on one
# The Fashion-MNIST study's PCA sizes.
PS = [*range(1, 16), 20, 25, 30, 40, 50, 60, 70, 80, 100, 115, 215, 315, 415, 515, 615, 715]


def fashion_like(n, seed):
    """``n`` rows of 784 pixels in 0..255 around ten class templates, and their labels."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 255, size=(10, 784))
    y = rng.integers(0, 10, n)
    X = np.clip(centres[y] + rng.normal(0, 60, size=(n, 784)), 0, 255).round().astype(np.float32)
    return torch.from_numpy(X), torch.from_numpy(y)


def counted(fn):
    with HostSyncs() as syncs, Launches() as launches:
        out = fn()
    return launches, syncs, out


def test_counter_sees_launches_and_not_views():
    a = torch.ones(4, 3)
    with Launches() as launches:
        b = a.T[1:].unsqueeze(0)[0]  # views only
        c = b + 1  # one launch
    assert launches.count == 1 and launches.by_op["add"] == 1
    assert c.shape == (2, 4) and bool((c == 2).all())


@pytest.fixture(scope="module")
def reference():
    return fashion_like(60_000, 1)[0]


def test_kneighbors_budget_and_no_growth_with_queries(reference):
    """1 000 x 60 000 x 784, k = 10, correlation, raw reference: <= 800 launches, <= 20
    syncs; 500 queries cost the same launches (one tile holds them either way)."""
    Q = fashion_like(1_000, 2)[0]
    out = {}
    for n in (500, 1_000):
        launches, syncs, (_, idx) = counted(
            lambda n=n: gpuknn.kneighbors(Q[:n], reference, 10, metric="correlation", working_memory=WM)
        )
        assert idx.shape == (n, 10)
        out[n] = (launches.count, syncs.count)
    assert out[1_000][0] <= 800, out
    assert out[1_000][1] <= 20, out
    assert out[1_000][0] == out[500][0], out  # launches do not follow the query rows


def test_kneighbors_result_does_not_depend_on_the_budget(reference):
    """The device-sized blocks change the launches, not the answer."""
    Q = fashion_like(200, 3)[0]
    big = gpuknn.kneighbors(Q, reference[:8_000], 10, metric="correlation", working_memory=WM)
    small = gpuknn.kneighbors(Q, reference[:8_000], 10, metric="correlation", working_memory=2)
    assert torch.equal(big[1], small[1])
    assert torch.equal(big[0], small[0])


def _cv_k(rows):
    X, y = fashion_like(rows, 3)
    fold = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X.numpy(), y.numpy()))
    return counted(
        lambda: cross_validate_k(
            X, y, range(1, 301), cv=[fold], weights=("uniform", "distance"), metric="correlation", working_memory=WM
        )
    )


def test_cross_validate_k_budget():
    """One 80/20 fold of 12 000 rows, k = 1..300, both weights: <= 3 000 launches, <= 40 syncs."""
    launches, syncs, table = _cv_k(12_000)
    assert len(table.rows) == 600
    assert launches.count <= 3_000, launches.by_op.most_common(10)
    assert syncs.count <= 40, dict(syncs.by_kind)


def test_cross_validate_k_launches_do_not_follow_the_rows():
    """6 000 -> 12 000 rows: launches grow by at most 25 % (blocks sized by the budget, no
    per-row loop, and rows the tile cannot certify settled in the one exact pass)."""
    small = _cv_k(6_000)[0].count
    big = _cv_k(12_000)[0].count
    assert big <= 1.25 * small, (small, big)


def test_k_fold_shares_its_tile_passes_at_no_launch_cost(monkeypatch):
    """5 folds of 6 000 rows, k = 1..30, both weights: the folds' tile passes in one (half
    the GEMMs' work, in 4 GEMMs instead of 5) cost about the launches and no more syncs
    than five of their own (one block per fold at this budget: a GEMM and an update per
    side for each fold and the later folds together, not per pair of folds)."""
    import gpuknn.model_selection.cv as cv_module

    X, y = fashion_like(6_000, 4)
    opts = dict(cv=StratifiedKFold(5, shuffle=True, random_state=0), weights=("uniform", "distance"))
    shared = counted(lambda: cross_validate_k(X, y, range(1, 31), metric="correlation", working_memory=WM, **opts))
    monkeypatch.setattr(cv_module, "shared_tile_passes", lambda *a, **kw: None)
    alone = counted(lambda: cross_validate_k(X, y, range(1, 31), metric="correlation", working_memory=WM, **opts))
    assert shared[2].rows == alone[2].rows
    assert shared[0].by_op["mm"] == 4 < alone[0].by_op["mm"], (shared[0].by_op["mm"], alone[0].by_op["mm"])
    assert shared[0].count <= 1.05 * alone[0].count, (shared[0].count, alone[0].count)
    assert shared[1].count <= alone[1].count, (dict(shared[1].by_kind), dict(alone[1].by_kind))


def _cv_kp(rows, ps=PS):
    X, y = fashion_like(rows, 3)
    fold = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X.numpy(), y.numpy()))
    launches, syncs, table = counted(
        lambda: cross_validate_kp(X, y, range(1, 31), ps, cv=[fold], weights=("uniform", "distance"), working_memory=WM)
    )
    assert len(table.rows) == len(ps) * 2 * 30
    return launches.count, syncs.count


@pytest.fixture(scope="module")
def kp_counts():
    return {rows: _cv_kp(rows) for rows in (6_000, 12_000)}


def test_cross_validate_kp_budget(kp_counts):
    """One 80/20 fold of 12 000 rows, k = 1..30, the study's 31 PCA sizes, both weights:
    <= 6 000 launches, <= 150 syncs (the grid's positions decided together)."""
    launches, syncs = kp_counts[12_000]
    assert launches <= 6_000, kp_counts
    assert syncs <= 150, kp_counts


def test_cross_validate_kp_launches_do_not_follow_the_rows(kp_counts):
    assert kp_counts[12_000][0] <= 1.25 * kp_counts[6_000][0], kp_counts


def test_cross_validate_kp_launches_per_grid_size(kp_counts):
    """What each grid size adds is its tile updates, not its own statistics and exact keys
    (those of every size are one call: ``prefix_row_stats``, ``grid_exact_keys``). 16 -> 31
    sizes on 6 000 rows: ~47 launches a size (~170 when each size took its own)."""
    half = _cv_kp(6_000, PS[::2])[0]
    per_size = (kp_counts[6_000][0] - half) / (len(PS) - len(PS[::2]))
    assert per_size <= 80, (half, kp_counts[6_000][0], per_size)
