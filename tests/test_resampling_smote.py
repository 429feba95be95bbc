"""SMOTE's defining properties, and SMOTE+Tomek / SMOTE+ENN against imbalanced-learn's cleaners.

gpuknn draws from ``numpy.random.default_rng``; imbalanced-learn from ``RandomState``, so the
synthetic points cannot coincide: the tests check the construction (each new point on the
segment from a minority sample to one of its k nearest minority neighbours), the counts
(imbalanced-learn's ``sampling_strategy_``), reproducibility, and that the combined methods
equal imbalanced-learn's cleaner run on gpuknn's SMOTE output.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.resampling import SMOTE, SMOTEENN, SMOTETomek

imb_over = pytest.importorskip("imblearn.over_sampling")
imb_under = pytest.importorskip("imblearn.under_sampling")


def _data(seed, n=(80, 20, 12), d=3):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(i, 1.0, (m, d)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    p = rng.permutation(y.shape[0])
    return X[p], y[p]


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("strategy", ["auto", "minority", "all", {1: 50, 2: 30}])
def test_smote_points_on_neighbour_segments(xp, to_xp, k, strategy):
    X, y = _data(0)
    sm = SMOTE(k_neighbors=k, random_state=1, sampling_strategy=strategy)
    Xr, yr = sm.fit_resample(to_xp(X), to_xp(y))
    Xr, yr = to_numpy(Xr), to_numpy(yr)
    ref = imb_over.SMOTE(k_neighbors=k, sampling_strategy=strategy).fit(X, y)
    assert sm.sampling_strategy_ == {int(c): int(v) for c, v in ref.sampling_strategy_.items()}
    n = y.shape[0]
    np.testing.assert_array_equal(Xr[:n], X)
    np.testing.assert_array_equal(yr[:n], y)
    new, ynew = Xr[n:], yr[n:]
    for c, cnt in sm.sampling_strategy_.items():
        assert (ynew == c).sum() == cnt  # counts match the strategy
    assert np.all(np.diff(ynew) >= 0)  # class by class, sorted labels
    base, nbr = sm.base_indices_, sm.neighbor_indices_
    assert np.all(y[base] == ynew) and np.all(y[nbr] == ynew)
    for c in np.unique(ynew):  # nbr is among the k nearest same-class points of base
        members = np.flatnonzero(y == c)
        nn = NearestNeighbors(n_neighbors=k + 1).fit(X[members])
        knn = members[nn.kneighbors(X[members], return_distance=False)[:, 1:]]
        rows = np.searchsorted(members, base[ynew == c])
        assert all(b in set(r) for b, r in zip(nbr[ynew == c], knn[rows]))
    # new = base + u (nbr - base) with u in [0, 1): the same u on every coordinate
    diff = X[nbr] - X[base]
    u = ((new - X[base]) * diff).sum(axis=1) / (diff * diff).sum(axis=1)
    assert np.all((u >= 0) & (u < 1))
    np.testing.assert_allclose(new, X[base] + u[:, None] * diff, atol=1e-12)


def test_smote_reproducible_and_seed_dependent(xp, to_xp):
    X, y = _data(2)
    a = to_numpy(SMOTE(random_state=5).fit_resample(to_xp(X), to_xp(y))[0])
    b = to_numpy(SMOTE(random_state=5).fit_resample(to_xp(X), to_xp(y))[0])
    c = to_numpy(SMOTE(random_state=6).fit_resample(to_xp(X), to_xp(y))[0])
    np.testing.assert_array_equal(a, b)
    assert a.shape == c.shape and not np.array_equal(a, c)


def test_smote_same_points_on_every_backend(xp, to_xp):
    X, y = _data(3)
    ref = SMOTE(random_state=0).fit_resample(X, y)[0]
    got = to_numpy(SMOTE(random_state=0).fit_resample(to_xp(X), to_xp(y))[0])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_smote_string_labels_and_float_strategy(xp, to_xp):
    X, y = _data(4, (60, 15))
    names = np.array(["neg", "pos"])[y]
    Xr, yr = SMOTE(sampling_strategy=0.5, random_state=0).fit_resample(to_xp(X), names)
    assert isinstance(yr, np.ndarray) and (yr == "pos").sum() == 30 and (yr == "neg").sum() == 60
    assert Xr.shape == (90, 3)


def test_smote_bad_input(xp, to_xp):
    X, y = _data(5, (40, 4))
    with pytest.raises(InvalidInputError, match="at least 6 samples"):
        SMOTE().fit_resample(to_xp(X), to_xp(y))  # 4 minority samples < k + 1 = 6
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        SMOTE().fit_resample(to_xp(X), to_xp(np.zeros(44, dtype=np.int64)))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        SMOTE(k_neighbors=2).fit_resample(to_xp(Xn), to_xp(y))
    with pytest.raises(InvalidInputError, match="over-sampling cannot"):
        SMOTE(k_neighbors=2, sampling_strategy={1: 2}).fit_resample(to_xp(X), to_xp(y))
    with pytest.raises(InvalidInputError, match="majority"):
        SMOTE(k_neighbors=2, sampling_strategy="majority").fit_resample(to_xp(X), to_xp(y))
    yf = y.astype(float)
    yf[3] = np.nan
    with pytest.raises(InvalidInputError, match="y contains NaN"):
        SMOTE(k_neighbors=2).fit_resample(to_xp(X), to_xp(yf))


def test_smote_tomek_equals_imblearn_tomek_on_smote_output(xp, to_xp):
    X, y = _data(6)
    st = SMOTETomek(random_state=2)
    Xr, yr = st.fit_resample(to_xp(X), to_xp(y))
    Xs, ys = SMOTE(random_state=2).fit_resample(X, y)
    tl = imb_under.TomekLinks(sampling_strategy="all")
    Xe, ye = tl.fit_resample(Xs, ys)
    np.testing.assert_array_equal(st.tomek_.sample_indices_, tl.sample_indices_)
    np.testing.assert_allclose(to_numpy(Xr), Xe, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(to_numpy(yr), ye)
    assert st.sampling_strategy_ == SMOTE().fit(X, y).sampling_strategy_


def test_smote_enn_equals_imblearn_enn_on_smote_output(xp, to_xp):
    X, y = _data(7)
    se = SMOTEENN(random_state=3)
    Xr, yr = se.fit_resample(to_xp(X), to_xp(y))
    Xs, ys = SMOTE(random_state=3).fit_resample(X, y)
    enn = imb_under.EditedNearestNeighbours(sampling_strategy="all")
    Xe, ye = enn.fit_resample(Xs, ys)
    np.testing.assert_array_equal(se.enn_.sample_indices_, enn.sample_indices_)
    np.testing.assert_array_equal(to_numpy(yr), ye)
