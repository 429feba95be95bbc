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

from typing import Any, Callable, Sequence

import numpy as np

from .._backend import (
    array_namespace,
    default_working_memory,
    is_numpy_namespace,
    to_numpy,
    validate_matrix,
)
from ..errors import InvalidInputError
from ..metrics import accuracy_score, f1_score
from ..neighbors import kneighbors
from ..votes import vote_counts
from ..ops.distance import check_metric
from ..ops.gram import distances_from_scores, gram_accumulate, prefix_stats, score_from_gram
from ..ops.topk import topk_largest

__all__ = [
    "neighbors_for_k_sweep",
    "neighbors_for_p_sweep",
    "score_many_k",
    "check_grid",
    "SCORERS",
]


def _accuracy(y_true: Any, pred: Any, n_classes: int) -> np.ndarray:
    """Accuracy of each row of ``pred`` (n_k, n): one vectorised call."""
    return to_numpy(accuracy_score(y_true, pred))


def _macro_f1(y_true: Any, pred: Any, n_classes: int) -> np.ndarray:
    """Macro-F1 over all ``n_classes`` class indices (absent ones count 0) of each row."""
    xp = array_namespace(pred)
    labels = xp.arange(n_classes)
    return np.asarray([f1_score(y_true, pred[r, :], labels=labels, average="macro")
                       for r in range(pred.shape[0])])


SCORERS: dict[str, Callable[..., np.ndarray]] = {"accuracy": _accuracy, "macro_f1": _macro_f1}


def check_grid(values: Sequence[int], *, name: str, upper: int) -> list[int]:
    """Sorted unique ints in [1, upper]; a clear error otherwise."""
    vals = sorted({int(v) for v in values})
    if not vals or vals[0] < 1 or vals[-1] > upper:
        raise InvalidInputError(f"{name} values must be in [1, {upper}], got {list(values)}")
    return vals


def score_many_k(
    neighbor_labels: Any,
    distances: Any,
    y_true: Any,
    ks: Sequence[int],
    *,
    n_classes: int,
    weights: Sequence[str] = ("uniform", "distance"),
    scoring: Sequence[str] | dict = ("accuracy",),
) -> dict[str, dict[str, np.ndarray]]:
    """Scores for every k and weighting from one sorted neighbour list.

    ``scoring``: names of built-in vectorised scorers (``"accuracy"``, ``"macro_f1"``) or a
    dict ``{name: callable(y_true, y_pred) -> float}`` (e.g. any :mod:`gpuknn.metrics`
    function, applied to class indices), called once per k.

    Returns ``{weights: {scorer: array of shape (len(ks),)}}`` on the host.
    Vote ties go to the lowest class index (see :func:`gpuknn.votes_for_many_k`).
    """
    xp = array_namespace(neighbor_labels)
    out: dict[str, dict[str, np.ndarray]] = {}
    for w in weights:
        counts = vote_counts(
            neighbor_labels, ks, n_classes=n_classes, distances=distances, weights=w
        )
        pred = xp.argmax(counts, axis=2)
        out[w] = {}
        for name in scoring:
            fn = scoring[name] if isinstance(scoring, dict) else SCORERS.get(name)
            if fn is None:
                raise InvalidInputError(f"unknown scoring {name!r}; expected one of {list(SCORERS)} "
                                        "or a dict of name -> callable(y_true, y_pred)")
            if name in SCORERS and fn is SCORERS[name]:
                out[w][name] = fn(y_true, pred, n_classes)
            else:  # any metric function (gpuknn.metrics style), one k at a time
                out[w][name] = np.asarray([float(fn(y_true, pred[r, :])) for r in range(pred.shape[0])])
    return out


def neighbors_for_k_sweep(X_train: Any, X_test: Any, k_max: int, *, metric: str,
                          working_memory: int | None = None) -> tuple[Any, Any]:
    """``(distances, indices)`` of the ``k_max`` nearest training rows of each test row."""
    return kneighbors(X_test, X_train, k_max, metric=metric, working_memory=working_memory)


