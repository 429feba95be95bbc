"""Cross-validated k and (k, p) sweeps returning a tidy table (one row per fold × setting).

:func:`cross_validate_k` runs one ``kneighbors(k_max)`` per fold and scores every k and
weighting from it; :func:`cross_validate_kp` fits PCA on each fold's training part only and
scores every (p, k) from one accumulated projection. The per-fold steps
(:func:`fold_k_scores`, :func:`fold_kp_scores`) are what the Fashion-MNIST study journals.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, to_numpy, validate_matrix
from .._delegation import on_input_device, one_blas_thread_for, take_rows
from .._labels import encode_labels
from .._memory import preferred_tile_bytes
from ..errors import InvalidInputError
from ..ops.distance import check_metric
from ..ops.exact import EXACT_BLOCK_BYTES, distance_interval, keys_to_distances
from ..ops.folds import fold_lists
from ..ops.gram import prefix_references
from ..ops.kneighbors import reference_for, search, search_validated
from ..ops.limits import check_values, check_working_memory
from ..ops.metricspec import resolve_metric
from ..ops.psweep import prefix_refine
from .runner import check_n_jobs, get_runner, task_working_memory
from .splitters import StratifiedKFold
from .sweep import check_grid, check_names, neighbors_for_p_sweep, score_votes

__all__ = ["SweepTable", "cross_validate_k", "cross_validate_kp", "fold_k_scores", "fold_kp_scores"]


class SweepTable:
    """Tidy sweep results: ``rows`` is a list of dicts with ``fold``, ``weights``, ``k``
    (and ``p``) and one entry per scorer; :meth:`summary` averages over folds."""

    def __init__(self, rows: list[dict], scorers: Sequence[str]):
        self.rows = rows
        self.scorers = list(scorers)

    def column(self, name: str) -> np.ndarray:
        """One column as a NumPy array."""
        return np.asarray([r[name] for r in self.rows])

    def summary(self) -> list[dict]:
        """Mean and std (population) over folds for every (p, weights, k)."""
        keys = [k for k in ("p", "weights", "k") if self.rows and k in self.rows[0]]
        groups: dict[tuple, list[dict]] = {}
        for r in self.rows:
            groups.setdefault(tuple(r[k] for k in keys), []).append(r)
        out = []
        for key, rs in groups.items():
            row = dict(zip(keys, key))
            for s in self.scorers:
                v = np.asarray([r[s] for r in rs])
                row[f"{s}_mean"], row[f"{s}_std"] = float(v.mean()), float(v.std())
            out.append(row)
        return out

    def best(self, scorer: str | None = None) -> dict:
        """The summary row with the highest mean score (ties: first in table order)."""
        s = scorer or self.scorers[0]
        summ = self.summary()
        return max(summ, key=lambda r: (r[f"{s}_mean"], -summ.index(r)))


def _labels(y_train_dev: Any, nbr: Any, xp: Any) -> Any:
    return xp.reshape(xp.take(y_train_dev, xp.reshape(nbr, (-1,))), nbr.shape)


def _vote_bytes(budget: int, xp: Any) -> int:
    """Block size of a sweep's votes, in bytes of class totals (one (rows, k_max, classes)
    float64 array): the vote makes about ten arrays of that size (one-hot counts, cumulative
    sums, weights and their intervals), so a 64th of the budget -- one block on a GPU, not
    one per 4 MiB of totals; the host keeps 4 MiB blocks (larger ones only add memory and
    traffic there: 18 MiB blocks cost the main job 200 MiB of peak memory)."""
    share = max(1, budget // 64)
    return share if preferred_tile_bytes(xp) is None else min(share, 4 << 20)


def fold_k_scores(
    X_train,
    y_train,
    X_test,
    y_test,
    ks,
    *,
    n_classes,
    metric,
    weights,
    scoring,
    working_memory=None,
    magnitude: float | None = None,
    shared: Any = None,
) -> dict:
    """Scores of every (weights, k) on one fold; labels are class indices in X's namespace.

    ``magnitude``: ``max |X|`` of rows the caller has validated (:func:`gpuknn.ops.limits.check_values`,
    as :func:`cross_validate_k` does once for the whole X); then nothing is checked or
    scanned again in the fold. Without it the rows are checked here. ``working_memory``:
    MiB, as for :func:`gpuknn.kneighbors`. ``shared``: this fold's
    :class:`~gpuknn.ops.folds.FoldSearch` (:func:`shared_tile_passes`): its tile pass done
    with the other folds', for ``max(ks)`` neighbours; used only with ``magnitude`` (the
    rows validated once for every fold), not read otherwise.
    """
    xp = array_namespace(X_train)
    metric = resolve_metric(metric)  # any neighbour metric (aliases, "minkowski:3")
    wm = check_working_memory(working_memory, xp, device_of(X_train))  # bytes
    if magnitude is None:
        nb = search(X_test, X_train, max(ks), metric=metric, working_memory=working_memory, labels=y_train)
    else:
        if shared is None:
            ref, lists = reference_for(X_train, metric), None
        else:
            ref, lists = reference_for(X_train, metric, centre=shared.centre, summary=shared.summary), shared.lists
        nb = search_validated(
            X_test, ref, max(ks), magnitude=magnitude, working_memory=wm, labels=y_train, nominated=lists
        )
    va = nb.vote_args()
    weights = check_names(weights, name="weights", allowed=("uniform", "distance"))
    scoring = scoring if isinstance(scoring, dict) else check_names(scoring, name="scoring")
    # The fold's own lists: scored without checking them again (score_many_k's internal entry).
    return score_votes(
        _labels(y_train, nb.indices, xp),
        va["distances"],
        y_test,
        list(ks),
        n_classes,
        weights,
        scoring,
        xp,
        bounds=va["bounds"],
        refine=va["refine"],
        max_bytes=_vote_bytes(wm, xp),
    )


def shared_tile_passes(
    X: Any, folds: list, metric: str, k: int, *, magnitude: float, working_memory: float | None = None
) -> list | None:
    """Per fold the ``shared=`` argument of :func:`fold_k_scores` (a
    :class:`~gpuknn.ops.folds.FoldSearch`) -- the tile pass of every
    fold's ``k``-neighbour search from one pass over the pairs of folds
    (:func:`gpuknn.ops.folds.fold_lists`: half the GEMMs of K separate searches) -- or None
    where the folds do not allow it (they do not partition X, say). X validated
    (``magnitude`` its ``max |X|``); ``metric`` any neighbour metric name;
    ``working_memory`` in MiB, as for :func:`gpuknn.kneighbors`."""
    xp = array_namespace(X)
    wm = check_working_memory(working_memory, xp, device_of(X))
    return fold_lists(X, folds, resolve_metric(metric), k, magnitude=magnitude, working_memory=wm)


def fit_project(pca: Any, X_train: Any, X_test: Any) -> tuple[Any, Any]:
    """``(Z_train, Z_test)``: ``pca`` fitted on ``X_train`` and both parts projected -- a
    sweep's fold -- with the host BLAS on one thread.

    A host BLAS rounds about 2 % of a float32 GEMM's entries differently on one thread and
    on two (OpenBLAS 0.3.31), and through near ties that changed (k, p) tables. On one
    thread a sweep's projections, hence its tables, are the same whether its folds run one
    at a time, on threads (``n_jobs``, :mod:`gpuknn.model_selection.runner`) or on a Dask
    worker (one BLAS thread by default). The scope is the main thread's
    (:func:`~gpuknn._delegation.precision.one_blas_thread`): called from another thread
    outside such a run, the fold runs on the process's BLAS thread count. Cost: the fit's
    and projections' GEMMs on one core, a few per cent of a fold's work. A GPU's arrays are
    left as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.decomposition import PCA
    >>> X = np.random.default_rng(0).standard_normal((20, 4))
    >>> [Z.shape for Z in fit_project(PCA(2), X[:15], X[15:])]
    [(15, 2), (5, 2)]
    """
    with one_blas_thread_for(X_train):
        pca.fit(X_train)
        return pca.transform(X_train), pca.transform(X_test)


def fold_kp_scores(
    Z_train, y_train, Z_test, y_test, ks, ps, *, n_classes, metric, weights, scoring, working_memory=None, on_tile=None
) -> dict:
    """``{p: scores}`` for every p on one fold, from rows projected onto ``max(ps)`` components.

    The lists of many p are voted on and scored together (stacked, as many p at a time as
    ``working_memory`` holds): one vote pass and one host transfer of scores for them all.
    """
    xp = array_namespace(Z_train)
    ps = sorted(set(ps))
    ks = list(ks)
    weights = check_names(weights, name="weights", allowed=("uniform", "distance"))
    scoring = scoring if isinstance(scoring, dict) else check_names(scoring, name="scoring")
    budget = check_working_memory(working_memory, xp, device_of(Z_train))
    refs = prefix_references(Z_train, Z_test, ps, metric, budget=budget)
    nbrs = neighbors_for_p_sweep(
        Z_train,
        Z_test,
        ps,
        max(ks),
        metric=metric,
        references=refs,
        working_memory=working_memory,
        on_tile=on_tile,
        return_keys=True,
        labels=y_train,
    )
    # Sizes whose distances are exact (every key computed) vote without intervals, as each
    # size alone would: which ones, in one transfer for the grid.
    inexact = to_numpy(xp.any(xp.stack([nbrs[p][2] for p in ps]) > 0, axis=1)).tolist()
    stats = {p: ref.stats for p, ref in zip(ps, refs)}
    q_stats = {p: ref.query_stats for p, ref in zip(ps, refs)}
    per_set = max(1, int(Z_test.shape[0]) * max(ks) * _VOTE_ENTRY_BYTES)
    # As many p as the budget holds on a device; on the host a cache-sized stack (the
    # stacked lists and their votes' temporaries would otherwise add ~100 MiB of peak).
    cap = preferred_tile_bytes(xp)
    step = max(1, (budget if cap is None else min(budget, cap)) // per_set)
    # The refinement's exact pass in one block on a device (as the sweep's own exact pass),
    # in cache-friendly ones on the host.
    key_bytes = budget if cap is None else EXACT_BLOCK_BYTES
    out = {}
    for with_err in (False, True):
        same = [p for p, e in zip(ps, inexact) if e == with_err]
        for group in (same[g0 : g0 + step] for g0 in range(0, len(same), step)):
            # Each p's lists are freed as soon as they are stacked.
            keys, i, err = (xp.concat(parts, axis=0) for parts in zip(*(nbrs.pop(p) for p in group)))
            bounds, refine = None, None
            if with_err:
                bounds = distance_interval(keys, err, metric)
                refine = prefix_refine(
                    Z_test,
                    Z_train,
                    group,
                    i,
                    metric,
                    [stats[p] for p in group],
                    [q_stats[p] for p in group],
                    max_bytes=key_bytes,
                )
            scores = score_votes(
                _labels(y_train, i, xp),
                keys_to_distances(keys, metric),
                y_test,
                ks,
                n_classes,
                weights,
                scoring,
                xp,
                bounds=bounds,
                refine=refine,
                sets=len(group),
                max_bytes=_vote_bytes(budget, xp),
            )
            for s, p in enumerate(group):
                out[p] = {w: {name: v[s] for name, v in per.items()} for w, per in scores.items()}
    return {p: out[p] for p in ps}


# Bytes per stacked neighbour-list entry while a group of p is scored: keys, indices,
# errors, distances, labels, their intervals and the vote weights.
_VOTE_ENTRY_BYTES = 64


def _prepare(X, y, cv):
    xp = array_namespace(X)
    X = validate_matrix(X, xp, name="X", check_finite=False)
    magnitude = check_values(X, xp, name="X")  # the one value check; the folds trust it
    classes, y_dev = encode_labels(y, X.shape[0], xp, device_of(X))
    folds = check_folds(cv, X, to_numpy(y_dev))  # the class codes stratify like the labels
    return xp, X, y_dev, int(classes.shape[0]), folds, magnitude


def check_folds(cv: Any, X: Any, y_codes: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(train, test)`` host index pairs of ``cv``, as scikit-learn's ``cv=`` reads it.

    ``None``: ``StratifiedKFold(5, shuffle=True, random_state=0)``; an int n:
    ``StratifiedKFold(n)`` (scikit-learn's choice for a classifier); a splitter with
    ``split(X, y)`` (gpuknn's or scikit-learn's); or an iterable of ``(train, test)`` index
    pairs. Anything else, or indices out of range, raise :class:`InvalidInputError`.
    """
    n = int(X.shape[0])
    if cv is None:
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
    elif isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        cv = StratifiedKFold(int(cv))
    if isinstance(cv, (str, bytes)):  # str.split is no splitter
        pairs = None
    elif hasattr(cv, "split"):
        pairs = cv.split(X, y_codes)
    elif hasattr(cv, "__iter__"):
        pairs = cv
    else:
        pairs = None
    if pairs is None:
        raise InvalidInputError(
            f"cv must be None, an int, a splitter with split(X, y) or (train, test) index pairs; got {cv!r}"
        )
    folds = []
    for pair in pairs:
        try:
            tr, te = (np.asarray(a) for a in pair)
        except (TypeError, ValueError):
            raise InvalidInputError(f"cv gave {pair!r}, not a (train, test) pair of index arrays") from None
        for name, idx in (("train", tr), ("test", te)):
            if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= n:
                raise InvalidInputError(
                    f"cv fold {len(folds)}: {name} indices must be a non-empty 1-D integer array in "
                    f"[0, {n}), got shape {idx.shape}, dtype {idx.dtype}"
                )
        folds.append((tr.astype(np.int64), te.astype(np.int64)))
    if not folds:
        raise InvalidInputError("cv gave no folds")
    return folds


