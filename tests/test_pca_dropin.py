"""PCA takes scikit-learn 1.9's options (issue 33): ``svd_solver``, ``whiten``,
``n_components="mle"``, the truncated solvers' knobs, ``noise_variance_`` and the
probabilistic model (``get_covariance``, ``get_precision``, ``score``, ``score_samples``).
scikit-learn in float64 is the oracle (components up to sign), on every backend."""

import numpy as np
import pytest
from helpers import assert_xp, host
from sklearn.decomposition import PCA as SkPCA

from gpuknn.decomposition import PCA
from gpuknn.errors import InvalidInputError

SOLVERS = ["auto", "full", "covariance_eigh", "arpack", "randomized"]


def _data(seed=0, n=80, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + 3.0
    return X


def _signs(ours, ref):
    return np.sign(np.sum(host(ours.components_) * ref.components_, axis=1))


def _compare(backend, ours, ref, X):
    assert ours.n_components_ == ref.n_components_
    s = _signs(ours, ref)
    assert_xp(ours.components_ * backend.asarray(s)[:, None], ref.components_, backend, exact=False, atol=1e-8)
    for name in ("explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_"):
        assert_xp(getattr(ours, name), getattr(ref, name), backend, exact=False, rtol=1e-9)
    assert ours.noise_variance_ == pytest.approx(ref.noise_variance_, rel=1e-9, abs=1e-12)
    Xb = backend.asarray(X)
    Z = ours.transform(Xb)
    assert_xp(Z * backend.asarray(s)[None, :], ref.transform(X), backend, exact=False, atol=1e-8)
    assert_xp(ours.inverse_transform(Z), ref.inverse_transform(ref.transform(X)), backend, exact=False, atol=1e-8)


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("svd_solver", SOLVERS)
def test_svd_solvers_and_whiten_as_sklearn(backend, svd_solver, whiten):
    X = _data()
    kw = dict(n_components=3, svd_solver=svd_solver, whiten=whiten, random_state=0)
    ours = PCA(**kw).fit(backend.asarray(X))
    ref = SkPCA(**kw).fit(X)
    _compare(backend, ours, ref, X)
    if whiten:  # unit-variance scores
        np.testing.assert_allclose(np.var(host(ours.transform(backend.asarray(X))), axis=0, ddof=1), 1.0, rtol=1e-9)


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("n_components", [2, 5, 0.9, None])
def test_probabilistic_model_as_sklearn(backend, n_components, whiten):
    X = _data(1)
    kw = dict(n_components=n_components, whiten=whiten, svd_solver="full")
    ours = PCA(**kw).fit(backend.asarray(X))
    ref = SkPCA(**kw).fit(X)
    assert ours.noise_variance_ == pytest.approx(ref.noise_variance_, rel=1e-9, abs=1e-12)
    assert (ours.noise_variance_ > 0) == (ours.n_components_ < X.shape[1])
    assert_xp(ours.get_covariance(), ref.get_covariance(), backend, exact=False, rtol=1e-8, atol=1e-10)
    assert_xp(ours.get_precision(), ref.get_precision(), backend, exact=False, rtol=1e-7, atol=1e-10)
    Q = _data(2)[:20]
    assert_xp(ours.score_samples(backend.asarray(Q)), ref.score_samples(Q), backend, exact=False, rtol=1e-9)
    assert ours.score(backend.asarray(Q)) == pytest.approx(ref.score(Q), rel=1e-9)
    eye = host(ours.get_covariance()) @ host(ours.get_precision())
    np.testing.assert_allclose(eye, np.eye(X.shape[1]), atol=1e-8)


@pytest.mark.parametrize("svd_solver", ["auto", "full", "covariance_eigh"])
def test_n_components_mle_as_sklearn(backend, svd_solver):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 10))
    X[:, :3] *= 10.0  # three strong directions: mle finds them
    ours = PCA(n_components="mle", svd_solver=svd_solver).fit(backend.asarray(X))
    ref = SkPCA(n_components="mle", svd_solver=svd_solver).fit(X)
    assert ours.n_components_ == ref.n_components_ == 3
    _compare(backend, ours, ref, X)
    with pytest.raises(InvalidInputError, match="only supported if n_samples >= n_features"):
        PCA(n_components="mle").fit(backend.asarray(X[:5]))


