"""Replacing rows (gpuknn.ops.rows)."""

import numpy as np
from helpers import assert_xp

from gpuknn.ops.rows import replace_rows


def test_replace_rows(backend):
    A = backend.asarray(np.zeros((5, 2)))
    v = backend.asarray(np.arange(5))
    rows = backend.asarray(np.array([0, 3]))
    a, b = replace_rows(rows, 5, [(A, backend.asarray(np.ones((2, 2)))), (v, backend.asarray(np.array([9, 8])))])
    assert_xp(a, np.array([[1, 1], [0, 0], [0, 0], [1, 1], [0, 0]], dtype=float), backend)
    assert_xp(b, [9, 1, 2, 8, 4], backend)
