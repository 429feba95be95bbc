"""Silent wrong answers in the numerics (issue 32): each case gave a plausible, wrong result.

Oracles: scikit-learn and NumPy in float64 on the same (or the unscaled) data.
"""

import warnings

import numpy as np
import pytest
from helpers import assert_xp, host

import gpuknn
from gpuknn import InvalidInputError, finalize_partial, kneighbors, kneighbors_partial, merge_partial
from gpuknn.decomposition import PCA
from gpuknn.errors import ConvergenceWarning, EmptyNeighborhoodWarning
from gpuknn.linalg import block_eigh, deflated_power_method, eigh, power_method
from gpuknn.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    RadiusNeighborsClassifier,
    RadiusNeighborsRegressor,
)
from gpuknn.ops.partial import PartialNeighbors

# ----------------------------------------------------------------- 1. empty radius -> NaN


def _oracle_radius(X, y, Q, radius, weights):
    from sklearn.neighbors import RadiusNeighborsRegressor as Sk

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn's own empty warning
        return Sk(radius=radius, weights=weights).fit(X, y).predict(Q)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "auto"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_radius_regressor_without_neighbours_predicts_nan(backend, algorithm, weights):
    if algorithm == "kd_tree" and backend.name != "numpy":
        pytest.skip("kd_tree: NumPy only")
    est = RadiusNeighborsRegressor(radius=0.5, algorithm=algorithm, weights=weights)
    est.fit(backend.asarray(np.array([[0.0], [1.0]])), backend.asarray(np.array([1.0, 2.0])))
    with pytest.warns(EmptyNeighborhoodWarning, match="no neighbors within specified radius"):
        pred = est.predict(backend.asarray(np.array([[10.0]])))  # every query empty
    assert_xp(pred, [np.nan], backend, exact=False)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree", "auto"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_radius_regressor_mixed_queries_multi_output(backend, algorithm, weights):
    if algorithm == "kd_tree" and backend.name != "numpy":
        pytest.skip("kd_tree: NumPy only")
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 4, size=(30, 2))
    y = np.stack([X[:, 0] + X[:, 1], X[:, 0] * 2 - 1], axis=1)
    Q = np.vstack([rng.uniform(0, 4, size=(5, 2)), [[40.0, 40.0]], rng.uniform(0, 4, size=(2, 2)), [[-9.0, 3.0]]])
    want = _oracle_radius(X, y, Q, 0.8, weights)
    assert np.isnan(want[[5, 8]]).all() and np.isfinite(want[[0, 1, 2, 3, 4, 6, 7]]).all()
    est = RadiusNeighborsRegressor(radius=0.8, algorithm=algorithm, weights=weights)
    est.fit(backend.asarray(X), backend.asarray(y))
    with pytest.warns(EmptyNeighborhoodWarning, match=r"2 of 9 query rows"):
        pred = est.predict(backend.asarray(Q))
    assert_xp(pred, want, backend, exact=False, rtol=1e-12)


# ------------------------------------------------------ 2. repeated eigenvalues, residuals


def _sym(eigenvalues, seed=0):
    n = len(eigenvalues)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    C = (Q * np.asarray(eigenvalues)) @ Q.T
    return (C + C.T) / 2


SPECTRA = {
    "double": [3.0, 3.0, 1.0, 0.5, 0.1],
    "triple": [2.0, 2.0, 2.0, 0.7, 0.2, 0.1],
    "cluster": [4.0, 4.0 * (1 - 1e-9), 4.0 * (1 - 2e-9), 1.0, 0.3],
    "diagonal": None,  # diag(3, 3, 1): the case, exact eigenvectors
}


def _matrix(name):
    return np.diag([3.0, 3.0, 1.0]) if SPECTRA[name] is None else _sym(SPECTRA[name])


