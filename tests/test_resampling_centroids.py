"""ClusterCentroids against imbalanced-learn (same KMeans start) and its defining properties."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.cluster import KMeans
from gpuknn.errors import InvalidInputError
from gpuknn.resampling.centroids import ClusterCentroids

imb_under = pytest.importorskip("imblearn.under_sampling")
skc = pytest.importorskip("sklearn.cluster")
datasets = pytest.importorskip("sklearn.datasets")


def _random(seed=0, n=(120, 50, 15), d=4):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.concatenate([np.full(m, i) for i, m in enumerate(n)]))
    return rng.normal(size=(y.shape[0], d)) + y[:, None], y


def _digits():
    X, y = datasets.load_digits(return_X_y=True)
    rng = np.random.default_rng(1)
    keep = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), m, replace=False) for c, m in zip(range(5), (80, 50, 40, 25, 12))]
    )
    keep = np.sort(keep)
    return X[keep].astype(np.float64), y[keep]


def _cancer():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    return X, y


CASES = {
    "random": (_random, {0: 15}),
    "digits": (_digits, {0: 20}),
    "cancer": (_cancer, {1: 40}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("voting", ["soft", "hard", "auto"])
def test_same_as_imblearn_with_same_start(backend, case, voting):
    make, strategy = CASES[case]
    X, y = make()
    ref = imb_under.ClusterCentroids(sampling_strategy=strategy, voting=voting, random_state=0)
    ref.fit_resample(X, y)  # only for sampling_strategy_
    n_target = set(ref.sampling_strategy_.values())
    assert len(n_target) == 1  # one start array serves every resampled class
    # start from rows of the largest resampled class (other starts can empty a cluster)
    big = max(ref.sampling_strategy_, key=lambda c: (y == c).sum())
    C0 = X[y == big][: n_target.pop()]
    ref = imb_under.ClusterCentroids(
        sampling_strategy=strategy, voting=voting, estimator=skc.KMeans(C0.shape[0], init=C0, n_init=1)
    )
    Xe, ye = ref.fit_resample(X, y)
    cc = ClusterCentroids(
        sampling_strategy=strategy, voting=voting, estimator=KMeans(C0.shape[0], init=backend.asarray(C0), n_init=1)
    )
    Xr, yr = cc.fit_resample(backend.asarray(X), backend.asarray(y))
    assert cc.sampling_strategy_ == {int(k): int(v) for k, v in ref.sampling_strategy_.items()}
    assert cc.voting_ == ("soft" if voting == "auto" else voting)
    assert_xp(yr, ye, backend)
    yr_h = host(yr)
    if cc.voting_ == "hard":  # a centre equidistant to two samples (a 2-sample cluster) may pick either
        assert_xp(Xr, Xe, backend, exact=False, atol=1e9)  # namespace, device, shape
        soft = imb_under.ClusterCentroids(
            sampling_strategy=strategy, voting="soft", estimator=skc.KMeans(C0.shape[0], init=C0, n_init=1)
        )
        centres, yc = soft.fit_resample(X, y)
        got = host(Xr)
        for c in cc.sampling_strategy_:
            members = X[y == c]
            d = np.sqrt(((centres[yc == c][:, None, :] - members[None]) ** 2).sum(-1))
            near = d <= d.min(axis=1, keepdims=True) + 1e-9
            rows = np.flatnonzero(yr_h == c)
            for i, r in enumerate(rows):
                hit = np.flatnonzero((members == got[r]).all(1))
                assert hit.size and near[i, hit].any()
                if near[i].sum() == 1:
                    np.testing.assert_array_equal(got[r], Xe[r])
    else:
        assert_xp(Xr, Xe, backend, exact=False, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("strategy", ["auto", "all", "majority", {0: 30, 2: 5}])
def test_default_kmeans_properties(backend, strategy):
    X, y = _random(2)
    cc = ClusterCentroids(sampling_strategy=strategy, random_state=3)
    Xr, yr = cc.fit_resample(backend.asarray(X), backend.asarray(y))
    Xh, yh = host(Xr), host(yr)
    counts = np.bincount(y)
    want = np.array([cc.sampling_strategy_.get(c, counts[c]) for c in range(3)])
    np.testing.assert_array_equal(yh, np.repeat(np.arange(3), want))  # class-grouped, sorted
    for c in range(3):
        got = Xh[yh == c]
        if c in cc.sampling_strategy_:  # centres of gpuknn's KMeans with the same seed
            km = KMeans(int(want[c]), random_state=3).fit(backend.asarray(X[y == c]))
            np.testing.assert_allclose(got, host(km.cluster_centers_), rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_array_equal(got, X[y == c])
    a = host(ClusterCentroids(sampling_strategy=strategy, random_state=3).fit_resample(X, y)[0])
    np.testing.assert_allclose(Xh, a, rtol=1e-12, atol=1e-12)  # same on every backend


def test_hard_voting_picks_nearest_samples(backend):
    X, y = _random(4)
    soft = host(ClusterCentroids(voting="soft", random_state=1).fit_resample(backend.asarray(X), backend.asarray(y))[0])
    hard, yh = ClusterCentroids(voting="hard", random_state=1).fit_resample(backend.asarray(X), backend.asarray(y))
    hard, yh = host(hard), host(yh)
    for c in range(3):
        members = X[y == c]
        cent = soft[yh == c]
        nearest = members[np.argmin(((cent[:, None, :] - members[None]) ** 2).sum(-1), axis=1)]
        np.testing.assert_array_equal(hard[yh == c], nearest)


def test_sklearn_estimator_and_string_labels():
    X, y = _random(5, (40, 12))
    names = np.array(["neg", "pos"])[y]
    est = skc.KMeans(12, n_init=1, init=X[:12])
    Xr, yr = ClusterCentroids(estimator=est).fit_resample(X, names)
    Xe, ye = imb_under.ClusterCentroids(estimator=est).fit_resample(X, names)
    assert isinstance(yr, np.ndarray)
    np.testing.assert_array_equal(yr, ye)
    np.testing.assert_allclose(Xr, Xe, rtol=1e-12, atol=1e-12)
    assert not hasattr(est, "cluster_centers_")  # the given estimator is not fitted


def test_argument_errors(backend):
    X, y = _random(6)
    Xb, yb = backend.asarray(X), backend.asarray(y)
    for sampler, msg in [
        (ClusterCentroids(voting="mode"), "voting"),
        (ClusterCentroids(estimator=object()), "estimator"),
        (ClusterCentroids(estimator=imb_under.RandomUnderSampler()), "estimator.*n_clusters"),
        (ClusterCentroids(sampling_strategy="minority"), "sampling_strategy"),
        (ClusterCentroids(sampling_strategy={0: 500}), "under-sampling cannot"),
    ]:
        with pytest.raises(InvalidInputError, match=msg):
            sampler.fit_resample(Xb, yb)
