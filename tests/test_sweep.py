import numpy as np
import pytest

from gpuknn import InvalidInputError, KNeighborsClassifier, kneighbors
from gpuknn._backend import to_numpy
from gpuknn.model_selection.sweep import neighbors_for_p_sweep, score_many_k


@pytest.mark.parametrize("metric", ["correlation", "cosine", "euclidean", "sqeuclidean", "inner"])
def test_accumulated_p_sweep_equals_recompute_per_p(xp, to_xp, metric):
    rng = np.random.default_rng(0)
    Ztr, Zte = rng.normal(size=(150, 12)), rng.normal(size=(40, 12))
    ps = [3, 4, 7, 12]  # correlation needs p >= 3 to be tie-free (p = 2 gives only +-1)
    res = neighbors_for_p_sweep(
        to_xp(Ztr), to_xp(Zte), ps, 6, metric=metric, working_memory=150 * 18 * 7 / 2**20
    )  # several query tiles
    for p in ps:
        d0, i0 = kneighbors(Zte[:, :p], Ztr[:, :p], 6, metric=metric)
        d, i = res[p]
        np.testing.assert_array_equal(to_numpy(i), i0)
        np.testing.assert_allclose(to_numpy(d), d0, rtol=1e-9, atol=1e-9)


def test_p_sweep_bad_input():
    Z = np.zeros((10, 4))
    with pytest.raises(InvalidInputError, match="p values"):
        neighbors_for_p_sweep(Z, Z, [5], 2, metric="euclidean")
    with pytest.raises(InvalidInputError, match="k_max"):
        neighbors_for_p_sweep(Z, Z, [2], 11, metric="euclidean")
    with pytest.raises(InvalidInputError, match="columns"):
        neighbors_for_p_sweep(Z, np.zeros((3, 3)), [2], 1, metric="euclidean")


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_one_pass_k_scores_equal_separate_classifiers(xp, to_xp, weights):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(y))
    tr, te = perm[:120], perm[120:]
    ks = [1, 2, 3, 5, 8, 13, 21]
    d, i = kneighbors(to_xp(X[te]), to_xp(X[tr]), max(ks), metric="correlation")
    labels = to_xp(y[tr][to_numpy(i)])
    scores = score_many_k(
        labels, d, to_xp(y[te]), ks, n_classes=3, weights=[weights], scoring=["accuracy", "macro_f1"]
    )[weights]
    from sklearn.metrics import f1_score

    for j, k in enumerate(ks):
        clf = KNeighborsClassifier(k, metric="correlation", weights=weights).fit(to_xp(X[tr]), to_xp(y[tr]))
        pred = to_numpy(clf.predict(to_xp(X[te])))
        assert scores["accuracy"][j] == pytest.approx(np.mean(pred == y[te]), abs=1e-12)
        assert scores["macro_f1"][j] == pytest.approx(f1_score(y[te], pred, average="macro"), abs=1e-12)


def test_macro_f1_for_all_k_counts_absent_classes():
    """Class 3 is neither true nor predicted: it counts 0, as f1_score(labels=range(C))."""
    from sklearn.metrics import f1_score

    from gpuknn.model_selection.sweep import _macro_f1

    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 40)
    pred = rng.integers(0, 3, (6, 40))
    pred[2] = y  # one perfect row
    got = _macro_f1(y, pred, 4)
    want = [f1_score(y, p, labels=range(4), average="macro", zero_division=0) for p in pred]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_p_sweep_retries_narrower_blocks_when_memory_runs_out(monkeypatch):
    from gpuknn.ops import psweep

    rng = np.random.default_rng(6)
    Z, Zq = rng.normal(size=(300, 8)), rng.normal(size=(20, 8))
    want = neighbors_for_p_sweep(Z, Zq, [2, 5, 8], 4, metric="correlation")
    widths = []
    real = psweep._Sweep.nominate

    def flaky(self, *args, **kwargs):
        widths.append(self.cols)
        if self.cols > 40:
            raise MemoryError("simulated: out of memory")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(psweep._Sweep, "nominate", flaky)
    got = neighbors_for_p_sweep(Z, Zq, [2, 5, 8], 4, metric="correlation")
    assert widths[0] > 40 >= widths[-1] and len(widths) >= 2
    for p in (2, 5, 8):
        np.testing.assert_array_equal(got[p][1], want[p][1])
        np.testing.assert_allclose(got[p][0], want[p][0], rtol=1e-12)
    monkeypatch.setattr(psweep._Sweep, "nominate", lambda self, *a, **k: (_ for _ in ()).throw(ValueError("bad")))
    with pytest.raises(ValueError, match="bad"):  # other errors are not retried
        neighbors_for_p_sweep(Z, Zq, [2], 4, metric="correlation")


