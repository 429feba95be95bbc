"""ADASYN and BorderlineSMOTE against imbalanced-learn 0.14.

gpuknn draws from ``numpy.random.default_rng`` in the order imbalanced-learn draws from its
``RandomState``; replacing the module's ``default_rng`` by a shim that replays ``RandomState``
(``integers`` -> ``randint``, ``random`` -> ``random_sample``, ``uniform`` -> ``uniform``) must
then give imbalanced-learn's output exactly. Without the shim, the defining properties are
checked: weights / samples in danger, counts, and every new point on a neighbour segment.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ReplayRandomState, assert_same_resample, assert_xp, host
from sklearn.neighbors import NearestNeighbors

from gpuknn.errors import InvalidInputError
from gpuknn.resampling import adaptive
from gpuknn.resampling.adaptive import ADASYN, BorderlineSMOTE

imb = pytest.importorskip("imblearn.over_sampling")


@pytest.fixture
def replay(monkeypatch):
    monkeypatch.setattr(adaptive, "default_rng", ReplayRandomState)


def _data(seed, n=(80, 25, 15), d=3, sep=0.8):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(i * sep, 1.0, (m, d)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    p = rng.permutation(y.shape[0])
    return X[p], y[p]


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True)


def _digits():
    """Digits 3, 5, 8, 9 (similar shapes), the i-th keeping 180 / 2**i rows; a tiny jitter breaks the integer
    pixels' distance ties, which scikit-learn and gpuknn may order differently."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.concatenate([np.flatnonzero(y == c)[: 180 // 2**i] for i, c in enumerate((3, 5, 8, 9))])
    rng = np.random.default_rng(0)
    return X[keep] + 1e-6 * rng.standard_normal((keep.shape[0], X.shape[1])), y[keep]


# ------------------------------------------------------------------ equality, replayed draws


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("strategy", ["auto", "minority", "all", {1: 60, 2: 70}])
def test_adasyn_equals_imblearn(backend, replay, k, strategy):
    X, y = _data(0)
    assert_same_resample(
        backend,
        ADASYN(n_neighbors=k, sampling_strategy=strategy, random_state=3),
        imb.ADASYN(n_neighbors=k, sampling_strategy=strategy, random_state=3),
        X,
        y,
    )


@pytest.mark.parametrize("kind", ["borderline-1", "borderline-2"])
@pytest.mark.parametrize("k,m", [(1, 3), (5, 10), (3, 7)])
@pytest.mark.parametrize("strategy", ["auto", {1: 50, 2: 40}])
def test_borderline_equals_imblearn(backend, replay, kind, k, m, strategy):
    X, y = _data(1)
    ours = BorderlineSMOTE(k_neighbors=k, m_neighbors=m, kind=kind, sampling_strategy=strategy, random_state=4)
    ref = imb.BorderlineSMOTE(k_neighbors=k, m_neighbors=m, kind=kind, sampling_strategy=strategy, random_state=4)
    assert_same_resample(backend, ours, ref, X, y)
    assert set(ours.in_danger_indices_) == set(ref.in_danger_indices)
    for c, idx in ref.in_danger_indices.items():
        np.testing.assert_array_equal(ours.in_danger_indices_[int(c)], idx)


@pytest.mark.parametrize("load", [_breast_cancer, _digits], ids=["breast_cancer", "digits"])
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ADASYN(random_state=0),
        lambda m: m.BorderlineSMOTE(random_state=0),
        lambda m: m.BorderlineSMOTE(random_state=0, kind="borderline-2"),
    ],
    ids=["adasyn", "borderline-1", "borderline-2"],
)
def test_real_data_equals_imblearn(backend, replay, load, make):
    X, y = load()
    assert_same_resample(backend, make(adaptive), make(imb), X, y)


# ------------------------------------------------------------------ properties, own draws


