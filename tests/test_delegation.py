"""Library-specific fast paths: the same promises as the generic branch, on every backend."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn._delegation import (
    dot64,
    masked_dot64,
    masked_sum64,
    matmul_unit_roundoff,
    prefix_dot64,
    sqdist64,
    sum64,
    take_rows,
    tree_sums,
)


@pytest.mark.parametrize("d", [3, 100, 784, 8193, 20000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pair_arithmetic_depends_on_the_pair_alone(backend, d, dtype):
    # The same two rows at every position of batches of many sizes and shapes give the same
    # bits: what makes exact duplicates tie wherever they are searched. Batches up to a few
    # thousand rows, because torch's CUDA reductions change their order with the number of
    # rows reduced at once (a sum over a few rows splits each row across threads).
    rng = np.random.default_rng(d)
    r = (rng.normal(size=d) * 100 + 5).astype(dtype)
    q = rng.normal(size=d)
    qb = backend.asarray(q)
    seen_dot, seen_sq, seen_sum = set(), set(), set()
    for n in sorted({1, 5, 17, 64, 1000, min(5000, 1_500_000 // d)}):
        batch = (rng.normal(size=(n, d)) * 100).astype(dtype)
        at = sorted({0, n // 2, n - 1})
        batch[at] = r
        rows = backend.asarray(batch)
        rows3 = backend.asarray(np.repeat(batch[None], 2, axis=0))
        for out in (dot64(rows, qb), dot64(rows3, qb[None, None, :])[1, ...]):
            seen_dot.update(host(out)[at].tolist())
        for out in (sqdist64(rows, qb), sqdist64(rows3, qb[None, None, :])[0, ...]):
            seen_sq.update(host(out)[at].tolist())
        seen_sum.update(host(sum64(rows))[at].tolist())
    assert len(seen_dot) == 1 and len(seen_sq) == 1 and len(seen_sum) == 1
    np.testing.assert_allclose(seen_dot.pop(), r.astype(np.float64) @ q, rtol=1e-12)
    np.testing.assert_allclose(seen_sq.pop(), ((r.astype(np.float64) - q) ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(seen_sum.pop(), r.astype(np.float64).sum(), rtol=1e-12)


def test_pair_arithmetic_shapes_and_dtype(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = dot64(backend.asarray(a), backend.asarray(np.ones(4)))
    assert_xp(out, a.sum(1).astype(np.float64), backend, dtype=backend.xp.float64)
    out = sqdist64(backend.asarray(a), backend.asarray(np.full(4, 1e6)))
    assert_xp(out, ((a.astype(np.float64) - 1e6) ** 2).sum(1), backend, dtype=backend.xp.float64)


def test_take_rows_of_a_column_slice(backend):
    Z = np.arange(40.0).reshape(8, 5)
    out = take_rows(backend.asarray(Z)[:, :2], backend.asarray(np.array([6, 1, 6])))
    assert_xp(out, Z[[6, 1, 6], :2], backend)


def test_matmul_unit_roundoff(backend, monkeypatch):
    xp = backend.xp
    dev = backend.device
    assert matmul_unit_roundoff(xp.float64, xp, dev) == (2.0**-53, 2.0**-1075)
    assert matmul_unit_roundoff(xp.float32, xp, dev)[0] == 2.0**-24
    if backend.name.startswith("torch"):
        import torch

        old = torch.get_float32_matmul_precision()
        try:
            torch.set_float32_matmul_precision("high")
            assert matmul_unit_roundoff(xp.float32, xp)[0] == 2.0**-11
            torch.set_float32_matmul_precision("medium")
            assert matmul_unit_roundoff(xp.float32, xp)[0] == 2.0**-8
        finally:
            torch.set_float32_matmul_precision(old)


@pytest.fixture
def torch_fp32_switches():
    """torch's new per-backend float32 matmul switches, put back as they were (once they are
    used, torch's old getters raise until every switch is back to "none")."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        pytest.skip(f"torch {torch.__version__} has no fp32_precision switches")
    switches = [torch.backends, torch.backends.cuda.matmul, torch.backends.mkldnn.matmul]
    saved = [s.fp32_precision for s in switches]
    yield torch
    for s, v in zip(switches, saved, strict=True):
        s.fp32_precision = v


