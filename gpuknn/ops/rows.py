"""Replacing some rows of arrays by recomputed ones (the array API has no scatter)."""

from __future__ import annotations

from typing import Any

from .._backend import array_namespace, device_of

__all__ = ["replace_rows"]


def replace_rows(rows: Any, n: int, pairs: list[tuple[Any, Any]]) -> list[Any]:
    """Each ``base`` of ``pairs`` with its rows ``rows`` replaced by those of ``sub``.

    Parameters
    ----------
    rows : int array (r,), sorted, unique, each in ``[0, n)``
    n : int
        Rows of every ``base``.
    pairs : list of (base, sub)
        ``base`` of shape (n, ...) and ``sub`` of shape (r, ...), one namespace.

    Returns
    -------
    list of arrays shaped like the bases.

    Examples
    --------
    >>> import numpy as np
    >>> replace_rows(np.array([1, 3]), 4, [(np.zeros(4), np.array([7.0, 9.0]))])
    [array([0., 7., 0., 9.])]
    """
    xp = array_namespace(rows)
    ar = xp.arange(n, dtype=rows.dtype, device=device_of(rows))
    pos = xp.clip(xp.searchsorted(rows, ar), min=0, max=max(rows.shape[0] - 1, 0))
    hit = xp.take(rows, pos) == ar
    out = []
    for base, sub in pairs:
        mask = xp.reshape(hit, (n,) + (1,) * (base.ndim - 1))
        out.append(xp.where(mask, xp.take(sub, pos, axis=0), base))
    return out
