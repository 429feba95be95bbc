"""Float32 screening with exact float64 re-rank (gpuknn.ops.screen via kneighbors)."""

import numpy as np
import pytest

import gpuknn.neighbors as nb
from gpuknn._backend import to_numpy
from gpuknn.neighbors import PreparedReference, kneighbors
from gpuknn.ops.screen import score_error_bound, screening_sound


def _both(monkeypatch, fn):
    """fn() with screening forced on, then forced off."""
    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1)
    on = fn()
    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1 << 62)
    off = fn()
    return on, off


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "correlation", "inner"])
def test_screened_equals_float64_search(xp, to_xp, monkeypatch, metric):
    rng = np.random.default_rng(1)
    R = rng.normal(size=(300, 9))
    R[150:180] = R[:30]  # exact duplicates: ties resolved by the lower index
    Q = np.concatenate([rng.normal(size=(40, 9)), R[:10]])
    (d1, i1), (d0, i0) = _both(monkeypatch, lambda: kneighbors(to_xp(Q), to_xp(R), 6, metric=metric,
                                                               working_memory=30_000))
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
    np.testing.assert_allclose(to_numpy(d1), to_numpy(d0), rtol=1e-12, atol=1e-6)
    assert to_numpy(d1).dtype == np.float64


def test_uncertified_rows_are_searched_again(xp, to_xp, monkeypatch):
    # No margin: the k-th and k'-th candidates coincide, so (almost) no row is certified and
    # the float64 fallback must give the same answer; integer data adds exact ties.
    monkeypatch.setattr(nb, "screen_margin", lambda k: 0)
    rng = np.random.default_rng(2)
    R = rng.integers(0, 5, size=(200, 4)).astype(np.float64)
    Q = rng.integers(0, 5, size=(30, 4)).astype(np.float64)
    calls = []
    real = nb._search_chunk
    monkeypatch.setattr(nb, "_search_chunk", lambda *a, **kw: calls.append(kw["screen"]) or real(*a, **kw))
    (d1, i1), (d0, i0) = _both(monkeypatch, lambda: kneighbors(to_xp(Q), to_xp(R), 5))
    assert calls[:2] == [True, False]  # screened, then the fallback for uncertified rows
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
    exact = np.sqrt(((Q[:, None] - R[None]) ** 2).sum(-1))
    np.testing.assert_array_equal(to_numpy(i0), np.argsort(exact, axis=1, kind="stable")[:, :5])


def test_prepared_reference_is_screened_too(xp, to_xp, monkeypatch):
    rng = np.random.default_rng(3)
    R, Q = rng.normal(size=(120, 5)), rng.normal(size=(25, 5))
    ref = PreparedReference(to_xp(R), metric="correlation")
    (d1, i1), (d0, i0) = _both(monkeypatch, lambda: kneighbors(to_xp(Q), ref, 4, metric="correlation"))
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))


def test_huge_values_are_not_screened(monkeypatch):
    monkeypatch.setattr(nb, "_SCREEN_MIN_WORK", 1)
    R = np.array([[0.0], [1e20], [2e20], [3e20], [4e20]] * 4)
    d, i = kneighbors(np.array([[2.1e20]]), R, 3)
    assert i.tolist() == [[2, 7, 12]]  # float32 would overflow; the float64 path is taken
    assert not screening_sound(4e20, np) and screening_sound(1.0, np)


def test_error_bound_holds_for_float32_products():
    rng = np.random.default_rng(4)
    for w in (3, 50, 785):
        A = rng.normal(size=(200, w)) * rng.uniform(0.01, 100, size=(200, 1))
        B = rng.normal(size=(300, w)) * 1e3
        exact = A @ B.T
        approx = (A.astype(np.float32) @ B.astype(np.float32).T).astype(np.float64)
        bound = score_error_bound(np.linalg.norm(A, axis=1), np.linalg.norm(B, axis=1).max(), w)
        err = np.abs(approx - exact).max(axis=1)
        assert np.all(err <= bound)
        assert np.all(bound < 1e-3 * np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1).max())


def test_underflowing_products_are_not_certified(xp, to_xp, monkeypatch):
    # float32 products of 1e-25 values underflow to 0: every float32 score ties, and the
    # underflow term of the bound must send the rows to the float64 search.
    rng = np.random.default_rng(5)
    Q = rng.uniform(0.5, 1.5, size=(30, 20)) * 1e-25
    R = rng.uniform(0.5, 1.5, size=(200, 20)) * 1e-25
    (d1, i1), (d0, i0) = _both(monkeypatch, lambda: kneighbors(to_xp(Q), to_xp(R), 5, metric="inner"))
    np.testing.assert_array_equal(to_numpy(i1), to_numpy(i0))
    np.testing.assert_array_equal(to_numpy(i0), np.argsort(-(Q @ R.T), axis=1, kind="stable")[:, :5])


def test_values_whose_squares_overflow_are_rejected(xp, to_xp):
    from gpuknn import InvalidInputError

    R = np.ones((6, 3))
    R[2, 1] = 1e160
    with pytest.raises(InvalidInputError, match=r"R holds values up to 1e\+160.*rescale"):
        kneighbors(to_xp(np.ones((2, 3))), to_xp(R), 2)
    with pytest.raises(InvalidInputError, match="rescale"):
        PreparedReference(to_xp(R), metric="cosine")
