"""The Fashion-MNIST study as a function: CV over k and PCA size, then one test evaluation.

Stages (each finished part goes to the :class:`~gpuknn.model_selection.journal.Journal`):

a. accuracy vs k (``ks_raw``) on raw pixels, one ``kneighbors(k_max)`` per fold;
b. explained variance of the whole training set (full spectrum);
c. accuracy over the (k, p) grid per fold, PCA fitted on the fold's training part only,
   every p from one accumulated projection (:func:`neighbors_for_p_sweep`);
d. the best (k*, p*, weights*) by mean CV accuracy — ties go to the smaller p, then the
  smaller k, then uniform before distance — refitted on the whole training set and
  evaluated once on the test set.

No printing: progress goes to ``callback(event, info)``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy, validate_matrix
from ..errors import InvalidInputError
from ..metrics import accuracy_score, confusion_matrix, f1_score
from ..model_selection.journal import Journal
from ..model_selection.splitters import StratifiedKFold
from .._delegation import take_rows
from ..model_selection.cv import fold_k_scores, fold_kp_scores
from ..model_selection.sweep import check_grid

__all__ = ["SweepConfig", "run_sweep", "DEFAULT_PS"]

# The seed grid (1..15 and 15 + 100 j) plus the 20..100 range where kNN on Fashion-MNIST
# peaks; all of it costs one projection per fold.
DEFAULT_PS = sorted(set(range(1, 16)) | {20, 25, 30, 40, 50, 60, 70, 80, 100}
                    | set(range(115, 785, 100)))


@dataclass
class SweepConfig:
    """Settings of :func:`run_sweep` (all JSON-serialisable; stored in the journal)."""

    metric: str = "correlation"
    ks_raw: list[int] = field(default_factory=lambda: list(range(1, 301)))
    ks: list[int] = field(default_factory=lambda: list(range(1, 31)))
    ps: list[int] = field(default_factory=lambda: list(DEFAULT_PS))
    weights: list[str] = field(default_factory=lambda: ["uniform", "distance"])
    folds: int = 5
    seed: int = 0
    pca_solver: str = "eigh"
    working_memory: int | None = None
    skip_raw: bool = False


Callback = Callable[[str, dict], None]


def _noop(event: str, info: dict) -> None:
    return None


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
    dict with keys ``raw`` (k sweep), ``variance``, ``heatmap``, ``best``, ``test`` and
    ``k_best``, ``p_best``, ``weights_best``, ``cv_accuracy_best``, ``test_accuracy``,
    ``test_macro_f1``.
    """
    cb = callback or _noop
    xp = array_namespace(X_train, X_test)
    X_train = validate_matrix(X_train, xp, name="X_train")
    X_test = validate_matrix(X_test, xp, name="X_test", dtype=X_train.dtype)
    if X_train.shape[1] != X_test.shape[1]:
        raise InvalidInputError(f"X_train has {X_train.shape[1]} features, X_test {X_test.shape[1]}")
    classes, ytr = np.unique(_host(y_train), return_inverse=True)
    yte_host = _host(y_test)
    if ytr.shape[0] != X_train.shape[0] or yte_host.shape[0] != X_test.shape[0]:
        raise InvalidInputError("labels and rows differ in length")
    yte = np.searchsorted(classes, yte_host)
    n_classes = int(classes.shape[0])
    jr = journal or _MemoryJournal()
    folds = list(StratifiedKFold(config.folds, shuffle=True, random_state=config.seed).split(ytr, ytr))
    min_train = min(tr.size for tr, _ in folds)
    ks_raw = check_grid(config.ks_raw, name="k", upper=min_train)
    ks = check_grid(config.ks, name="k", upper=min_train)
    ps = check_grid(config.ps, name="p", upper=min(X_train.shape[1], min_train))
    y_dev = from_numpy(ytr, xp)

    out: dict[str, Any] = {"classes": classes.tolist(), "n_train": int(X_train.shape[0]),
                           "n_test": int(X_test.shape[0])}
    if not config.skip_raw:
        cb("stage", {"name": "k sweep (raw pixels)", "total": len(folds)})
        for f, (tr, te) in enumerate(folds):
            key = f"raw/fold={f}"
            if jr.get(key) is None:
                t0 = time.perf_counter()
                scores = fold_k_scores(take_rows(X_train, tr), take_rows(y_dev, tr),
                                       take_rows(X_train, te), take_rows(y_dev, te), ks_raw,
                                       n_classes=n_classes, metric=config.metric,
                                       weights=config.weights, scoring=["accuracy"],
                                       working_memory=config.working_memory)
                jr.append(key, {"fold": f, "scores": _lists(scores), "seconds": time.perf_counter() - t0})
            cb("step", {"stage": "raw", "done": f + 1})
        out["raw"] = _aggregate([jr.get(f"raw/fold={f}")["scores"] for f in range(len(folds))], ks_raw)

    cb("stage", {"name": "explained variance", "total": 1})
    if jr.get("variance") is None:
        t0 = time.perf_counter()
        pca = _pca(min(X_train.shape), config).fit(X_train)  # the whole spectrum
        jr.append("variance", {"explained_variance": to_numpy(pca.explained_variance_).tolist(),
                               "explained_variance_ratio": to_numpy(pca.explained_variance_ratio_).tolist(),
                               "seconds": time.perf_counter() - t0})
    out["variance"] = {k: v for k, v in jr.get("variance").items() if k.startswith("explained")}
    cb("step", {"stage": "variance", "done": 1})

    cb("stage", {"name": "(k, p) sweep", "total": len(folds)})
    for f, (tr, te) in enumerate(folds):
        if any(jr.get(f"kp/fold={f}/p={p}") is None for p in ps):
            t0 = time.perf_counter()
            Xtr, Xte = take_rows(X_train, tr), take_rows(X_train, te)
            pca = _pca(max(ps), config).fit(Xtr)  # training part of the fold only: no leakage
            Ztr, Zte = pca.transform(Xtr), pca.transform(Xte)
            del Xtr, Xte
            per_p = fold_kp_scores(Ztr, take_rows(y_dev, tr), Zte, take_rows(y_dev, te), ks, ps,
                                   n_classes=n_classes, metric=config.metric,
                                   weights=config.weights, scoring=["accuracy"],
                                   working_memory=config.working_memory,
                                   on_tile=lambda done, total: cb("tile", {"done": done, "total": total}))
            seconds = (time.perf_counter() - t0) / len(ps)
            for p in ps:
                jr.append(f"kp/fold={f}/p={p}", {"fold": f, "p": p, "scores": _lists(per_p[p]),
                                                 "seconds": seconds})
        cb("step", {"stage": "kp", "done": f + 1})
    heat = {p: _aggregate([jr.get(f"kp/fold={f}/p={p}")["scores"] for f in range(len(folds))], ks)
            for p in ps}
    out["heatmap"] = {"ps": ps, "ks": ks, "weights": list(config.weights),
                      "mean": {w: [heat[p][w]["mean"] for p in ps] for w in config.weights},
                      "std": {w: [heat[p][w]["std"] for p in ps] for w in config.weights}}

    best = _choose(out["heatmap"])
    out["best"] = best
    cb("stage", {"name": "final fit and test", "total": 1})
    if jr.get("final") is None:
        t0 = time.perf_counter()
        test = _final(X_train, y_dev, X_test, yte, best, n_classes, config, xp)
        test["seconds"] = time.perf_counter() - t0
        jr.append("final", test)
    test = {k: v for k, v in jr.get("final").items() if k != "key"}
    cb("step", {"stage": "final", "done": 1})
    out["test"] = test
    out.update(k_best=best["k"], p_best=best["p"], weights_best=best["weights"],
               cv_accuracy_best=best["cv_accuracy"], test_accuracy=test["accuracy"],
               test_macro_f1=test["macro_f1"])
    out["seconds_compute"] = float(sum(r.get("seconds", 0.0) for r in jr.records.values()))
    return out