def _on_segments(X, new, base, nbr, low=0.0, high=1.0):
    """new = base + u (nbr - base), one u per row, u in [low, high)."""
    diff = X[nbr] - X[base]
    u = ((new - X[base]) * diff).sum(axis=1) / (diff * diff).sum(axis=1)
    assert np.all((u >= low) & (u < high)), (u.min(), u.max())
    np.testing.assert_allclose(new, X[base] + u[:, None] * diff, atol=1e-12)
    return u


def _knn(X_fit, X_query, k):
    return NearestNeighbors(n_neighbors=k + 1).fit(X_fit).kneighbors(X_query, return_distance=False)[:, 1:]


@pytest.mark.parametrize("k", [2, 5])
def test_adasyn_weights_counts_segments(backend, k):
    X, y = _data(2)
    ada = ADASYN(n_neighbors=k, random_state=7)
    Xr, yr = ada.fit_resample(backend.asarray(X), backend.asarray(y))
    Xr, yr = host(Xr), host(yr)
    _, ye = imb.ADASYN(n_neighbors=k, random_state=0).fit_resample(X, y)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))  # counts = imblearn's
    n = y.shape[0]
    np.testing.assert_array_equal(Xr[:n], X)
    new, ynew, base, nbr = Xr[n:], yr[n:], ada.base_indices_, ada.neighbor_indices_
    assert np.all(np.diff(ynew) >= 0) and np.all(y[base] == ynew) and np.all(y[nbr] == ynew)
    for c, n_ask in ada.sampling_strategy_.items():
        if n_ask == 0:
            continue
        members = np.flatnonzero(y == c)
        ratio = (y[_knn(X, X[members], k)] != c).sum(axis=1) / k
        ratio /= ratio.sum()
        np.testing.assert_allclose(ada.weights_[c], ratio, rtol=1e-15)
        g = np.rint(ratio * n_ask).astype(np.int64)
        np.testing.assert_array_equal(ada.n_generated_[c], g)
        np.testing.assert_array_equal(base[ynew == c], np.repeat(members, g))
        knn = members[_knn(X[members], X[members], k)]
        rows = np.searchsorted(members, base[ynew == c])
        assert all(b in set(r) for b, r in zip(nbr[ynew == c], knn[rows]))
    _on_segments(X, new, base, nbr)


@pytest.mark.parametrize("kind", ["borderline-1", "borderline-2"])
def test_borderline_danger_counts_segments(backend, kind):
    X, y = _data(3)
    k, m = 4, 8
    bs = BorderlineSMOTE(k_neighbors=k, m_neighbors=m, kind=kind, random_state=8)
    Xr, yr = bs.fit_resample(backend.asarray(X), backend.asarray(y))
    Xr, yr = host(Xr), host(yr)
    ref = imb.BorderlineSMOTE(k_neighbors=k, m_neighbors=m, kind=kind, random_state=0)
    _, ye = ref.fit_resample(X, y)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))
    n = y.shape[0]
    new, ynew, base, nbr = Xr[n:], yr[n:], bs.base_indices_, bs.neighbor_indices_
    assert np.all(y[base] == ynew)
    for c, seeds in bs.in_danger_indices_.items():
        members = np.flatnonzero(y == c)
        n_other = (y[_knn(X, X[members], m)] != c).sum(axis=1)
        np.testing.assert_array_equal(seeds, members[(n_other >= m / 2) & (n_other < m)])
        assert set(base[ynew == c]) <= set(seeds)
        pool = members if kind == "borderline-1" else np.arange(n)
        knn = pool[_knn(X[pool], X[seeds], k)]
        rows = np.searchsorted(seeds, base[ynew == c])
        assert all(b in set(r) for b, r in zip(nbr[ynew == c], knn[rows]))
    same = y[nbr] == ynew
    if kind == "borderline-1":
        assert same.all()
        _on_segments(X, new, base, nbr)
    else:
        assert (~same).any()
        _on_segments(X[:], new[same], base[same], nbr[same])
        _on_segments(X, new[~same], base[~same], nbr[~same], high=0.5)