def _options(weights: Any, scoring: Any) -> tuple[list, Any, list]:
    """``weights`` and ``scoring`` as lists (one name is a list of one), and the scorer names."""
    weights = check_names(weights, name="weights", allowed=("uniform", "distance"))
    if not isinstance(scoring, dict):
        scoring = check_names(scoring, name="scoring")
    return weights, scoring, list(scoring)


def _rows(scores: dict, ks, fold: int, extra: dict) -> list[dict]:
    return [
        {"fold": fold, **extra, "weights": w, "k": k, **{name: float(v[j]) for name, v in per.items()}}
        for w, per in scores.items()
        for j, k in enumerate(ks)
    ]


@on_input_device
def cross_validate_k(
    X: Any,
    y: Any,
    ks: Sequence[int],
    *,
    cv: Any = None,
    metric: str = "euclidean",
    weights: Sequence[str] = ("uniform",),
    scoring: Sequence[str] | dict = ("accuracy",),
    working_memory: float | None = None,
    n_jobs: int | None = None,
    client: Any = None,
) -> SweepTable:
    """Cross-validated scores of kNN for every k in ``ks`` from one neighbour search per fold.

    Parameters
    ----------
    X : array (n, d); y : labels (n,) of any dtype
    ks : sequence of int
    cv : None, int, splitter with ``split(X, y)``, or iterable of ``(train, test)`` index pairs
        As scikit-learn's ``cv=`` (:func:`check_folds`); default
        ``StratifiedKFold(5, shuffle=True, random_state=0)``.
    metric, weights, working_memory : as for :class:`gpuknn.KNeighborsClassifier`
        (``metric``: any name :func:`gpuknn.kneighbors` takes, ``"minkowski:3"`` for
        Minkowski with p = 3)
    scoring : names (``"accuracy"``, ``"macro_f1"``) or ``{name: callable(y_true, y_pred)}``
    n_jobs : int, optional
        Folds searched at once on threads of this process, as scikit-learn counts them
        (None: 1; -1: every core). NumPy arrays only (other namespaces, a GPU's included,
        run one fold at a time); the folds share ``working_memory`` evenly
        (:mod:`gpuknn.model_selection.runner`). The table does not depend on it.
    client : dask.distributed.Client, optional
        Run one task per fold on its cluster: X, y and the folds are scattered once to
        every worker (``broadcast=True``), each task searches and scores its fold there, and
        the table is the single-process one (rows in fold order). A worker that dies is
        replaced and its fold rerun (see :mod:`gpuknn.distributed.runner`). A
        ``working_memory`` (MiB) of None is resolved on the client (``$GPUKNN_WORKING_MEMORY``,
        else 256 MiB), never by a worker; give it for GPU workers.

    Returns
    -------
    SweepTable with one row per (fold, weights, k).

    Notes
    -----
    Cost per fold: one ``kneighbors`` with ``max(ks)`` plus O(n_test · k_max · n_classes);
    when the test sets partition X (K-fold) and no client is given, the folds' tile passes
    are one pass over the pairs of folds (:func:`shared_tile_passes`: half the GEMMs).
    Equals fitting a separate :class:`~gpuknn.KNeighborsClassifier` for every k (tested).

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.model_selection import KFold
    >>> X = np.arange(20.0)[:, None]; y = (X[:, 0] > 9).astype(int)
    >>> t = cross_validate_k(X, y, [1, 3], cv=KFold(2, shuffle=True, random_state=0))
    >>> [round(r["accuracy_mean"], 2) for r in t.summary()]
    [0.95, 0.9]
    """
    metric = resolve_metric(metric)  # every neighbour metric (aliases, minkowski "minkowski:3")
    n_jobs = check_n_jobs(n_jobs)
    xp, X, y_dev, n_classes, folds, magnitude = _prepare(X, y, cv)
    ks = check_grid(ks, name="k", argument="ks", upper=min(tr.size for tr, _ in folds))
    weights, scoring, names = _options(weights, scoring)
    options = {"n_classes": n_classes, "metric": metric, "weights": weights, "scoring": scoring}
    options["magnitude"] = magnitude
    if client is None:  # one tile pass for every fold (the tasks of a cluster search their own)
        options["shared"] = shared_tile_passes(
            X, folds, metric, max(ks), magnitude=magnitude, working_memory=working_memory
        )
    rows = _run_folds(_k_fold, client, n_jobs, X, y_dev, folds, ks=ks, working_memory=working_memory, **options)
    return SweepTable(rows, names)


