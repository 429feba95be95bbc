"""KNeighborsTransformer against scikit-learn, on every backend."""

import array_api_compat
import numpy as np
import pytest
import sklearn.neighbors as skn
from helpers import host
from test_nearest import _data, _dense, _is_csr_of, _on_host

from gpuknn.errors import InvalidInputError, NotFittedError
from gpuknn.neighbors import KNeighborsTransformer


@pytest.mark.parametrize("mode", ["distance", "connectivity"])
def test_transformer_equals_sklearn(backend, mode):
    X, Q = _data(3)
    ours = KNeighborsTransformer(mode=mode, n_neighbors=4)
    ref = skn.KNeighborsTransformer(mode=mode, n_neighbors=4)
    G, G_ref = ours.fit_transform(backend.asarray(X)), ref.fit_transform(X)
    assert _is_csr_of(G, backend)
    G = _on_host(G)
    np.testing.assert_array_equal(np.diff(G.indptr), np.diff(G_ref.indptr))  # k + 1 with distances
    np.testing.assert_allclose(_dense(G), G_ref.toarray(), rtol=1e-9, atol=1e-9)
    if mode == "distance":  # each sample is its own first neighbour, stored at distance 0
        np.testing.assert_array_equal(G.indices[G.indptr[:-1]], np.arange(X.shape[0]))
    np.testing.assert_allclose(
        _dense(ours.transform(backend.asarray(Q))), ref.transform(Q).toarray(), rtol=1e-9, atol=1e-9
    )
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())


def test_transformer_feeds_isomap_in_a_pipeline(backend):
    from sklearn.manifold import Isomap
    from sklearn.pipeline import make_pipeline

    if backend.name == "cupy":
        # The graph of CuPy input is a cupyx CSR matrix on the GPU (outputs stay on the
        # input's device); scikit-learn's Isomap reads host arrays only.
        pytest.skip("scikit-learn's Isomap takes no cupyx sparse matrix")
    X, _ = _data(4, n=150, d=5)
    pipe = make_pipeline(
        KNeighborsTransformer(n_neighbors=6, mode="distance"),
        Isomap(n_neighbors=6, n_components=2, metric="precomputed", eigen_solver="dense"),
    )
    emb = pipe.fit_transform(backend.asarray(X))
    want = Isomap(n_neighbors=6, n_components=2, eigen_solver="dense").fit_transform(X)
    emb = host(emb) if array_api_compat.is_array_api_obj(emb) else np.asarray(emb)
    np.testing.assert_allclose(np.abs(emb), np.abs(want), rtol=1e-7, atol=1e-7)


def test_errors(backend):
    X, Q = _data()
    Xb, Qb = backend.asarray(X), backend.asarray(Q)
    with pytest.raises(NotFittedError):
        KNeighborsTransformer().transform(Qb)
    with pytest.raises(InvalidInputError, match="mode must be"):
        KNeighborsTransformer(mode="bad").fit(Xb)
    with pytest.raises(InvalidInputError, match="unknown metric"):
        KNeighborsTransformer(metric="l7").fit(Xb)
