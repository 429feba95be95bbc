"""Class votes of sorted neighbour lists, for many k at once, decided exactly.

A cumulative one-hot count along the neighbour axis gives the votes of the first k
neighbours for every k in one vectorised pass -- what the sweeps and the classifiers use.
Rows are processed in cache-sized blocks. **Vote ties go to the lowest class index**
(scikit-learn's rule), on every backend.

Distance-weighted votes (``1/d``) are sums of floats, so a winner can hinge on a
difference below their rounding. :func:`votes_for_many_k` decides those exactly: totals
are float64; with ``bounds`` (each distance's certified interval, when the distances come
from a float32 tile, :mod:`gpuknn.ops.groups`) a row whose winner the intervals cannot
settle gets its exact distances from ``refine``; a float64 total that hinges on its own
rounding is decided exactly on the host (:func:`math.fsum`). The decision is that of the
exact distances, on every backend and tiling.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._backend import array_namespace, check_int, device_of, from_numpy, host_array, input_device, to_numpy
from .._delegation import on_input_device
from ..errors import InvalidInputError
from .rows import replace_rows
from .weights import check_weights, distance_weights

__all__ = ["vote_counts", "votes_for_many_k", "count_votes", "predict_votes", "check_vote_input"]

_U64 = 2.0**-53
# Rows per block: the (rows, k_max, n_classes) cube of counts stays near this size.
_BLOCK_BYTES = 4 << 20


def _neighbor_weights(distances: Any, weights: str, xp: Any) -> Any:
    """Per-neighbour vote weights, float64: :func:`gpuknn.ops.weights.distance_weights`."""
    if weights == "uniform":
        return None
    check_weights(weights)
    if distances is None:
        raise InvalidInputError("weights='distance' needs the neighbour distances")
    return distance_weights(xp.astype(distances, xp.float64), xp)


def check_k_values(ks: Any, *, name: str = "ks", high: int | None = None, low: int | None = 1) -> list[int]:
    """``ks`` (a sequence of integers, or one integer) as a list of Python ints in
    ``[1, high]``; floats (even ``2.0``), bools, strings and other objects raise
    :class:`InvalidInputError` naming ``name`` and the offending value."""
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__iter__"):
        if isinstance(ks, bool) or not hasattr(ks, "__index__"):
            raise InvalidInputError(f"{name} must be a sequence of integers, got {ks!r}")
        ks = [ks]
    out = []
    for k in ks:
        bad = isinstance(k, (bool, np.bool_)) or (hasattr(k, "dtype") and "bool" in str(k.dtype))
        try:
            v = None if bad else operator.index(k)
        except TypeError:
            v = None
        if v is None:
            raise InvalidInputError(
                f"{name} must hold integers (k is a count of neighbours), got {k!r} in {list(ks)!r}"
            )
        out.append(v)
    if not out:
        raise InvalidInputError(f"{name} is empty: give at least one k")
    if (low is not None and min(out) < low) or (high is not None and max(out) > high):
        hi = "inf" if high is None else high
        raise InvalidInputError(f"every k in {name} must be in [1, {hi}], got {out}")
    return out


def _check_ks(ks: Sequence[int], k_max: int) -> list[int]:
    return check_k_values(ks, name="ks", high=k_max)


def check_vote_input(neighbor_labels: Any, n_classes: Any, distances: Any, xp: Any) -> tuple[Any, int, Any]:
    """Validate the arguments of the vote functions: ``neighbor_labels`` a 2-D integer array
    of class indices in ``[0, n_classes)``, ``distances`` (when given) real, of the same
    shape, neither NaN nor negative. One host transfer of three reductions."""
    if not hasattr(neighbor_labels, "shape"):
        # host labels join array distances on their device (xp's default may be another one)
        neighbor_labels = from_numpy(
            host_array(neighbor_labels, name="neighbor_labels"), xp, device=input_device([distances])
        )
    if neighbor_labels.ndim != 2:
        raise InvalidInputError(f"neighbor_labels must be 2-D (n, k_max), got shape {tuple(neighbor_labels.shape)}")
    if not xp.isdtype(neighbor_labels.dtype, "integral"):
        raise InvalidInputError(f"neighbor_labels must hold integer class indices, got dtype {neighbor_labels.dtype}")
    n_classes = check_int(n_classes, name="n_classes", low=1)
    if distances is not None:
        if not hasattr(distances, "shape"):
            distances = from_numpy(host_array(distances, name="distances"), xp, device=device_of(neighbor_labels))
        if tuple(distances.shape) != tuple(neighbor_labels.shape):
            raise InvalidInputError(
                f"distances must have the shape of neighbor_labels {tuple(neighbor_labels.shape)}, "
                f"got {tuple(distances.shape)}"
            )
        if not (xp.isdtype(distances.dtype, "real floating") or xp.isdtype(distances.dtype, "integral")):
            raise InvalidInputError(f"distances must be real numbers, got dtype {distances.dtype}")
    if math.prod(neighbor_labels.shape):  # one transfer: label range and the smallest distance
        checks = [xp.astype(xp.min(neighbor_labels), xp.float64), xp.astype(xp.max(neighbor_labels), xp.float64)]
        if distances is not None:
            checks.append(xp.astype(xp.min(distances), xp.float64))
        vals = to_numpy(xp.stack(checks)).tolist()
        if vals[0] < 0 or vals[1] >= n_classes:
            raise InvalidInputError(
                f"neighbor_labels must be class indices in [0, {n_classes - 1}] (n_classes = "
                f"{n_classes}), got values in [{int(vals[0])}, {int(vals[1])}]"
            )
        if distances is not None and math.isnan(vals[2]):
            raise InvalidInputError("distances contain NaN")
        if distances is not None and vals[2] < 0:
            raise InvalidInputError(f"distances must be >= 0, got a smallest distance of {vals[2]!r}")
    return neighbor_labels, n_classes, distances


def _cumulative(lab: Any, w: Any, k_idx: Any, n_classes: int, xp: Any) -> Any:
    """Totals (b, len(ks), C) of the first k neighbours of a row block, every k at once."""
    classes = xp.arange(n_classes, device=device_of(lab))
    onehot = lab[:, :, None] == classes[None, None, :]
    onehot = xp.astype(onehot, xp.int32 if w is None else w.dtype)
    if w is not None:
        onehot = onehot * w[:, :, None]
    return xp.take(xp.cumulative_sum(onehot, axis=1), k_idx, axis=1)


@on_input_device
def vote_counts(
    neighbor_labels: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    distances: Any = None,
    weights: str = "uniform",
    max_bytes: int = _BLOCK_BYTES,
) -> Any:
    """Class vote totals for every k in ``ks`` from one sorted neighbour list.

    A cumulative one-hot count along the neighbour axis gives the votes of the first k
    neighbours for every k at once: O(n · k_max · n_classes).

    Parameters
    ----------
    neighbor_labels : int array of shape (n, k_max)
        Class indices (0 .. n_classes-1) of the neighbours, nearest first.
    ks : sequence of int
        Each ``1 <= k <= k_max``.
    n_classes : int
    distances : array of shape (n, k_max), optional
        Needed for ``weights="distance"``.
    weights : {"uniform", "distance"}
    max_bytes : int
        Rows are processed in blocks so the one-hot cube stays under this size.

    Returns
    -------
    counts : array of shape (len(ks), n, n_classes)
        int64 for uniform votes, float64 for distance weights.

    Examples
    --------
    >>> import numpy as np
    >>> vote_counts(np.array([[2, 1, 1]]), [1, 3], n_classes=3)
    array([[[0, 0, 1]],
    <BLANKLINE>
           [[0, 2, 1]]])
    """
    xp = array_namespace(neighbor_labels, distances)
    check_weights(weights)
    neighbor_labels, n_classes, distances = check_vote_input(neighbor_labels, n_classes, distances, xp)
    ks_list = _check_ks(ks, neighbor_labels.shape[1])
    return count_votes(neighbor_labels, ks_list, n_classes, distances, weights, xp, max_bytes=max_bytes)


def count_votes(
    neighbor_labels: Any,
    ks_list: list[int],
    n_classes: int,
    distances: Any,
    weights: str,
    xp: Any,
    *,
    max_bytes: int = _BLOCK_BYTES,
) -> Any:
    """:func:`vote_counts` of input its caller has validated (the engine's internal entry)."""
    n, k_max = neighbor_labels.shape
    if n == 0:  # no rows: no votes (and nothing to concatenate)
        return xp.zeros(
            (len(ks_list), 0, n_classes),
            dtype=xp.int64 if weights == "uniform" else xp.float64,
            device=device_of(neighbor_labels),
        )
    w = _neighbor_weights(distances, weights, xp)
    k_idx = xp.asarray([k - 1 for k in ks_list], device=device_of(neighbor_labels))
    block = max(1, min(n, int(max_bytes) // max(1, k_max * n_classes * 8)))
    out = [
        _cumulative(
            neighbor_labels[b0 : min(b0 + block, n), :],
            None if w is None else w[b0 : min(b0 + block, n), :],
            k_idx,
            n_classes,
            xp,
        )
        for b0 in range(0, n, block)
    ]
    counts = out[0] if len(out) == 1 else xp.concat(out, axis=0)
    if w is None:
        counts = xp.astype(counts, xp.int64)
    return xp.permute_dims(counts, (1, 0, 2))


@on_input_device
def votes_for_many_k(
    neighbor_labels: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    distances: Any = None,
    weights: str = "uniform",
    bounds: tuple[Any, Any] | None = None,
    refine: Callable[[Any], Any] | None = None,
) -> Any:
    """Predicted class index for every k in ``ks`` from one sorted neighbour list.

    **Vote ties go to the lowest class index** (scikit-learn's rule), on every backend.

    Parameters
    ----------
    neighbor_labels : int array of shape (n, k_max)
    ks : sequence of int
    n_classes : int
    distances : array of shape (n, k_max), optional
        Needed for ``weights="distance"``.
    weights : {"uniform", "distance"}
    bounds : (d_lo, d_hi) arrays of shape (n, k_max), optional
        Certified intervals of the exact distances (when ``distances`` are not exact).
    refine : callable(rows) -> array (len(rows), k_max), optional
        The exact float64 distances of the given rows (int array of row numbers); with
        ``bounds``, used for the rows whose winner the intervals cannot settle.

    Returns
    -------
    predictions : int64 array of shape (len(ks), n)

    Notes
    -----
    Weighted totals are float64. A winner whose margin is within the totals' rounding is
    decided exactly on the host: the vote of the float64 weights ``1/d`` summed without
    rounding (rare, bar exact ties such as equal distances).

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([[2, 1, 1, 0]])
    >>> votes_for_many_k(labels, [1, 2, 3], n_classes=3)
    array([[2],
           [1],
           [1]])
    >>> votes_for_many_k(np.array([[0, 1]]), [2], n_classes=2, distances=np.array([[1.0, 1.0]]),
    ...                  weights="distance")
    array([[0]])
    """
    xp = array_namespace(neighbor_labels, distances)
    check_weights(weights)
    neighbor_labels, n_classes, distances = check_vote_input(neighbor_labels, n_classes, distances, xp)
    ks_list = _check_ks(ks, neighbor_labels.shape[1])
    if weights == "distance" and distances is None:
        raise InvalidInputError("weights='distance' needs the neighbour distances")
    return predict_votes(neighbor_labels, ks_list, n_classes, distances, weights, xp, bounds=bounds, refine=refine)


def predict_votes(
    neighbor_labels: Any,
    ks_list: list[int],
    n_classes: int,
    distances: Any,
    weights: str,
    xp: Any,
    *,
    bounds: tuple[Any, Any] | None = None,
    refine: Callable[[Any], Any] | None = None,
    max_bytes: int = _BLOCK_BYTES,
) -> Any:
    """:func:`votes_for_many_k` of input its caller has validated (the engine's internal
    entry: the classifiers, sweeps and cross-validation check their input once, at their
    own public boundary, and call this). Rows are voted in blocks of about ``max_bytes``
    of class totals (a sweep passes a share of its ``working_memory``: one block on a GPU)."""
    n, k_max = neighbor_labels.shape
    if n == 0:  # no rows: no predictions (and nothing to concatenate)
        return xp.zeros((len(ks_list), 0), dtype=xp.int64, device=device_of(neighbor_labels))
    k_idx = xp.asarray([k - 1 for k in ks_list], device=device_of(neighbor_labels))
    block = max(1, min(n, int(max_bytes) // max(1, k_max * n_classes * 8)))
    preds, hinges = [], []
    for b0 in range(0, n, block):
        b1 = min(b0 + block, n)
        lab = neighbor_labels[b0:b1, :]
        if weights == "uniform":  # integer counts: exact, ties to the lowest class by argmax
            preds.append(xp.argmax(_cumulative(lab, None, k_idx, n_classes, xp), axis=2))
            continue
        tot = _cumulative(lab, _neighbor_weights(distances[b0:b1, :], weights, xp), k_idx, n_classes, xp)
        pred = xp.argmax(tot, axis=2)
        if bounds is not None:
            unsure = _interval_unsure(
                tot, pred, distances[b0:b1, :], bounds[0][b0:b1, :], bounds[1][b0:b1, :], ks_list, xp
            )
        else:
            unsure = _rounding_unsure(tot, pred, ks_list, xp)
        preds.append(pred)
        hinges.append(unsure)
    pred = preds[0] if len(preds) == 1 else xp.concat(preds, axis=0)  # (n, len(ks))
    if weights == "uniform":
        return xp.astype(xp.permute_dims(pred, (1, 0)), xp.int64)
    unsure = hinges[0] if len(hinges) == 1 else xp.concat(hinges, axis=0)
    rows = xp.nonzero(xp.any(unsure, axis=1))[0]
    if rows.shape[0]:
        pred = _settle(
            neighbor_labels, distances, rows, pred, ks_list, n_classes, refine if bounds is not None else None, xp
        )
    return xp.astype(xp.permute_dims(pred, (1, 0)), xp.int64)


def _margin(tot: Any, pred: Any, xp: Any) -> tuple[Any, Any]:
    """Winner's total and the best other class's total, (b, len(ks))."""
    best = xp.squeeze(xp.take_along_axis(tot, pred[:, :, None], axis=2), axis=2)
    classes = xp.arange(tot.shape[2], device=device_of(tot))
    others = xp.where(classes[None, None, :] == pred[:, :, None], xp.full_like(tot, -math.inf), tot)
    return best, xp.max(others, axis=2)


def _rounding_unsure(tot: Any, pred: Any, ks: list[int], xp: Any) -> Any:
    """Where the float64 totals' rounding could change the winner (or a tie)."""
    best, second = _margin(tot, pred, xp)
    gam = xp.asarray([2 * k * _U64 for k in ks], dtype=xp.float64, device=device_of(tot))
    return (best - second) <= gam[None, :] * (xp.abs(best) + xp.abs(second))


def _interval_unsure(tot, pred, d, d_lo, d_hi, ks, xp):
    """Where the distances' intervals leave the winner open.

    Moving each weight ``1/d`` anywhere in its interval changes any class's total of the
    first k by at most ``E_k``, the sum of the k largest weight moves: the winner is settled
    where its margin exceeds ``E_k`` (and the float64 rounding), and no distance may be 0
    (scikit-learn's zero-distance rule would change every weight).
    """
    d = xp.astype(d, xp.float64)
    lo = xp.astype(d_lo, xp.float64)
    hi = xp.astype(d_hi, xp.float64)
    maybe_zero = xp.any(lo <= 0, axis=1)
    w = 1.0 / xp.where(d > 0, d, xp.ones_like(d))
    w_lo = 1.0 / xp.where(hi > 0, hi, xp.ones_like(hi))
    w_hi = 1.0 / xp.where(lo > 0, lo, xp.ones_like(lo))
    move = xp.maximum(w_hi - w, w - w_lo)
    k_idx = xp.asarray([k - 1 for k in ks], device=device_of(d))
    E = xp.take(xp.cumulative_sum(move, axis=1), k_idx, axis=1)
    best, second = _margin(tot, pred, xp)
    k = xp.asarray([float(k) for k in ks], dtype=xp.float64, device=device_of(d))
    slack = E * (1 + 4 * k * _U64) + 4 * _U64 * k[None, :] * (xp.abs(best) + xp.abs(second))
    return (best - second <= slack) | maybe_zero[:, None]


def _settle(labels, distances, rows, pred, ks, n_classes, refine, xp):
    """Winners of ``rows`` from exact distances: float64, then exact sums where it hinges."""
    lab = xp.take(labels, rows, axis=0)
    d = refine(rows) if refine is not None else xp.take(distances, rows, axis=0)
    k_idx = xp.asarray([k - 1 for k in ks], device=device_of(labels))
    w = _neighbor_weights(d, "distance", xp)
    tot = _cumulative(lab, w, k_idx, n_classes, xp)
    sub = xp.argmax(tot, axis=2)
    close = _rounding_unsure(tot, sub, ks, xp)
    if bool(xp.any(close)):
        close = close & ~_sums_settle(lab, w, k_idx, n_classes, tot, sub, xp)
    close = to_numpy(close)
    if close.any():
        sub_h = to_numpy(sub).copy()
        lab_h, d_h = to_numpy(lab), to_numpy(xp.astype(d, xp.float64))
        for r, j in zip(*np.nonzero(close)):
            sub_h[r, j] = exact_winner(lab_h[r, : ks[j]], d_h[r, : ks[j]], n_classes)
        sub = xp.asarray(sub_h, device=device_of(labels))
    return replace_rows(rows, labels.shape[0], [(pred, xp.astype(sub, pred.dtype))])[0]


def _sums_settle(lab, w, k_idx, n_classes, tot, pred, xp):
    """Where the float64 totals' actual rounding (not its bound) settles the winner.

    Each addition's rounding error is recovered exactly (TwoSum) and accumulated: where the
    margin exceeds the two classes' accumulated errors, or the totals tie with no rounding
    at all (equal weights such as all distances 1), the float decision is the exact one.
    """
    classes = xp.arange(n_classes, device=device_of(lab))
    x = xp.astype(lab[:, :, None] == classes[None, None, :], w.dtype) * w[:, :, None]
    S = xp.cumulative_sum(x, axis=1)
    prev = xp.concat([xp.zeros_like(S[:, :1, :]), S[:, :-1, :]], axis=1)
    bv = S - prev
    e = (prev - (S - bv)) + (x - bv)
    err = xp.take(xp.cumulative_sum(xp.abs(e), axis=1), k_idx, axis=1)
    best, second = _margin(tot, pred, xp)
    err_best = xp.squeeze(xp.take_along_axis(err, pred[:, :, None], axis=2), axis=2)
    others = xp.where(classes[None, None, :] == pred[:, :, None], xp.full_like(tot, -math.inf), tot)
    runner = xp.argmax(others, axis=2)
    err_second = xp.squeeze(xp.take_along_axis(err, runner[:, :, None], axis=2), axis=2)
    # Error sums are themselves float64 sums of at most k_max terms: a relative slack.
    slack = (err_best + err_second) * (1 + 4 * _U64 * lab.shape[1])
    return (best - second > slack) | ((best == second) & (err_best == 0) & (err_second == 0))


def exact_winner(lab: np.ndarray, d: np.ndarray, n_classes: int) -> int:
    """Winning class of one weighted vote, exactly; ties to the lowest class.

    The weights are the float64 ``1/d`` (correctly rounded on every IEEE backend); two
    classes' totals are compared through :func:`math.fsum` of one minus the other, whose
    correctly rounded result has the sign of the exact difference.
    """
    zero = d == 0
    per: list[list[float]] = [[] for _ in range(n_classes)]
    if zero.any():
        for c in lab[zero].tolist():
            per[c].append(1.0)
    else:
        for c, dist in zip(lab.tolist(), d.tolist()):
            per[c].append(1.0 / dist)
    best = 0
    for c in range(1, n_classes):
        if math.fsum(per[c] + [-w for w in per[best]]) > 0:
            best = c
    return best