def test_score_many_k_and_check_grid_refuse_non_integer_k():
    """Issue 18: a k grid holds integers only (2.0, 2.999, True refused, naming the value);
    weights may be one name."""
    from gpuknn.model_selection.sweep import check_grid

    assert check_grid([3, 1, 3], name="k", upper=5) == [1, 3]
    for bad in ([2.999], [2.0], [True], [None]):
        with pytest.raises(InvalidInputError, match="k must hold integers"):
            check_grid(bad, name="k", upper=5)
    with pytest.raises(InvalidInputError, match=r"k values in k must be in \[1, 5\]"):
        check_grid([0, 6], name="k", upper=5)
    lab = np.array([[0, 1, 1], [1, 0, 0]])
    d = np.array([[0.1, 0.2, 0.3], [0.1, 0.5, 0.6]])
    y = np.array([0, 1])
    with pytest.raises(InvalidInputError, match=r"ks must hold integers.*2\.5"):
        score_many_k(lab, d, y, [1, 2.5], n_classes=2)
    one = score_many_k(lab, d, y, [1, 3], n_classes=2, weights="distance")
    assert list(one) == ["distance"]


@pytest.mark.parametrize("metric", ["correlation", "euclidean"])
def test_prefix_refine_is_each_sizes_exact_distances(backend, metric):
    """The hinging votes' refinement of a p-sweep's stacked lists: each stacked row's
    neighbours' exact distances in its own size's prefix, ascending, in the callers' row
    order, with the queries' statistics given or computed (the same bits)."""
    from helpers import host

    from gpuknn.ops.exact import exact_keys, keys_to_distances, row_stats
    from gpuknn.ops.psweep import prefix_refine

    rng = np.random.default_rng(3)
    Zr = (rng.normal(size=(40, 12)) * np.linspace(5, 0.5, 12)).astype(np.float32)
    Zq = (rng.normal(size=(7, 12)) * np.linspace(5, 0.5, 12)).astype(np.float32)
    ps = [1, 4, 12]
    index = rng.integers(0, 40, size=(len(ps) * 7, 5))
    R, Q, Ix = backend.asarray(Zr), backend.asarray(Zq), backend.asarray(index)
    stats = [row_stats(R[:, :p], metric) for p in ps]
    q_stats = [row_stats(Q[:, :p], metric) for p in ps]
    rows = np.array([20, 3, 9, 0, 15, 8])  # sizes 2, 0, 1, 0, 2, 1: not in order
    given = host(prefix_refine(Q, R, ps, Ix, metric, stats, q_stats)(backend.asarray(rows)))
    computed = host(prefix_refine(Q, R, ps, Ix, metric, stats)(backend.asarray(rows)))
    assert np.array_equal(given, computed)
    for out_row, r in zip(given, rows.tolist()):
        s, i = divmod(r, 7)
        keys = exact_keys(Q[i : i + 1, : ps[s]], R[:, : ps[s]], Ix[r : r + 1, :], metric, stats[s])
        want = np.sort(host(keys_to_distances(keys, metric))[0])
        np.testing.assert_array_equal(out_row, want)