def _pca(n_components: int, config: SweepConfig):
    from ..decomposition import PCA  # noqa: PLC0415 - PCA sits beside the engine

    return PCA(n_components, solver=config.pca_solver, random_state=config.seed)


def _final(X_train, y_dev, X_test, yte, best, n_classes, config, xp) -> dict:
    pca = _pca(best["p"], config).fit(X_train)
    Ztr, Zte = pca.transform(X_train), pca.transform(X_test)
    from ..neighbors import search  # noqa: PLC0415
    from ..votes import votes_for_many_k  # noqa: PLC0415

    nb = search(Zte, Ztr, best["k"], metric=config.metric, working_memory=config.working_memory)
    i = nb.indices
    lab = xp.reshape(xp.take(y_dev, xp.reshape(i, (-1,))), i.shape)
    extra = nb.vote_args() if best["weights"] == "distance" else {}
    pred = to_numpy(votes_for_many_k(lab, [best["k"]], n_classes=n_classes,
                                     weights=best["weights"], **extra)[0])
    labels = np.arange(n_classes)
    cm = to_numpy(confusion_matrix(yte, pred, labels=labels))
    f1 = to_numpy(f1_score(yte, pred, labels=labels, average=None))
    return {"accuracy": accuracy_score(yte, pred), "macro_f1": float(f1.mean()),
            "confusion_matrix": cm.tolist(), "per_class_f1": f1.tolist()}


def _choose(heat: dict) -> dict:
    best = None
    for w in heat["weights"]:  # uniform listed first wins exact ties
        for pi, p in enumerate(heat["ps"]):
            for ki, k in enumerate(heat["ks"]):
                acc = heat["mean"][w][pi][ki]
                key = (-acc, p, k)
                if best is None or key < best[0]:
                    best = (key, {"k": k, "p": p, "weights": w, "cv_accuracy": acc,
                                  "cv_std": heat["std"][w][pi][ki]})
    return best[1]


def _aggregate(fold_scores: list[dict], ks: list[int]) -> dict:
    out = {"ks": ks}
    for w in fold_scores[0]:
        acc = np.asarray([fs[w]["accuracy"] for fs in fold_scores])  # (folds, len(ks))
        out[w] = {"mean": acc.mean(0).tolist(), "std": acc.std(0).tolist(),
                  "min": acc.min(0).tolist(), "max": acc.max(0).tolist(), "folds": acc.tolist()}
    return out


def _lists(scores: dict) -> dict:
    return {w: {m: np.asarray(v).tolist() for m, v in d.items()} for w, d in scores.items()}


def _host(y: Any) -> np.ndarray:
    return to_numpy(y) if hasattr(y, "shape") else np.asarray(y)


class _MemoryJournal:
    """Journal stand-in when no file is wanted."""

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}

    def get(self, key: str) -> dict | None:
        return self.records.get(key)

    def append(self, key: str, record: dict) -> dict:
        import json  # noqa: PLC0415

        self.records[key] = json.loads(json.dumps({"key": key, **record}))
        return self.records[key]


def config_dict(config: SweepConfig) -> dict:
    """JSON form of the settings (what the journal must match to resume)."""
    return asdict(config)