def _run_folds(task: Any, client: Any, n_jobs: Any, X: Any, y_dev: Any, folds: list, **options: Any) -> list[dict]:
    """The table rows of ``task`` run on every fold -- here (on ``n_jobs`` threads), or one
    Dask task per fold with X, y and the folds scattered once -- assembled in fold order
    whatever order they finish."""
    runner = get_runner(client, n_jobs=n_jobs, xp=array_namespace(X), tasks=len(folds))
    options["working_memory"] = task_working_memory(runner, options["working_memory"])
    shared = runner.share(X=X, y=y_dev, folds=folds)
    by_fold = dict(runner.run(task, [(f, {"f": f, **options}) for f in range(len(folds))], shared))
    return [row for f in range(len(folds)) for row in by_fold[f]]


def _k_fold(
    X, y, folds, f, ks, n_classes, metric, weights, scoring, working_memory, magnitude, shared=None
) -> list[dict]:
    """One fold of :func:`cross_validate_k`: its table rows (``shared``: every fold's
    :func:`fold_k_scores` argument, or None)."""
    tr, te = folds[f]
    sc = fold_k_scores(
        take_rows(X, tr),
        take_rows(y, tr),
        take_rows(X, te),
        take_rows(y, te),
        ks,
        n_classes=n_classes,
        metric=metric,
        weights=weights,
        scoring=scoring,
        working_memory=working_memory,
        magnitude=magnitude,
        shared=None if shared is None else shared[f],
    )
    return _rows(sc, ks, f, {})


