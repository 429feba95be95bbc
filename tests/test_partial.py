"""Partial searches and their merge (gpuknn.ops.partial)."""

import numpy as np
import pytest
from helpers import assert_xp, host

from gpuknn import InvalidInputError, finalize_partial, kneighbors, kneighbors_partial, merge_partial
from gpuknn.ops.kneighbors import PreparedReference


def test_a_shard_smaller_than_k_is_padded(backend):
    R = np.arange(10.0)[:, None]
    Q = np.array([[3.2]])
    p = kneighbors_partial(backend.asarray(Q), backend.asarray(R[:2]), 4, offset=0)
    assert_xp(p.indices, [[1, 0, -1, -1]], backend)
    assert np.isinf(host(p.keys)[0, 2:]).all()
    q = kneighbors_partial(backend.asarray(Q), backend.asarray(R[2:]), 4, offset=2)
    d, i = finalize_partial(merge_partial(p, q))
    d0, i0 = kneighbors(Q, R, 4)
    assert_xp(i, i0, backend)
    assert_xp(d, d0, backend, exact=False, rtol=1e-12)


def test_merge_is_commutative_and_ties_go_to_the_lower_index():
    R = np.zeros((6, 2))
    Q = np.zeros((1, 2))
    a = kneighbors_partial(Q, R[:3], 4, offset=0)
    b = kneighbors_partial(Q, R[3:], 4, offset=3)
    for m in (merge_partial(a, b), merge_partial(b, a)):
        assert m.indices.tolist() == [[0, 1, 2, 3]]


def test_prepared_shards():
    rng = np.random.default_rng(0)
    R, Q = rng.normal(size=(80, 5)).astype(np.float32), rng.normal(size=(9, 5)).astype(np.float32)
    shards = [PreparedReference(R[a : a + 20], metric="cosine") for a in range(0, 80, 20)]
    parts = [kneighbors_partial(Q, s, 6, offset=a, metric="cosine") for a, s in zip(range(0, 80, 20), shards)]
    m = parts[0]
    for p in parts[1:]:
        m = merge_partial(m, p)
    d, i = finalize_partial(m)
    d0, i0 = kneighbors(Q, R, 6, metric="cosine")
    np.testing.assert_array_equal(i, i0)
    assert d.dtype == np.float32


def test_errors():
    R, Q = np.zeros((5, 2)), np.zeros((2, 2))
    a = kneighbors_partial(Q, R, 3)
    with pytest.raises(InvalidInputError, match="metrics"):
        merge_partial(a, kneighbors_partial(Q, R, 3, metric="cosine"))
    with pytest.raises(InvalidInputError, match="shapes"):
        merge_partial(a, kneighbors_partial(Q, R, 2))
    with pytest.raises(InvalidInputError, match="only 2 of k=4"):
        finalize_partial(kneighbors_partial(Q, R[:2], 4))
    with pytest.raises(InvalidInputError, match="offset"):
        kneighbors_partial(Q, R, 3, offset=-1)
    with pytest.raises(InvalidInputError, match="k must"):
        kneighbors_partial(Q, R, 0)