def _check_pairs(r, C, p, rtol):
    """Eigenvalues as numpy.linalg.eigh's; every vector an eigenvector (residual against C)."""
    want = np.linalg.eigvalsh(C)[::-1][:p]
    lam, V = host(r.eigenvalues).astype(np.float64), host(r.eigenvectors).astype(np.float64)
    np.testing.assert_allclose(lam, want, rtol=rtol, atol=rtol * want[0])
    res = np.linalg.norm(C @ V - V * lam, axis=0)
    assert (res <= 10 * rtol**0.5 * want[0]).all(), res
    # distinct directions: a repeated eigenvalue's eigenspace is spanned, not one vector twice
    np.testing.assert_allclose(V.T @ V, np.eye(p), atol=10 * rtol**0.5)


@pytest.mark.parametrize("spectrum", sorted(SPECTRA))
@pytest.mark.parametrize("warm_start", [False, True])
def test_deflation_repeated_eigenvalues(backend, spectrum, warm_start):
    C = _matrix(spectrum)
    p = 3 if spectrum in ("triple", "cluster") else 2
    # a cluster 1e-9 wide: the iterates' change stays below tol at once (stagnation within
    # the cluster is fine: its eigenvalues are equal to 1e-9); tol 1e-10 would need 1e10 steps
    tol = 1e-7 if spectrum == "cluster" else 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        r = deflated_power_method(backend.asarray(C), p, warm_start=warm_start, tol=tol, random_state=0)
    assert r.converged.all()
    _check_pairs(r, C, p, 1e-8)


@pytest.mark.parametrize("spectrum", sorted(SPECTRA))
@pytest.mark.parametrize("solver", ["eigh", "block"])
def test_other_solvers_repeated_eigenvalues(backend, spectrum, solver):
    C = _matrix(spectrum)
    p = 3 if spectrum in ("triple", "cluster") else 2
    r = eigh(backend.asarray(C), p) if solver == "eigh" else block_eigh(backend.asarray(C), p, random_state=0)
    assert np.all(r.converged)
    _check_pairs(r, C, p, 1e-9)


@pytest.mark.parametrize("solver", ["eigh", "block", "deflation"])
def test_pca_repeated_variances(backend, solver):
    X = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 0.5], [0, 0, -0.5]])
    pca = PCA(2, solver=solver, random_state=0, tol=1e-10).fit(backend.asarray(X))
    assert_xp(pca.explained_variance_, [0.4, 0.4], backend, exact=False, rtol=1e-8)
    W = host(pca.components_)
    # the two axes span the plane of the repeated variance (x, y), whichever basis of it
    np.testing.assert_allclose(np.abs(W[:, 2]), 0, atol=1e-6)
    np.testing.assert_allclose(W @ W.T, np.eye(2), atol=1e-6)
    assert pca.converged_


def _stalled(B, V, xp, **kw):
    """An iteration that 'converges' at once on its (random) start vector: a stagnation."""
    m = V.shape[0]
    return V, xp.zeros_like(V), np.ones(m, dtype=np.int64), np.ones(m, dtype=bool), np.zeros(m)


@pytest.mark.parametrize("solver", ["power", "deflation"])
def test_convergence_claim_is_verified_by_the_residual(monkeypatch, solver):
    import gpuknn.linalg.deflation as dm
    import gpuknn.linalg.power as pm

    C = _sym([3.0, 2.0, 1.0, 0.5])
    monkeypatch.setattr(pm if solver == "power" else dm, "_iterate", _stalled)
    with pytest.warns(ConvergenceWarning, match="residual"):
        r = power_method(C, random_state=0) if solver == "power" else deflated_power_method(C, 2, random_state=0)
    assert not np.any(r.converged)


def test_residual_bound_accepts_converged_pairs():
    from gpuknn.linalg.power import residual_ok

    C = _sym([3.0, 2.0, 1.0, 0.5])
    w, V = np.linalg.eigh(C)
    res = np.linalg.norm(C @ V - V * w, axis=0)[None, :]
    assert residual_ok(C[None], res, 1e-12, np).all()
    assert not residual_ok(C[None], res + 1e-3, 1e-7, np).any()


# ------------------------------------------------------------------- 3. tiny magnitudes

METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"]