def test_tf32_through_torchs_new_switch_is_read_not_crashed_on(torch_fp32_switches):
    # torch.backends.cuda.matmul.fp32_precision = "tf32" makes the old getters raise
    # RuntimeError ("mix of the legacy and new APIs"): every float32 torch search crashed.
    torch = torch_fp32_switches
    import array_api_compat.torch as tx

    import gpuknn

    torch.backends.cuda.matmul.fp32_precision = "tf32"
    with pytest.raises(RuntimeError):
        torch.get_float32_matmul_precision()  # the old getter this used to call
    assert matmul_unit_roundoff(tx.float32, tx, torch.device("cuda", 0))[0] == 2.0**-11
    assert matmul_unit_roundoff(tx.float32, tx, torch.device("cpu"))[0] == 2.0**-24
    assert matmul_unit_roundoff(tx.float32, tx)[0] == 2.0**-11  # device unknown: the looser
    Q, R = torch.randn(3, 4, generator=torch.Generator().manual_seed(0)), torch.randn(50, 4)
    d, idx = gpuknn.kneighbors(Q, R, 2)
    ref = np.argsort(((Q.numpy()[:, None, :] - R.numpy()[None]) ** 2).sum(-1), axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(idx.numpy(), ref)

    # "none" defers to the global switch; the CPU's own switch can ask for bfloat16.
    torch.backends.cuda.matmul.fp32_precision = "none"
    torch.backends.fp32_precision = "tf32"
    assert matmul_unit_roundoff(tx.float32, tx, torch.device("cuda", 0))[0] == 2.0**-11
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    assert matmul_unit_roundoff(tx.float32, tx, torch.device("cpu"))[0] == 2.0**-8
    assert matmul_unit_roundoff(tx.float64, tx, torch.device("cpu"))[0] == 2.0**-53


def test_an_unreadable_tf32_switch_gives_the_loosest_bound(torch_fp32_switches, monkeypatch):
    torch = torch_fp32_switches
    import array_api_compat.torch as tx

    class Broken:
        @property
        def fp32_precision(self):
            raise RuntimeError("cannot read")

    monkeypatch.setattr(torch.backends.cuda, "matmul", Broken())
    assert matmul_unit_roundoff(tx.float32, tx, torch.device("cuda", 0))[0] == 2.0**-8


def test_cupy_compute_type_is_read_on_every_call(backend):
    # CuPy reads CUPY_TF32 once, at its first GEMM, and set_compute_type overrides it: the
    # bound must follow the compute type CuPy will use, not the variable.
    if backend.name != "cupy":
        pytest.skip("CuPy only")
    import cupy
    from cupy._core import _routines_linalg as linalg

    xp = backend.xp
    old = linalg.get_compute_type(cupy.float32)
    try:
        linalg.set_compute_type(cupy.float32, linalg.COMPUTE_TYPE_TF32)
        assert matmul_unit_roundoff(xp.float32, xp)[0] == 2.0**-11
        linalg.set_compute_type(cupy.float32, linalg.COMPUTE_TYPE_DEFAULT)
        assert matmul_unit_roundoff(xp.float32, xp)[0] == 2.0**-24
    finally:
        linalg.set_compute_type(cupy.float32, old)


def test_kth_largest_order_rows_and_bincount(backend):
    from gpuknn._delegation import bincount, kth_largest, order_rows

    S = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, -1.0, 5.0, 4.0]])
    assert_xp(kth_largest(backend.asarray(S), 2), np.array([2.0, 4.0]), backend)
    rows, vals = np.array([1, 0, 0, 1, 0]), np.array([5.0, 1.0, 2.0, 5.0, 2.0])
    assert_xp(order_rows(backend.asarray(rows), backend.asarray(vals)), np.array([2, 4, 1, 0, 3]), backend)
    ties = np.array([0, 0, 9, 0, 3])
    assert_xp(
        order_rows(backend.asarray(rows), backend.asarray(vals), backend.asarray(ties)),
        np.array([4, 2, 1, 0, 3]),
        backend,
    )
    assert_xp(bincount(backend.asarray(np.array([0, 2, 2, -1, 2])), 3), np.array([1, 0, 3]), backend)
    # nothing to count (CuPy's own bincount raises there), or only negatives
    empty = backend.asarray(np.zeros(0, dtype=np.int64))
    assert_xp(bincount(empty, 4), np.zeros(4, dtype=np.int64), backend)
    assert_xp(bincount(backend.asarray(np.array([-1, -1])), 2), np.zeros(2, dtype=np.int64), backend)


