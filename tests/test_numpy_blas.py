"""gpuknn.linalg.numpy_blas: NumPy's own BLAS, its thread controller and rank-1 update."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpuknn.linalg import deflated_power_method
from gpuknn.linalg import numpy_blas as nb
from gpuknn.linalg.deflation import _deflate


def _wheel_openblas() -> bool:
    """NumPy's BLAS is the pthreads OpenBLAS of its wheel (numpy.libs): ger must be found."""
    c = nb.controller()
    return bool(c) and all("numpy" in os.path.basename(os.path.dirname(lib.filepath))
                           for lib in c.lib_controllers)


@pytest.fixture
def ger_or_skip():
    A = np.zeros((1, 1))
    if not nb.rank1_update(A, np.ones(1), np.ones(1), 1.0):
        if _wheel_openblas():
            pytest.fail("NumPy's wheel OpenBLAS was identified but its ger was not found")
        pytest.skip("NumPy's BLAS is not an OpenBLAS gpuknn can call")
    assert A[0, 0] == 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rank1_update_is_ger(dtype, ger_or_skip):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((7, 5)).astype(dtype)  # m != n: row-major order and lda checked
    x, y = rng.standard_normal(7).astype(dtype), rng.standard_normal(5).astype(dtype)
    want = A.astype(np.float64) - 2.5 * np.outer(x, y).astype(np.float64)
    assert nb.rank1_update(A, x, y, -2.5)
    assert A.dtype == dtype
    np.testing.assert_allclose(A, want, rtol=4 * np.finfo(dtype).eps, atol=8 * np.finfo(dtype).eps)


def test_rank1_update_views_and_large(ger_or_skip):
    """A row block of a stack (a contiguous view) is updated, its neighbours are not; a
    matrix large enough for OpenBLAS's threads too."""
    rng = np.random.default_rng(1)
    S = rng.standard_normal((3, 300, 300))
    before = S.copy()
    v = rng.standard_normal(300)
    assert nb.rank1_update(S[1], v, v, 0.5)
    np.testing.assert_allclose(S[1], before[1] + 0.5 * np.outer(v, v), rtol=1e-14, atol=1e-13)
    np.testing.assert_array_equal(S[[0, 2]], before[[0, 2]])


def _unaligned(A):
    buf = np.zeros(A.nbytes + 1, dtype=np.uint8)
    U = buf[1:].view(A.dtype).reshape(A.shape)
    U[...] = A
    assert not U.flags.aligned and U.flags.c_contiguous
    return U


def test_rank1_update_declines_what_it_cannot_do():
    """Arrays ger cannot take safely are left alone (False): the caller's fallback runs."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((6, 6))
    x = rng.standard_normal(6)
    ro = A.copy()
    ro.flags.writeable = False
    cases = [
        (A[:, ::2].copy(order="F"), x, x[:3]),  # Fortran order
        (A[:, ::2], x, x[:3]),  # strided view
        (ro, x, x),  # read-only
        (A, x.astype(np.float32), x),  # mixed dtypes
        (A.astype(np.float16), x.astype(np.float16), x.astype(np.float16)),  # no ger
        (A.astype(np.int64), x.astype(np.int64), x.astype(np.int64)),
        (A, x[::2], x[:3]),  # shapes do not match
        (A, x[::-1], x),  # negative stride
        (A[None], x, x),  # not a matrix
        (np.zeros((0, 6)), np.zeros(0), x),  # empty
        (np.asarray(A).view(np.matrix), x, x),  # a subclass
        (A, A[0], x),  # x overlaps A
        (A, x, A[2]),  # y overlaps A
        (A.astype(">f8"), x.astype(">f8"), x.astype(">f8")),  # not native byte order
        (_unaligned(A), x, x),
    ]
    for M, a, b in cases:
        keep = np.array(M, copy=True)
        assert not nb.rank1_update(M, a, b, 1.0)
        np.testing.assert_array_equal(np.asarray(M), keep)
    strict = pytest.importorskip("array_api_strict")
    assert not nb.rank1_update(strict.asarray(A), strict.asarray(x), strict.asarray(x), 1.0)


def test_blas_threads_is_a_count():
    assert nb.blas_threads() >= 1
    if nb.controller() is None:
        assert nb.blas_threads() == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [0.0, 3.0])  # plain, and rescaled by 2^-e (the ufunc loop)
def test_deflate_numpy_paths_agree_with_generic(dtype, e, monkeypatch):
    """NumPy's in-place deflation (ger, or the ufunc loop when ger is declined or a rescale
    is due) gives the generic formula's matrix to rounding, and a copy when not owned."""
    strict = pytest.importorskip("array_api_strict")
    import array_api_compat.numpy as npx

    rng = np.random.default_rng(3)
    B = rng.standard_normal((2, 40, 40)).astype(dtype)
    B = (B + np.swapaxes(B, 1, 2)) / 2
    V = rng.standard_normal((2, 40)).astype(dtype)
    lam = np.array([3.0, -1.5], dtype=dtype)
    ee = np.array([e, 0.0])
    want = np.asarray(_deflate(strict.asarray(B), strict.asarray(V), strict.asarray(lam),
                               strict, owned=False, e=ee))
    tol = dict(rtol=8 * np.finfo(dtype).eps, atol=8 * np.finfo(dtype).eps * np.abs(want).max())
    calls = []
    real = nb.rank1_update
    monkeypatch.setattr("gpuknn.linalg.deflation.rank1_update",
                        lambda *a: calls.append(a[0].shape) or real(*a))
    Bc = B.copy()
    got = _deflate(Bc, V, lam, npx, owned=False, e=ee)
    assert got is not Bc and np.array_equal(Bc, B)  # not owned: the input is left alone
    np.testing.assert_allclose(got, want, **tol)
    assert len(calls) == (1 if e else 2)  # the rescaled member takes the ufunc loop
    got = _deflate(Bc, V, lam, npx, owned=True, e=ee)
    assert got is Bc  # owned: updated in place
    np.testing.assert_allclose(got, want, **tol)
    monkeypatch.setattr("gpuknn.linalg.deflation.rank1_update", lambda *a: False)
    np.testing.assert_allclose(_deflate(B.copy(), V, lam, npx, owned=True, e=ee), want, **tol)


def test_deflation_without_ger_finds_the_same_pairs(monkeypatch):
    """The whole solver with ger declined (a NumPy whose BLAS is not reachable) agrees with
    the default run and with eigh."""
    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    C = (Q * 100.0 * 0.7 ** np.arange(30)) @ Q.T
    C = (C + C.T) / 2
    fast = deflated_power_method(C, 5, tol=1e-12, random_state=0)
    monkeypatch.setattr("gpuknn.linalg.deflation.rank1_update", lambda *a: False)
    slow = deflated_power_method(C, 5, tol=1e-12, random_state=0)
    want = np.linalg.eigvalsh(C)[::-1][:5]
    np.testing.assert_allclose(fast.eigenvalues, want, rtol=1e-10)
    np.testing.assert_allclose(slow.eigenvalues, want, rtol=1e-10)
    np.testing.assert_allclose(np.abs(fast.eigenvectors.T @ slow.eigenvectors).diagonal(), 1.0,
                               atol=1e-10)
