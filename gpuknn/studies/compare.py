"""Methods × data sets × repeated stratified CV, with Demšar's statistics: ``gpuknn compare``.

:func:`run_compare` cross-validates every method on every data set with the same seeded
repeated stratified folds (drawn on the host from the labels, so the comparison is paired:
every method sees the same training and test rows), scores each test fold, and runs the
tests of :mod:`gpuknn.stats` on the result (:mod:`gpuknn.studies.compare_stats`).

Class convention (as in the thesis the presets come from): every data set is treated as a
binary problem whose **positive class is the minority class** (the smallest class; equal
counts: the first in sorted label order). A data set with more than two classes is
binarised, the smallest class against all the others, for every method and every score, so
that the samplers see the imbalanced problem they are made for. ROC AUC ranks the test rows
by the positive class's ``predict_proba`` column (``decision_function``, else the 0/1
prediction, for estimators without it); F1 is the positive class's.

Scaling (``scale="standard"``, the default) is fitted on each training fold and applied to
its test fold before any sampler, since the kNN samplers and kNN itself measure distances.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from ..errors import InvalidInputError, InvalidInputTypeError
from .compare_presets import METHOD_PRESETS, method_presets

__all__ = [
    "SCORINGS",
    "METHOD_PRESETS",
    "CompareResult",
    "binarize_minority",
    "load_compare_dataset",
    "method_presets",
    "run_compare",
]

#: Scores a comparison can report (scikit-learn's scoring names); all larger = better.
SCORINGS = ("roc_auc", "accuracy", "balanced_accuracy", "f1", "precision", "recall")


def binarize_minority(y: Any) -> tuple[np.ndarray, Any, int]:
    """``(y01, positive_label, n_classes)``: 1 for the minority class (the smallest; ties: the
    first in sorted order), 0 for every other class (host int64)."""
    y = np.asarray(y)
    labels, counts = np.unique(y, return_counts=True)
    if labels.size < 2:
        raise InvalidInputError(f"y has a single class {labels.tolist()}; a comparison needs two")
    pos = labels[int(np.argmin(counts))]
    return (y == pos).astype(np.int64), pos.item() if hasattr(pos, "item") else pos, int(labels.size)


def load_compare_dataset(spec: str) -> tuple[np.ndarray, np.ndarray]:
    """Host ``(X, y)`` of a data-set spec through :func:`gpuknn.datasets.load_table` (a source
    with its own test split is used whole: CV draws its own folds). Nominal columns (KEEL's,
    ARFF's) are one-hot encoded: kNN's distances on category codes would invent an order."""
    from ..datasets import encode_nominal, load_table  # noqa: PLC0415

    table = load_table(spec)
    X, y = table.X, table.y
    if table.X_test is not None:  # the loader refuses a test part with other categories
        X, y = np.concatenate([X, table.X_test]), np.concatenate([y, table.y_test])
    if table.categories:
        X = encode_nominal(X, table.categories, encoding="onehot", feature_names=table.feature_names).X
    return np.asarray(X, dtype=np.float64), np.asarray(y)


@dataclass
class CompareResult:
    """What :func:`run_compare` found.

    Attributes
    ----------
    datasets, methods, scoring : list of str
        Names, in the order of the axes of ``scores``.
    scores : numpy.ndarray of shape (n_datasets, n_methods, n_folds, n_scoring)
        One test fold's score per (data set, method, fold, scoring); folds are repeat-major.
    dataset_info : list of dict
        Per data set: rows, features, classes, positive label, positives, fold sizes.
    control : str
        The control method of Bonferroni–Dunn, Wilcoxon and the corrected t-tests.
    stats : dict
        Per scoring: :func:`gpuknn.studies.compare_stats.compare_statistics` of the table of
        per-data-set means.
    settings : dict
        n_splits, n_repeats, random_state, alpha, scale.
    """

    datasets: list[str]
    methods: list[str]
    scoring: list[str]
    scores: np.ndarray
    dataset_info: list[dict]
    control: str
    settings: dict
    stats: dict = field(default_factory=dict)

    def mean(self) -> np.ndarray:
        """Mean over the folds, shape (n_datasets, n_methods, n_scoring)."""
        return self.scores.mean(axis=2)

    def std(self) -> np.ndarray:
        """Sample standard deviation over the folds (ddof=1), shape as :meth:`mean`."""
        return self.scores.std(axis=2, ddof=1) if self.scores.shape[2] > 1 else np.zeros(self.mean().shape)

    def table(self, scoring: str | None = None) -> np.ndarray:
        """The (n_datasets, n_methods) table of mean scores that the statistics use."""
        s = self.scoring.index(scoring) if scoring is not None else 0
        return self.mean()[:, :, s]

    def to_json(self) -> dict:
        """Everything as JSON-able Python values (NaN as None)."""
        return _jsonable(
            {
                "datasets": self.datasets,
                "methods": self.methods,
                "scoring": self.scoring,
                "control": self.control,
                "settings": self.settings,
                "dataset_info": self.dataset_info,
                "fold_scores": self.scores,
                "mean": self.mean(),
                "std": self.std(),
                "stats": self.stats,
            }
        )


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def _check_methods(methods: Any) -> dict[str, Any]:
    if isinstance(methods, (list, tuple, str)):
        return method_presets(methods)
    if not isinstance(methods, Mapping) or not methods:
        raise InvalidInputTypeError(f"methods must be a non-empty dict name -> estimator, got {type(methods).__name__}")
    out = {}
    for name, m in methods.items():
        if isinstance(m, str):
            (m,) = method_presets([m]).values()
        est = m[-1] if isinstance(m, tuple) else m
        if isinstance(m, tuple) and (len(m) != 2 or not hasattr(m[0], "fit_resample")):
            raise InvalidInputError(f"methods[{name!r}] must be an estimator or a (sampler, estimator) pair")
        if not hasattr(est, "fit") or not hasattr(est, "predict"):
            raise InvalidInputTypeError(f"methods[{name!r}] has no fit/predict: {type(est).__name__}")
        out[str(name)] = m
    return out


def _check_datasets(datasets: Any) -> dict[str, tuple[Any, np.ndarray]]:
    if isinstance(datasets, (list, tuple)):
        datasets = {str(s): s for s in datasets}
    if not isinstance(datasets, Mapping) or not datasets:
        raise InvalidInputTypeError(
            f"datasets must be a non-empty dict name -> (X, y) or spec, got {type(datasets).__name__}"
        )
    out = {}
    for name, d in datasets.items():
        X, y = load_compare_dataset(d) if isinstance(d, str) else d
        if not hasattr(X, "shape"):  # nested lists: host float64, as scikit-learn reads them
            X = np.asarray(X, dtype=np.float64)
        if len(getattr(X, "shape", ())) != 2 or np.shape(to_numpy(y) if hasattr(y, "shape") else y) != (X.shape[0],):
            raise InvalidInputError(f"datasets[{name!r}]: X must be 2-D and y 1-D of its rows")
        xp = array_namespace(X)
        if not xp.isdtype(X.dtype, "real floating"):  # integer features: scaling needs floats
            X = xp.astype(X, xp.float64)
        out[str(name)] = (X, to_numpy(y) if hasattr(y, "shape") else np.asarray(y))
    return out


def run_compare(
    methods: Mapping[str, Any] | Sequence[str],
    datasets: Mapping[str, Any] | Sequence[str],
    *,
    scoring: Sequence[str] = ("roc_auc", "accuracy", "balanced_accuracy", "f1"),
    n_splits: int = 10,
    n_repeats: int = 1,
    random_state: int = 0,
    control: str | None = None,
    alpha: float = 0.05,
    scale: str | None = "standard",
    journal: Any = None,
    callback: Callable[[str, dict], None] | None = None,
    client: Any = None,
) -> CompareResult:
    """Cross-validate every method on every data set and compare them (module docstring).

    Parameters
    ----------
    methods : dict of str to estimator, (sampler, estimator) or preset name; or list of presets
        Any gpuknn or scikit-learn classifier; a pair applies the sampler's ``fit_resample``
        to the training fold first. Each is cloned for every fold (``sklearn.base.clone``).
    datasets : dict of str to (X, y) or spec string; or list of spec strings
        Specs are read with :func:`load_compare_dataset`. X of a pair may be in any
        array-API namespace: gpuknn methods run in it; others get host copies.
    scoring : sequence of str
        Among :data:`SCORINGS`; the first one is the primary score of the figures.
    n_splits, n_repeats, random_state : int
        :class:`gpuknn.model_selection.RepeatedStratifiedKFold` on each data set's binary labels.
    control : str, optional
        Method compared against the others (Bonferroni–Dunn, Wilcoxon, Nadeau–Bengio);
        default the first method.
    alpha : float
        Significance level of the tests and critical differences.
    scale : {"standard", None}
        Standardisation fitted on each training fold, before any sampler.
    journal : gpuknn.model_selection.journal.Journal, optional
        Finished folds are read from it and each new one appended as it completes, keyed
        ``"dataset|method|fold"``: an interrupted comparison resumes where it stopped.
    callback : callable, optional
        ``callback("fold", {"done", "total", "dataset", "method", "fold"})`` after each fold
        (journaled first, so an exception raised there loses nothing).
    client : distributed.Client, optional
        Run the folds as Dask tasks (:func:`gpuknn.model_selection.runner.get_runner`).

    Returns
    -------
    CompareResult
    """
    from sklearn.base import clone  # noqa: PLC0415

    from ..model_selection import RepeatedStratifiedKFold  # noqa: PLC0415
    from ..model_selection.runner import get_runner  # noqa: PLC0415
    from ..stats._validation import check_alpha  # noqa: PLC0415
    from .compare_stats import compare_statistics  # noqa: PLC0415

    methods = _check_methods(methods)
    scoring = [scoring] if isinstance(scoring, str) else list(scoring)
    bad = [s for s in scoring if s not in SCORINGS]
    if not scoring or bad:
        raise InvalidInputError(f"scoring must be among {list(SCORINGS)}, got {scoring!r}")
    if scale not in ("standard", None):
        raise InvalidInputError(f"scale must be 'standard' or None, got {scale!r}")
    alpha = check_alpha(alpha)
    control = next(iter(methods)) if control is None else str(control)
    if control not in methods:
        raise InvalidInputError(f"control {control!r} is not among the methods {list(methods)}")
    cv = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=random_state)
    n_folds = cv.get_n_splits()
    data = _check_datasets(datasets)
    scores = np.full((len(data), len(methods), n_folds, len(scoring)), np.nan)
    info: list[dict] = []
    runner = get_runner(client)
    names = list(methods)
    total, done = len(data) * len(methods) * n_folds, 0
    for d, (dname, (X, y)) in enumerate(data.items()):
        y01, pos, n_classes = binarize_minority(y)
        if int(y01.sum()) < n_splits:
            raise InvalidInputError(
                f"datasets[{dname!r}]: the positive (minority) class {pos!r} has {int(y01.sum())} rows, "
                f"fewer than n_splits={n_splits}"
            )
        folds = list(cv.split(y01, y01))
        n = int(y01.size)
        info.append(
            {
                "name": dname,
                "n_samples": n,
                "n_features": int(X.shape[1]),
                "n_classes": n_classes,
                "positive_label": pos,
                "n_positive": int(y01.sum()),
                "binarized": n_classes > 2,
                "n_train": float(np.mean([tr.size for tr, _ in folds])),
                "n_test": float(np.mean([te.size for _, te in folds])),
            }
        )
        jobs = []
        for m, (mname, method) in enumerate(methods.items()):
            for f, (tr, te) in enumerate(folds):
                key = f"{dname}|{mname}|{f}"
                rec = journal.get(key) if journal is not None else None
                if rec is not None:
                    scores[d, m, f] = [np.nan if rec["scores"][s] is None else rec["scores"][s] for s in scoring]
                    done += 1
                    continue
                job = {"method": clone(method), "train": tr, "test": te, "scoring": scoring, "scale": scale}
                jobs.append(((m, f, key), job))
        if not jobs:
            continue
        shared = runner.share(X=X, y=y01)  # scattered once per data set on a cluster
        for (m, f, key), fold_scores in runner.run(_fold_scores, jobs, shared):
            scores[d, m, f] = fold_scores
            if journal is not None:
                journal.append(key, {"scores": dict(zip(scoring, _jsonable(list(fold_scores))))})
            done += 1
            if callback is not None:
                callback("fold", {"done": done, "total": total, "dataset": dname, "method": names[m], "fold": f})
    settings = {
        "n_splits": n_splits,
        "n_repeats": n_repeats,
        "random_state": random_state,
        "alpha": alpha,
        "scale": scale,
    }
    res = CompareResult(list(data), list(methods), scoring, scores, info, control, settings)
    for s, sname in enumerate(scoring):
        res.stats[sname] = compare_statistics(
            scores[:, :, :, s],
            res.methods,
            control=control,
            alpha=alpha,
            fold_sizes=[(i["n_train"], i["n_test"]) for i in info],
        )
    return res


def _standardize(Xtr: Any, Xte: Any, xp: Any) -> tuple[Any, Any]:
    mu = xp.mean(Xtr, axis=0)
    sd = xp.std(Xtr, axis=0)
    sd = xp.where(sd > 0, sd, xp.ones_like(sd))  # a constant column stays constant
    return (Xtr - mu) / sd, (Xte - mu) / sd


def _is_gpuknn(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "gpuknn"


def _positive_scores(est: Any, Xte: Any) -> np.ndarray:
    """Scores of the positive class (label 1) for ROC AUC."""
    if hasattr(est, "predict_proba"):
        proba = to_numpy(est.predict_proba(Xte))
        classes = to_numpy(est.classes_).tolist()
        return proba[:, classes.index(1)] if 1 in classes else np.zeros(proba.shape[0])
    if hasattr(est, "decision_function"):
        return np.asarray(to_numpy(est.decision_function(Xte)), dtype=np.float64)
    return np.asarray(to_numpy(est.predict(Xte)), dtype=np.float64)


def _fold_scores(
    X: Any, y: np.ndarray, scoring: list, scale: Any, method: Any, train: np.ndarray, test: np.ndarray
) -> list:
    """One method on one fold: the test fold's scores, in ``scoring`` order (a Dask task)."""
    from sklearn import metrics  # noqa: PLC0415

    from .._delegation import take_rows  # noqa: PLC0415

    sampler, est = method if isinstance(method, tuple) else (None, method)
    xp, dev = array_namespace(X), device_of(X)
    Xtr, Xte = take_rows(X, train), take_rows(X, test)
    if scale == "standard":
        Xtr, Xte = _standardize(Xtr, Xte, xp)
    ytr = y[train]
    if sampler is not None:
        if _is_gpuknn(sampler):
            Xtr, ytr = sampler.fit_resample(Xtr, from_numpy(ytr, xp, device=dev))
        else:  # a host-only sampler (imbalanced-learn): its output goes back to X's namespace
            Xtr, ytr = sampler.fit_resample(to_numpy(Xtr), ytr)
            Xtr = from_numpy(np.asarray(Xtr), xp, device=dev)
        ytr = np.asarray(to_numpy(ytr))
    if _is_gpuknn(est):
        est.fit(Xtr, from_numpy(ytr, xp, device=dev))
        pred, score = to_numpy(est.predict(Xte)), _positive_scores(est, Xte)
    else:
        Xte_h = to_numpy(Xte)
        est.fit(to_numpy(Xtr), ytr)
        pred, score = np.asarray(est.predict(Xte_h)), _positive_scores(est, Xte_h)
    yte = y[test]
    pred = np.asarray(pred).astype(np.int64)
    out = []
    for s in scoring:
        if s == "roc_auc":
            out.append(float(metrics.roc_auc_score(yte, score)))
        elif s == "accuracy":
            out.append(float(metrics.accuracy_score(yte, pred)))
        elif s == "balanced_accuracy":
            out.append(float(metrics.balanced_accuracy_score(yte, pred)))
        else:
            fn = {"f1": metrics.f1_score, "precision": metrics.precision_score, "recall": metrics.recall_score}[s]
            out.append(float(fn(yte, pred, pos_label=1, zero_division=0.0)))
    return out
