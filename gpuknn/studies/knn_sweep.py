"""The kNN/PCA study as a function, on any data: CV over k and PCA size, then one test.

Stages (each finished part goes to the :class:`~gpuknn.model_selection.journal.Journal`):

a. the score vs k (``ks_raw``) on the raw features, one ``kneighbors(k_max)`` per fold
   and metric;
b. explained variance of the whole (scaled) training set;
c. the score over the (k, p) grid per fold and metric, every p from one accumulated
   projection (:func:`~gpuknn.model_selection.cv.fold_kp_scores`);
d. the best (metric, k, p, weights) by mean CV score -- ties go to the metric listed first,
   then uniform before distance, the smaller p, the smaller k -- refitted on the whole
   training set and evaluated once on the test set.

Everything fitted is fitted **inside each fold** on the fold's training part only: the
scaling (``scale``), the resampling of the classes (``resample``, a
:mod:`gpuknn.resampling` sampler, training part only: the test part keeps its real class
balance) and the PCA. No printing: progress goes to ``callback(event, info)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, input_device, validate_matrix
from ..errors import InvalidInputError
from ..model_selection.cv import shared_tile_passes
from ..model_selection.journal import Journal
from ..model_selection.runner import check_n_jobs, get_runner, task_working_memory
from ..model_selection.splitters import StratifiedKFold
from ..model_selection.sweep import check_grid
from ..ops.distance import check_metric
from ..ops.limits import check_values
from .sweep_tables import MemoryJournal, aggregate, choose, host_labels
from .sweep_tasks import final_task, sampler, stage_task

__all__ = [
    "SweepConfig",
    "run_sweep",
    "check_config",
    "default_grids",
    "config_dict",
    "FASHION_PS",
    "SCALES",
    "SCORINGS",
]

# The seed grid (1..15 and 15 + 100 j) plus the 20..100 range where kNN on Fashion-MNIST
# peaks; all of it costs one projection per fold.
FASHION_PS = sorted(set(range(1, 16)) | {20, 25, 30, 40, 50, 60, 70, 80, 100} | set(range(115, 785, 100)))
SCALES = ("none", "standard", "minmax")
SCORINGS = ("accuracy", "macro_f1", "balanced_accuracy")


@dataclass
class SweepConfig:
    """Settings of :func:`run_sweep` (all JSON-serialisable; stored in the journal).

    ``metric`` is one metric or a list of them (CV chooses); ``scoring`` one of
    :data:`SCORINGS`; ``scale`` one of :data:`SCALES`; ``resample`` the name of a
    :mod:`gpuknn.resampling` sampler (default settings, ``random_state=seed`` where it
    takes one) or None. ``working_memory`` is in MiB (None: the engine's default), as for
    :func:`gpuknn.kneighbors`. The grids default to the Fashion-MNIST study's; see
    :func:`default_grids` for grids fitted to other data.
    """

    metric: str | list[str] = "correlation"
    ks_raw: list[int] = field(default_factory=lambda: list(range(1, 301)))
    ks: list[int] = field(default_factory=lambda: list(range(1, 31)))
    ps: list[int] = field(default_factory=lambda: list(FASHION_PS))
    weights: list[str] = field(default_factory=lambda: ["uniform", "distance"])
    folds: int = 5
    seed: int = 0
    pca_solver: str = "eigh"
    working_memory: float | None = None
    skip_raw: bool = False
    scoring: str = "accuracy"
    scale: str = "none"
    resample: str | None = None


Callback = Callable[[str, dict], None]


def default_grids(n_train: int, n_features: int, *, folds: int = 5) -> dict[str, list[int]]:
    """Grids fitted to a data set's shape: ``{"ks": ..., "ks_raw": ..., "ps": ...}``.

    k runs 1..30 (1..100 for the raw sweep), capped by the smallest fold's training size;
    p runs 1..min(n_features, that size) -- every value up to 15, then about 20 values
    spaced evenly on a log scale, always ending at the largest p.

    Examples
    --------
    >>> g = default_grids(150, 4)
    >>> g["ks"][-1], g["ps"]
    (30, [1, 2, 3, 4])
    """
    min_train = max(1, n_train - -(-n_train // folds))  # the smallest fold's training part
    ks = list(range(1, min(30, min_train) + 1))
    ks_raw = list(range(1, min(100, min_train) + 1))
    p_max = max(1, min(n_features, min_train))
    ps = set(range(1, min(15, p_max) + 1))
    if p_max > 15:
        ps |= {int(round(v)) for v in np.geomspace(15, p_max, 20)}
    return {"ks": ks, "ks_raw": ks_raw, "ps": sorted(ps)}


def _shared_passes(X_train, folds, metrics, ks, config, jr, runner, xp) -> tuple | None:
    """``raw_task``'s ``shared``: the tile passes of every fold's raw search together, for
    each metric no fold has done yet (:func:`~gpuknn.model_selection.cv.shared_tile_passes`:
    half the GEMMs), when the tasks run here and the folds search the rows as they are (no
    scaling or resampling fitted per fold); else None."""
    if runner.distributed or config.scale != "none" or config.resample is not None:
        return None
    fresh = [m for m in metrics if all(jr.get(f"raw/{m}/fold={f}") is None for f in range(len(folds)))]
    if not fresh:
        return None
    magnitude = check_values(X_train, xp, name="X_train")
    lists = {
        m: shared_tile_passes(X_train, folds, m, max(ks), magnitude=magnitude, working_memory=config.working_memory)
        for m in fresh
    }
    return magnitude, lists


def _noop(event: str, info: dict) -> None:
    return None


def check_config(config: SweepConfig) -> list[str]:
    """Check the options of ``config`` (metrics, scoring, scaling, sampler) before any work;
    returns the metrics as a list. Raises :class:`~gpuknn.errors.InvalidInputError`."""
    metrics = [config.metric] if isinstance(config.metric, str) else list(config.metric)
    if not metrics:
        raise InvalidInputError("metric must name at least one metric")
    for m in metrics:
        check_metric(m)
    if config.scoring not in SCORINGS:
        raise InvalidInputError(f"scoring must be one of {SCORINGS}, got {config.scoring!r}")
    if config.scale not in SCALES:
        raise InvalidInputError(f"scale must be one of {SCALES}, got {config.scale!r}")
    if config.resample is not None:
        sampler(config.resample, config.seed)
    return metrics


def run_sweep(
    X_train: Any,
    y_train: Any,
    X_test: Any,
    y_test: Any,
    config: SweepConfig,
    *,
    journal: Journal | None = None,
    callback: Callback | None = None,
    n_jobs: int | None = None,
    client: Any = None,
) -> dict[str, Any]:
    """Run the whole study; returns a JSON-serialisable dict of every number.

    Parameters
    ----------
    X_train, X_test : arrays (n, d) of one namespace; y_train, y_test : labels (host or xp)
    config : SweepConfig
    journal : Journal, optional
        Finished parts found there are reused; new ones are appended as they finish.
    callback : callable(event, info), optional
        Events: ``"stage"`` ({name, total}): ``"cross-validation"`` (its tasks: the (k, p)
        sweep per fold, the raw k sweep per fold, the explained variance, finishing in any
        order on threads or a cluster), then ``"final fit and test"``; ``"step"`` ({stage,
        done}, and in the cross-validation ``task`` -- ``"kp"``, ``"raw"``, ``"variance"`` --
        and ``fold``); ``"tile"`` (one task at a time only).
    n_jobs : int, optional
        Tasks (folds) run at once on threads of this process, as scikit-learn counts them
        (None: 1; -1: every core): NumPy arrays only -- other namespaces, a GPU's included,
        run one task at a time. The tasks share ``config.working_memory`` (or the 256 MiB
        default) evenly, and finish in any order (journalled as they do); the result does
        not depend on it (:mod:`gpuknn.model_selection.runner`).
    client : dask.distributed.Client, optional
        Run the study's tasks on its cluster (:mod:`gpuknn.studies.sweep_tasks`): the
        training data, class codes and folds are scattered once to every worker; one task
        per fold for the raw k sweep (all its metrics) and for the (k, p) sweep, one for
        the variance and one for the final fit. Results are journalled as tasks finish, in
        any order; the tables and the choice are the single-process ones. A worker that
        dies is replaced and its task rerun (:mod:`gpuknn.distributed.runner`).

    Returns
    -------
    dict with keys ``raw`` (k sweep of the chosen metric), ``variance``, ``heatmap`` (of
    the chosen metric), ``per_metric`` (``{metric: {"raw", "heatmap"}}``), ``best``,
    ``test``, ``scoring`` and ``k_best``, ``p_best``, ``weights_best``, ``metric_best``,
    ``cv_score_best``, ``test_accuracy``, ``test_macro_f1``, ``test_balanced_accuracy``
    (and ``cv_accuracy_best`` when ``scoring="accuracy"``).

    Notes
    -----
    Cost per fold and metric: one search of the raw features and one PCA of the training
    part with one projection for every p (see :func:`~gpuknn.model_selection.cv.fold_kp_scores`).
    With a client, the client process does only the bookkeeping; a ``config.working_memory``
    (MiB) of None is resolved on the client (``$GPUKNN_WORKING_MEMORY``, else 256 MiB) and passed
    to every task: give it for GPU workers.
    """
    cb = callback or _noop
    metrics = check_config(config)
    n_jobs = check_n_jobs(n_jobs)
    xp = array_namespace(X_train, X_test)
    # host matrices (lists, DataFrames) join the array one's device: xp's default may differ
    dev = input_device([X_train, X_test])
    X_train = validate_matrix(X_train, xp, name="X_train", device=dev)
    X_test = validate_matrix(X_test, xp, name="X_test", dtype=X_train.dtype, device=dev)
    if X_train.shape[1] != X_test.shape[1]:
        raise InvalidInputError(f"X_train has {X_train.shape[1]} features, X_test {X_test.shape[1]}")
    classes, ytr = np.unique(host_labels(y_train), return_inverse=True)
    yte_host = host_labels(y_test)
    if ytr.shape[0] != X_train.shape[0] or yte_host.shape[0] != X_test.shape[0]:
        raise InvalidInputError("labels and rows differ in length")
    unknown = np.setdiff1d(yte_host, classes)
    if unknown.size:
        raise InvalidInputError(f"y_test has labels absent from y_train: {unknown[:5].tolist()}")
    yte = np.searchsorted(classes, yte_host)
    n_classes = int(classes.shape[0])
    jr = journal or MemoryJournal()
    folds = list(StratifiedKFold(config.folds, shuffle=True, random_state=config.seed).split(ytr, ytr))
    min_train = min(tr.size for tr, _ in folds)
    ks_raw = check_grid(config.ks_raw, name="k", upper=min_train)
    ks = check_grid(config.ks, name="k", upper=min_train)
    ps = check_grid(config.ps, name="p", upper=min(X_train.shape[1], min_train))
    y_dev = from_numpy(ytr, xp, device=device_of(X_train))  # the class codes go where X_train is
    # the cross-validation's tasks: a (k, p) and a raw one per fold, and the variance
    total = len(folds) * (1 if config.skip_raw else 2) + 1
    runner = get_runner(client, n_jobs=n_jobs, xp=xp, tasks=total)
    # on a cluster or on threads the tasks get a working_memory resolved here (their share
    # of it on threads; the journal keeps config's)
    task_config = replace(config, working_memory=task_working_memory(runner, config.working_memory))
    # the training data, class codes and folds go to the workers once, for every stage
    shared = runner.share(X_train=X_train, y_dev=y_dev, folds=folds)
    common = {"n_classes": n_classes, "config": task_config}
    # a tile callback cannot cross to another process, and the tiles of folds on several
    # threads would mix in one count: tile progress is for one task at a time only
    on_tile = None if runner.distributed or runner.n_jobs > 1 else (lambda d, t: cb("tile", {"done": d, "total": t}))

    out: dict[str, Any] = {
        "classes": classes.tolist(),
        "n_train": int(X_train.shape[0]),
        "n_test": int(X_test.shape[0]),
        "scoring": config.scoring,
        "metrics": metrics,
        "per_metric": {m: {} for m in metrics},
    }
    # The cross-validation's tasks -- the (k, p) sweep per fold, the raw k sweep per fold,
    # the explained variance -- go to the runner together, the long ones first: on threads
    # or a cluster the short ones then fill the time the last long ones leave (run stage by
    # stage, each stage's last round would run alone while the other workers wait).
    jobs: list = []
    missing = {
        f: [m for m in metrics if any(jr.get(f"kp/{m}/fold={f}/p={p}") is None for p in ps)] for f in range(len(folds))
    }
    for f, todo in missing.items():
        if todo:
            jobs.append((("kp", f), {"stage": "kp", "f": f, "metrics": todo, "ks": ks, "ps": ps, "on_tile": on_tile}))
    if not config.skip_raw:
        passes = _shared_passes(X_train, folds, metrics, ks_raw, config, jr, runner, xp)
        for f in range(len(folds)):
            todo = [m for m in metrics if jr.get(f"raw/{m}/fold={f}") is None]
            if todo:  # one task per fold, for the metrics still to do (data prepared once)
                jobs.append((("raw", f), {"stage": "raw", "f": f, "metrics": todo, "ks": ks_raw, "shared": passes}))
    if jr.get("variance") is None:
        jobs.append((("variance", None), {"stage": "variance"}))
    done = total - len(jobs)
    cb("stage", {"name": "cross-validation", "total": total})
    if done:  # resumed: the tasks journalled before count from the start
        cb("step", {"stage": "cross-validation", "done": done})
    for (stage, f), records in runner.run(stage_task, [(key, {**kw, **common}) for key, kw in jobs], shared):
        # journalled the moment the task finishes
        if stage == "variance":
            jr.append("variance", records)
        for m, record in records.items() if stage == "raw" else ():
            jr.append(f"raw/{m}/fold={f}", record)
        for m, per_p in records.items() if stage == "kp" else ():
            for p, record in per_p.items():
                if jr.get(f"kp/{m}/fold={f}/p={p}") is None:
                    jr.append(f"kp/{m}/fold={f}/p={p}", record)
        done += 1
        cb("step", {"stage": "cross-validation", "done": done, "task": stage, "fold": f})
    if not config.skip_raw:
        for m in metrics:
            out["per_metric"][m]["raw"] = aggregate(
                [jr.get(f"raw/{m}/fold={f}")["scores"] for f in range(len(folds))], ks_raw, config.scoring
            )
    out["variance"] = {k: v for k, v in jr.get("variance").items() if k.startswith("explained")}
    for m in metrics:
        heat = {
            p: aggregate([jr.get(f"kp/{m}/fold={f}/p={p}")["scores"] for f in range(len(folds))], ks, config.scoring)
            for p in ps
        }
        out["per_metric"][m]["heatmap"] = {
            "ps": ps,
            "ks": ks,
            "weights": list(config.weights),
            "scoring": config.scoring,
            "mean": {w: [heat[p][w]["mean"] for p in ps] for w in config.weights},
            "std": {w: [heat[p][w]["std"] for p in ps] for w in config.weights},
        }

    best = choose({m: out["per_metric"][m]["heatmap"] for m in metrics})
    out["best"] = best
    out["heatmap"] = out["per_metric"][best["metric"]]["heatmap"]
    if "raw" in out["per_metric"][best["metric"]]:
        out["raw"] = out["per_metric"][best["metric"]]["raw"]
    cb("stage", {"name": "final fit and test", "total": 1})
    if jr.get("final") is None:
        final_shared = {**shared, **runner.share(X_test=X_test, y_test=yte)}
        del final_shared["folds"]
        # it runs alone: the whole budget (resolved on the client for a cluster's worker)
        final_config = task_config if runner.distributed else config
        job = ("final", {"best": best, "n_classes": n_classes, "config": final_config})
        for _, record in runner.run(final_task, [job], final_shared):
            jr.append("final", record)
    test = {k: v for k, v in jr.get("final").items() if k not in ("key", "checksum")}
    cb("step", {"stage": "final", "done": 1})
    out["test"] = test
    out.update(
        k_best=best["k"],
        p_best=best["p"],
        weights_best=best["weights"],
        metric_best=best["metric"],
        cv_score_best=best["cv_score"],
        test_accuracy=test["accuracy"],
        test_macro_f1=test["macro_f1"],
        test_balanced_accuracy=test["balanced_accuracy"],
    )
    if config.scoring == "accuracy":
        out["cv_accuracy_best"] = best["cv_score"]
    out["seconds_compute"] = float(sum(r.get("seconds", 0.0) for r in jr.records.values()))
    return out


def config_dict(config: SweepConfig) -> dict:
    """JSON form of the settings (what the journal must match to resume)."""
    return asdict(config)
