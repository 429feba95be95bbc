"""gpuknn.linalg.numpy_blas: NumPy's own BLAS, its thread controller and rank-1 update."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpuknn.linalg import deflated_power_method
from gpuknn.linalg import numpy_blas as nb
from gpuknn.linalg.deflation import _deflate
from test_linalg import spd_with_gap


def _wheel_openblas() -> bool:
    """NumPy's BLAS is the OpenBLAS of its wheel (numpy.libs): ger must be found."""
    lib = nb._numpy_openblas()
    return lib is not None and "numpy" in os.path.basename(os.path.dirname(lib.filepath))


@pytest.fixture
def fresh_caches():
    """Clear the module's cached discoveries before and after a test that fakes them."""
    def clear():
        for f in (nb._numpy_openblas, nb.controller, nb._ger):
            f.cache_clear()
    clear()
    yield
    clear()


class Recorder:
    """Stands in for a cblas ``?ger``: records its arguments, touches nothing."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)


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


def test_rank1_update_declines_what_it_cannot_do(monkeypatch):
    """Arrays ger cannot take safely are left alone (False) and never reach BLAS (a recording
    stand-in for ger, so this holds whatever BLAS NumPy has): the caller's fallback runs."""
    ger = Recorder()
    monkeypatch.setattr(nb, "_ger", lambda: {np.dtype(np.float64): (ger, 10**9),
                                             np.dtype(np.float32): (ger, 10**9)})
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
    assert ger.calls == []
    # what qualifies reaches ger, row-major, with lda = n
    B = np.zeros((6, 4))
    assert nb.rank1_update(B, x, x[:4], -2.0)
    (args,) = ger.calls
    assert args[:4] == (101, 6, 4, -2.0) and args[5] == args[7] == 1 and args[9] == 4
    assert (args[4], args[6], args[8]) == (x.ctypes.data, x.ctypes.data, B.ctypes.data)


def test_rank1_update_respects_blas_integer_range(monkeypatch):
    ger = Recorder()
    monkeypatch.setattr(nb, "_ger", lambda: {np.dtype(np.float64): (ger, 5)})
    assert not nb.rank1_update(np.zeros((6, 2)), np.zeros(6), np.zeros(2), 1.0)
    assert not nb.rank1_update(np.zeros((2, 6)), np.zeros(2), np.zeros(6), 1.0)
    assert ger.calls == []
    assert nb.rank1_update(np.zeros((5, 5)), np.zeros(5), np.zeros(5), 1.0)
    assert len(ger.calls) == 1


class FakeLib:
    """threadpoolctl's view of one loaded BLAS."""

    def __init__(self, filepath, internal_api="openblas", version="0.3.31", layer="pthreads"):
        self.filepath, self.internal_api, self.version = filepath, internal_api, version
        self.threading_layer = layer


def _numpy_home():
    return os.path.dirname(os.path.realpath(np.__file__))


def test_numpys_blas_is_the_one_in_numpys_folders(monkeypatch):
    home = _numpy_home()
    wheel = FakeLib(home + ".libs/libscipy_openblas64_-x.so")
    dotlibs = FakeLib(home + "/.dylibs/libscipy_openblas64_.dylib")
    scipy = FakeLib(os.path.dirname(home) + "/scipy.libs/libscipy_openblas-y.so")
    system = FakeLib("/usr/lib/x86_64-linux-gnu/libopenblas.so.0")
    assert nb._is_numpys([scipy, wheel]) == [wheel]
    assert nb._is_numpys([dotlibs, scipy]) == [dotlibs]
    assert nb._is_numpys([scipy, system]) == []  # two candidates, neither in NumPy's folders
    # one library outside NumPy's folders: NumPy's only if its build names it, same version
    built = {"Build Dependencies": {"blas": {"name": "openblas", "version": "0.3.31"}}}
    monkeypatch.setattr(np.__config__, "CONFIG", built, raising=False)
    assert nb._is_numpys([system]) == [system]
    assert nb._is_numpys([system, FakeLib("/opt/blas/libopenblas.so")]) == []  # ambiguous
    assert nb._is_numpys([scipy]) == []  # another package's bundled copy, whatever it says
    assert nb._is_numpys([FakeLib(system.filepath, version="0.3.20")]) == []
    assert nb._is_numpys([FakeLib("/opt/mkl/libmkl_rt.so", internal_api="mkl")]) == []
    monkeypatch.setattr(np.__config__, "CONFIG", {}, raising=False)
    assert nb._is_numpys([system]) == []


