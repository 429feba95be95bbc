"""gpuknn.linalg: covariance, power method, deflation, block and direct eigen-solvers."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import ConvergenceWarning, InvalidInputError
from gpuknn.linalg import (
    block_eigh,
    covariance,
    covariance_spectrum,
    deflated_power_method,
    eigh,
    power_method,
)


def spd_with_gap(n=12, seed=0, decay=0.8):
    """Random SPD matrix with eigenvalues 100 * decay^i (ratio between neighbours: decay)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = 100.0 * decay ** np.arange(n)
    C = (Q * w) @ Q.T
    return (C + C.T) / 2


def reference(C, p):
    w, V = np.linalg.eigh(C)
    return w[::-1][:p], V[:, ::-1][:, :p]


def sequential_power(B, v, tol, max_iter):
    """The seed algorithm, one step at a time on the host (oracle for iteration counts)."""
    for t in range(1, max_iter + 1):
        w = B @ v
        w = w / np.linalg.norm(w)
        s = -1.0 if w @ v < 0 else 1.0
        if np.max(np.abs(w - s * v)) < tol:
            return t, w
        v = w
    return max_iter, v


# ---------------------------------------------------------------- covariance
def test_covariance_matches_numpy(xp, to_xp):
    X = np.random.default_rng(1).normal(size=(40, 6)) * [1, 2, 3, 4, 5, 6] + 7
    C = covariance(to_xp(X))
    np.testing.assert_allclose(to_numpy(C), np.cov(X, rowvar=False), rtol=1e-12, atol=1e-12)
    C0 = covariance(to_xp(X), correction=0)
    np.testing.assert_allclose(to_numpy(C0), np.cov(X, rowvar=False, ddof=0), rtol=1e-12)
    assert np.array_equal(to_numpy(C), to_numpy(C).T)


def test_covariance_dtypes(xp, to_xp):
    Xi = np.arange(12).reshape(4, 3) ** 2
    assert covariance(to_xp(Xi)).dtype == xp.float64
    X32 = to_xp(Xi.astype(np.float32))
    assert covariance(X32).dtype == xp.float32
    assert covariance(X32, dtype="float64").dtype == xp.float64


def test_covariance_bad_input(xp, to_xp):
    with pytest.raises(InvalidInputError, match="n_samples - correction"):
        covariance(to_xp(np.ones((1, 3))))
    with pytest.raises(InvalidInputError, match="NaN"):
        covariance(to_xp(np.array([[1.0, np.nan], [2.0, 3.0]])))


def test_covariance_both_paths_are_accurate(xp, to_xp, monkeypatch):
    # Small offsets take the Gram shortcut (no centring pass), large ones the centred
    # chunks; both must match the float64 covariance of the same float32 numbers.
    cov_module = importlib.import_module("gpuknn.linalg.covariance")  # not the function

    rng = np.random.default_rng(11)
    base = rng.normal(size=(2003, 5)) * [1.0, 2.0, 3.0, 4.0, 5.0]
    real_scatter, real_gram = cov_module.centred_scatter, cov_module.gram_and_sums
    for offset, centred in ((1.5, False), (1e4, True)):
        X32 = (base + offset).astype(np.float32)
        calls, grams = [], []
        monkeypatch.setattr(
            cov_module, "centred_scatter", lambda X, m, calls=calls: calls.append(1) or real_scatter(X, m)
        )
        monkeypatch.setattr(cov_module, "gram_and_sums", lambda X, grams=grams: grams.append(1) or real_gram(X))
        got = to_numpy(covariance(to_xp(X32))).astype(np.float64)
        assert bool(calls) == centred, offset
        assert bool(grams) != centred, offset  # the row sample spares the GEMM at 1e4
        want = np.cov(X32.astype(np.float64), rowvar=False)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # constant non-zero columns (centred path): zero variance up to ~1e-16 of c^2, although
    # their float32 mean is not exactly c (a plain centring leaves ~1e-10 here)
    for c in (3.0, 62.500828, 0.1):
        Xc = np.column_stack([base[:, 0], np.full(len(base), c)]).astype(np.float32)
        C = to_numpy(covariance(to_xp(Xc))).astype(np.float64)
        assert abs(C[1, 1]) <= 1e-14 * c * c and abs(C[0, 1]) <= 1e-7 * c, (c, C)


