"""gpuknn.PCA against scikit-learn's PCA on every backend and solver."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.decomposition import PCA as SkPCA

from gpuknn._backend import to_numpy
from gpuknn.decomposition import PCA
from gpuknn.errors import InvalidInputError, NotFittedError

SOLVERS = ["eigh", "block", "deflation"]


def _random_data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(80, 12)) @ rng.normal(size=(12, 12)) + 3.0


DATASETS = {
    "iris": (lambda: load_iris().data, 3),
    "digits": (lambda: load_digits().data, 8),
    "random": (_random_data, 5),
}


def _fit(solver, n_components, X):
    # tight tolerances: the comparison is with LAPACK to ~1e-8
    tol = {"deflation": 1e-11, "block": 1e-12}.get(solver)
    return PCA(n_components, solver=solver, tol=tol, random_state=0, max_iter=200_000).fit(X)


@pytest.mark.parametrize("data", list(DATASETS))
@pytest.mark.parametrize("solver", SOLVERS)
def test_matches_sklearn(xp, to_xp, solver, data):
    load, p = DATASETS[data]
    X = load()
    sk = SkPCA(p, svd_solver="full").fit(X)
    pca = _fit(solver, p, to_xp(X))
    comps = to_numpy(pca.components_)
    assert comps.shape == (p, X.shape[1]) and pca.n_components_ == p
    signs = np.sign(np.sum(comps * sk.components_, axis=1))
    np.testing.assert_allclose(comps * signs[:, None], sk.components_, atol=1e-6)
    np.testing.assert_allclose(to_numpy(pca.explained_variance_), sk.explained_variance_, rtol=1e-8)
    np.testing.assert_allclose(
        to_numpy(pca.explained_variance_ratio_), sk.explained_variance_ratio_, rtol=1e-8, atol=1e-14
    )
    np.testing.assert_allclose(to_numpy(pca.singular_values_), sk.singular_values_, rtol=1e-8)
    np.testing.assert_allclose(to_numpy(pca.mean_), sk.mean_, rtol=1e-12)
    Z = to_numpy(pca.transform(to_xp(X)))
    np.testing.assert_allclose(Z * signs, sk.transform(X), atol=1e-5 * np.abs(X).max())
    assert pca.n_features_in_ == X.shape[1] and pca.converged_
    assert pca.n_iter_.shape == (p,)


@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_variance_fraction_picks_sklearn_count(xp, to_xp, fraction):
    X = load_digits().data
    sk = SkPCA(fraction, svd_solver="full").fit(X)
    for solver in ("eigh", "block"):
        pca = PCA(fraction, solver=solver, random_state=0).fit(to_xp(X))
        assert pca.n_components_ == sk.n_components_
        np.testing.assert_allclose(
            np.sum(to_numpy(pca.explained_variance_ratio_)),
            np.sum(sk.explained_variance_ratio_),
            rtol=1e-8,
        )


def test_ratio_is_of_total_variance(xp, to_xp):
    X = _random_data()
    pca = PCA(3).fit(to_xp(X))
    total = np.trace(np.cov(X, rowvar=False))
    np.testing.assert_allclose(
        to_numpy(pca.explained_variance_ratio_), to_numpy(pca.explained_variance_) / total, rtol=1e-12
    )
    assert float(np.sum(to_numpy(pca.explained_variance_ratio_))) < 1.0


def test_transform_uses_training_fit(xp, to_xp):
    X = _random_data()
    X2 = np.random.default_rng(1).normal(size=(7, 12))
    pca = PCA(4, solver="block", random_state=0).fit(to_xp(X))
    before = to_numpy(pca.components_).copy()
    Z = to_numpy(pca.transform(to_xp(X2)))
    np.testing.assert_allclose(Z, (X2 - X.mean(axis=0)) @ before.T, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(to_numpy(pca.components_), before)
    Zf = to_numpy(PCA(4, solver="block", random_state=0).fit_transform(to_xp(X)))
    np.testing.assert_allclose(Zf, to_numpy(pca.transform(to_xp(X))), atol=1e-10)


def test_inverse_transform_round_trip(xp, to_xp):
    X = _random_data()
    pca = PCA(12).fit(to_xp(X))
    back = to_numpy(pca.inverse_transform(pca.transform(to_xp(X))))
    np.testing.assert_allclose(back, X, atol=1e-9)
    sk = SkPCA(5, svd_solver="full").fit(X)
    p5 = PCA(5).fit(to_xp(X))
    np.testing.assert_allclose(
        to_numpy(p5.inverse_transform(p5.transform(to_xp(X)))),
        sk.inverse_transform(sk.transform(X)),
        atol=1e-9,
    )


def test_signs_deterministic(xp, to_xp):
    X = _random_data()
    comps = to_numpy(PCA(4).fit(to_xp(X)).components_)
    assert np.all(comps[np.arange(4), np.argmax(np.abs(comps), axis=1)] > 0)
    for solver in ("block", "deflation"):
        other = to_numpy(_fit(solver, 4, to_xp(X)).components_)
        np.testing.assert_allclose(other, comps, atol=1e-6)


def test_float32_input(xp, to_xp):
    X = _random_data().astype(np.float32)
    pca = PCA(3, solver="block", random_state=0).fit(to_xp(X))
    assert pca.components_.dtype == xp.float32
    assert pca.transform(to_xp(X)).dtype == xp.float32
    sk = SkPCA(3, svd_solver="full").fit(X.astype(np.float64))
    np.testing.assert_allclose(to_numpy(pca.explained_variance_), sk.explained_variance_, rtol=1e-5)
    p64 = PCA(3, dtype="float64").fit(to_xp(X))
    assert p64.components_.dtype == xp.float64


def test_integer_input_is_float64(xp, to_xp):
    X = (np.abs(_random_data()) * 10).astype(np.int64)
    pca = PCA(2).fit(to_xp(X))
    assert pca.components_.dtype == xp.float64


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_components": 0, "solver": "block", "svd_solver": "randomized"}, "n_components"),
        ({"n_components": 13}, "n_components"),
        ({"n_components": 1.0}, "n_components"),
        ({"n_components": -0.5}, "n_components"),
        ({"n_components": "all"}, "n_components"),
        ({"solver": "svd"}, "solver"),
    ],
)
def test_bad_parameters(xp, to_xp, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        PCA(**kwargs).fit(to_xp(_random_data()))


def test_bad_data(xp, to_xp):
    X = _random_data()
    with pytest.raises(InvalidInputError, match="NaN"):
        Xn = X.copy()
        Xn[3, 2] = np.nan
        PCA(2).fit(to_xp(Xn))
    with pytest.raises(InvalidInputError, match="at least 2 samples"):
        PCA(1).fit(to_xp(X[:1]))
    with pytest.raises(NotFittedError):
        PCA(2).transform(to_xp(X))
    pca = PCA(2).fit(to_xp(X))
    with pytest.raises(InvalidInputError, match="X has 5 features, but PCA is expecting 12"):
        pca.transform(to_xp(X[:, :5]))
    with pytest.raises(InvalidInputError, match="columns"):
        pca.inverse_transform(to_xp(np.ones((3, 4))))


@pytest.mark.parametrize("solver", SOLVERS)
def test_float32_data_with_large_offset(xp, to_xp, solver):
    # Means 1e4 times the spread: the covariance must not come from X^T X - n mu mu^T.
    X = (load_digits().data[:, 20:30] + 1e4).astype(np.float32)
    ref = SkPCA(3, svd_solver="full").fit(X.astype(np.float64)).explained_variance_
    pca = PCA(3, solver=solver, random_state=0).fit(to_xp(X))
    np.testing.assert_allclose(to_numpy(pca.explained_variance_), ref, rtol=1e-4)


def test_values_whose_squares_overflow(xp, to_xp):
    X = _random_data().astype(np.float32)
    X[5, 1] = 3e19
    with pytest.raises(InvalidInputError, match="overflow"):
        PCA(2).fit(to_xp(X))


def test_constant_data_defined_outcome(xp, to_xp):
    X = np.ones((10, 4))
    for solver in SOLVERS:
        pca = PCA(2, solver=solver, random_state=0).fit(to_xp(X))
        assert np.all(to_numpy(pca.explained_variance_) == 0)
        assert np.all(to_numpy(pca.explained_variance_ratio_) == 0)
        assert np.all(np.isfinite(to_numpy(pca.components_)))


def test_params_api():
    pca = PCA(5, solver="block", random_state=3)
    assert pca.get_params()["solver"] == "block"
    assert pca.set_params(solver="deflation").solver == "deflation"
    assert "solver='deflation'" in repr(pca)
    with pytest.raises(InvalidInputError):
        pca.set_params(bogus=1)


@pytest.mark.parametrize("solver", ["deflation", "block"])
def test_float32_data_of_tiny_scale(xp, to_xp, solver):
    # Squared norms of the power iterates fall below float32's smallest normal number
    # unless the solver works on a rescaled covariance.
    rng = np.random.default_rng(12)
    # 20 features: above the size where the power method forms matrix powers instead
    X = (rng.normal(size=(300, 20)) * np.linspace(3, 1, 20) * 1e-10).astype(np.float32)
    ref = np.linalg.eigvalsh(np.cov(X.astype(np.float64), rowvar=False))[::-1][:3]
    pca = PCA(3, solver=solver, random_state=0).fit(to_xp(X))
    comps = to_numpy(pca.components_).astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(comps, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(to_numpy(pca.explained_variance_), ref, rtol=1e-4)


@pytest.mark.parametrize(
    "dtype", [np.int32, "int32", np.dtype("int64"), int, bool, np.float16, "f8", complex, object, "float", 3]
)
def test_non_float_dtype_refused_whatever_its_type(backend, dtype):
    """Issue 18: PCA(dtype=np.int32) ran an integer covariance; any dtype other than
    float32/float64, of any type, is refused naming dtype and the allowed values."""
    X = backend.asarray(np.random.default_rng(0).normal(size=(10, 3)))
    with pytest.raises(InvalidInputError, match=r"dtype must be None, 'float32' or 'float64'"):
        PCA(2, dtype=dtype).fit(X)


@pytest.mark.parametrize("dtype", ["float32", np.float32, np.dtype("float64"), float])
def test_float_dtype_spellings_accepted(backend, dtype):
    X = backend.asarray(np.random.default_rng(0).normal(size=(10, 3)))
    want = "float64" if dtype in (float, np.dtype("float64")) else "float32"
    assert str(PCA(2, dtype=dtype).fit(X).components_.dtype).endswith(want)


@pytest.mark.parametrize(
    "params, name",
    [
        ({"random_state": "x"}, "random_state"),
        ({"random_state": -1}, "random_state"),
        ({"random_state": 1.5}, "random_state"),
        ({"tol": "small"}, "tol"),
        ({"tol": -1.0}, "tol"),
        ({"max_iter": 2.5}, "max_iter"),
        ({"solver": ["eigh"]}, "solver"),
    ],
)
def test_odd_option_types_name_the_option(params, name):
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(InvalidInputError, match=name):
        PCA(2, solver=params.pop("solver", "block"), **params).fit(X)
