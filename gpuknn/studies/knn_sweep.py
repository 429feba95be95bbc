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

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy, validate_matrix
from .._delegation import take_rows
from ..errors import InvalidInputError
from ..metrics import accuracy_score, balanced_accuracy_score, confusion_matrix, f1_score
from ..model_selection.cv import fold_k_scores, fold_kp_scores
from ..model_selection.journal import Journal
from ..model_selection.splitters import StratifiedKFold
from ..model_selection.sweep import check_grid
from ..ops.distance import check_metric
from .sweep_tables import MemoryJournal, aggregate, choose, host_labels, lists

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
    takes one) or None. The grids default to the Fashion-MNIST study's; see
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
    working_memory: int | None = None
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
        _sampler(config.resample, config.seed)
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
) -> dict[str, Any]:
    """Run the whole study; returns a JSON-serialisable dict of every number.

    Parameters
    ----------
    X_train, X_test : arrays (n, d) of one namespace; y_train, y_test : labels (host or xp)
    config : SweepConfig
    journal : Journal, optional
        Finished parts found there are reused; new ones are appended as they finish.
    callback : callable(event, info), optional
        Events: ``"stage"`` ({name, total}), ``"step"`` ({stage, done}), ``"tile"``.

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
    """
    cb = callback or _noop
    metrics = check_config(config)
    xp = array_namespace(X_train, X_test)
    X_train = validate_matrix(X_train, xp, name="X_train")
    X_test = validate_matrix(X_test, xp, name="X_test", dtype=X_train.dtype)
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
    y_dev = from_numpy(ytr, xp)
    scoring = _scoring(config.scoring)

    def fold_data(tr, te):
        """The fold's training part scaled and resampled, its test part scaled."""
        Xtr, Xte = _scaled(take_rows(X_train, tr), take_rows(X_train, te), config.scale, xp)
        Xtr, ytr_f = _resampled(Xtr, take_rows(y_dev, tr), config)
        return Xtr, ytr_f, Xte, take_rows(y_dev, te)

    out: dict[str, Any] = {
        "classes": classes.tolist(),
        "n_train": int(X_train.shape[0]),
        "n_test": int(X_test.shape[0]),
        "scoring": config.scoring,
        "metrics": metrics,
        "per_metric": {m: {} for m in metrics},
    }
    if not config.skip_raw:
        cb("stage", {"name": "k sweep (raw features)", "total": len(folds) * len(metrics)})
        done = 0
        for f, (tr, te) in enumerate(folds):
            data = None  # the fold's scaled (and resampled) parts, made once for every metric
            for m in metrics:
                key = f"raw/{m}/fold={f}"
                if jr.get(key) is None:
                    t0 = time.perf_counter()
                    data = fold_data(tr, te) if data is None else data
                    scores = fold_k_scores(
                        *data,
                        ks_raw,
                        n_classes=n_classes,
                        metric=m,
                        weights=config.weights,
                        scoring=scoring,
                        working_memory=config.working_memory,
                    )
                    jr.append(key, {"fold": f, "scores": lists(scores), "seconds": time.perf_counter() - t0})
                done += 1
                cb("step", {"stage": "raw", "done": done})
        for m in metrics:
            out["per_metric"][m]["raw"] = aggregate(
                [jr.get(f"raw/{m}/fold={f}")["scores"] for f in range(len(folds))], ks_raw, config.scoring
            )

    cb("stage", {"name": "explained variance", "total": 1})
    if jr.get("variance") is None:
        t0 = time.perf_counter()
        Xs, _ = _scaled(X_train, None, config.scale, xp)
        pca = _pca(min(X_train.shape), config).fit(Xs)  # the whole spectrum
        jr.append(
            "variance",
            {
                "explained_variance": to_numpy(pca.explained_variance_).tolist(),
                "explained_variance_ratio": to_numpy(pca.explained_variance_ratio_).tolist(),
                "seconds": time.perf_counter() - t0,
            },
        )
    out["variance"] = {k: v for k, v in jr.get("variance").items() if k.startswith("explained")}
    cb("step", {"stage": "variance", "done": 1})

    cb("stage", {"name": "(k, p) sweep", "total": len(folds)})
    for f, (tr, te) in enumerate(folds):
        if any(jr.get(f"kp/{m}/fold={f}/p={p}") is None for m in metrics for p in ps):
            t0 = time.perf_counter()
            Xtr, ytr_f, Xte, yte_f = fold_data(tr, te)
            pca = _pca(max(ps), config).fit(Xtr)  # training part of the fold only: no leakage
            Ztr, Zte = pca.transform(Xtr), pca.transform(Xte)
            del Xtr, Xte
            for m in metrics:
                per_p = fold_kp_scores(
                    Ztr,
                    ytr_f,
                    Zte,
                    yte_f,
                    ks,
                    ps,
                    n_classes=n_classes,
                    metric=m,
                    weights=config.weights,
                    scoring=scoring,
                    working_memory=config.working_memory,
                    on_tile=lambda d, t: cb("tile", {"done": d, "total": t}),
                )
                seconds = (time.perf_counter() - t0) / (len(ps) * len(metrics))
                for p in ps:
                    jr.append(
                        f"kp/{m}/fold={f}/p={p}", {"fold": f, "p": p, "scores": lists(per_p[p]), "seconds": seconds}
                    )
        cb("step", {"stage": "kp", "done": f + 1})
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
        t0 = time.perf_counter()
        test = _final(X_train, y_dev, X_test, yte, best, n_classes, config, xp)
        test["seconds"] = time.perf_counter() - t0
        jr.append("final", test)
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


