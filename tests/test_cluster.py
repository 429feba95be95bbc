"""gpuknn.cluster: KMeans against scikit-learn, FuzzyCMeans against its equations."""

import array_api_compat.numpy
import numpy as np
import pytest
from sklearn.cluster import KMeans as SKKMeans

from gpuknn._backend import to_numpy
from gpuknn.cluster import FuzzyCMeans, KMeans, kmeans_plusplus
from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.metrics import adjusted_rand_score


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(c, 1.0, (60, 3)) for c in ([0, 0, 0], [4, 4, 0], [0, 5, 5], [5, 0, 4])])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_matches_sklearn_from_same_init(xp, to_xp, X, seed):
    init = X[np.random.default_rng(seed).choice(len(X), 5, replace=False)]
    ours = KMeans(5, init=to_xp(init), n_init=1).fit(to_xp(X))
    ref = SKKMeans(5, init=init, n_init=1).fit(X)
    assert ours.inertia_ == pytest.approx(ref.inertia_, abs=1e-6)
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(to_numpy(ours.labels_), ref.labels_)
    np.testing.assert_allclose(to_numpy(ours.cluster_centers_), ref.cluster_centers_, atol=1e-8)


def test_kmeans_plusplus_and_predict(xp, to_xp, X):
    km = KMeans(4, random_state=0).fit(to_xp(X))
    truth = np.repeat(np.arange(4), 60)
    assert adjusted_rand_score(truth, to_numpy(km.labels_)) > 0.9
    np.testing.assert_array_equal(to_numpy(km.predict(to_xp(X))), to_numpy(km.labels_))
    assert to_numpy(km.transform(to_xp(X[:3]))).shape == (3, 4)
    again = KMeans(4, random_state=0).fit(to_xp(X))
    assert again.inertia_ == km.inertia_  # seeded: reproducible
    sk = SKKMeans(4, n_init=10, random_state=0).fit(X)
    assert km.inertia_ <= sk.inertia_ * (1 + 1e-9)
    C, idx = kmeans_plusplus(to_xp(X), 4, random_state=1)
    np.testing.assert_array_equal(to_numpy(C), X[idx])
    assert len(set(idx.tolist())) == 4


def test_kmeans_empty_cluster_relocation(xp, to_xp):
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1]])
    init = np.array([[0.1], [10.0], [100.0]])  # third centre attracts nobody at first
    ours = KMeans(3, init=to_xp(init), n_init=1).fit(to_xp(X))
    ref = SKKMeans(3, init=init, n_init=1).fit(X)
    assert ours.inertia_ == pytest.approx(ref.inertia_, abs=1e-9)
    assert len(np.unique(to_numpy(ours.labels_))) == 3


def test_kmeans_params_and_errors(xp, to_xp, X):
    km = KMeans(3, n_init=2)
    assert km.get_params()["n_init"] == 2 and km.set_params(tol=0.1).tol == 0.1
    with pytest.raises(NotFittedError):
        km.predict(to_xp(X))
    with pytest.raises(InvalidInputError, match="n_clusters"):
        KMeans(10).fit(to_xp(X[:5]))
    with pytest.raises(InvalidInputError, match="init"):
        KMeans(3, init=to_xp(X[:2])).fit(to_xp(X))
    with pytest.raises(InvalidInputError, match="NaN"):
        KMeans(1).fit(to_xp(np.array([[np.nan, 1.0]])))
    with pytest.raises(InvalidInputError, match="features"):
        KMeans(2, random_state=0).fit(to_xp(X)).predict(to_xp(X[:, :2]))


def test_fuzzy_cmeans_fixed_point(xp, to_xp, X):
    fcm = FuzzyCMeans(4, m=2.0, tol=1e-9, max_iter=500, random_state=0).fit(to_xp(X))
    u, V = to_numpy(fcm.u_), to_numpy(fcm.cluster_centers_)
    np.testing.assert_allclose(u.sum(axis=1), 1.0, atol=1e-12)
    um = u**2
    np.testing.assert_allclose(V, um.T @ X / um.sum(axis=0)[:, None], atol=1e-10)  # centre equation
    d2 = ((X[:, None, :] - V[None]) ** 2).sum(axis=2)
    u_eq = 1.0 / np.sum((d2[:, :, None] / d2[:, None, :]) ** (1.0 / (2.0 - 1.0)), axis=2)
    np.testing.assert_allclose(u, u_eq, atol=1e-7)  # membership equation at convergence
    truth = np.repeat(np.arange(4), 60)
    assert adjusted_rand_score(truth, to_numpy(fcm.labels_)) > 0.9
    assert fcm.objective_ == pytest.approx(np.sum(um * d2), rel=1e-9)
    np.testing.assert_allclose(to_numpy(fcm.predict_membership(to_xp(X))), u_eq, atol=1e-6)


def test_fuzzy_point_on_centre_and_errors(xp, to_xp):
    X = np.array([[0.0], [0.0], [0.0], [4.0], [4.0], [4.0]])
    fcm = FuzzyCMeans(2, random_state=0).fit(to_xp(X))
    np.testing.assert_allclose(np.sort(to_numpy(fcm.u_).max(axis=1)), 1.0)  # crisp, no NaN
    with pytest.raises(InvalidInputError, match="m must"):
        FuzzyCMeans(2, m=1.0).fit(to_xp(X))
    with pytest.raises(InvalidInputError, match="n_clusters"):
        FuzzyCMeans(7).fit(to_xp(X))


def test_kmeans_relocation_never_empties_a_cluster():
    """An empty cluster takes the farthest point of a cluster that keeps a member: a point
    alone in its cluster is not moved (that left a 0/0 mean, a NaN centre and a warning)."""
    from gpuknn.cluster.kmeans import _update

    X = np.array([[0.0], [0.1], [100.0], [5.0]])
    labels = np.array([0, 0, 1, 0])  # cluster 1 holds only the farthest point; 2 is empty
    d_own = np.array([4.0, 3.0, 50.0, 1.0])
    C = _update(X, labels, d_own, 3, array_api_compat.numpy)
    assert np.isfinite(C).all()
    np.testing.assert_allclose(C[1], [100.0])  # the lone point stayed
    np.testing.assert_allclose(C[2], [0.0])  # the farthest point of cluster 0 moved
    np.testing.assert_allclose(C[0], [(0.1 + 5.0) / 2])
