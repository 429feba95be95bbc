"""Neighbour weights and weighted means: scikit-learn's distance-weight rule, once.

``weights="distance"`` weighs a neighbour by ``1/d``, except that a query with a neighbour
at distance 0 is decided by its zero-distance neighbours alone (weight 1 each, the others
0) -- scikit-learn's ``_get_weights``. :func:`distance_weights` is that rule for every
caller: the k-neighbour votes and means (dense ``(n, k)`` distances), the radius votes and
means (dense ``(rows, n_ref)`` blocks with a membership mask), and the k-d tree's radius
pairs (flat, one query number per pair). :func:`neighbour_mean` is the k-neighbour
regressor's prediction, shared with its dask tasks.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import device_of, from_numpy
from .._delegation import bincount
from ..errors import InvalidInputError

__all__ = ["check_weights", "distance_weights", "call_weights", "finish_mean", "neighbour_mean"]


def check_weights(weights: Any, metric: str | None = None, *, callable_ok: bool = False) -> None:
    """The ``weights`` option: ``"uniform"``, ``"distance"`` (undefined for ``metric="inner"``,
    a similarity) and, with ``callable_ok`` (the regressors), None or a callable."""
    ok = isinstance(weights, str) and weights in ("uniform", "distance")
    if callable_ok and (weights is None or callable(weights)):
        ok = True
    if not ok:
        also = ", 'distance' or a callable" if callable_ok else " or 'distance'"
        raise InvalidInputError(f"weights must be 'uniform'{also}, got {weights!r}")
    if weights == "distance" and metric == "inner":
        raise InvalidInputError("weights='distance' is undefined for metric='inner'")


def distance_weights(d: Any, xp: Any, *, member: Any = None, rows: Any = None, n_rows: int = 0) -> Any:
    """scikit-learn's ``1/d`` weights, zero distances deciding alone.

    Parameters
    ----------
    d : float array, (n, m) or (p,)
        Distances: one row per query, or (with ``rows``) one entry per (query, reference) pair.
    xp : namespace of ``d``
    member : bool array shaped like ``d``, optional
        Which entries count (radius membership); the others weigh 0.
    rows, n_rows : int array (p,) and int, optional
        The query of each pair of a flat ``d``, and the number of queries.

    Returns
    -------
    weights : array shaped like ``d``, its dtype
        ``1/d`` for members; where a query has a member at distance 0, 1 for those members
        and 0 for the others.

    Examples
    --------
    >>> import numpy as np
    >>> distance_weights(np.array([[0.5, 2.0], [0.0, 1.0]]), np)
    array([[2. , 0.5],
           [1. , 0. ]])
    """
    zero = d == 0
    if member is not None:
        zero = zero & member
    if rows is None:
        has_zero = xp.any(zero, axis=-1, keepdims=True)
    else:
        hit = bincount(xp.where(zero, rows, xp.full_like(rows, -1)), n_rows) > 0
        has_zero = xp.take(hit, rows)
    inv = 1.0 / xp.where(d == 0, xp.ones_like(d), d)
    if member is not None:
        inv = xp.where(member, inv, xp.zeros_like(inv))
    return xp.where(has_zero, xp.astype(zero, d.dtype), inv)


def call_weights(fn: Any, d: Any, xp: Any) -> Any:
    """``fn(d)`` (a user's weights callable) as float64 of ``d``'s namespace and shape, or
    :class:`InvalidInputError`."""
    w = fn(d)
    if not hasattr(w, "shape"):
        w = from_numpy(np.asarray(w, dtype=np.float64), xp, device=device_of(d))
    if tuple(w.shape) != tuple(d.shape):
        raise InvalidInputError(
            f"weights callable returned shape {tuple(w.shape)} for distances "
            f"of shape {tuple(d.shape)}; it must keep the shape"
        )
    return xp.astype(w, xp.float64)


def finish_mean(num: Any, den: Any, y_dtype: Any, y_ndim: int, xp: Any) -> Any:
    """``num / den`` (NaN where ``den`` is 0), in y's float dtype and y's ndim."""
    ok = den != 0
    pred = xp.where(ok, num / xp.where(ok, den, xp.ones_like(den)), xp.full_like(num, math.nan))
    pred = xp.astype(pred, y_dtype)
    return pred[:, 0] if y_ndim == 1 else pred


def neighbour_mean(Yn: Any, d: Any, weights: Any, q_dtype: Any, y_dtype: Any, y_ndim: int, xp: Any) -> Any:
    """The k-neighbour regressor's prediction from the neighbours' float64 targets ``Yn``
    (n, k, n_outputs) and their float64 distances ``d`` (n, k; unused by uniform weights);
    a callable gets them in the queries' dtype ``q_dtype``."""
    n = Yn.shape[0]
    if weights in (None, "uniform"):
        ones = xp.ones((n, 1), dtype=xp.float64, device=device_of(Yn))
        return finish_mean(xp.mean(Yn, axis=1), ones, y_dtype, y_ndim, xp)
    # "distance": exact zeros for duplicates (the exact pass)
    w = distance_weights(d, xp) if weights == "distance" else call_weights(weights, xp.astype(d, q_dtype), xp)
    return finish_mean(xp.sum(Yn * w[:, :, None], axis=1), xp.sum(w, axis=1, keepdims=True), y_dtype, y_ndim, xp)