def test_covariance_offset_test_is_exact_when_the_row_sample_misleads(xp, to_xp, monkeypatch):
    # The row sample (every 2nd row here) sees twice the spread of the whole column, so it
    # estimates sum x^2 / ((n-1) var) at ~11 while the exact value is ~21 > 16: the Gram
    # is computed, the exact test on its diagonal rejects it, and the centred path runs.
    cov_module = importlib.import_module("gpuknn.linalg.covariance")
    rng = np.random.default_rng(15)
    n, spread = 2048, 1.0
    col = np.full(n, np.sqrt(10.0) * spread)
    col[::2] += spread * rng.standard_normal(n // 2)
    X32 = np.column_stack([rng.standard_normal(n), col]).astype(np.float32)
    real_scatter = cov_module.centred_scatter
    calls = []
    monkeypatch.setattr(cov_module, "centred_scatter", lambda X, m, calls=calls: calls.append(1) or real_scatter(X, m))
    assert cov_module._offsets_look_small(X32, np)
    got = to_numpy(covariance(to_xp(X32))).astype(np.float64)
    assert calls
    # float32 scatter of 2048 rows: a few 1e-6 of rounding that depends on the BLAS kernel
    # (1.2e-5 seen with torch 2.13 on one Xeon); the offset trap would be orders larger.
    np.testing.assert_allclose(got, np.cov(X32.astype(np.float64), rowvar=False), rtol=5e-5)


def test_column_sums_are_float64_accurate(xp, to_xp):
    from gpuknn.linalg.covariance import column_sums

    X = (np.random.default_rng(12).random((60_007, 3)) + [0.0, 1.0, 100.0]).astype(np.float32)
    got = to_numpy(column_sums(to_xp(X)))
    assert got.dtype == np.float64
    want = X.astype(np.float64).sum(axis=0)
    # a plain float32 sum of 60 000 rows is off by ~1e-4 relative
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_covariance_nan_outside_the_row_sample(xp, to_xp, monkeypatch):
    # the offset test samples every 2nd row: a NaN or infinity in an odd row reaches the
    # Gram shortcut, which must still raise the library's error (not return NaN)
    cov_module = importlib.import_module("gpuknn.linalg.covariance")
    real_gram, grams = cov_module.gram_and_sums, []
    monkeypatch.setattr(cov_module, "gram_and_sums", lambda X, grams=grams: grams.append(1) or real_gram(X))
    X = np.random.default_rng(17).normal(size=(2048, 3))
    for bad in (np.nan, np.inf, -np.inf):
        X[5, 1] = bad
        with pytest.raises(InvalidInputError, match="NaN or infinity in 1 row"):
            covariance(to_xp(X))
    assert len(grams) == 3


def test_covariance_overflow_is_an_error(xp, to_xp):
    X = np.ones((10, 3), dtype=np.float32)
    X[4, 1] = 1e20  # finite, but its square overflows float32
    with pytest.raises(InvalidInputError, match="overflow"):
        covariance(to_xp(X))
    X[4, 1] = np.inf
    with pytest.raises(InvalidInputError, match="NaN or infinity in 1 row"):
        covariance(to_xp(X))


def test_covariance_spectrum(xp, to_xp):
    X = np.random.default_rng(2).normal(size=(30, 5))
    got = to_numpy(covariance_spectrum(to_xp(X)))
    want = np.linalg.eigvalsh(np.cov(X, rowvar=False))[::-1]
    np.testing.assert_allclose(got, want, rtol=1e-10)


# -------------------------------------------------------------- power method
def test_power_method_counts_like_sequential_loop(xp, to_xp):
    C = spd_with_gap(10, seed=3, decay=0.9)
    v0 = np.random.default_rng(4).standard_normal(10)
    v0 /= np.linalg.norm(v0)
    t_ref, v_ref = sequential_power(C, v0, 1e-9, 5000)
    for every in (1, 7, 16):
        for strategy in ("matvec", "powers"):
            r = power_method(to_xp(C), x0=to_xp(v0), tol=1e-9, check_every=every, strategy=strategy)
            assert r.converged and r.n_iter == t_ref, (every, strategy)
            np.testing.assert_allclose(to_numpy(r.eigenvector), v_ref, atol=1e-12)
    assert abs(float(r.eigenvalue) - 100.0) < 1e-9


def test_power_method_negative_dominant_eigenvalue(xp, to_xp):
    C = np.diag([-5.0, 2.0, 1.0])
    r = power_method(to_xp(C), random_state=0, tol=1e-10)
    assert r.converged
    assert abs(float(r.eigenvalue) + 5.0) < 1e-12


def test_power_method_batched_equals_single(xp, to_xp):
    stack = np.stack([spd_with_gap(6, seed=s) for s in range(4)])
    x0 = np.random.default_rng(5).standard_normal((4, 6))
    r = power_method(to_xp(stack), x0=to_xp(x0), tol=1e-10)
    assert r.n_iter.shape == (4,) and r.converged.all()
    for i in range(4):
        ri = power_method(to_xp(stack[i]), x0=to_xp(x0[i]), tol=1e-10)
        assert ri.n_iter == r.n_iter[i]
        np.testing.assert_allclose(float(ri.eigenvalue), to_numpy(r.eigenvalue)[i], rtol=1e-13)


def test_power_method_zero_matrix(xp, to_xp):
    r = power_method(to_xp(np.zeros((4, 4))), random_state=0)
    v = to_numpy(r.eigenvector)
    assert float(r.eigenvalue) == 0.0 and r.converged and r.n_iter == 1
    assert np.all(np.isfinite(v)) and abs(np.linalg.norm(v) - 1) < 1e-12
    d = deflated_power_method(to_xp(np.zeros((4, 4))), 2, random_state=0)
    assert np.all(to_numpy(d.eigenvalues) == 0) and d.converged.all()
    assert np.all(np.isfinite(to_numpy(d.eigenvectors)))
    b = block_eigh(to_xp(np.zeros((4, 4))), 2, random_state=0)
    assert np.all(to_numpy(b.eigenvalues) == 0) and b.converged.all()


def test_power_method_max_iter_warns(xp, to_xp):
    C = spd_with_gap(8, seed=6, decay=0.99)
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        r = power_method(to_xp(C), max_iter=5, tol=1e-12, random_state=0)
    assert r.converged is False and r.n_iter == 5
    assert np.all(np.isfinite(to_numpy(r.eigenvector)))
    with pytest.warns(ConvergenceWarning):
        d = deflated_power_method(to_xp(C), 2, max_iter=5, tol=1e-12, random_state=0)
    assert not d.converged.any() and np.all(d.n_iter == 5)
    with pytest.warns(ConvergenceWarning):
        b = block_eigh(to_xp(spd_with_gap(40, decay=0.99)), 2, max_iter=1, tol=1e-14, oversample=2, random_state=0)
    assert not b.converged.any()


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.ones((3, 4)), "square"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN"),
        (np.ones(3), "2-D"),
    ],
)
def test_solvers_reject_bad_matrices(xp, to_xp, bad, match):
    for solve in (
        lambda B: power_method(B),
        lambda B: deflated_power_method(B, 1),
        lambda B: block_eigh(B, 1),
        lambda B: eigh(B),
    ):
        with pytest.raises(InvalidInputError, match=match):
            solve(to_xp(bad))