@pytest.mark.parametrize("k", [1, 7, 600])  # 600: past CuPy's selection limit (a sort there)
def test_kth_largest_any_k(backend, k):
    from gpuknn._delegation import kth_largest

    S = np.random.default_rng(k).normal(size=(9, 700))
    S[3, :] = 1.5  # a row of ties
    assert_xp(kth_largest(backend.asarray(S), k), -np.sort(-S, axis=1)[:, k - 1], backend)


@pytest.mark.parametrize("first", [True, False])
def test_gram_accumulate_in_place(backend, first):
    from gpuknn._delegation import gram_accumulate

    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(7, 3)).astype(np.float32)
    G0 = rng.normal(size=(5, 7)).astype(np.float32)
    flat = backend.asarray(np.concatenate([G0.ravel(), np.zeros(6, dtype=np.float32)]))
    G = backend.xp.reshape(flat[:35], (5, 7))  # a contiguous prefix of a larger buffer
    out = gram_accumulate(G, backend.asarray(A), backend.asarray(B), first=first)
    want = A @ B.T + (0 if first else G0)
    assert_xp(out, want, backend, dtype=backend.xp.float32, exact=False, rtol=1e-5, atol=1e-5)


def test_scale_columns_and_add_outer(backend):
    from gpuknn._delegation import add_outer, scale_columns

    rng = np.random.default_rng(4)
    G, w = rng.normal(size=(4, 6)), rng.normal(size=6)
    x, y = rng.normal(size=4), rng.normal(size=6)
    out = backend.asarray(np.zeros((4, 6)))
    S = scale_columns(backend.asarray(G), backend.asarray(w), out=out)
    assert_xp(S, G * w, backend, exact=False, rtol=1e-15)
    S = add_outer(S, -2.0, backend.asarray(x), backend.asarray(y))
    assert_xp(S, G * w - 2.0 * np.outer(x, y), backend, exact=False, rtol=1e-14, atol=1e-14)
    shifted = scale_columns(backend.asarray(G), backend.asarray(w), shift=True)
    assert_xp(shifted, G + w, backend)


def test_mask_counts(backend):
    from gpuknn._delegation import mask_counts

    M = np.zeros((3, 5), dtype=bool)
    M[0, :4] = M[2, 1] = True
    total, widest, per_row = mask_counts(backend.asarray(M))
    assert total == 5
    if per_row is not None:  # a device: all three in one transfer
        assert widest == 4
        assert_xp(per_row, np.array([4, 0, 1]), backend)


def test_on_input_device_enters_the_inputs_scope(monkeypatch):
    """Public entry points (functions, estimator methods, generators step by step) run
    inside ``device_scope`` of their arguments -- on CuPy, the input's CUDA device."""
    import contextlib

    import gpuknn
    from gpuknn._delegation import device  # where on_input_device looks device_scope up

    entered = []

    @contextlib.contextmanager
    def recording(*arrays):
        entered.append(arrays)
        yield

    monkeypatch.setattr(device, "device_scope", recording)
    X = np.arange(20.0).reshape(10, 2)
    Q = X[:3]
    gpuknn.kneighbors(Q, X, 2)
    assert len(entered) == 1 and entered[0][0] is Q and entered[0][1] is X
    gpuknn.KNeighborsClassifier(1).fit(X, np.arange(10) % 2)
    assert len(entered) == 2 and any(a is X for a in entered[1])
    chunks = list(gpuknn.pairwise_distances_chunked(X, X, working_memory=64 / 2**20))  # 64 bytes: many chunks
    # creation, each step, and the step that ends it
    assert len(chunks) > 1 and len(entered) == 2 + 1 + len(chunks) + 1
    assert all(e[0] is X for e in entered[2:])