def test_reproducible_and_same_on_every_backend(backend):
    X, y = _data(4)
    for make in (lambda s: ADASYN(random_state=s), lambda s: BorderlineSMOTE(kind="borderline-2", random_state=s)):
        ref = make(5).fit_resample(X, y)[0]
        got = make(5).fit_resample(backend.asarray(X), backend.asarray(y))[0]
        assert_xp(got, ref, backend, exact=False, rtol=1e-12, atol=1e-12)
        other = make(6).fit_resample(X, y)[0]
        assert other.shape == ref.shape and not np.array_equal(other, ref)


def test_string_labels_and_float32(backend):
    X, y = _data(5, (60, 20))
    names = np.array(["neg", "pos"])[y]
    for s in (ADASYN(random_state=0), BorderlineSMOTE(random_state=0)):
        Xr, yr = s.fit_resample(backend.asarray(X.astype(np.float32)), names)
        assert isinstance(yr, np.ndarray) and Xr.dtype == backend.asarray(X.astype(np.float32)).dtype
        assert (yr == "neg").sum() == 60 and Xr.shape[0] == yr.shape[0] > 80


def test_borderline_no_danger_returns_input():
    X = np.r_[np.zeros((10, 2)) + np.arange(10)[:, None] * 0.01, 50 + np.arange(12)[:, None] * 0.01 + np.zeros((12, 2))]
    y = np.r_[np.ones(10, dtype=np.int64), np.zeros(12, dtype=np.int64)]
    bs = BorderlineSMOTE(k_neighbors=3, m_neighbors=5, random_state=0)
    Xr, yr = bs.fit_resample(X, y)
    assert Xr.shape == X.shape and bs.in_danger_indices_ == {} and bs.base_indices_.shape == (0,)


# ------------------------------------------------------------------ argument errors


@pytest.mark.parametrize(
    "sampler,match",
    [
        (ADASYN(n_neighbors=0), "n_neighbors"),
        (ADASYN(n_neighbors=2.0), "n_neighbors"),
        (ADASYN(working_memory=0), "working_memory"),
        (ADASYN(metric=3), "metric"),
        (BorderlineSMOTE(k_neighbors=0), "k_neighbors"),
        (BorderlineSMOTE(m_neighbors=0), "m_neighbors"),
        (BorderlineSMOTE(m_neighbors="10"), "m_neighbors"),
        (BorderlineSMOTE(kind="borderline-3"), "kind"),
        (ADASYN(sampling_strategy="majority"), "sampling_strategy"),
    ],
)
def test_bad_arguments(backend, sampler, match):
    X, y = _data(6)
    with pytest.raises(InvalidInputError, match=match):
        sampler.fit_resample(backend.asarray(X), backend.asarray(y))


def test_bad_data(backend):
    X, y = _data(7, (40, 4))
    Xb, yb = backend.asarray(X), backend.asarray(y)
    with pytest.raises(InvalidInputError, match="n_neighbors=5 needs at least 6"):
        ADASYN().fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="k_neighbors=5 needs at least 6"):
        BorderlineSMOTE().fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="m_neighbors=50 needs at least 51"):
        BorderlineSMOTE(k_neighbors=2, m_neighbors=50).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        ADASYN(n_neighbors=2).fit_resample(Xb, backend.asarray(np.zeros(44, dtype=np.int64)))
    far = np.r_[np.zeros((20, 2)), 100 + np.arange(6)[:, None] * np.ones((6, 2))]
    yf = np.r_[np.zeros(20, dtype=np.int64), np.ones(6, dtype=np.int64)]
    with pytest.raises(InvalidInputError, match="another class"):
        ADASYN(n_neighbors=3).fit_resample(backend.asarray(far), backend.asarray(yf))
