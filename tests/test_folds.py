"""One tile pass for every fold of a K-fold cross-validation (gpuknn.ops.folds)."""

import numpy as np
import pytest
from helpers import assert_xp, host
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold

import gpuknn.model_selection.cv as cv_module
import gpuknn.model_selection.search_cv as search_cv_module
import gpuknn.ops.kneighbors as kn_module
from gpuknn.model_selection.cv import check_folds, cross_validate_k, shared_tile_passes
from gpuknn.model_selection.search_cv import KNeighborsClassifierCV
from gpuknn.ops.folds import fold_lists, partition_order
from gpuknn.ops.kneighbors import reference_for, search_validated
from gpuknn.ops.limits import check_values

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]


def _rows(dtype, n=600, d=12, seed=0):
    """Rows with exact duplicates, a zero row and a constant row (bound-0 rows of the
    cosine/correlation family), near ties, and classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.4
    X[5] = X[17]
    X[100] = X[400]
    X[30] = 0.0
    X[31] = 2.5
    X[200] = X[201] + 1e-9
    return X.astype(dtype), y


def _search(X, y, folds, f, metric, k, wm, shared=None):
    tr, te = folds[f]
    mag = check_values(X, np, name="X")
    Xtr, Xte = X[tr], X[te]
    if shared is None:
        ref, lists = reference_for(Xtr, metric), None
    else:
        ref, lists = reference_for(Xtr, metric, centre=shared.centre, summary=shared.summary), shared.lists
    return search_validated(Xte, ref, k, magnitude=mag, working_memory=wm, nominated=lists)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("wm", [720_000, 256 << 20])  # two blocks a fold; one block a fold
def test_each_fold_gets_its_own_searchs_answer(backend, metric, dtype, wm):
    X, y = _rows(dtype)
    Xb = backend.asarray(X)
    folds = check_folds(StratifiedKFold(5, shuffle=True, random_state=1), X, y)
    mag = check_values(X, np, name="X")
    shared = fold_lists(Xb, folds, metric, 7, magnitude=mag, working_memory=wm)
    assert shared is not None and len(shared) == 5
    for f, (tr, te) in enumerate(folds):
        own = search_validated(
            backend.asarray(X[te]), reference_for(backend.asarray(X[tr]), metric), 7, magnitude=mag, working_memory=wm
        )
        ref = reference_for(backend.asarray(X[tr]), metric, centre=shared[f].centre, summary=shared[f].summary)
        got = search_validated(
            backend.asarray(X[te]), ref, 7, magnitude=mag, working_memory=wm, nominated=shared[f].lists
        )
        assert_xp(got.indices, host(own.indices), backend)
        # The statistics gathered for the fold are the ones its reference would compute.
        fresh = reference_for(backend.asarray(X[tr]), metric, centre=shared[f].centre)
        assert (fresh.ref_max, fresh.key_scale) == shared[f].summary[1:]
        for a, b in zip(fresh.stats, shared[f].summary[0]):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(host(a), host(b))
        if dtype == np.float64:  # exact keys both ways
            np.testing.assert_array_equal(host(got.keys), host(own.keys))
        else:  # float32: each within its certified error of the exact keys
            gap = np.abs(host(got.keys) - host(own.keys))
            assert (gap <= (host(got.err) + host(own.err))[:, None]).all()
        # With labels (as the cross-validation searches): the same label at every rank.
        labels = backend.asarray(y[tr])
        own = search_validated(
            backend.asarray(X[te]),
            reference_for(backend.asarray(X[tr]), metric),
            7,
            magnitude=mag,
            working_memory=wm,
            labels=labels,
        )
        got = search_validated(
            backend.asarray(X[te]), ref, 7, magnitude=mag, working_memory=wm, nominated=shared[f].lists, labels=labels
        )
        np.testing.assert_array_equal(y[tr][host(got.indices)], y[tr][host(own.indices)])
        gap = np.abs(host(got.keys) - host(own.keys))
        assert (gap <= (host(got.err) + host(own.err))[:, None]).all()


def test_duplicates_in_two_folds_keep_the_lower_index_first():
    # Two copies of a row in different folds tie in every third fold's tile: its lists
    # name the lower training index first, as the fold's own tile pass does, so one-label
    # groups that the labels leave undecided keep the same order.
    X, y = _rows(np.float32)
    folds = check_folds(KFold(3, shuffle=True, random_state=4), X, y)
    (_, te0), (_, te1), (_, te2) = folds
    X[te1[0]] = X[te0[0]]
    y[te1[0]] = y[te0[0]]
    shared = shared_tile_passes(X, folds, "euclidean", 5, magnitude=check_values(X, np, name="X"))
    tr, te = folds[2]
    mag = check_values(X, np, name="X")
    ref = reference_for(X[tr], "euclidean", centre=shared[2].centre, summary=shared[2].summary)
    got = search_validated(
        X[te], ref, 5, magnitude=mag, working_memory=1 << 20, nominated=shared[2].lists, labels=y[tr]
    )
    own = search_validated(
        X[te], reference_for(X[tr], "euclidean"), 5, magnitude=mag, working_memory=1 << 20, labels=y[tr]
    )
    np.testing.assert_array_equal(got.indices, own.indices)
    a, b = np.searchsorted(tr, [te0[0], te1[0]])
    first = [
        row.tolist().index(min(a, b)) < row.tolist().index(max(a, b)) for row in got.indices if a in row and b in row
    ]
    assert first and all(first)


def test_euclidean_far_from_the_origin_with_near_ties():
    # A large common offset and neighbours 1e-4 apart: the shared euclidean tile (the
    # GEMM of centred rows, then the reference's term) stays within the bound the exact
    # pass relies on, so every fold finds its own search's neighbours.
    rng = np.random.default_rng(9)
    X = 1e4 + rng.normal(size=(400, 6))
    X[50:60] = X[40] + 1e-4 * np.arange(10)[:, None]
    y = rng.integers(0, 3, 400)
    for dtype in (np.float32, np.float64):
        Xd = X.astype(dtype)
        folds = check_folds(KFold(4, shuffle=True, random_state=0), Xd, y)
        shared = shared_tile_passes(Xd, folds, "euclidean", 6, magnitude=check_values(Xd, np, name="X"))
        for f in range(4):
            own = _search(Xd, y, folds, f, "euclidean", 6, 1 << 20)
            got = _search(Xd, y, folds, f, "euclidean", 6, 1 << 20, shared[f])
            np.testing.assert_array_equal(got.indices, own.indices)


@pytest.mark.parametrize("metric", ["cosine", "correlation", "inner"])
def test_rows_the_tile_decides_alone_are_searched_again(metric, monkeypatch):
    # A zero row's tile scores are all equal and exact (bound 0): its answer is the lowest
    # training indices, which only the fold's own tile pass orders that way.
    X, y = _rows(np.float64)
    X[[60, 61, 62, 63]] = 0.0
    folds = check_folds(KFold(4, shuffle=True, random_state=0), X, y)
    shared = shared_tile_passes(X, folds, metric, 5, magnitude=check_values(X, np, name="X"))
    calls = []
    real = kn_module.nominate
    monkeypatch.setattr(kn_module, "nominate", lambda q, *a, **kw: calls.append(q.shape[0]) or real(q, *a, **kw))
    seen = 0
    for f, (_, te) in enumerate(folds):
        own = _search(X, y, folds, f, metric, 5, 1 << 20)
        calls.clear()
        got = _search(X, y, folds, f, metric, 5, 1 << 20, shared[f])
        np.testing.assert_array_equal(got.indices, own.indices)
        # Rows zero (correlation: or constant) get the lowest training indices, from
        # one tile pass of their own; the others none.
        alone = np.flatnonzero(~X[te].any(axis=1) | ((X[te] == X[te][:, :1]).all(axis=1) & (metric == "correlation")))
        assert calls == ([alone.size] if alone.size else [])
        assert (got.indices[alone] == np.arange(5)).all()
        seen += alone.size
    assert seen >= 5


def test_partition_order():
    X = np.zeros((10, 2))
    y = np.arange(10) % 2
    folds = check_folds(KFold(3), X, y)
    order = partition_order(folds, 10)
    np.testing.assert_array_equal(order, np.concatenate([te for _, te in folds]))
    # Test sets that overlap or leave rows out, training sets that are not the rest, one fold.
    assert partition_order(check_folds(ShuffleSplit(3, test_size=0.3, random_state=0), X, y), 10) is None
    assert partition_order([(np.arange(5, 10), np.arange(5)), (np.arange(5), np.arange(4, 10))], 10) is None
    assert partition_order([(np.arange(6, 10), np.arange(5)), (np.arange(5), np.arange(5, 10))], 10) is None
    assert partition_order([(np.arange(5, 10), np.arange(5))], 10) is None


def test_where_the_folds_search_alone(monkeypatch):
    X, y = _rows(np.float64)
    mag = check_values(X, np, name="X")
    folds = check_folds(KFold(5), X, y)
    assert fold_lists(X, folds, "manhattan", 3, magnitude=mag, working_memory=1 << 20) is None
    splits = check_folds(ShuffleSplit(2, random_state=0), X, y)
    assert fold_lists(X, splits, "euclidean", 3, magnitude=mag, working_memory=1 << 20) is None
    # The prepared rows would take over half the budget.
    assert fold_lists(X, folds, "euclidean", 3, magnitude=mag, working_memory=X.nbytes) is None
    # Folds whose searches would choose different tile dtypes (float64 data screened in
    # float32 only where a search is large enough).
    sized = [(np.setdiff1d(np.arange(600), te), te) for te in np.split(np.arange(600), [100, 300])]
    monkeypatch.setattr(kn_module, "_SCREEN_MIN_WORK", 200 * 400 * 12)
    assert fold_lists(X, sized, "cosine", 3, magnitude=mag, working_memory=1 << 20) is None
    monkeypatch.setattr(kn_module, "_SCREEN_MIN_WORK", 1)
    assert fold_lists(X, sized, "cosine", 3, magnitude=mag, working_memory=1 << 20) is not None
    # Data so small that the search rescales it.
    tiny = X * 1e-300
    assert (
        fold_lists(tiny, folds, "euclidean", 3, magnitude=check_values(tiny, np, name="X"), working_memory=1 << 20)
        is None
    )


@pytest.mark.parametrize("metric", ["euclidean", "correlation"])
def test_cross_validation_is_the_same_with_one_tile_pass(backend, metric, monkeypatch):
    X, y = _rows(np.float32, n=500)
    X[[30, 31]] = np.arange(24.0).reshape(2, 12)  # no row that a fold's own tile pass decides
    Xb = backend.asarray(X)
    calls = []
    real = kn_module.nominate
    monkeypatch.setattr(kn_module, "nominate", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    ks = [1, 2, 5, 9]
    opts = dict(cv=StratifiedKFold(4, shuffle=True, random_state=2), metric=metric, weights=["uniform", "distance"])
    shared = cross_validate_k(Xb, y, ks, **opts)
    clf = KNeighborsClassifierCV(ks, metric=metric, cv=4).fit(Xb, y)
    assert not calls  # every fold's tile pass was the shared one
    monkeypatch.setattr(cv_module, "shared_tile_passes", lambda *a, **kw: None)
    monkeypatch.setattr(search_cv_module, "shared_tile_passes", lambda *a, **kw: None)
    alone = cross_validate_k(Xb, y, ks, **opts)
    clf_alone = KNeighborsClassifierCV(ks, metric=metric, cv=4).fit(Xb, y)
    assert calls  # each fold searched on its own
    assert shared.rows == alone.rows
    np.testing.assert_array_equal(clf.cv_results_["mean_test_score"], clf_alone.cv_results_["mean_test_score"])
    assert clf.best_params_ == clf_alone.best_params_