@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize("libs, found, threads", [
    (["wheel"], True, True),
    (["wheel", "scipy"], True, True),
    (["wheel-openmp"], True, False),  # ger yes, thread limits no (per calling thread)
    (["mkl"], False, False),
    ([], False, False),
    (None, False, False),  # threadpoolctl fails
])
def test_discovery_of_numpys_openblas(libs, found, threads, monkeypatch):
    pytest.importorskip("threadpoolctl")
    import threadpoolctl

    home = _numpy_home()
    made = {
        "wheel": FakeLib(home + ".libs/libscipy_openblas64_-x.so"),
        "wheel-openmp": FakeLib(home + ".libs/libscipy_openblas64_-x.so", layer="openmp"),
        "scipy": FakeLib(os.path.dirname(home) + "/scipy.libs/libscipy_openblas-y.so"),
        "mkl": FakeLib(home + ".libs/libmkl_rt.so", internal_api="mkl"),
    }

    class FakeController:
        def __init__(self):
            if libs is None:
                raise RuntimeError("cannot inspect")
            self.lib_controllers = [made[k] for k in libs]

        def select(self, **kw):
            return self

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", FakeController)
    lib = nb._numpy_openblas()
    assert (lib is not None) == found
    if found:
        assert lib is made[libs[0]]
    assert (nb.controller() is not None) == threads


class FakeDLL:
    """A shared library with chosen symbols; ``openblas_get_config`` returns ``config``."""

    def __init__(self, prefix, suffix, config, gers=("s", "d")):
        def get_config():
            return config
        setattr(self, f"{prefix}openblas_get_config{suffix}", get_config)
        for c in gers:
            setattr(self, f"{prefix}cblas_{c}ger{suffix}", type("F", (), {})())


@pytest.mark.parametrize("prefix, suffix, config, width", [
    ("scipy_", "64_", b"OpenBLAS 0.3.31 USE64BITINT DYNAMIC_ARCH", 64),  # NumPy's wheels
    ("scipy_", "", b"OpenBLAS 0.3.31 DYNAMIC_ARCH", 32),  # SciPy's wheels
    ("", "", b"OpenBLAS 0.3.21 NO_AFFINITY", 32),  # a system library
    ("", "64_", b"OpenBLAS 0.3.21 USE64BITINT", 64),
])
def test_ger_symbols_and_integer_width(prefix, suffix, config, width):
    import ctypes

    got = nb._ger_functions(FakeDLL(prefix, suffix, config))
    assert set(got) == {np.dtype(np.float32), np.dtype(np.float64)}
    integer = ctypes.c_int64 if width == 64 else ctypes.c_int
    for dtype, real in ((np.float32, ctypes.c_float), (np.float64, ctypes.c_double)):
        f, limit = got[np.dtype(dtype)]
        assert f.argtypes == [ctypes.c_int, integer, integer, real, ctypes.c_void_p, integer,
                              ctypes.c_void_p, integer, ctypes.c_void_p, integer]
        assert limit == 2 ** (width - 1) - 1


def test_ger_symbols_not_identified():
    assert nb._ger_functions(FakeDLL("scipy_", "64_", b"BLIS 1.0 USE64BITINT")) == {}
    assert nb._ger_functions(FakeDLL("scipy_", "64_", None)) == {}
    assert nb._ger_functions(FakeDLL("scipy_", "64_", b"OpenBLAS 0.3", gers=("s",))) == {}
    assert nb._ger_functions(FakeDLL("mkl_", "", b"OpenBLAS 0.3")) == {}  # no known prefix


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
                        lambda *a: calls.append(real(*a)) or calls[-1])
    Bc = B.copy()
    got = _deflate(Bc, V, lam, npx, owned=False, e=ee)
    assert got is not Bc and np.array_equal(Bc, B)  # not owned: the input is left alone
    np.testing.assert_allclose(got, want, **tol)
    assert len(calls) == (1 if e else 2)  # the rescaled member takes the ufunc loop
    if _wheel_openblas():
        assert all(calls)  # and ger took the others
    got = _deflate(Bc, V, lam, npx, owned=True, e=ee)
    assert got is Bc  # owned: updated in place
    np.testing.assert_allclose(got, want, **tol)
    monkeypatch.setattr("gpuknn.linalg.deflation.rank1_update", lambda *a: False)
    np.testing.assert_allclose(_deflate(B.copy(), V, lam, npx, owned=True, e=ee), want, **tol)


def test_deflation_without_ger_finds_the_same_pairs(monkeypatch):
    """The whole solver with ger declined (a NumPy whose BLAS is not reachable) agrees with
    the default run and with eigh."""
    C = spd_with_gap(30, seed=4, decay=0.7)
    fast = deflated_power_method(C, 5, tol=1e-12, random_state=0)
    monkeypatch.setattr("gpuknn.linalg.deflation.rank1_update", lambda *a: False)
    slow = deflated_power_method(C, 5, tol=1e-12, random_state=0)
    want = np.linalg.eigvalsh(C)[::-1][:5]
    np.testing.assert_allclose(fast.eigenvalues, want, rtol=1e-10)
    np.testing.assert_allclose(slow.eigenvalues, want, rtol=1e-10)
    np.testing.assert_allclose(np.abs(fast.eigenvectors.T @ slow.eigenvectors).diagonal(), 1.0,
                               atol=1e-10)
