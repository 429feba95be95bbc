"""KMeansSMOTE against imbalanced-learn 0.14.

Both get the same clustering: scikit-learn's ``KMeans(init=C0, n_init=1)`` for imbalanced-learn
and gpuknn's ``KMeans(init=C0, n_init=1)`` (or the very same scikit-learn estimator, which
gpuknn runs on host NumPy). gpuknn draws from ``numpy.random.default_rng`` in the order
imbalanced-learn draws from its ``RandomState`` (re-seeded per kept cluster); a shim replaying
``RandomState`` must then give imbalanced-learn's output exactly. Without the shim, the
defining properties are checked: kept clusters, per-cluster counts, and every new point on a
segment between two same-cluster members of its class.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ReplayRandomState, assert_same_resample, assert_xp, host
from sklearn.cluster import KMeans as SkKMeans
from sklearn.neighbors import NearestNeighbors

from gpuknn.cluster import KMeans
from gpuknn.errors import InvalidInputError, ResamplingError
from gpuknn.resampling import kmeans_smote
from gpuknn.resampling.kmeans_smote import KMeansSMOTE

imb = pytest.importorskip("imblearn.over_sampling")

CENTERS = np.array([[0.0, 0.0, 0.0], [12.0, 0.0, 0.0], [0.0, 12.0, 0.0], [0.0, 0.0, 12.0]])
# rows: centres; columns: samples of classes 0, 1, 2 around that centre
MIX = np.array([[60, 15, 5], [60, 2, 6], [10, 20, 3], [5, 6, 30]])


@pytest.fixture
def replay(monkeypatch):
    monkeypatch.setattr(kmeans_smote, "default_rng", ReplayRandomState)


def _data(seed=0, mix=MIX):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for centre, counts in zip(CENTERS, mix):
        for cls, m in enumerate(counts):
            X.append(rng.normal(centre, 1.0, (m, CENTERS.shape[1])))
            y.append(np.full(m, cls))
    X, y = np.concatenate(X), np.concatenate(y)
    p = rng.permutation(y.shape[0])
    return X[p], y[p]


def _sk():
    return SkKMeans(n_clusters=4, init=CENTERS, n_init=1)


def _ours_km(backend):
    """gpuknn's KMeans wants ``init`` in X's namespace and on its device."""
    return KMeans(4, init=backend.asarray(CENTERS), n_init=1)


# ------------------------------------------------------------------ equality, replayed draws


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("strategy", ["auto", "minority", {1: 130, 2: 80}])
@pytest.mark.parametrize("threshold,exponent", [("auto", "auto"), (0.1, 2.0), (0.3, "auto")])
def test_equals_imblearn(backend, replay, k, strategy, threshold, exponent):
    X, y = _data(0)
    kw = dict(
        k_neighbors=k,
        sampling_strategy=strategy,
        random_state=3,
        cluster_balance_threshold=threshold,
        density_exponent=exponent,
    )
    ours = KMeansSMOTE(kmeans_estimator=_ours_km(backend), **kw)
    assert_same_resample(backend, ours, imb.KMeansSMOTE(kmeans_estimator=_sk(), **kw), X, y)
    np.testing.assert_array_equal(ours.cluster_labels_, _sk().fit_predict(X))


def test_same_sklearn_estimator_equals_imblearn(backend, replay):
    X, y = _data(1)
    est = _sk()
    ours = KMeansSMOTE(kmeans_estimator=est, random_state=5)
    assert_same_resample(backend, ours, imb.KMeansSMOTE(kmeans_estimator=est, random_state=5), X, y)
    assert isinstance(ours.kmeans_estimator_, SkKMeans) and ours.kmeans_estimator_ is not est


def test_single_cluster_equals_smote_like_imblearn(backend, replay):
    X, y = _data(2)
    ours = KMeansSMOTE(kmeans_estimator=KMeans(1, init=backend.asarray(CENTERS[:1]), n_init=1), random_state=1)
    ref = imb.KMeansSMOTE(kmeans_estimator=SkKMeans(1, init=CENTERS[:1], n_init=1), random_state=1)
    assert_same_resample(backend, ours, ref, X, y)
    assert ours.cluster_balance_threshold_ == -np.inf


# ------------------------------------------------------------------ properties, own draws


def _sparsity(Xc, exponent):
    m = Xc.shape[0]
    D = np.sqrt(((Xc[:, None, :] - Xc[None, :, :]) ** 2).sum(-1))
    e = math.log(m, 1.6) ** 1.8 * 0.16 if exponent == "auto" else exponent
    return (D.sum() / (m * m - m)) ** e / m


@pytest.mark.parametrize("threshold,exponent", [("auto", "auto"), (0.05, 1.5)])
def test_kept_clusters_counts_segments(backend, threshold, exponent):
    X, y = _data(3)
    k = 2
    sm = KMeansSMOTE(
        kmeans_estimator=_ours_km(backend),
        k_neighbors=k,
        random_state=7,
        cluster_balance_threshold=threshold,
        density_exponent=exponent,
    )
    Xr, yr = sm.fit_resample(backend.asarray(X), backend.asarray(y))
    Xr, yr = host(Xr), host(yr)
    n = y.shape[0]
    np.testing.assert_array_equal(Xr[:n], X)
    lab = sm.cluster_labels_
    total = sum(sm.sampling_strategy_.values())
    new, ynew, base, nbr = Xr[n:], yr[n:], sm.base_indices_, sm.neighbor_indices_
    assert np.all(np.diff(ynew) >= 0) and np.all(y[base] == ynew) and np.all(y[nbr] == ynew)
    assert np.all(lab[base] == lab[nbr])
    for c, n_ask in sm.sampling_strategy_.items():
        bar = n_ask / total / 2 if threshold == "auto" else threshold
        kept = [j for j in range(4) if np.mean(y[lab == j] == c) >= bar and np.sum((lab == j) & (y == c)) >= k + 1]
        np.testing.assert_array_equal(sm.valid_clusters_[c], kept)
        sp = np.array([_sparsity(X[(lab == j) & (y == c)], exponent) for j in kept])
        np.testing.assert_allclose(sm.cluster_weights_[c], sp / sp.sum(), rtol=1e-9)
        counts = np.ceil(n_ask * sm.cluster_weights_[c]).astype(int)
        np.testing.assert_array_equal(sm.n_generated_[c], counts)
        mine = ynew == c
        assert mine.sum() == counts.sum() >= n_ask
        np.testing.assert_array_equal(np.bincount(lab[base[mine]], minlength=4)[kept], counts)
        # every new point on a segment from its base to one of the base's k nearest
        # same-class members of its cluster
        for j in kept:
            members = np.flatnonzero((lab == j) & (y == c))
            nn = (
                NearestNeighbors(n_neighbors=k + 1).fit(X[members]).kneighbors(X[members], return_distance=False)[:, 1:]
            )
            allowed = {int(members[i]): set(members[nn[i]].tolist()) for i in range(members.shape[0])}
            sel = np.flatnonzero(mine & (lab[base] == j))
            assert all(int(nbr[s]) in allowed[int(base[s])] for s in sel)
    diff = X[nbr] - X[base]
    u = ((new - X[base]) * diff).sum(axis=1) / (diff * diff).sum(axis=1)
    assert np.all((u >= 0) & (u < 1))
    np.testing.assert_allclose(new, X[base] + u[:, None] * diff, atol=1e-12)


def test_seed_reproducible_and_default_clusterer(backend):
    X, y = _data(4)
    a = KMeansSMOTE(random_state=0).fit_resample(backend.asarray(X), backend.asarray(y))[0]
    sm = KMeansSMOTE(random_state=0)
    b = sm.fit_resample(backend.asarray(X), backend.asarray(y))[0]
    assert_xp(a, host(b), backend)
    assert isinstance(sm.kmeans_estimator_, KMeans) and sm.kmeans_estimator_.n_clusters == 8
    sm4 = KMeansSMOTE(kmeans_estimator=4, random_state=0).fit(backend.asarray(X), backend.asarray(y))
    assert sm4.kmeans_estimator_.n_clusters == 4


def test_nothing_to_generate(backend):
    X, y = _data(5, mix=np.array([[20, 20, 20], [20, 20, 20], [5, 5, 5], [5, 5, 5]]))
    Xr, yr = KMeansSMOTE(random_state=0).fit_resample(backend.asarray(X), backend.asarray(y))
    assert_xp(Xr, X, backend)
    assert_xp(yr, y, backend)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(k_neighbors=0), "k_neighbors"),
        (dict(kmeans_estimator=0), "kmeans_estimator"),
        (dict(kmeans_estimator="many"), "kmeans_estimator"),
        (dict(cluster_balance_threshold="high"), "cluster_balance_threshold"),
        (dict(cluster_balance_threshold=True), "cluster_balance_threshold"),
        (dict(density_exponent="x"), "density_exponent"),
        (dict(density_exponent=None), "density_exponent"),
        (dict(metric=3), "metric"),
        (dict(working_memory=0), "working_memory"),
        (dict(sampling_strategy="majority"), "sampling_strategy"),
    ],
)
def test_argument_errors(backend, kw, name):
    X, y = _data(6)
    with pytest.raises(InvalidInputError, match=name):
        KMeansSMOTE(**kw).fit_resample(backend.asarray(X), backend.asarray(y))


def test_no_cluster_kept(backend):
    X, y = _data(7)
    sm = KMeansSMOTE(kmeans_estimator=_ours_km(backend), cluster_balance_threshold=0.99)
    with pytest.raises(ResamplingError, match="cluster_balance_threshold"):
        sm.fit_resample(backend.asarray(X), backend.asarray(y))
    with pytest.raises(RuntimeError):
        imb.KMeansSMOTE(kmeans_estimator=_sk(), cluster_balance_threshold=0.99).fit_resample(X, y)


def test_class_too_small(backend):
    X, y = _data(8)
    # Each class has more than 31 samples, but no cluster holds 31 of them: imbalanced-learn's
    # RuntimeError (no cluster found), a ResamplingError here.
    with pytest.raises(ResamplingError, match="k_neighbors"):
        KMeansSMOTE(k_neighbors=30).fit_resample(backend.asarray(X), backend.asarray(y))