def test_solvers_reject_bad_options(xp, to_xp):
    C = to_xp(spd_with_gap(5))
    for p in (0, 6, 1.5, True):
        with pytest.raises(InvalidInputError, match="n_components"):
            deflated_power_method(C, p)
        with pytest.raises(InvalidInputError, match="n_components"):
            block_eigh(C, p)
    with pytest.raises(InvalidInputError, match="tol"):
        power_method(C, tol=0)
    with pytest.raises(InvalidInputError, match="max_iter"):
        power_method(C, max_iter=0)
    with pytest.raises(InvalidInputError, match="strategy"):
        power_method(C, strategy="fast")
    with pytest.raises(InvalidInputError, match="x0"):
        power_method(C, x0=to_xp(np.zeros(5)))


# ------------------------------------------------------ eigenpairs vs LAPACK
@pytest.mark.parametrize("solver", ["deflation", "block", "eigh"])
def test_eigenpairs_match_numpy(xp, to_xp, solver):
    C = spd_with_gap(30, seed=7, decay=0.8)
    p = 6
    w_ref, V_ref = reference(C, p)
    if solver == "deflation":
        r = deflated_power_method(to_xp(C), p, tol=1e-12, random_state=0, max_iter=50_000)
    elif solver == "block":
        r = block_eigh(to_xp(C), p, random_state=0)
    else:
        r = eigh(to_xp(C), p)
    w, V = to_numpy(r.eigenvalues), to_numpy(r.eigenvectors)
    assert w.shape == (p,) and V.shape == (30, p)
    assert np.max(np.abs(w - w_ref) / w_ref) <= 1e-8
    cos = np.abs(np.sum(V * V_ref, axis=0))
    assert np.all(cos >= 1 - 1e-8)
    assert np.all(to_numpy(r.residuals) <= 1e-5)
    assert r.converged.all()
    # sign convention: the largest-magnitude entry of each vector is positive
    assert np.all(V[np.argmax(np.abs(V), axis=0), np.arange(p)] > 0)