def test_device_scope_is_a_null_context_off_cupy():
    import contextlib

    from gpuknn._delegation import device_scope

    assert isinstance(device_scope(np.zeros(2), (np.zeros(1),), None), contextlib.nullcontext)


def test_symmetric_eigh_does_not_depend_on_the_blas_thread_count(backend):
    """The last bits of LAPACK's eigenvectors moved with the thread count (they changed a
    study's (k, p) table between a Dask worker and one process): no longer."""
    from threadpoolctl import threadpool_limits

    from gpuknn._delegation import symmetric_eigh

    rng = np.random.default_rng(0)
    A = rng.standard_normal((400, 300)).astype(np.float32)
    C = backend.asarray(A.T @ A / 400)
    with threadpool_limits(limits=1, user_api="blas"):
        w1, V1 = (host(a) for a in symmetric_eigh(C))
    for threads in (2, 4):
        with threadpool_limits(limits=threads, user_api="blas"):
            w, V = symmetric_eigh(C)
        assert_xp(w, w1, backend, dtype=C.dtype)  # bit for bit
        assert_xp(V, V1, backend, dtype=C.dtype)
    np.testing.assert_allclose(w1, np.linalg.eigvalsh(A.T.astype(np.float64) @ A / 400), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_abs_is_the_value_check(backend, dtype):
    """max |X| on every backend: finite exactly when every value is (NaN and either
    infinity show), 0 for an empty array -- validation's one transfer."""
    from gpuknn._delegation import max_abs

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 7)).astype(dtype)
    X[17, 3] = -9.5
    assert max_abs(backend.asarray(X), backend.xp) == 9.5
    for bad in (np.nan, np.inf, -np.inf):
        Y = X.copy()
        Y[123, 6] = bad
        got = max_abs(backend.asarray(Y), backend.xp)
        assert np.isnan(got) if np.isnan(bad) else got == np.inf
    assert max_abs(backend.asarray(X[:0]), backend.xp) == 0.0


@pytest.mark.parametrize("d", [1, 2, 3, 8, 9, 100, 715])
def test_prefix_and_masked_sums_are_each_lengths_own(backend, d):
    """prefix_dot64 (every prefix of a grid at once) and, where the tree allows it,
    masked_dot64/masked_sum64 (rows of many lengths at once) give each length the bits of
    dot64/sum64 on that length alone, signs of zero included."""
    rng = np.random.default_rng(d)
    a = (rng.normal(size=(40, d)) * 100).astype(np.float32)
    a[3], a[4] = -0.0, 0.0
    ps = sorted({1, d, *rng.integers(1, d + 1, size=min(d, 8)).tolist()})
    A = backend.asarray(a)
    for B in (A, backend.asarray(np.ones(d, dtype=np.float32))):
        got = prefix_dot64(A, B, ps)
        assert_xp(got, host(got), backend, dtype=backend.xp.float64)
        assert tuple(got.shape) == (40, len(ps))
        for j, p in enumerate(ps):
            col, want = host(got)[:, j], host(dot64(A[:, :p], B[..., :p]))
            assert np.array_equal(col, want) and np.array_equal(np.signbit(col), np.signbit(want))
    if not tree_sums(backend.xp):
        return
    lengths = rng.integers(1, d + 1, size=40)
    L = backend.asarray(lengths)
    dots, sums = host(masked_dot64(A, A, L)), host(masked_sum64(A, L))
    for i, n in enumerate(lengths.tolist()):
        assert dots[i] == host(dot64(A[i, :n], A[i, :n])) and sums[i] == host(sum64(A[i, :n])), (i, n)
        assert np.signbit(sums[i]) == np.signbit(host(sum64(A[i, :n])))