def _unit(metric, s):
    return {"euclidean": s, "sqeuclidean": s * s, "inner": s * s}.get(metric, 1.0)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype,tiny", [(np.float64, 1e-300), (np.float32, 1e-25)])
def test_kneighbors_of_tiny_data(backend, metric, dtype, tiny):
    rng = np.random.default_rng(1)
    R = rng.normal(size=(40, 5))
    Q = R[:4] + rng.normal(scale=0.1, size=(4, 5))
    d0, i0 = kneighbors(Q, R, 3, metric=metric)  # float64, ordinary scale: the oracle
    Rt, Qt = (R * tiny).astype(dtype), (Q * tiny).astype(dtype)
    d, i = kneighbors(backend.asarray(Qt), backend.asarray(Rt), 3, metric=metric)
    assert_xp(i, host(i0), backend)
    want = host(d0) * _unit(metric, tiny)
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    # a sqeuclidean/inner distance below the dtype's range rounds to 0, as its own value would
    tiny_out = np.abs(want) < np.finfo(dtype).smallest_normal
    got = host(d).astype(np.float64)
    atol = 0.0 if dtype == np.float64 or metric not in ("cosine", "correlation") else 1e-6  # 1 - sim
    np.testing.assert_allclose(got[~tiny_out], want[~tiny_out], rtol=rtol, atol=atol)
    assert np.all(got[tiny_out] == 0)
    assert d.dtype == backend.asarray(np.zeros(1, dtype)).dtype


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
def test_estimators_on_tiny_data(backend, algorithm):
    if algorithm == "kd_tree" and backend.name != "numpy":
        pytest.skip("kd_tree: NumPy only")
    from sklearn.neighbors import NearestNeighbors as Sk

    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3))
    Q = rng.normal(size=(6, 3))
    y = (X[:, 0] > 0).astype(int)
    d0, i0 = Sk(n_neighbors=4).fit(X).kneighbors(Q)
    nn = NearestNeighbors(n_neighbors=4, algorithm=algorithm).fit(backend.asarray(X * 1e-300))
    d, i = nn.kneighbors(backend.asarray(Q * 1e-300))
    assert_xp(i, i0, backend)
    np.testing.assert_allclose(host(d) / 1e-300, d0, rtol=1e-10)
    clf = KNeighborsClassifier(3, weights="distance", algorithm=algorithm).fit(backend.asarray(X * 1e-300), y)
    ref = KNeighborsClassifier(3, weights="distance", algorithm=algorithm).fit(backend.asarray(X), y)
    assert_xp(clf.predict(backend.asarray(Q * 1e-300)), host(ref.predict(backend.asarray(Q))), backend)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
