"""gpuknn.linalg.power_steps: lazy and careful power steps, block prediction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_linalg import sequential_power
from test_linalg import spd_with_gap as spd

import gpuknn.linalg.power_steps as ps
from gpuknn._backend import to_numpy
from gpuknn.linalg import deflated_power_method, power_method
from gpuknn.linalg.power import _iterate


def unit(n, seed):
    v = np.random.default_rng(seed).standard_normal(n)
    return v / np.linalg.norm(v)


def test_lazy_length():
    assert ps.lazy_length(float("nan"), 16) == 0  # growth unknown: careful block
    assert ps.lazy_length(ps.SPREAD + 1, 16) == 0  # centring factor not representable
    assert ps.lazy_length(3.0, 16) == 16  # norms within 2^+-22.5
    assert ps.lazy_length(-3.0, 16) == 16
    K = ps.lazy_length(20.0, 16)  # 2^(20 * 15 / 2) too wide: shortened
    assert 1 <= K < 16 and 20.0 * (K - 1) / 2 <= ps.SPREAD


def test_predict_steps():
    d = [1e-3 * 0.5**i for i in range(8)]  # halves every step
    # last value 7.8e-6; below 1e-6 after 3 more halvings
    steps, rate = ps.predict_steps(d, 1e-6, 32)
    assert steps == 3 and rate == pytest.approx(0.5)
    assert ps.predict_steps(d, 1e-12, 4)[0] == 4  # never beyond the limit
    assert ps.predict_steps([1e-3, 2e-3, 3e-3, 4e-3], 1e-6, 32)[0] == 32  # not decaying
    assert ps.predict_steps([1.0, 1.0, 1.0, 1 - 2**-53], 1e-6, 32)[0] == 32  # rate rounds to 1
    assert ps.predict_steps([np.inf, np.inf, 1.0, 0.5], 1e-6, 32)[0] == 32
    # a one-step block has no rate of its own: the previous one carries over
    assert ps.predict_steps([2e-6], 1e-6, 32) == (32, pytest.approx(np.nan, nan_ok=True))
    assert ps.predict_steps([2e-6], 1e-6, 32, 0.5) == (1, 0.5)
    assert ps.predict_steps([8e-6], 1e-6, 32, 0.5) == (3, 0.5)


@pytest.mark.parametrize("every", [1, 5, 32])
def test_lazy_steps_count_like_the_seed(xp, to_xp, every):
    # n > 16: "auto" takes the matrix-vector steps (lazy; the NumPy loop on numpy)
    C = spd(30, seed=1, decay=0.93)
    v0 = unit(30, 2)
    t_ref, v_ref = sequential_power(C, v0, 1e-10, 5000)
    r = power_method(to_xp(C), x0=to_xp(v0), tol=1e-10, check_every=every)
    assert r.converged and r.n_iter == t_ref
    np.testing.assert_allclose(to_numpy(r.eigenvector), v_ref, atol=1e-12)


def test_negative_dominant_eigenvalue_flips_every_step(xp, to_xp):
    Q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((20, 20)))
    C = (Q * np.r_[-50.0, 40.0, np.linspace(10, 1, 18)]) @ Q.T
    C = (C + C.T) / 2
    v0 = unit(20, 4)
    t_ref, v_ref = sequential_power(C, v0, 1e-10, 5000)
    r = power_method(to_xp(C), x0=to_xp(v0), tol=1e-10)
    assert r.converged and r.n_iter == t_ref
    np.testing.assert_allclose(to_numpy(r.eigenvector), v_ref, atol=1e-12)
    assert abs(float(r.eigenvalue) + 50.0) < 1e-8


@pytest.mark.parametrize("growth", [None, 40.0])
def test_driver_is_the_same_on_numpy_and_strict(growth):
    """The driver on NumPy and on array_api_strict: same blocks, counts, vectors, bit for bit."""
    import array_api_strict as strict

    C = spd(40, seed=5, decay=0.95).astype(np.float32)
    v0 = unit(40, 6).astype(np.float32)
    runs = []
    for xp_, A, v in ((np, C[None], v0[None]), (strict, strict.asarray(C[None]), strict.asarray(v0[None]))):
        ends = []
        out = _iterate(
            A,
            v,
            xp_,
            max_iter=3000,
            tol=1e-6,
            check_every=16,
            powers=False,
            growth=None if growth is None else np.array([growth]),
            callback=lambda d, ends=ends: ends.append(d["iteration"]),
        )
        runs.append((out, ends))
    (V, D, it, cv, g), ends = runs[0]
    (Vs, Ds, its, cvs, gs), ends_s = runs[1]
    assert ends == ends_s and ends[0] == 8  # the first block: 8 steps
    assert cv[0] and cvs[0] and it[0] == its[0]
    np.testing.assert_array_equal(V, to_numpy(Vs))
    np.testing.assert_array_equal(D, to_numpy(Ds))
    assert g[0] == gs[0] and abs(g[0] - math.log2(100.0)) < 0.01  # ||Bv|| ~ lambda_1


@pytest.mark.parametrize("growth", [80.0, -80.0, 40.0, -40.0, None])
def test_wrong_growth_hint_falls_back_to_careful_steps(xp, to_xp, growth, monkeypatch):
    """A growth hint far off sends the first lazy block out of range: it is redone
    carefully. The right hint needs no careful block."""
    import gpuknn.linalg.power as pw

    calls = []
    careful = ps.careful_steps
    monkeypatch.setattr(ps, "careful_steps", lambda *a: calls.append(a[2]) or careful(*a))
    monkeypatch.setattr(pw, "careful_steps", ps.careful_steps)
    C = spd(24, seed=7, decay=0.9)
    v0 = unit(24, 8)
    t_ref, v_ref = sequential_power(C, v0, 1e-10, 5000)
    hint = math.log2(100.0) if growth is None else growth
    V, _, it, cv, g = _iterate(
        to_xp(C[None]),
        to_xp(v0[None]),
        xp,
        max_iter=5000,
        tol=1e-10,
        check_every=16,
        powers=False,
        growth=np.array([hint]),
    )
    assert len(calls) == (0 if growth is None else 1)
    assert cv[0] and it[0] == t_ref
    np.testing.assert_allclose(to_numpy(V)[0], v_ref, atol=1e-12)
    assert abs(g[0] - math.log2(100.0)) < 0.01


@pytest.mark.parametrize("scale", [1e-35, 1e30])
def test_float32_matrices_of_extreme_scale(xp, to_xp, scale, monkeypatch):
    """Growth per step beyond 2^SPREAD: after the first (careful) block the steps run on a
    copy divided by a power of two, in lazy blocks; results as for the unscaled matrix."""
    import gpuknn.linalg.power as pw

    calls = []
    careful = ps.careful_steps
    monkeypatch.setattr(ps, "careful_steps", lambda *a: calls.append(a[2]) or careful(*a))
    monkeypatch.setattr(pw, "careful_steps", ps.careful_steps)
    C = spd(20, seed=9, decay=0.7) / 100
    Cs = (C * scale).astype(np.float32)
    r = power_method(to_xp(Cs), random_state=0, tol=1e-5)
    r1 = power_method(to_xp(C.astype(np.float32)), random_state=0, tol=1e-5)
    w, V = np.linalg.eigh(C)
    assert r.converged and calls == [8, 8]  # one careful first block per run
    assert r.n_iter == r1.n_iter
    assert abs(float(r.eigenvalue) / scale - w[-1]) < 1e-4
    assert abs(abs(float(to_numpy(r.eigenvector) @ V[:, -1])) - 1) < 1e-5


def test_deflation_passes_growth_on(xp, to_xp, monkeypatch):
    """Only the first eigenpair's run starts with a careful block, even when the eigenvalues
    fall by 20x from one to the next (the working matrix is rescaled with each deflation)."""
    calls = []
    careful = ps.careful_steps
    import gpuknn.linalg.power as pw

    monkeypatch.setattr(pw, "careful_steps", lambda *a: calls.append(a[2]) or careful(*a))
    monkeypatch.setattr(ps, "careful_steps", pw.careful_steps)
    for decay, dtype, rtol in ((0.85, np.float64, 1e-9), (0.05, np.float64, 1e-9), (0.85, np.float32, 1e-5)):
        calls.clear()
        C = spd(30, seed=11, decay=decay)
        r = deflated_power_method(to_xp(C.astype(dtype)), 6, tol=1e-10 if dtype == np.float64 else 1e-6, random_state=0)
        w = np.linalg.eigvalsh(C)[::-1][:6]
        np.testing.assert_allclose(to_numpy(r.eigenvalues), w, rtol=rtol)
        assert len(calls) == 1, (decay, dtype)


def test_deflation_of_a_huge_float32_matrix(xp, to_xp):
    C = spd(25, seed=13, decay=0.8)
    r = deflated_power_method(to_xp((C * 1e30).astype(np.float32)), 4, tol=1e-6, random_state=0)
    w = np.linalg.eigvalsh(C)[::-1][:4]
    np.testing.assert_allclose(to_numpy(r.eigenvalues) / 1e30, w, rtol=1e-5)
    assert np.all(np.isfinite(to_numpy(r.residuals)))


def test_callback_sees_every_block():
    seen = []
    C = spd(30, seed=12, decay=0.95)
    r = power_method(C, random_state=0, tol=1e-10, check_every=8, callback=seen.append)
    assert seen[-1]["n_active"] == 0 and seen[-1]["iteration"] >= r.n_iter
    assert all(s["n_active"] == 1 for s in seen[:-1])
    its = [s["iteration"] for s in seen]
    assert its == sorted(its) and np.all(np.diff([0] + its) <= 8)


def test_scale_factors_stay_representable(xp, to_xp):
    """Eigenvalues at the ends of float32's range: the power-of-two factors are capped so
    they stay normal numbers (an infinite factor made NaN matrices and false convergence)."""
    tiny = np.diag([4e-39, 2e-39, 1e-39] + [0.0] * 17).astype(np.float32)  # subnormal entries
    r = power_method(to_xp(tiny), random_state=0, tol=1e-5)
    v = np.abs(to_numpy(r.eigenvector))
    assert r.converged and v[0] > 1 - 1e-6 and v[1] < 1e-4
    for top in ([3e38, 1e38], [3e38, 2.9e38, 2.8e38]):  # 2^E would reach 2^128 unclamped
        huge = np.diag(top + [1.0] + [0.0] * 17).astype(np.float32)
        d = deflated_power_method(to_xp(huge), len(top), random_state=0)
        lam = to_numpy(d.eigenvalues)
        assert np.all(np.isfinite(lam)) and np.all(np.isfinite(to_numpy(d.residuals)))
        np.testing.assert_allclose(lam, top, rtol=1e-6)


@pytest.mark.parametrize("scale", [1e160, 1e-160])
def test_float64_growth_known_at_extreme_scales(xp, to_xp, scale, monkeypatch):
    """The careful block's growth is measured without squaring overflow, so the run goes on
    in lazy blocks (on a rescaled copy) after one careful block."""
    import gpuknn.linalg.power as pw

    calls = []
    careful = ps.careful_steps
    monkeypatch.setattr(ps, "careful_steps", lambda *a: calls.append(a[2]) or careful(*a))
    monkeypatch.setattr(pw, "careful_steps", ps.careful_steps)
    C = spd(30, seed=3, decay=0.9)
    r = power_method(to_xp(C * scale), tol=1e-10, random_state=0)
    r1 = power_method(to_xp(C), tol=1e-10, random_state=0)
    assert len(calls) == 2 and r.n_iter == r1.n_iter  # one careful block per run
    assert float(r.eigenvalue) / scale == pytest.approx(100.0, rel=1e-12)


def test_tiny_matrices_are_scaled_up_exactly_first(xp, to_xp, monkeypatch):
    """A GPU's matrix products flush subnormal numbers to zero (an H200 returned eigenvalue
    0 and a random "converged" vector for such a matrix): entries far below 1 are scaled by a
    power of two before any product, so the run is bit for bit that of the scaled matrix;
    the deflated method too, its eigenvalues and residuals in the caller's scale."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(12, 12))
    C = (A @ A.T / 12).astype(np.float32)
    e = 140  # C * 2^-140 has subnormal float32 entries
    tiny = (C.astype(np.float64) * 2.0**-e).astype(np.float32)
    assert np.abs(tiny).max() < 2.0**-126 * 2**20 and np.any(np.abs(tiny[tiny != 0]) < 2.0**-126)
    import gpuknn.linalg.power as pw

    seen = []
    iterate = pw._iterate
    monkeypatch.setattr(
        pw, "_iterate", lambda B, *a, **k: seen.append(float(np.abs(to_numpy(B)).max())) or iterate(B, *a, **k)
    )
    r = power_method(to_xp(tiny), random_state=0, tol=1e-5)
    assert len(seen) == 1 and 2.0**-24 <= seen[0] < 2.0  # every product sees normal numbers
    power_method(to_xp(C), random_state=0, tol=1e-5)
    assert seen[1] == float(np.abs(C).max())  # the ordinary range is left as it is
    # the same matrix, scaled by the power of two _prescale picks (largest entry in [1, 2))
    k = min(126, -int(np.floor(np.log2(np.abs(tiny).max()))))
    big = (tiny.astype(np.float64) * 2.0**k).astype(np.float32)
    r_big = power_method(to_xp(big), random_state=0, tol=1e-5)
    assert r.converged and r.n_iter == r_big.n_iter
    np.testing.assert_array_equal(to_numpy(r.eigenvector), to_numpy(r_big.eigenvector))
    assert float(r.eigenvalue) == float(np.float32(float(r_big.eigenvalue) * 2.0**-k))
    d = deflated_power_method(to_xp(tiny), 2, random_state=0, tol=1e-5)
    d_big = deflated_power_method(to_xp(big), 2, random_state=0, tol=1e-5)
    np.testing.assert_array_equal(to_numpy(d.eigenvectors), to_numpy(d_big.eigenvectors))
    lam, lam_big = to_numpy(d.eigenvalues).astype(np.float64), to_numpy(d_big.eigenvalues).astype(np.float64)
    np.testing.assert_array_equal(lam, (lam_big * 2.0**-k).astype(np.float32))
    res, res_big = to_numpy(d.residuals).astype(np.float64), to_numpy(d_big.residuals).astype(np.float64)
    # residuals that small round to float32 subnormals or zero: one smallest subnormal apart
    np.testing.assert_allclose(res, res_big * 2.0**-k, rtol=1e-6, atol=2.0**-149)