def test_block_many_components_and_full_block(xp, to_xp):
    C = spd_with_gap(25, seed=8, decay=0.85)
    w_ref, V_ref = reference(C, 25)
    for p in (20, 25):  # block reaches n: the dense eigh of C in float64, one step
        r = block_eigh(to_xp(C), p, random_state=1, psd=True)
        assert r.converged.all() and r.n_iter[0] == 1
        np.testing.assert_allclose(to_numpy(r.eigenvalues), w_ref[:p], rtol=1e-12)
        cos = np.abs(np.sum(to_numpy(r.eigenvectors) * V_ref[:, :p], axis=0))
        assert np.all(cos >= 1 - 1e-12)
    # float32: the single step is the float64 eigh of C itself, so only the final rounding
    # to float32 is left (a random basis would add the float32 product's error, ~1e-5 for
    # the smallest eigenvalues here)
    C32 = C.astype(np.float32)
    w32, _ = reference(C32.astype(np.float64), 25)
    r = block_eigh(to_xp(C32), 25, random_state=1)
    np.testing.assert_allclose(to_numpy(r.eigenvalues), w32, rtol=2 * np.finfo(np.float32).eps)


def test_block_psd_shift_converges_faster(xp, to_xp):
    C = spd_with_gap(60, seed=12, decay=0.93)
    w_ref, V_ref = reference(C, 8)
    plain = block_eigh(to_xp(C), 8, oversample=4, random_state=0)
    shifted = block_eigh(to_xp(C), 8, oversample=4, random_state=0, psd=True)
    np.testing.assert_allclose(to_numpy(shifted.eigenvalues), w_ref, rtol=1e-9)
    cos = np.abs(np.sum(to_numpy(shifted.eigenvectors) * V_ref, axis=0))
    assert np.all(cos >= 1 - 1e-8)
    assert shifted.converged.all() and shifted.n_iter[0] < plain.n_iter[0]


def test_block_psd_shift_harmless_when_the_spectrum_drops_after_the_block(xp, to_xp):
    # lambda_{b+1} << lambda_b: half the smallest Ritz value would be a shift near
    # lambda_b / 2 and slow the iteration several-fold (27 iterations instead of 8, or no
    # convergence at all with oversample=0); the estimate of lambda_{b+1} keeps it near 0.
    rng = np.random.default_rng(14)
    Q, _ = np.linalg.qr(rng.standard_normal((60, 60)))
    for head, p, over in ((np.linspace(1.0, 0.9, 15), 5, 10), (np.array([1, 0.8, 0.6, 0.5, 0.4]), 5, 0)):
        w = np.r_[head, 1e-3 * rng.random(60 - head.size)]
        C = (Q * w) @ Q.T
        C = (C + C.T) / 2
        plain = block_eigh(to_xp(C), p, oversample=over, random_state=0)
        shifted = block_eigh(to_xp(C), p, oversample=over, random_state=0, psd=True)
        assert shifted.converged.all() and shifted.n_iter[0] <= plain.n_iter[0]
        np.testing.assert_allclose(to_numpy(shifted.eigenvalues), np.sort(w)[::-1][:p], rtol=1e-9)