@pytest.mark.parametrize(
    "metric,tiny", [("euclidean", 1e-300), ("euclidean", 1e-170), ("sqeuclidean", 1e-150), ("cosine", 1e-300)]
)
def test_radius_search_of_tiny_data(backend, algorithm, metric, tiny):
    """Radius neighbours, votes and means of tiny data equal those of the unscaled data
    (radius scaled alike): squared distances that underflowed put every pair inside."""
    if algorithm == "kd_tree" and (backend.name != "numpy" or metric == "cosine"):
        pytest.skip("kd_tree: NumPy, euclidean family only")
    from sklearn.neighbors import NearestNeighbors as Sk

    rng = np.random.default_rng(5)
    X, Q = rng.normal(size=(40, 3)), rng.normal(size=(6, 3))
    y, t = (X[:, 0] > 0).astype(int), X[:, 1]
    r = 1.44 if metric == "sqeuclidean" else 1.2
    unit = {"euclidean": tiny, "sqeuclidean": tiny * tiny, "cosine": 1.0}[metric]
    d0, i0 = Sk(radius=r, metric=metric, algorithm="brute").fit(X).radius_neighbors(Q, sort_results=True)
    kw = dict(radius=r * unit, metric=metric, algorithm=algorithm)
    d, i = (
        NearestNeighbors(**kw)
        .fit(backend.asarray(X * tiny))
        .radius_neighbors(backend.asarray(Q * tiny), sort_results=True)
    )
    assert sum(len(a) for a in i0) > 6  # the radius holds neighbours: the test can see a difference
    for a, b, da, db in zip(i, i0, d, d0):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(da / unit, db, rtol=1e-9)
    for weights in ("uniform", "distance"):
        clf = RadiusNeighborsClassifier(weights=weights, outlier_label=-1, **kw).fit(backend.asarray(X * tiny), y)
        ref = RadiusNeighborsClassifier(weights=weights, outlier_label=-1, radius=r, metric=metric).fit(
            backend.asarray(X), y
        )
        with warnings.catch_warnings():  # "Outlier label -1 is not in training classes" (scikit-learn's)
            warnings.simplefilter("ignore", UserWarning)
            got, want = clf.predict_proba(backend.asarray(Q * tiny)), ref.predict_proba(backend.asarray(Q))
        np.testing.assert_allclose(host(got), host(want), rtol=1e-9)
        reg = RadiusNeighborsRegressor(weights=weights, **kw).fit(backend.asarray(X * tiny), t)
        ref = RadiusNeighborsRegressor(weights=weights, radius=r, metric=metric).fit(backend.asarray(X), t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyNeighborhoodWarning)
            got, want = host(reg.predict(backend.asarray(Q * tiny))), host(ref.predict(backend.asarray(Q)))
        np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("solver", ["eigh", "block", "deflation"])
@pytest.mark.parametrize("dtype,tiny", [(np.float64, 1e-170), (np.float64, 1e-150), (np.float32, 1e-25)])
def test_pca_of_tiny_data(backend, solver, dtype, tiny):
    from sklearn.decomposition import PCA as Sk

    X = np.random.default_rng(1).normal(size=(40, 5))
    sk = Sk(2).fit(X)
    pca = PCA(2, solver=solver, random_state=0).fit(backend.asarray((X * tiny).astype(dtype)))
    rtol = 1e-8 if dtype == np.float64 else 2e-4
    vtol = 1e-4 if solver == "deflation" else 10 * rtol  # deflation: tol 1e-6 on the iterates
    assert_xp(pca.explained_variance_ratio_, sk.explained_variance_ratio_, backend, exact=False, rtol=rtol)
    W = host(pca.components_).astype(np.float64)
    signs = np.sign(np.sum(W * sk.components_, axis=1))[:, None]
    np.testing.assert_allclose(W * signs, sk.components_, atol=vtol)
    np.testing.assert_allclose(host(pca.singular_values_) / tiny, sk.singular_values_, rtol=rtol)
    np.testing.assert_allclose(host(pca.mean_) / tiny, X.mean(axis=0), rtol=rtol, atol=rtol)
    var = host(pca.explained_variance_).astype(np.float64)
    if tiny * tiny > np.finfo(dtype).smallest_normal:
        np.testing.assert_allclose(var / tiny / tiny, sk.explained_variance_, rtol=rtol)
    else:  # a variance below the dtype's range (1e-340 in float64, 1e-50 in float32) is 0
        assert np.all(var == 0)
    Z = host(pca.transform(backend.asarray((X * tiny).astype(dtype)))).astype(np.float64) / tiny
    np.testing.assert_allclose(Z * signs.T, sk.transform(X), rtol=vtol, atol=10 * vtol)


# ------------------------------------------------------------ 4. overlapping shards


def test_partial_search_of_tiny_data_is_refused(backend):
    """A shard cannot rescale tiny data (the others' magnitudes are unknown): refused, the
    same data scaled by a power of two give gpuknn.kneighbors' answer."""
    rng = np.random.default_rng(6)
    R, Q = rng.normal(size=(20, 3)), rng.normal(size=(4, 3))
    with pytest.raises(InvalidInputError, match="underflow.*power of two"):
        kneighbors_partial(backend.asarray(Q * 1e-300), backend.asarray(R * 1e-300), 3)
    s = 2.0**-990  # tiny, but squares of its rows stay normal after a factor of 2**600
    parts = [
        kneighbors_partial(backend.asarray(Q * s * 2.0**600), backend.asarray(R[a:b] * s * 2.0**600), 3, offset=a)
        for a, b in ((0, 7), (7, 20))
    ]
    _, idx = finalize_partial(merge_partial(*parts))
    _, want = kneighbors(backend.asarray(Q * s), backend.asarray(R * s), 3)
    assert_xp(idx, host(want), backend)


