"""Fixed-radius votes decided on exact distances (gpuknn.ops.radius)."""

import numpy as np
import pytest
from helpers import assert_xp

from gpuknn.ops.kneighbors import PreparedReference
from gpuknn.ops.radius import radius_key, radius_votes


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "correlation"])
def test_radius_key(metric):
    from gpuknn.ops.exact import keys_to_distances

    key = radius_key(0.75, metric)
    assert keys_to_distances(np.array([[key]]), metric)[0, 0] == pytest.approx(0.75)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_members_on_the_radius_and_exact_ties(backend, weights):
    # sqeuclidean on integer points far from the origin: class 1 at distance 1, two class-0
    # points at distance 2 (exactly on the radius), one class-1 point just outside.
    off = 2e4
    R = np.array([[off + 1, off], [off + 1, off + 1], [off - 1, off + 1], [off + 2, off]], dtype=np.float32)
    y = np.array([1, 0, 0, 1])
    onehot = np.eye(2, dtype=np.float32)[y]
    Q = np.array([[off, off], [off + 50, off]], dtype=np.float32)
    ref = PreparedReference(backend.asarray(R), metric="sqeuclidean").reference
    for rows in (1, 2):
        counts, win = radius_votes(backend.asarray(Q), ref, backend.asarray(onehot), 2.0, weights, rows_per_block=rows)
        # uniform: 2 of class 0 against 1 of class 1; distance: 1/2 + 1/2 against 1, a tie.
        assert_xp(win, [0, -1], backend)
        want = [[2.0, 1.0], [0.0, 0.0]] if weights == "uniform" else [[1.0, 1.0], [0.0, 0.0]]
        assert_xp(counts, np.array(want), backend, exact=False, rtol=1e-6)
