"""Library-specific fast paths: the same promises as the generic branch, on every backend."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn._delegation import dot64, matmul_unit_roundoff, sqdist64, take_rows


@pytest.mark.parametrize("d", [3, 100, 784, 8193, 20000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pair_arithmetic_depends_on_the_pair_alone(backend, d, dtype):
    # The same two rows at every position of batches of several shapes give the same bits:
    # what makes exact duplicates tie wherever they are searched.
    rng = np.random.default_rng(d)
    r = (rng.normal(size=d) * 100 + 5).astype(dtype)
    q = rng.normal(size=d)
    seen_dot, seen_sq = set(), set()
    for n in (1, 5, 17, 64):
        rows = backend.asarray(np.repeat(r[None, :], n, axis=0))
        rows3 = backend.asarray(np.repeat(r[None, None, :], 2 * n, axis=0).reshape(2, n, d))
        qb = backend.asarray(q)
        for out in (dot64(rows, qb), dot64(rows3, qb[None, None, :])):
            seen_dot.update(host(out).ravel().tolist())
        for out in (sqdist64(rows, qb), sqdist64(rows3, qb[None, None, :])):
            seen_sq.update(host(out).ravel().tolist())
    assert len(seen_dot) == 1 and len(seen_sq) == 1
    np.testing.assert_allclose(seen_dot.pop(), r.astype(np.float64) @ q, rtol=1e-12)
    np.testing.assert_allclose(seen_sq.pop(), ((r.astype(np.float64) - q) ** 2).sum(), rtol=1e-12)


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
    assert matmul_unit_roundoff(xp.float64, xp) == (2.0**-53, 2.0**-1075)
    assert matmul_unit_roundoff(xp.float32, xp)[0] == 2.0**-24
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


def test_kth_largest_order_rows_and_bincount(backend):
    from gpuknn._delegation import bincount, kth_largest, order_rows

    S = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, -1.0, 5.0, 4.0]])
    assert_xp(kth_largest(backend.asarray(S), 2), np.array([2.0, 4.0]), backend)
    rows, vals = np.array([1, 0, 0, 1, 0]), np.array([5.0, 1.0, 2.0, 5.0, 2.0])
    assert_xp(order_rows(backend.asarray(rows), backend.asarray(vals)), np.array([2, 4, 1, 0, 3]), backend)
    ties = np.array([0, 0, 9, 0, 3])
    assert_xp(order_rows(backend.asarray(rows), backend.asarray(vals), backend.asarray(ties)),
              np.array([4, 2, 1, 0, 3]), backend)
    assert_xp(bincount(backend.asarray(np.array([0, 2, 2, -1, 2])), 3), np.array([1, 0, 3]), backend)
