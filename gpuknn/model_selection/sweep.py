"""One-pass sweeps: every k from one top-k pass, every PCA size from one projection.

* :func:`neighbors_for_k_sweep`: one :func:`gpuknn.kneighbors` with ``k_max`` per fold.
* :func:`neighbors_for_p_sweep`: neighbours of a fold for every p in a grid from one
  accumulated Gram matrix per query tile (:mod:`gpuknn.ops.gram`).
* :func:`score_many_k`: predictions and scores for every k (and both weightings) from one
  sorted neighbour list (:func:`gpuknn.vote_counts`).

Everything stays in the input's namespace; only the per-k scores (a few floats) go to the
host.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, to_numpy
from .._delegation import bincount
from ..errors import InvalidInputError
from ..metrics import accuracy_score
from ..ops.kneighbors import kneighbors
from ..ops.psweep import neighbors_for_p_sweep
from ..ops.votes import check_k_values, check_vote_input, predict_votes

__all__ = [
    "neighbors_for_k_sweep",
    "neighbors_for_p_sweep",
    "score_many_k",
    "check_grid",
    "SCORERS",
]


def _accuracy(y_true: Any, pred: Any, n_classes: int) -> np.ndarray:
    """Accuracy of each row of ``pred`` (n_k, n): one vectorised call. The counts come to
    the host and are divided there, as scikit-learn divides them: equal accuracies must be
    bit-equal on every backend, or CV ties between settings break differently."""
    return to_numpy(accuracy_score(y_true, pred, normalize=False)).astype(np.float64) / int(pred.shape[1])


def _macro_f1(y_true: Any, pred: Any, n_classes: int) -> np.ndarray:
    """Macro-F1 over all ``n_classes`` class indices (absent ones count 0) of each row of
    ``pred`` (n_k, n), as ``f1_score(..., labels=range(n_classes), average="macro")``.

    Every row at once: per-(row, class) counts of predictions and of hits from two
    ``bincount`` calls over ``row * C + class`` codes, so the cost is O(n_k n) with one
    transfer to the host, not a call (and host syncs) per k.
    """
    xp = array_namespace(pred)
    dev = device_of(pred)
    n_k, C = int(pred.shape[0]), int(n_classes)
    p = xp.astype(pred, xp.int64)
    codes = p + C * xp.arange(n_k, dtype=xp.int64, device=dev)[:, None]
    hits = xp.where(p == xp.astype(y_true, xp.int64)[None, :], codes, xp.asarray(-1, dtype=xp.int64, device=dev))
    n_pred = to_numpy(bincount(xp.reshape(codes, (-1,)), n_k * C)).reshape(n_k, C)
    tp = to_numpy(bincount(xp.reshape(hits, (-1,)), n_k * C)).reshape(n_k, C)
    n_true = to_numpy(bincount(xp.astype(y_true, xp.int64), C))
    denom = (n_pred + n_true[None, :]).astype(np.float64)
    f1 = np.divide(2.0 * tp, denom, out=np.zeros_like(denom), where=denom > 0)
    return f1.mean(axis=1)


SCORERS: dict[str, Callable[..., np.ndarray]] = {"accuracy": _accuracy, "macro_f1": _macro_f1}


def check_grid(values: Sequence[int], *, name: str, upper: int, argument: str | None = None) -> list[int]:
    """Sorted unique ints in [1, upper]; a clear error otherwise.

    Every value must be an integer (``2.999`` or ``2.0`` would silently become another k,
    ``True`` is no count): :class:`InvalidInputError` names ``name`` and the bad value. One
    integer is a grid of one. ``argument``: the caller's argument name (default ``name``).
    """
    argument = argument or name
    vals = sorted(set(check_k_values(values, name=argument, low=None)))
    if vals[0] < 1 or vals[-1] > upper:
        raise InvalidInputError(f"{name} values in {argument} must be in [1, {upper}], got {vals}")
    return vals


def check_names(value: Any, *, name: str, allowed: Sequence[str] | None = None) -> list:
    """A list of option names from one name (``"distance"``, not its characters) or a
    sequence of names; anything else raises :class:`InvalidInputError` naming ``name``."""
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, dict) or not hasattr(value, "__iter__"):
        raise InvalidInputError(f"{name} must be a name or a sequence of names, got {value!r}")
    else:
        items = list(value)
    if not items:
        raise InvalidInputError(f"{name} is empty")
    for it in items:
        if not isinstance(it, str) or (allowed is not None and it not in allowed):
            want = f"one of {list(allowed)}" if allowed is not None else "a name"
            raise InvalidInputError(f"{name} entries must be {want}, got {it!r} in {value!r}")
    return items


def score_many_k(
    neighbor_labels: Any,
    distances: Any,
    y_true: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    weights: Sequence[str] = ("uniform", "distance"),
    scoring: Sequence[str] | dict = ("accuracy",),
    bounds: tuple[Any, Any] | None = None,
    refine: Callable[[Any], Any] | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """Scores for every k and weighting from one sorted neighbour list.

    ``scoring``: names of built-in vectorised scorers (``"accuracy"``, ``"macro_f1"``) or a
    dict ``{name: callable(y_true, y_pred) -> float}`` (e.g. any :mod:`gpuknn.metrics`
    function, applied to class indices), called once per k.

    ``bounds``, ``refine``: as for :func:`gpuknn.votes_for_many_k` (a
    :class:`gpuknn.ops.kneighbors.Neighbors`' :meth:`~gpuknn.ops.kneighbors.Neighbors.vote_args`), so
    that distance-weighted votes are those of the exact distances.

    Returns ``{weights: {scorer: array of shape (len(ks),)}}`` on the host.
    Vote ties go to the lowest class index (see :func:`gpuknn.votes_for_many_k`).
    ``weights`` and ``scoring`` may be one name (``"distance"``) or a sequence of them.
    """
    weights = check_names(weights, name="weights", allowed=("uniform", "distance"))
    if not isinstance(scoring, dict):
        scoring = check_names(scoring, name="scoring")
    xp = array_namespace(neighbor_labels, distances)
    # One check of the lists (one host transfer), whatever the number of weightings.
    neighbor_labels, n_classes, distances = check_vote_input(neighbor_labels, n_classes, distances, xp)
    ks = check_k_values(ks, name="ks", high=neighbor_labels.shape[1])
    if "distance" in weights and distances is None:
        raise InvalidInputError("weights='distance' needs the neighbour distances")
    return score_votes(
        neighbor_labels, distances, y_true, ks, n_classes, weights, scoring, xp, bounds=bounds, refine=refine
    )


def score_votes(
    neighbor_labels: Any,
    distances: Any,
    y_true: Any,
    ks: list[int],
    n_classes: int,
    weights: list[str],
    scoring: Any,
    xp: Any,
    *,
    bounds: tuple[Any, Any] | None = None,
    refine: Callable[[Any], Any] | None = None,
    max_bytes: int | None = None,
    sets: int | None = None,
) -> dict[str, dict[str, np.ndarray]]:
    """:func:`score_many_k` of lists its caller has validated (the cross-validation's own
    neighbours): no check of the lists again. ``max_bytes``: the votes' block size
    (:func:`~gpuknn.ops.votes.predict_votes`; default its own).

    ``sets``: the lists stack that many sets of ``len(y_true)`` rows each (a p-sweep's
    lists, one set per PCA size), voted on and scored together -- one vote pass and one
    scorer call for all of them, not one per set; each score array is then of shape
    ``(sets, len(ks))``. Default: one set, arrays of shape ``(len(ks),)``.
    """
    n_sets = 1 if sets is None else sets
    out: dict[str, dict[str, np.ndarray]] = {}
    for w in weights:
        extra = {"bounds": bounds, "refine": refine} if w == "distance" else {}
        if max_bytes is not None:
            extra["max_bytes"] = max_bytes
        pred = predict_votes(neighbor_labels, ks, n_classes, distances if w == "distance" else None, w, xp, **extra)
        # (len(ks), sets * n) -> (sets * len(ks), n): one row of predictions per (set, k).
        n = pred.shape[1] // n_sets
        rows = xp.reshape(xp.permute_dims(xp.reshape(pred, (len(ks), n_sets, n)), (1, 0, 2)), (n_sets * len(ks), n))
        out[w] = {}
        for name in scoring:
            fn = scoring[name] if isinstance(scoring, dict) else SCORERS.get(name)
            if fn is None:
                raise InvalidInputError(
                    f"unknown scoring {name!r}; expected one of {list(SCORERS)} "
                    "or a dict of name -> callable(y_true, y_pred)"
                )
            if name in SCORERS and fn is SCORERS[name]:
                v = fn(y_true, rows, n_classes)
            else:  # any metric function (gpuknn.metrics style), one (set, k) at a time
                v = np.asarray([float(fn(y_true, rows[r, :])) for r in range(rows.shape[0])])
            out[w][name] = v if sets is None else v.reshape(n_sets, len(ks))
    return out


def neighbors_for_k_sweep(
    X_train: Any, X_test: Any, k_max: int, *, metric: str, working_memory: float | None = None
) -> tuple[Any, Any]:
    """``(distances, indices)`` of the ``k_max`` nearest training rows of each test row."""
    return kneighbors(X_test, X_train, k_max, metric=metric, working_memory=working_memory)
