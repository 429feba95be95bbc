"""gpuknn.metrics.ranking against scikit-learn and SciPy, on every backend."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, rankdata
from sklearn import metrics as skm

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.metrics import UndefinedMetricWarning, borda_rank, roc_auc_score, roc_convex_hull, roc_curve

TOL = 1e-10


@pytest.fixture
def binary():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(y * 0.8, 1.0), 1)  # rounding makes many ties
    return y, s


def test_roc_curve_matches_sklearn(xp, to_xp, binary):
    y, s = binary
    fpr, tpr, thr = roc_curve(to_xp(y), to_xp(s))
    wf, wt, wthr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(to_numpy(fpr), wf, atol=TOL)
    np.testing.assert_allclose(to_numpy(tpr), wt, atol=TOL)
    np.testing.assert_array_equal(to_numpy(thr), wthr)


def test_roc_curve_pos_label(xp, to_xp, binary):
    y, s = binary
    y2 = np.where(y == 1, 7, 3)
    fpr, tpr, _ = roc_curve(to_xp(y2), to_xp(s), pos_label=7)
    wf, wt, _ = skm.roc_curve(y2, s, pos_label=7, drop_intermediate=False)
    np.testing.assert_allclose(to_numpy(fpr), wf, atol=TOL)
    np.testing.assert_allclose(to_numpy(tpr), wt, atol=TOL)
    with pytest.raises(InvalidInputError, match="pos_label"):
        roc_curve(to_xp(y2), to_xp(s))


def test_auc_equals_mann_whitney_with_ties(xp, to_xp, binary):
    y, s = binary
    got = roc_auc_score(to_xp(y), to_xp(s))
    u = mannwhitneyu(s[y == 1], s[y == 0]).statistic
    assert got == pytest.approx(u / (np.sum(y == 1) * np.sum(y == 0)), abs=TOL)
    assert got == pytest.approx(skm.roc_auc_score(y, s), abs=TOL)


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_multiclass_auc(xp, to_xp, multi_class, average):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 200)
    logits = np.round(rng.normal(size=(200, 4)) + 1.5 * np.eye(4)[y], 1)
    P = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    got = roc_auc_score(to_xp(y), to_xp(P), multi_class=multi_class, average=average)
    want = skm.roc_auc_score(y, P, multi_class=multi_class, average=average)
    assert got == pytest.approx(want, abs=TOL)


def test_multiclass_labels_and_errors(xp, to_xp):
    y = np.array([10, 20, 30, 10, 20, 30])
    P = np.eye(3)[[0, 1, 2, 1, 1, 0]] * 0.8 + 0.2 / 3
    got = roc_auc_score(to_xp(y), to_xp(P), multi_class="ovr", labels=[10, 20, 30])
    assert got == pytest.approx(skm.roc_auc_score(y, P, multi_class="ovr", labels=[10, 20, 30]), abs=TOL)
    with pytest.raises(InvalidInputError, match="multi_class"):
        roc_auc_score(to_xp(y), to_xp(P))
    with pytest.raises(InvalidInputError, match="columns"):
        roc_auc_score(to_xp(y), to_xp(P[:, :2]), multi_class="ovr")


def test_single_class_is_nan_with_warning(xp, to_xp):
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(roc_auc_score(to_xp(np.ones(5, dtype=np.int64)), to_xp(np.arange(5.0))))
    with pytest.warns(UndefinedMetricWarning):
        fpr, tpr, _ = roc_curve(to_xp(np.ones(4, dtype=np.int64)), to_xp(np.arange(4.0)))
    assert np.all(np.isnan(to_numpy(fpr))) and to_numpy(tpr)[-1] == 1.0


def test_bad_scores(xp, to_xp):
    with pytest.raises(InvalidInputError, match="NaN"):
        roc_auc_score(to_xp(np.array([0, 1, 1])), to_xp(np.array([0.1, np.nan, 0.3])))
    with pytest.raises(InvalidInputError, match="lengths"):
        roc_auc_score(to_xp(np.array([0, 1, 1])), to_xp(np.array([0.1, 0.3])))
    with pytest.raises(InvalidInputError, match="lengths"):
        roc_curve(to_xp(np.array([0, 1, 1])), to_xp(np.array([0.1, 0.3])))
    with pytest.raises(InvalidInputError, match="classes"):
        roc_auc_score(to_xp(np.array([0, 1, 2])), to_xp(np.array([0.1, 0.3, 0.5])))


def test_borda_rank(xp, to_xp):
    rng = np.random.default_rng(4)
    S = np.round(rng.normal(size=(3, 40)), 1)
    got = to_numpy(borda_rank([to_xp(r) for r in S]))
    want = np.mean([rankdata(r, method="average") for r in S], axis=0)  # ties: mean position
    np.testing.assert_allclose(got, want, atol=TOL)
    np.testing.assert_allclose(to_numpy(borda_rank(to_xp(S))), want, atol=TOL)
    with pytest.raises(InvalidInputError):
        borda_rank([to_xp(S[0]), to_xp(S[1, :10])])
    with pytest.raises(InvalidInputError, match="NaN"):
        borda_rank([to_xp(np.array([1.0, np.nan]))])


def _upper_hull_brute(f, t):
    """Points on the upper hull: no other point (or corner) lies strictly above a chord through them."""
    pts = np.concatenate([np.c_[f, t], [[0.0, 0.0], [1.0, 1.0]]])

    # the hull value at x is the max over pairs of the interpolation at x
    def hull_at(x):
        best = -np.inf
        for a in pts:
            for b in pts:
                if a[0] <= x <= b[0]:
                    y = a[1] if b[0] == a[0] else a[1] + (b[1] - a[1]) * (x - a[0]) / (b[0] - a[0])
                    best = max(best, y)
        return best

    return hull_at


def test_roc_convex_hull(xp, to_xp):
    rng = np.random.default_rng(5)
    f, t = rng.random(12), rng.random(12)
    hf, ht, idx = roc_convex_hull(to_xp(f), to_xp(t))
    hf, ht, idx = to_numpy(hf), to_numpy(ht), to_numpy(idx)
    assert (hf[0], ht[0]) == (0.0, 0.0) and (hf[-1], ht[-1]) == (1.0, 1.0)
    assert np.all(np.diff(hf) >= 0)
    slopes = np.diff(ht) / np.diff(hf)
    assert np.all(np.diff(slopes) < 0)  # strictly concave: no collinear vertices
    hull_at = _upper_hull_brute(f, t)
    for x, y in zip(hf, ht):
        assert y == pytest.approx(hull_at(x), abs=1e-12)
    inner = idx[(idx >= 0)]
    np.testing.assert_array_equal(f[inner], hf[idx >= 0])
    # every input point lies on or below the hull
    assert np.all(t <= np.interp(f, hf, ht) + 1e-12)


def test_roc_convex_hull_simple(xp, to_xp):
    hf, ht, idx = roc_convex_hull(to_xp(np.array([0.1, 0.3, 0.5, 0.5])), to_xp(np.array([0.5, 0.6, 0.9, 0.9])))
    assert to_numpy(hf).tolist() == [0.0, 0.1, 0.5, 1.0]
    assert to_numpy(ht).tolist() == [0.0, 0.5, 0.9, 1.0]
    assert to_numpy(idx).tolist() == [-1, 0, 2, -1]  # duplicate (0.5, 0.9): lowest position
    with pytest.raises(InvalidInputError):
        roc_convex_hull(to_xp(np.array([1.5])), to_xp(np.array([0.5])))


def test_numeric_arrays_of_two_namespaces_are_refused_by_name():
    # A NumPy y_true with torch scores crashed inside torch (TypeError from _unique2);
    # the message now names both namespaces, as every other metric's does.
    torch = pytest.importorskip("torch")
    from gpuknn.errors import InvalidInputError
    from gpuknn.metrics import roc_auc_score, roc_curve

    s = torch.tensor([0.1, 0.4, 0.35, 0.8], dtype=torch.float64)
    for fn in (roc_curve, roc_auc_score):
        with pytest.raises(InvalidInputError, match="different namespaces given together: numpy, torch"):
            fn(np.array([0, 0, 1, 1]), s)
    # string labels stay host data beside any namespace's scores
    fpr, tpr, _ = roc_curve(np.array(["a", "a", "b", "b"]), s, pos_label="b")
    want_fpr, want_tpr, _ = skm.roc_curve(np.array([0, 0, 1, 1]), s.numpy())
    np.testing.assert_allclose(to_numpy(fpr), want_fpr)
    np.testing.assert_allclose(to_numpy(tpr), want_tpr)