def test_block_next_check_follows_residual_decay():
    from gpuknn.linalg.block import _steps_to_go

    assert _steps_to_go([(4, 1e-2)], 1e-4, 4) == 4  # one step: no rate yet
    # residuals fall 10x per 4 iterations: 1e-3 -> 3e-4 needs 3 more, 1e-4 needs 4
    assert _steps_to_go([(4, 1e-2), (8, 1e-3)], 3e-4, 4) == 3
    assert _steps_to_go([(4, 1e-2), (8, 1e-3)], 1e-4, 4) == 4
    assert _steps_to_go([(4, 1e-2), (8, 1e-3)], 1e-9, 4) == 4  # never beyond check_every
    assert _steps_to_go([(4, 1e-3), (8, 2e-3)], 1e-4, 4) == 4  # not decaying
    assert _steps_to_go([(4, 1.0), (8, 1 - 2**-53)], 1e-10, 4) == 4  # rate rounds to 1
    assert _steps_to_go([(4, np.inf), (8, 1.0)], 1e-10, 4) == 4  # rate 0


def test_deflation_leaves_input_alone(xp, to_xp):
    C = spd_with_gap(20, seed=13, decay=0.8)
    Cx = to_xp(C)
    deflated_power_method(Cx, 3, tol=1e-10, random_state=0)
    assert np.array_equal(to_numpy(Cx), C)


def test_warm_start_keeps_results(xp, to_xp):
    C = spd_with_gap(20, seed=9, decay=0.85)
    cold = deflated_power_method(to_xp(C), 4, tol=1e-11, random_state=0)
    warm = deflated_power_method(to_xp(C), 4, tol=1e-11, random_state=0, warm_start=True)
    np.testing.assert_allclose(to_numpy(warm.eigenvalues), to_numpy(cold.eigenvalues), rtol=1e-10)
    assert warm.n_iter[1:].sum() < cold.n_iter[1:].sum()


def test_solvers_keep_a_non_default_device():
    """Every array a solver makes lives on its input's device (array-api-strict's second
    device here; CuPy's current device need not be the input's)."""
    xps = pytest.importorskip("array_api_strict")
    from gpuknn.decomposition import PCA

    try:
        dev = xps.Device("device1")
    except Exception:  # noqa: BLE001 - an array-api-strict without extra devices
        pytest.skip("array_api_strict has no second device")
    C = spd_with_gap(30, seed=21, decay=0.8)
    Cx = xps.asarray(C, device=dev)
    w = reference(C, 30)[0]
    results = {
        "block": block_eigh(Cx, 4, random_state=0, psd=True),
        "block, b = n": block_eigh(Cx, 25, random_state=0, psd=True),
        "deflation": deflated_power_method(Cx, 3, random_state=0, warm_start=True, tol=1e-10),
        "eigh": eigh(Cx, 3),
    }
    for name, r in results.items():
        assert r.eigenvalues.device == dev and r.eigenvectors.device == dev, name
        p = r.eigenvalues.shape[0]
        np.testing.assert_allclose(to_numpy(r.eigenvalues), w[:p], rtol=1e-8, err_msg=name)
    for x0 in (None, xps.ones(30, dtype=xps.float64, device=dev)):
        r = power_method(Cx, x0=x0, random_state=0, tol=1e-10)
        assert r.eigenvector.device == dev
    assert power_method(xps.stack([Cx, Cx]), random_state=0).eigenvector.device == dev
    X = xps.asarray(np.random.default_rng(22).normal(size=(50, 6)), device=dev)
    assert covariance(X).device == dev
    for solver in ("eigh", "block", "deflation"):
        pca = PCA(2, solver=solver, random_state=0).fit(X)
        assert pca.components_.device == dev and pca.transform(X).device == dev, solver


