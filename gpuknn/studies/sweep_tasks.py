"""The work units of the kNN/PCA study (:func:`gpuknn.studies.knn_sweep.run_sweep`).

Each stage of the study is a set of independent tasks -- the raw k sweep per fold (for the
fold's metrics still to do), the explained variance, the (k, p) sweep per fold, the final
fit and test -- written as plain functions of the shared arrays (the training data, its
class codes, the folds) and small options. The same functions run here, one after the
other, or as Dask tasks on a cluster (:mod:`gpuknn.model_selection.runner`): a task
returns its journal records and never touches the journal, the callback or the client.
Everything fitted is fitted on the fold's training part only: scaling, resampling, PCA.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .._backend import array_namespace, to_numpy
from .._delegation import one_blas_thread_for, take_rows
from ..errors import InvalidInputError
from ..metrics import accuracy_score, balanced_accuracy_score, confusion_matrix, f1_score
from ..model_selection.cv import fit_project, fold_k_scores, fold_kp_scores
from ..ops.kneighbors import search
from ..ops.votes import votes_for_many_k
from .sweep_tables import lists

__all__ = ["raw_task", "variance_task", "kp_task", "stage_task", "final_task", "sampler", "scaled"]


def raw_task(X_train, y_dev, folds, *, f, metrics, ks, n_classes, config, shared=None) -> dict[str, dict]:
    """The k sweep on the raw features of fold ``f`` for each of ``metrics``:
    ``{metric: journal record}``; the fold's data are prepared once for all of them.
    ``shared``: ``(magnitude, {metric: every fold's FoldSearch})`` when the tile passes of
    every fold were done together (:func:`gpuknn.model_selection.cv.shared_tile_passes`;
    unscaled, unresampled rows only)."""
    t0 = time.perf_counter()
    data = _fold_data(X_train, y_dev, folds[f], config)
    magnitude, passes = (None, {}) if shared is None else shared
    out = {}
    for m in metrics:
        scores = fold_k_scores(
            *data,
            ks,
            n_classes=n_classes,
            metric=m,
            weights=config.weights,
            scoring=_scoring(config.scoring),
            working_memory=config.working_memory,
            magnitude=magnitude if passes.get(m) is not None else None,
            shared=None if passes.get(m) is None else passes[m][f],
        )
        out[m] = {"fold": f, "scores": lists(scores), "seconds": time.perf_counter() - t0}
        t0 = time.perf_counter()
    return out


def variance_task(X_train, *, config) -> dict:
    """The explained variance of the whole (scaled) training set: its journal record."""
    t0 = time.perf_counter()
    xp = array_namespace(X_train)
    Xs, _ = scaled(X_train, None, config.scale, xp)
    # one BLAS thread, as every fold's PCA (model_selection.cv.fit_project): the same
    # spectrum whether the tasks run one at a time or on threads
    with one_blas_thread_for(Xs):
        pca = _pca(min(X_train.shape), config).fit(Xs)  # the whole spectrum
    return {
        "explained_variance": to_numpy(pca.explained_variance_).tolist(),
        "explained_variance_ratio": to_numpy(pca.explained_variance_ratio_).tolist(),
        "seconds": time.perf_counter() - t0,
    }


def kp_task(X_train, y_dev, folds, *, f, metrics, ks, ps, n_classes, config, on_tile=None) -> dict[str, dict]:
    """The (k, p) sweep of fold ``f``: PCA(max(ps)) on the fold's training part, every p
    from that one projection, for each metric: ``{metric: {p: journal record}}``."""
    t0 = time.perf_counter()
    Xtr, ytr_f, Xte, yte_f = _fold_data(X_train, y_dev, folds[f], config)
    Ztr, Zte = fit_project(_pca(max(ps), config), Xtr, Xte)  # fitted on the training part only: no leakage
    del Xtr, Xte
    per_metric = {}
    for m in metrics:
        per_metric[m] = fold_kp_scores(
            Ztr,
            ytr_f,
            Zte,
            yte_f,
            ks,
            ps,
            n_classes=n_classes,
            metric=m,
            weights=config.weights,
            scoring=_scoring(config.scoring),
            working_memory=config.working_memory,
            on_tile=on_tile,
        )
    seconds = (time.perf_counter() - t0) / (len(ps) * len(metrics))
    return {
        m: {p: {"fold": f, "p": p, "scores": lists(per_p[p]), "seconds": seconds} for p in ps}
        for m, per_p in per_metric.items()
    }


def stage_task(X_train, y_dev, folds, *, stage: str, config, n_classes: int, **options) -> dict:
    """One cross-validation task of any stage -- ``stage`` ``"raw"`` (:func:`raw_task`),
    ``"variance"`` (:func:`variance_task`) or ``"kp"`` (:func:`kp_task`) -- so that the
    stages' tasks go to a runner together."""
    if stage == "variance":
        return variance_task(X_train, config=config)
    task = raw_task if stage == "raw" else kp_task
    return task(X_train, y_dev, folds, config=config, n_classes=n_classes, **options)


def final_task(X_train, y_dev, X_test, y_test, *, best, n_classes, config) -> dict:
    """The chosen setting refitted on the whole training set and scored once on the test
    set (``y_test``: class codes on the host): its journal record."""
    t0 = time.perf_counter()

    xp = array_namespace(X_train)
    Xtr, Xte = scaled(X_train, X_test, config.scale, xp)
    Xtr, ytr = _resampled(Xtr, y_dev, config)
    Ztr, Zte = fit_project(_pca(best["p"], config), Xtr, Xte)
    nb = search(Zte, Ztr, best["k"], metric=best["metric"], working_memory=config.working_memory)
    i = nb.indices
    lab = xp.reshape(xp.take(ytr, xp.reshape(i, (-1,))), i.shape)
    extra = nb.vote_args() if best["weights"] == "distance" else {}
    pred = to_numpy(votes_for_many_k(lab, [best["k"]], n_classes=n_classes, weights=best["weights"], **extra)[0, ...])
    labels = np.arange(n_classes)
    cm = to_numpy(confusion_matrix(y_test, pred, labels=labels))
    f1 = to_numpy(f1_score(y_test, pred, labels=labels, average=None))
    return {
        "accuracy": accuracy_score(y_test, pred),
        "macro_f1": float(f1.mean()),
        "balanced_accuracy": float(balanced_accuracy_score(y_test, pred)),
        "confusion_matrix": cm.tolist(),
        "per_class_f1": f1.tolist(),
        "seconds": time.perf_counter() - t0,
    }


def _fold_data(X_train, y_dev, fold, config) -> tuple[Any, Any, Any, Any]:
    """The fold's training part scaled and resampled, its test part scaled."""
    tr, te = fold
    xp = array_namespace(X_train)
    Xtr, Xte = scaled(take_rows(X_train, tr), take_rows(X_train, te), config.scale, xp)
    Xtr, ytr_f = _resampled(Xtr, take_rows(y_dev, tr), config)
    return Xtr, ytr_f, Xte, take_rows(y_dev, te)


def _scoring(name: str) -> Any:
    # accuracy and macro-F1 have vectorised scorers for all k at once; balanced accuracy is
    # scored per k on the host (one small call per k).
    return {name: balanced_accuracy_score} if name == "balanced_accuracy" else [name]


def scaled(Xtr: Any, Xte: Any, kind: str, xp: Any) -> tuple[Any, Any]:
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


def sampler(name: str, seed: int) -> Any:
    """The :mod:`gpuknn.resampling` sampler called ``name`` with its defaults (and
    ``random_state=seed`` where it takes one), or :class:`InvalidInputError` listing them."""
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


def _resampled(X: Any, y: Any, config: Any) -> tuple[Any, Any]:
    if config.resample is None:
        return X, y
    return sampler(config.resample, config.seed).fit_resample(X, y)


def _pca(n_components: int, config: Any):
    from ..decomposition import PCA  # noqa: PLC0415 - PCA sits beside the engine

    return PCA(n_components, solver=config.pca_solver, random_state=config.seed)