def test_dask_pca_of_tiny_data():
    """The Dask fit's float64 moments of tiny data underflowed: rescaled like the in-memory fit."""
    da = pytest.importorskip("dask.array")
    import dask

    X = np.random.default_rng(1).normal(size=(400, 5)) * np.array([5.0, 3, 2, 1, 0.5])
    ref = PCA(2).fit(X)
    with dask.config.set(scheduler="synchronous"):
        for tiny in (1e-150, 1e-300):
            p = PCA(2).fit(da.from_array(X * tiny, chunks=100))
            np.testing.assert_allclose(p.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-10)
            np.testing.assert_allclose(np.abs(p.components_), np.abs(ref.components_), rtol=1e-8)
            np.testing.assert_allclose(p.mean_ / tiny, ref.mean_, rtol=1e-10)
            if tiny == 1e-150:  # 1e-300's variances lie below float64's range: 0 is right
                np.testing.assert_allclose(p.explained_variance_ / tiny / tiny, ref.explained_variance_, rtol=1e-10)


def test_merge_partial_refuses_overlapping_shards(backend):
    rng = np.random.default_rng(0)
    R, Q = rng.normal(size=(40, 3)), rng.normal(size=(3, 3))
    a = kneighbors_partial(backend.asarray(Q), backend.asarray(R[:20]), 3)
    with pytest.raises(InvalidInputError, match=r"overlapping shards.*\[0, 20\).*\[0, 20\)"):
        merge_partial(a, a)
    b = kneighbors_partial(backend.asarray(Q), backend.asarray(R[10:30]), 3, offset=10)
    with pytest.raises(InvalidInputError, match=r"\[10, 20\)"):
        merge_partial(a, b)
    # disjoint shards in any grouping still give the single search's answer
    c = kneighbors_partial(backend.asarray(Q), backend.asarray(R[20:]), 3, offset=20)
    m = merge_partial(c, a)
    assert m.shards == ((0, 40),)
    d, i = finalize_partial(m)
    d0, i0 = kneighbors(Q, R, 3)
    assert_xp(i, i0, backend)
    # results without ranges (built by hand): an index listed twice is caught
    bare = PartialNeighbors(a.keys, a.indices, a.metric, a.dtype)
    with pytest.raises(InvalidInputError, match="share references"):
        merge_partial(bare, bare)


# --------------------------------------------------------------- 5. integers beyond 2**53


@pytest.mark.parametrize(
    "Q,R",
    [
        ([[2**64 - 11]], [[2**64 - 16], [2**64 - 13], [2**64 - 7]]),
        (np.array([[2**64 - 11]], dtype=np.uint64), np.array([[2**64 - 16], [2**64 - 13], [2**64 - 7]], np.uint64)),
        (np.array([[2**62]], dtype=np.int64), np.array([[1], [-(2**62)], [5]], dtype=np.int64)),
        ([[2**70]], [[1], [2], [3]]),  # beyond uint64: an object array of Python ints
    ],
)
def test_integers_beyond_float64_are_refused(Q, R):
    with pytest.raises(InvalidInputError, match=r"Q holds integers up to \d+.*2\*\*53 = 9007199254740992.*offset"):
        kneighbors(Q, R, 2)


def test_integers_beyond_float64_refused_by_estimators_and_pca(backend):
    X = np.array([[0], [1], [2**60]], dtype=np.int64)
    with pytest.raises(InvalidInputError, match=r"X holds integers up to 1152921504606846976"):
        NearestNeighbors(n_neighbors=1).fit(backend.asarray(X))
    with pytest.raises(InvalidInputError, match=r"2\*\*24 = 16777216"):
        PCA(1, dtype="float32").fit(backend.asarray(np.array([[0, 1], [2**25 + 1, 3], [4, 5]], dtype=np.int32)))