@on_input_device
def cross_validate_kp(
    X: Any,
    y: Any,
    ks: Sequence[int],
    ps: Sequence[int],
    *,
    cv: Any = None,
    metric: str = "correlation",
    weights: Sequence[str] = ("uniform",),
    scoring: Sequence[str] | dict = ("accuracy",),
    pca_solver: str = "eigh",
    random_state: Any = None,
    working_memory: float | None = None,
    n_jobs: int | None = None,
    client: Any = None,
) -> SweepTable:
    """Cross-validated scores for every (p, k): PCA to p components, then kNN.

    PCA is fitted on each fold's training part only (no leakage) with ``max(ps)``
    components; every p comes from that one projection (:func:`neighbors_for_p_sweep`).
    Returns a :class:`SweepTable` with one row per (fold, p, weights, k). Equals refitting
    PCA(p) + kNN for every (p, k) (tested). See :func:`cross_validate_k` for the options
    (``n_jobs``: folds on threads; ``client``: one Dask task per fold, the PCA fitted
    inside it). The p-sweep accumulates
    inner products: it serves the inner-product metrics only (others are refused here).
    """
    check_metric(metric)
    n_jobs = check_n_jobs(n_jobs)
    xp, X, y_dev, n_classes, folds, _ = _prepare(X, y, cv)
    ks = check_grid(ks, name="k", argument="ks", upper=min(tr.size for tr, _ in folds))
    ps = check_grid(ps, name="p", argument="ps", upper=min(X.shape[1], min(tr.size for tr, _ in folds)))
    weights, scoring, names = _options(weights, scoring)
    options = {"n_classes": n_classes, "metric": metric, "weights": weights, "scoring": scoring}
    pca = {"pca_solver": pca_solver, "random_state": random_state}
    rows = _run_folds(
        _kp_fold, client, n_jobs, X, y_dev, folds, ks=ks, ps=ps, working_memory=working_memory, **options, **pca
    )
    return SweepTable(rows, names)


def _kp_fold(X, y, folds, f, ks, ps, n_classes, metric, weights, scoring, pca_solver, random_state, working_memory):
    """One fold of :func:`cross_validate_kp`: PCA on its training part, every (p, k) scored."""
    from ..decomposition import PCA  # noqa: PLC0415 - PCA sits beside the engine

    tr, te = folds[f]
    Xtr, Xte = take_rows(X, tr), take_rows(X, te)
    Ztr, Zte = fit_project(PCA(max(ps), solver=pca_solver, random_state=random_state), Xtr, Xte)
    del Xtr, Xte
    per_p = fold_kp_scores(
        Ztr,
        take_rows(y, tr),
        Zte,
        take_rows(y, te),
        ks,
        ps,
        n_classes=n_classes,
        metric=metric,
        weights=weights,
        scoring=scoring,
        working_memory=working_memory,
    )
    return [row for p in ps for row in _rows(per_p[p], ks, f, {"p": p})]