def test_float32_solvers(xp, to_xp):
    C = spd_with_gap(16, seed=10, decay=0.7).astype(np.float32)
    w_ref, _ = reference(C.astype(np.float64), 3)
    r = block_eigh(to_xp(C), 3, random_state=0)
    assert r.eigenvalues.dtype == xp.float32
    np.testing.assert_allclose(to_numpy(r.eigenvalues), w_ref, rtol=1e-5)
    d = deflated_power_method(to_xp(C), 3, tol=1e-5, random_state=0)
    np.testing.assert_allclose(to_numpy(d.eigenvalues), w_ref, rtol=1e-5)


@pytest.mark.parametrize("b", [12, 33, 150])
def test_inverse_of_cholesky_factor(xp, to_xp, b):
    from gpuknn.linalg.block import _inv_lower

    # rows of growing scale: a factor whose entries below the diagonal exceed the diagonal
    # ones, on which the leaves' LU pivots
    A = np.random.default_rng(14).standard_normal((b, 3 * b)) * np.logspace(-2, 0, b)[:, None]
    L = np.linalg.cholesky(A @ A.T)
    for dtype in (np.float64, np.float32):
        Li = to_numpy(_inv_lower(to_xp(L.astype(dtype)), xp))
        assert Li.dtype == dtype and Li.shape == (b, b)
        want = np.linalg.inv(L)
        # forward error within the triangle's condition number times the dtype's rounding
        tol = 50 * np.finfo(dtype).eps * np.linalg.cond(L)
        np.testing.assert_allclose(Li, want, atol=tol * np.abs(want).max())
        assert np.all(np.triu(Li, 1) == 0)


@pytest.mark.parametrize("offset", [0.0, 1e4])  # the Gram shortcut and the centred path
def test_covariance_row_chunks(xp, to_xp, offset, monkeypatch):
    """Row chunks summed in order give the covariance and the mean, on every backend; an
    overflow inside a chunk is still the library's error."""
    cov = importlib.import_module("gpuknn.linalg.covariance")
    rng = np.random.default_rng(15)
    X = (rng.normal(size=(3000, 12)) * np.arange(1, 13) + offset).astype(np.float32)
    want = np.cov(X.astype(np.float64), rowvar=False)
    monkeypatch.setattr(cov, "_CHUNK_BYTES", 12 * 4 * 256)  # 256-row chunks: 12 of them
    calls = []
    real = cov._reduce_row_chunks
    monkeypatch.setattr(cov, "_reduce_row_chunks", lambda *a: calls.append(1) or real(*a))
    got = cov.covariance(to_xp(X))
    assert calls  # the chunked reduction ran
    assert got.dtype == xp.float32
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-5, atol=1e-6 * np.abs(want).max())
    _, mean = cov.covariance_and_mean(to_xp(X))
    np.testing.assert_allclose(
        to_numpy(mean), X.astype(np.float64).mean(axis=0), rtol=1e-7, atol=1e-7 * np.abs(X).max()
    )
    with pytest.raises(InvalidInputError, match="rescale"):
        cov.covariance(to_xp(X * np.float32(3e19) + np.float32(offset * 1e16)))


def test_cholesky_ok_reads_failure_from_the_factor(xp, to_xp):
    """A partial factor (what CuPy returns for a matrix that is not positive definite,
    without raising) is refused; a good one passes."""
    from gpuknn.linalg.block import cholesky_ok

    A = np.random.default_rng(17).normal(size=(6, 12))
    G = A @ A.T
    L = np.linalg.cholesky(G)
    assert cholesky_ok(to_xp(L), to_xp(G), xp)
    partial = L.copy()
    partial[3:, 3:] = np.tril(G[3:, 3:])  # columns after a failed pivot left as they were
    assert not cholesky_ok(to_xp(partial), to_xp(G), xp)
    singular = G.copy()
    singular[:, 0] = singular[0, :] = 0.0
    assert not cholesky_ok(to_xp(np.nan_to_num(np.tril(singular))), to_xp(singular), xp)
