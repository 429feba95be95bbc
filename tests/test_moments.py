"""Covariance from mergeable moments (gpuknn.linalg.moments) on every backend: any split of
the rows and any merge tree gives the single-process covariance; offset data take the
centred second pass and get the accurate answer."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn.errors import InvalidInputError
from gpuknn.linalg import (
    Moments,
    centred_moments,
    covariance_from_centred,
    covariance_from_moments,
    merge_moments,
    moments,
)
from gpuknn.linalg.covariance import covariance_and_mean


def _splits(n, rng, parts):
    """Sorted cut points splitting n rows into ``parts`` chunks, some possibly empty."""
    return np.concatenate([[0], np.sort(rng.integers(0, n + 1, parts - 1)), [n]])


def _tree(parts, rng):
    """Merge ``parts`` in a random binary tree (random pairs of neighbours, until one is left)."""
    parts = list(parts)
    while len(parts) > 1:
        i = int(rng.integers(0, len(parts) - 1))
        parts[i : i + 2] = [merge_moments(parts[i], parts[i + 1])]
    return parts[0]


def _chunk_moments(backend, X, cuts, mean=None):
    Xb = backend.asarray(X)
    f = moments if mean is None else (lambda c: centred_moments(c, mean))
    return [f(Xb[int(a) : int(b), :]) for a, b in zip(cuts[:-1], cuts[1:])]


def _full(backend, X):
    """Covariance through the moments: one pass, and the centred pass when the guard fails."""
    rng = np.random.default_rng(1)
    cuts = _splits(X.shape[0], rng, 5)
    C, mean, ok = covariance_from_moments(_tree(_chunk_moments(backend, X, cuts), rng))
    if not ok:
        C, mean = covariance_from_centred(_tree(_chunk_moments(backend, X, cuts, mean), rng), mean)
    return C, mean, ok


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_any_split_and_merge_tree_gives_the_whole(backend, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(0.5, 2.0, (97, 6))
    oracle = np.cov(X, rowvar=False)
    C_whole, mean_whole = covariance_and_mean(backend.asarray(X))
    for parts in (1, 2, 7, 20):
        cuts = _splits(X.shape[0], rng, parts)
        m = _tree(_chunk_moments(backend, X, cuts), rng)
        assert m.n == X.shape[0]
        C, mean, ok = covariance_from_moments(m)
        assert ok
        assert_xp(C, oracle, backend, dtype=backend.xp.float64, exact=False, rtol=1e-12, atol=1e-13)
        assert_xp(C, host(C_whole), backend, exact=False, rtol=1e-12, atol=1e-13)
        assert_xp(mean, X.mean(axis=0), backend, dtype=backend.xp.float64, exact=False, rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(host(C), host(C).T)  # exactly symmetric


def test_exact_data_give_bitwise_equal_moments_for_every_tree(backend):
    """Small integers: every sum is exact, so every split and tree gives the same bits."""
    rng = np.random.default_rng(3)
    X = rng.integers(-20, 20, (64, 5)).astype(np.float32)
    want = moments(backend.asarray(X))
    for parts in (2, 3, 9):
        m = _tree(_chunk_moments(backend, X, _splits(64, rng, parts)), rng)
        assert_xp(m.gram, X.astype(np.float64).T @ X.astype(np.float64), backend, dtype=backend.xp.float64)
        assert_xp(m.sums, host(want.sums), backend)
    assert_xp(
        covariance_from_moments(m)[0], np.cov(X.astype(np.float64), rowvar=False), backend, exact=False, rtol=1e-14
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_offset_data_take_the_centred_pass(backend, dtype):
    rng = np.random.default_rng(4)
    X64 = rng.normal(0.0, 1.0, (300, 4)) + np.array([1e4, -3e5, 0.0, 7.0])
    X = X64.astype(dtype)
    oracle = np.cov(X.astype(np.float64), rowvar=False)
    rng2 = np.random.default_rng(0)
    cuts = _splits(300, rng2, 6)
    C, mean, ok = covariance_from_moments(_tree(_chunk_moments(backend, X, cuts), rng2))
    assert not ok and C is None  # the shortcut would cancel: the caller must make the second pass
    C, mean2, ok = _full(backend, X)
    assert not ok
    tol = 1e-11 if dtype == np.float64 else 2e-5
    assert_xp(C, oracle, backend, dtype=backend.xp.float64, exact=False, rtol=tol, atol=tol * np.abs(oracle).max())
    C_whole, _ = covariance_and_mean(backend.asarray(X))
    assert_xp(C, np.asarray(covariance_and_mean(X)[0]), backend, exact=False, rtol=tol, atol=tol)
    assert_xp(C_whole, host(C), backend, exact=False, rtol=tol, atol=tol)


def test_constant_column_has_zero_variance(backend):
    X = np.column_stack([np.full(50, 123456.789), np.arange(50.0)])
    C, _, ok = _full(backend, X)
    assert not ok
    assert abs(float(host(C)[0, 0])) < 1e-9 and abs(float(host(C)[0, 1])) < 1e-9


def test_empty_chunks_and_errors(backend):
    xp = backend.xp
    X = backend.asarray(np.arange(6.0).reshape(3, 2))
    empty = moments(X[:0, :])
    assert empty.n == 0
    assert_xp(empty.gram, np.zeros((2, 2)), backend, dtype=xp.float64)
    m = merge_moments(empty, moments(X))
    assert m.n == 3
    with pytest.raises(InvalidInputError, match="2 and 3 columns"):
        merge_moments(m, moments(backend.asarray(np.ones((2, 3)))))
    with pytest.raises(InvalidInputError, match="n_samples - correction"):
        covariance_from_moments(moments(X[:1, :]))
    with pytest.raises(InvalidInputError, match="NaN or infinity"):
        moments(backend.asarray(np.array([[1.0, np.nan], [0.0, 1.0]])))
    with pytest.raises(InvalidInputError, match="not finite"):
        covariance_from_moments(Moments(2, m.sums * np.inf, m.gram))
    with pytest.raises(InvalidInputError, match="mean has shape"):
        centred_moments(X, m.sums[:1])
    with pytest.raises(InvalidInputError, match="2-D"):
        moments(X[0, :])


def test_integers_are_promoted(backend):
    X = np.arange(12).reshape(4, 3)
    m = moments(backend.asarray(X))
    assert_xp(m.gram, (X.T @ X).astype(np.float64), backend, dtype=backend.xp.float64)
    C, mean, ok = covariance_from_moments(m, correction=0)
    assert ok
    assert_xp(C, np.cov(X, rowvar=False, ddof=0), backend, exact=False, rtol=1e-14)