def test_sklearn_errors_and_defaults():
    X = _data(4)
    pca = PCA(svd_solver="full")  # scikit-learn's test module builds this at import
    assert pca.get_params()["svd_solver"] == "full" and pca.get_params()["whiten"] is False
    cases = [
        (dict(n_components="mle", svd_solver="arpack"), "cannot be a string with svd_solver='arpack'"),
        (dict(n_components=6, svd_solver="arpack"), "must be strictly less than min"),
        (dict(n_components=0.5, svd_solver="randomized"), "must be between 1 and min"),
        (dict(svd_solver="lapack"), "svd_solver must be one of"),
        (dict(power_iteration_normalizer="SVD"), "power_iteration_normalizer"),
        (dict(iterated_power=-1), "iterated_power"),
        (dict(n_oversamples=0), "n_oversamples"),
        (dict(whiten="yes"), "whiten must be a bool"),
        (dict(tol=-1.0), "tol must be"),
    ]
    for kw, msg in cases:
        with pytest.raises(InvalidInputError, match=msg):
            PCA(**kw).fit(X)
        with pytest.raises(ValueError):
            SkPCA(**kw).fit(X)
    # None with arpack: one component fewer, as scikit-learn
    assert PCA(svd_solver="arpack", random_state=0).fit(X).n_components_ == X.shape[1] - 1
    # scikit-learn's defaults and a RandomState are accepted
    rs = np.random.RandomState(0)
    ours = PCA(2, svd_solver="randomized", tol=0.0, iterated_power=7, n_oversamples=5, random_state=rs).fit(X)
    ref = SkPCA(2, svd_solver="full").fit(X)
    np.testing.assert_allclose(np.abs(ours.components_), np.abs(ref.components_), atol=1e-8)


@pytest.mark.parametrize(
    ("shape", "n_components"),
    [((10, 50), 5), ((1000, 50), 50), ((600, 520), 400), ((600, 520), 10), ((600, 520), 0.5), ((600, 520), "mle")],
)
def test_fit_svd_solver_as_sklearn(shape, n_components):
    """``_fit_svd_solver`` (scikit-learn's private attribute, read by its tests) names the
    solver "auto" stands for, by scikit-learn's rule on the shape and n_components."""
    X = np.random.default_rng(5).uniform(size=shape)
    ours = PCA(n_components, random_state=0).fit(X)
    ref = SkPCA(n_components, random_state=0).fit(X)
    assert ours._fit_svd_solver == ref._fit_svd_solver
    assert PCA(3, svd_solver="arpack", random_state=0).fit(X[:20, :6])._fit_svd_solver == "arpack"


@pytest.mark.parametrize("data", [np.array([[0.0, 1, 0], [1, 0, 0]]), np.array([[0.0, 1, 0], [1, 0, 0]]).T])
def test_n_components_message_names_the_resolved_solver(data):
    """As scikit-learn's, the message names the solver "auto" stands for ('full' here)
    and the full solvers' lower bound, 0."""
    pattern = r"n_components=3 must be between {} and min\(n_samples, n_features\)=2 with svd_solver='full'"
    with pytest.raises(InvalidInputError, match=pattern.format(0)):
        PCA(3).fit(data)
    with pytest.raises(ValueError, match=pattern.format(0)):  # scikit-learn also takes 0 components
        SkPCA(3).fit(data)


@pytest.mark.parametrize("shape", [(100, 30), (30, 100)])
def test_truncated_whitened_scores_match_full(shape):
    """svd_solver "randomized" (gpuknn's block iteration) agrees with "full" to scikit-learn's
    float64 tolerance, whitened scores of held-out rows included (1e-10 left ~1e-10)."""
    from sklearn.datasets import make_low_rank_matrix

    X = make_low_rank_matrix(n_samples=shape[0] + 10, n_features=shape[1], tail_strength=0.5, random_state=42)
    full = PCA(10, svd_solver="full", whiten=True).fit(X[: shape[0]])
    other = PCA(10, svd_solver="randomized", whiten=True, random_state=42, iterated_power=50).fit(X[: shape[0]])
    np.testing.assert_allclose(other.explained_variance_, full.explained_variance_, rtol=1e-12, atol=1e-10)
    for part in (X[: shape[0]], X[shape[0] :]):
        s = np.sign(np.sum(other.components_ * full.components_, axis=1))
        np.testing.assert_allclose(other.transform(part) * s, full.transform(part), rtol=1e-12, atol=1e-10)


def test_zero_components_as_sklearn(backend):
    """n_components=0 (allowed by the full solvers): no component, all variance is noise; the
    probabilistic model's score is scikit-learn's (its test_pca_score3 compares it)."""
    X, Q = _data(6), _data(7)[:30]
    ours = PCA(0, svd_solver="full").fit(backend.asarray(X))
    ref = SkPCA(0, svd_solver="full").fit(X)
    assert ours.n_components_ == 0 and tuple(ours.components_.shape) == (0, X.shape[1])
    assert ours.noise_variance_ == pytest.approx(ref.noise_variance_, rel=1e-10)
    assert tuple(ours.transform(backend.asarray(Q)).shape) == (30, 0)
    assert ours.score(backend.asarray(Q)) == pytest.approx(ref.score(Q), rel=1e-10)
    assert_xp(ours.get_precision(), ref.get_precision(), backend, exact=False, rtol=1e-10)
    for svd_solver in ("arpack", "randomized"):
        with pytest.raises(
            InvalidInputError, match=r"n_components=0 must be between 1 and min\(n_samples, n_features\)"
        ):
            PCA(0, svd_solver=svd_solver).fit(backend.asarray(X))