def test_exact_integers_pass(backend):
    # 2**53 and its neighbours below are exact in float64: the answer is the exact one
    Q = np.array([[2**53]], dtype=np.int64)
    R = np.array([[2**53 - 4], [2**53 - 1], [2**53 - 3]], dtype=np.int64)
    d, i = kneighbors(backend.asarray(Q), backend.asarray(R), 2)
    assert_xp(i, [[1, 2]], backend)
    assert_xp(d, [[1.0, 3.0]], backend, exact=False)
    # int32 into float64 needs no check and is never refused
    d, i = kneighbors(np.array([[2**31 - 1]], np.int32), np.array([[2**31 - 2], [0]], np.int32), 1)
    assert i.tolist() == [[0]] and d.tolist() == [[1.0]]


# ------------------------------------------------------------------------- 6. float16


def _values(h):
    """Float64 host copy of a half-precision array (NumPy has no bfloat16)."""
    if hasattr(h, "float"):  # torch
        return h.float().cpu().numpy().astype(np.float64)
    return host(h).astype(np.float64)


def _half(backend, a, kind="float16"):
    if backend.name.startswith("strict"):
        pytest.skip("array_api_strict has no half precision")
    if backend.name.startswith("torch"):
        import torch

        return torch.asarray(a, dtype=getattr(torch, kind), device=backend.device)
    if kind != "float16":
        pytest.skip(f"{kind}: torch only")
    return backend.asarray(np.asarray(a, dtype=np.float16))


@pytest.mark.parametrize("kind", ["float16", "bfloat16"])
def test_half_precision_is_computed_in_float32(backend, kind):
    rng = np.random.default_rng(4)
    X = np.round(rng.uniform(-4, 4, size=(30, 3)), 1)
    Xh = _values(_half(backend, X, kind))  # the values the user passed
    y = (Xh[:, 0] > 0).astype(int)
    Qh = _half(backend, X[:5] + 0.3, kind)
    Qv = _values(Qh)
    f32 = backend.asarray(np.zeros(1, np.float32)).dtype
    from sklearn.neighbors import KNeighborsClassifier as SkC
    from sklearn.neighbors import NearestNeighbors as SkN

    d0, i0 = SkN(n_neighbors=3).fit(Xh).kneighbors(Qv)
    nn = NearestNeighbors(n_neighbors=3).fit(_half(backend, X, kind))
    d, i = nn.kneighbors(Qh)
    assert_xp(i, i0, backend)
    assert_xp(d, d0, backend, dtype=f32, exact=False, rtol=1e-5, atol=1e-6)
    d, i = kneighbors(Qh, _half(backend, X, kind), 3)
    assert_xp(i, i0, backend)
    assert d.dtype == f32
    clf = KNeighborsClassifier(3).fit(_half(backend, X, kind), y)
    assert_xp(clf.predict(Qh), SkC(3).fit(Xh, y).predict(Qv), backend)
    reg = KNeighborsRegressor(3).fit(_half(backend, X, kind), Xh[:, 1])
    assert_xp(reg.predict(Qh), Xh[i0, 1].mean(axis=1), backend, exact=False, rtol=1e-12)
    pca = PCA(2).fit(_half(backend, X, kind))
    assert pca.components_.dtype == f32 and pca.transform(Qh).dtype == f32
    from sklearn.decomposition import PCA as SkP

    np.testing.assert_allclose(host(pca.explained_variance_), SkP(2).fit(Xh).explained_variance_, rtol=1e-5)


def test_explicit_float16_dtype_stays_refused():
    X = np.arange(8, dtype=np.float16).reshape(4, 2)
    with pytest.raises(InvalidInputError, match="dtype must be None, 'float32' or 'float64'"):
        PCA(1, dtype="float16").fit(X)
    assert gpuknn._backend.float_dtype(X, np) == np.float32