def neighbors_for_p_sweep(
    Z_train: Any,
    Z_test: Any,
    ps: Sequence[int],
    k_max: int,
    *,
    metric: str,
    working_memory: int | None = None,
    on_tile: Callable[[int, int], None] | None = None,
) -> dict[int, tuple[Any, Any]]:
    """Neighbours in the space of the first p components, for every p in ``ps``.

    Parameters
    ----------
    Z_train : array (n_train, p_max), Z_test : array (n_test, p_max)
        Rows projected onto the leading components (columns sorted by variance).
    ps : sequence of int
        PCA sizes, each in [1, p_max].
    k_max : int
    metric : str
        As for :func:`gpuknn.kneighbors`, applied to the first p columns.
    working_memory : int, optional
        Budget for the Gram and score tiles together.
    on_tile : callable(done_rows, total_rows), optional
        Progress callback after each query tile.

    Returns
    -------
    dict p -> (distances (n_test, k_max), indices (n_test, k_max))
        Equal to ``kneighbors(Z_test[:, :p], Z_train[:, :p], k_max)`` up to rounding.

    Notes
    -----
    Cost: one GEMM of depth p_max per query tile in total (blocks between consecutive p),
    plus one scoring pass and one top-k per p. Memory: two (rows, n_train) tiles.
    """
    check_metric(metric)
    Z_train, Z_test, xp = _pair(Z_train, Z_test)
    n_tr, p_max = Z_train.shape
    ps = check_grid(ps, name="p", upper=p_max)
    if not 1 <= k_max <= n_tr:
        raise InvalidInputError(f"k_max must be in [1, {n_tr}], got {k_max}")
    if working_memory is None:
        working_memory = default_working_memory(xp)
    itemsize = 8 if Z_train.dtype == xp.float64 else 4
    rows = max(1, min(Z_test.shape[0], int(working_memory) // (n_tr * (2 * itemsize + 2))))
    r_sum, r_n2 = prefix_stats(Z_train, ps)
    q_sum, q_n2 = prefix_stats(Z_test, ps)
    parts: dict[int, list[tuple[Any, Any]]] = {p: [] for p in ps}
    n_te = Z_test.shape[0]
    buf = None
    if is_numpy_namespace(xp):
        buf = xp.empty((min(rows, n_te), n_tr), dtype=Z_train.dtype)
    for a in range(0, n_te, rows):
        b = min(a + rows, n_te)
        G = xp.zeros((b - a, n_tr), dtype=Z_train.dtype)
        out = None if buf is None else buf[: b - a, :]
        prev, prev_idx = 0, None
        for j, p in enumerate(ps):
            G = gram_accumulate(G, Z_test[a:b, prev:p], Z_train[:, prev:p])
            S = score_from_gram(G, p, metric, q_sum[j][a:b], r_sum[j], r_n2[j], out=out)
            # The previous p's neighbours are k columns: their smallest score now is a lower
            # bound of the k-th largest, and a tight one (neighbours change slowly with p).
            t = None if prev_idx is None else xp.min(xp.take_along_axis(S, prev_idx, axis=1), axis=1)
            vals, idx = topk_largest(S, k_max, threshold=t)
            del S
            dist = distances_from_scores(vals, p, metric, q_sum[j][a:b], q_n2[j][a:b])
            parts[p].append((dist, idx))
            prev, prev_idx = p, idx
        if on_tile is not None:
            on_tile(b, n_te)
    return {
        p: (xp.concat([d for d, _ in v], axis=0), xp.concat([i for _, i in v], axis=0))
        for p, v in parts.items()
    }


def _pair(A: Any, B: Any) -> tuple[Any, Any, Any]:
    xp = array_namespace(A, B)
    A = validate_matrix(A, xp, name="Z_train")
    B = validate_matrix(B, xp, name="Z_test", dtype=A.dtype)
    if A.shape[1] != B.shape[1]:
        raise InvalidInputError(f"Z_train has {A.shape[1]} columns but Z_test has {B.shape[1]}")
    return A, B, xp