def _scoring(name: str) -> Any:
    # accuracy and macro-F1 have vectorised scorers for all k at once; balanced accuracy is
    # scored per k on the host (one small call per k).
    return {name: balanced_accuracy_score} if name == "balanced_accuracy" else [name]


def _scaled(Xtr: Any, Xte: Any, kind: str, xp: Any) -> tuple[Any, Any]:
    """``(Xtr, Xte)`` scaled by statistics of ``Xtr`` only (constant columns unscaled)."""
    if kind == "none":
        return Xtr, Xte
    if kind == "standard":
        shift, spread = xp.mean(Xtr, axis=0), xp.std(Xtr, axis=0)
    else:  # minmax
        shift = xp.min(Xtr, axis=0)
        spread = xp.max(Xtr, axis=0) - shift
    spread = xp.where(spread > 0, spread, xp.ones_like(spread))
    return (Xtr - shift) / spread, None if Xte is None else (Xte - shift) / spread


def _sampler(name: str, seed: int) -> Any:
    from .. import resampling  # noqa: PLC0415

    cls = getattr(resampling, name, None)
    if not (isinstance(cls, type) and hasattr(cls, "fit_resample")):
        valid = sorted(
            n for n in resampling.__all__ if hasattr(getattr(resampling, n), "fit_resample") and n[0].isupper()
        )
        raise InvalidInputError(
            f"resample must name a gpuknn.resampling sampler, got {name!r}; valid: {', '.join(valid)}"
        )
    params = cls().get_params()
    return cls(random_state=seed) if "random_state" in params else cls()


def _resampled(X: Any, y: Any, config: SweepConfig) -> tuple[Any, Any]:
    if config.resample is None:
        return X, y
    return _sampler(config.resample, config.seed).fit_resample(X, y)


def _pca(n_components: int, config: SweepConfig):
    from ..decomposition import PCA  # noqa: PLC0415 - PCA sits beside the engine

    return PCA(n_components, solver=config.pca_solver, random_state=config.seed)


def _final(X_train, y_dev, X_test, yte, best, n_classes, config, xp) -> dict:
    Xtr, Xte = _scaled(X_train, X_test, config.scale, xp)
    Xtr, ytr = _resampled(Xtr, y_dev, config)
    pca = _pca(best["p"], config).fit(Xtr)
    Ztr, Zte = pca.transform(Xtr), pca.transform(Xte)
    from ..neighbors import search  # noqa: PLC0415
    from ..votes import votes_for_many_k  # noqa: PLC0415

    nb = search(Zte, Ztr, best["k"], metric=best["metric"], working_memory=config.working_memory)
    i = nb.indices
    lab = xp.reshape(xp.take(ytr, xp.reshape(i, (-1,))), i.shape)
    extra = nb.vote_args() if best["weights"] == "distance" else {}
    pred = to_numpy(votes_for_many_k(lab, [best["k"]], n_classes=n_classes, weights=best["weights"], **extra)[0])
    labels = np.arange(n_classes)
    cm = to_numpy(confusion_matrix(yte, pred, labels=labels))
    f1 = to_numpy(f1_score(yte, pred, labels=labels, average=None))
    return {
        "accuracy": accuracy_score(yte, pred),
        "macro_f1": float(f1.mean()),
        "balanced_accuracy": float(balanced_accuracy_score(yte, pred)),
        "confusion_matrix": cm.tolist(),
        "per_class_f1": f1.tolist(),
    }


def config_dict(config: SweepConfig) -> dict:
    """JSON form of the settings (what the journal must match to resume)."""
    return asdict(config)
