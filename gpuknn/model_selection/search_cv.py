"""Cross-validated kNN estimators (scikit-learn's ``RidgeCV`` pattern): choose the settings
by CV in one neighbour search per fold, then refit on all the data.

:class:`KNeighborsClassifierCV` chooses ``n_neighbors`` (and ``weights``, ``metric``) from one
``kneighbors(max k)`` per fold and metric (:func:`gpuknn.model_selection.cv.fold_k_scores`);
:class:`PCAKNeighborsClassifierCV` chooses ``(n_components, n_neighbors)`` from one PCA fit
and one accumulated projection per fold (:func:`~gpuknn.model_selection.cv.fold_kp_scores`).
``cv_results_``, ``best_index_`` and ties follow ``GridSearchCV`` over the same grid and folds.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from scipy.stats import rankdata
from sklearn.base import ClassifierMixin
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.model_selection import StratifiedKFold as _SkStratifiedKFold
from sklearn.pipeline import make_pipeline

from .._backend import array_namespace, check_int, device_of, to_numpy, validate_matrix
from .._delegation import take_rows
from .._labels import encode_labels
from ..base import BaseEstimator, check_is_fitted
from ..decomposition import PCA
from ..errors import InvalidInputError
from ..metrics import balanced_accuracy_score, f1_score
from ..neighbors import KNeighborsClassifier
from ..ops.distance import check_metric
from ..ops.limits import check_values
from ..ops.metricspec import resolve_metric
from .cv import check_folds, fit_project, fold_k_scores, fold_kp_scores, shared_tile_passes

__all__ = ["KNeighborsClassifierCV", "PCAKNeighborsClassifierCV"]


def _balanced_accuracy(y_true: Any, y_pred: Any) -> float:
    """Balanced accuracy of class codes, on the host with scikit-learn's operations: equal
    settings must get bit-equal scores on every backend, or ties would be broken apart."""
    t, p = to_numpy(y_true), to_numpy(y_pred)
    n = int(max(t.max(), p.max())) + 1
    n_true, tp = np.bincount(t, minlength=n), np.bincount(t[t == p], minlength=n)
    present = n_true > 0
    return float(np.mean(tp[present] / n_true[present]))


# scikit-learn's scoring names (and gpuknn's "macro_f1") -> what score_many_k takes. accuracy
# and macro-F1 are scored for every k at once; balanced accuracy once per k (still cheap).
_SCORING = {
    "accuracy": ["accuracy"],
    "f1_macro": ["macro_f1"],
    "macro_f1": ["macro_f1"],
    "balanced_accuracy": {"balanced_accuracy": _balanced_accuracy},
}


def _as_list(value: Any, name: str) -> list:
    """A str or a number -> [value]; a sequence -> list; empty or unreadable -> error."""
    vals = [value] if isinstance(value, (str, Integral)) else value
    try:
        vals = list(vals)
    except TypeError:
        raise InvalidInputError(f"{name} must be a value or a sequence of values, got {value!r}") from None
    if not vals:
        raise InvalidInputError(f"{name} is empty: give at least one value to search")
    return vals


def _int_grid(value: Any, name: str, upper: int, why: str) -> list[int]:
    """The grid ``value`` as ints in ``[1, upper]`` (its order kept: it decides ties)."""
    vals = [check_int(v, name=name, low=1) for v in _as_list(value, name)]
    if max(vals) > upper:
        raise InvalidInputError(f"{name} values must be at most {upper} ({why}), got {max(vals)} in {name}={vals}")
    return vals


class _SearchCV(ClassifierMixin, BaseEstimator):
    """What both CV estimators share: checks of the options, the folds, ``cv_results_`` and
    the delegation to ``best_estimator_``. Subclasses' ``fit`` builds the grid and a
    ``fold_scores(f)`` for :meth:`_search`, then refits ``best_estimator_``."""

    _inner_only = False  # the p-sweep (PCA sizes) accumulates inner products: those metrics only

    def _check_options(self) -> tuple[list[str], list[str], Any]:
        metrics = _as_list(self.metric, "metric")
        for m in metrics:  # the p-sweep's CV: inner products only; the kNN's: every metric
            if self._inner_only:
                check_metric(m)
            else:
                resolve_metric(m)
        weights = _as_list(self.weights, "weights")
        for w in weights:
            if w not in ("uniform", "distance"):
                raise InvalidInputError(
                    f"weights must be 'uniform' or 'distance' (or a sequence of "
                    f"them), got {w!r} in weights={self.weights!r}"
                )
        if "inner" in metrics and "distance" in weights:
            raise InvalidInputError(
                "weights='distance' is undefined for metric='inner': search "
                f"weights='uniform' with it (weights={self.weights!r})"
            )
        if not isinstance(self.scoring, str) or self.scoring not in _SCORING:
            raise InvalidInputError(f"scoring must be one of {sorted(_SCORING)}, got {self.scoring!r}")
        return metrics, weights, _SCORING[self.scoring]

    def _prepare(self, X: Any, y: Any) -> tuple[Any, Any, int, list]:
        """X validated and converted once (the refit gets this array: no copy; its own check
        of it is two reductions), class codes on X's device, the class count, host folds."""
        xp = array_namespace(X)
        X = validate_matrix(X, xp, name="X", check_finite=False)
        self._magnitude = check_values(X, xp, name="X")  # the one value check; the folds trust it
        classes, y_dev = encode_labels(y, X.shape[0], xp, device_of(X))
        y_codes = to_numpy(y_dev)
        cv = 5 if self.cv is None else self.cv  # GridSearchCV's default, not check_folds' one
        if isinstance(cv, Integral) and not isinstance(cv, bool):
            # An int is read as GridSearchCV reads it (scikit-learn's StratifiedKFold), so the
            # same cv gives the same folds and choice; random_state shuffles it.
            n = check_int(cv, name="cv", low=2)
            cv = (
                check_cv(n, y_codes, classifier=True)
                if self.random_state is None
                else _SkStratifiedKFold(n, shuffle=True, random_state=self.random_state)
            )
        return X, y_dev, int(classes.shape[0]), check_folds(cv, X, y_codes)

    def _search(self, n_splits: int, grid: dict, fold_scores) -> None:
        """Fill ``cv_results_`` & co. from ``fold_scores(f) -> {setting tuple: score}``, the
        tuple holding the values of ``sorted(grid)``."""
        self.n_splits_ = n_splits
        params = list(ParameterGrid(grid))  # GridSearchCV's order: it decides ties
        names = sorted(grid)
        scores = np.empty((len(params), self.n_splits_), dtype=np.float64)
        for f in range(self.n_splits_):
            per = fold_scores(f)
            scores[:, f] = [per[tuple(p[n] for n in names)] for p in params]
        # The statistics and the rank exactly as GridSearchCV computes them (same ties).
        means = np.average(scores, axis=1)
        stds = np.sqrt(np.average((scores - means[:, None]) ** 2, axis=1))
        filled = np.where(np.isnan(means), np.nanmin(means) - 1, means) if not np.isnan(means).all() else means
        rank = rankdata(-filled, method="min").astype(np.int32)
        res: dict[str, Any] = {f"param_{n}": np.ma.MaskedArray([p[n] for p in params], mask=False) for n in names}
        res["params"] = params
        for f in range(self.n_splits_):
            res[f"split{f}_test_score"] = scores[:, f]
        res.update(mean_test_score=means, std_test_score=stds, rank_test_score=rank)
        self.cv_results_ = res
        self.best_index_ = int(np.argmin(rank))
        self.best_params_ = dict(params[self.best_index_])
        self.best_score_ = float(means[self.best_index_])

    def _setting(self, name: str, value: Any, best: dict) -> Any:
        """The chosen value of ``name``: from ``best_params_`` when searched, else the str."""
        return best.get(name, value)

    # ------------------------------------------------------------ delegation
    def _final(self) -> KNeighborsClassifier:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    def predict(self, X: Any) -> Any:
        """Labels of ``best_estimator_``, shape (n_queries,)."""
        return self._final().predict(X)

    def predict_proba(self, X: Any) -> Any:
        """Vote shares of ``best_estimator_``, shape (n_queries, n_classes)."""
        return self._final().predict_proba(X)

    def score(self, X: Any, y: Any) -> float:
        """``scoring`` of ``best_estimator_``'s predictions of X against y (mean accuracy by
        default), as ``GridSearchCV.score`` and ``LogisticRegressionCV.score`` do."""
        est = self._final()
        if self.scoring == "accuracy":
            return est.score(X, y)
        pred = est.predict(X)
        if self.scoring == "balanced_accuracy":
            return float(balanced_accuracy_score(y, pred))
        return float(f1_score(y, pred, average="macro"))


class KNeighborsClassifierCV(_SearchCV):
    """k-nearest-neighbour classifier with ``n_neighbors`` (and ``weights``, ``metric``)
    chosen by cross-validation from one neighbour search per fold and metric.

    Chooses what ``GridSearchCV(KNeighborsClassifier(), {"n_neighbors": ..., "weights": ...},
    cv=...)`` chooses (same folds, same scores, ties to the first setting in its order), at the
    cost of one ``kneighbors(max(n_neighbors))`` per fold and metric instead of one per setting.

    Parameters
    ----------
    n_neighbors : sequence of int (or an int), default 1..30
        The k to try; each at most the smallest fold's training size.
    weights : str or sequence of {"uniform", "distance"}, default both
        A sequence is searched (and is in ``best_params_``); a str is fixed.
    metric : str or sequence of str, default "euclidean"
        As for :class:`gpuknn.KNeighborsClassifier`; a sequence is searched too.
    cv : int, scikit-learn or gpuknn splitter, or (train, test) index pairs, default 5
        An int n (or None: 5) is scikit-learn's ``StratifiedKFold(n)``, as ``GridSearchCV``
        reads it; anything else as :func:`gpuknn.model_selection.cv.check_folds`.
    scoring : {"accuracy", "f1_macro" (or "macro_f1"), "balanced_accuracy"}
        Macro-F1 averages over every class of y (scikit-learn: the classes in the fold).
    random_state : int, Generator or None
        With an int ``cv``: shuffle the stratified folds with this seed.
    working_memory : float, optional
        MiB for the distance tiles (:func:`gpuknn.kneighbors`).

    Attributes
    ----------
    cv_results_ : dict
        As ``GridSearchCV``'s: ``params``, ``param_<name>``, ``split<i>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (no timings).
    best_params_ : dict
    best_score_ : float
    best_index_ : int
    n_splits_ : int
    best_estimator_ : KNeighborsClassifier
        Refitted on all of X with the best settings; ``predict``, ``predict_proba``,
        ``kneighbors`` and ``score`` are its.
    classes_ : array of shape (n_classes,)
    n_features_in_ : int

    Notes
    -----
    Cost: per fold and metric one ``kneighbors`` of the test part (n/K rows) against the
    training part with ``max(n_neighbors)``, O(n²/K · d) in GEMMs -- half that when the
    test sets partition X (an int ``cv``, any K-fold): one GEMM tile of two folds' rows
    nominates candidates for both (:func:`gpuknn.model_selection.cv.shared_tile_passes`) --
    plus O(n/K · k_max · n_classes) per weighting for every k together; then one fit. X is
    validated (and converted, if need be) once; the refit gets that array, not a copy. Vote
    ties and distance ties as :class:`gpuknn.KNeighborsClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KNeighborsClassifierCV(n_neighbors=[1, 5, 15], weights="uniform").fit(X, y)
    >>> clf.best_params_, round(clf.best_score_, 3)
    ({'n_neighbors': 5}, 0.973)
    >>> clf.predict(X[:2])
    array([0, 0])
    """

    def __init__(
        self,
        n_neighbors: Any = tuple(range(1, 31)),
        *,
        weights: Any = ("uniform", "distance"),
        metric: Any = "euclidean",
        cv: Any = 5,
        scoring: str = "accuracy",
        random_state: Any = None,
        working_memory: float | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state
        self.working_memory = working_memory

    def fit(self, X: Any, y: Any) -> KNeighborsClassifierCV:
        """Cross-validate every setting, then refit the best on all of ``(X, y)``.

        X : array (n_samples, n_features); y : labels (n_samples,). Returns ``self``.
        """
        metrics, weights, scoring = self._check_options()
        X, y_dev, n_classes, folds = self._prepare(X, y)
        upper = min(tr.size for tr, _ in folds)
        ks = _int_grid(self.n_neighbors, "n_neighbors", upper, "the smallest fold's training size")
        k_sorted = sorted(set(ks))
        grid = {"n_neighbors": ks}
        if not isinstance(self.weights, str):
            grid["weights"] = weights
        if not isinstance(self.metric, str):
            grid["metric"] = metrics

        # Per metric, the tile passes of every fold's search in one pass over the pairs of
        # folds (half the GEMMs) where the folds partition X, as an int cv's do.
        shared = {
            m: shared_tile_passes(
                X, folds, m, k_sorted[-1], magnitude=self._magnitude, working_memory=self.working_memory
            )
            for m in metrics
        }

        def fold_scores(f: int) -> dict:
            tr, te = folds[f]
            # One gather per fold for every metric; one search per metric for every (k, weights).
            Xtr, ytr, Xte, yte = take_rows(X, tr), take_rows(y_dev, tr), take_rows(X, te), take_rows(y_dev, te)
            out = {}
            for m in metrics:
                sc = fold_k_scores(
                    Xtr,
                    ytr,
                    Xte,
                    yte,
                    k_sorted,
                    n_classes=n_classes,
                    metric=m,
                    weights=weights,
                    scoring=scoring,
                    working_memory=self.working_memory,
                    magnitude=self._magnitude,
                    shared=None if shared[m] is None else shared[m][f],
                )
                for w in weights:
                    v = next(iter(sc[w].values()))
                    for j, k in enumerate(k_sorted):
                        key = {"metric": m, "n_neighbors": k, "weights": w}
                        out[tuple(key[n] for n in sorted(grid))] = float(v[j])
            return out

        self._search(len(folds), grid, fold_scores)
        best = self.best_params_
        self.best_estimator_ = KNeighborsClassifier(
            best["n_neighbors"],
            metric=self._setting("metric", self.metric, best),
            weights=self._setting("weights", self.weights, best),
            working_memory=self.working_memory,
        ).fit(X, y)
        self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = int(X.shape[1])
        return self

    def kneighbors(self, X: Any, n_neighbors: int | None = None, return_distance: bool = True):
        """``best_estimator_.kneighbors``: ``(distances, indices)`` of shape (n, k)."""
        return self._final().kneighbors(X, n_neighbors, return_distance)


class PCAKNeighborsClassifierCV(_SearchCV):
    """PCA to p components, then kNN, with ``(n_components, n_neighbors)`` (and ``weights``,
    ``metric``) chosen by cross-validation from one PCA fit and projection per fold.

    Chooses what ``GridSearchCV`` over ``make_pipeline(PCA(), KNeighborsClassifier())`` with the
    same grid and folds chooses (ties: the first setting in ``ParameterGrid`` order of *this*
    estimator's parameter names). PCA is fitted on each fold's training part only.

    Parameters
    ----------
    n_components : sequence of int (or an int), default (10, 20, 50, 100)
        The p to try; each at most the number of features and the smallest training fold.
    n_neighbors, weights, metric, cv, scoring, random_state, working_memory
        As for :class:`KNeighborsClassifierCV`; ``random_state`` also seeds the PCA
        (``gpuknn.PCA``, solver "eigh": deterministic).

    Attributes
    ----------
    cv_results_, best_params_, best_score_, best_index_, n_splits_
        As for :class:`KNeighborsClassifierCV`.
    best_estimator_ : sklearn.pipeline.Pipeline
        ``make_pipeline(gpuknn.PCA(p), gpuknn.KNeighborsClassifier(k, ...))`` refitted on all
        of X (steps ``"pca"`` and ``"kneighborsclassifier"``).
    classes_ : array of shape (n_classes,)
    n_features_in_ : int

    Notes
    -----
    Cost per fold: one covariance and ``eigh`` (O(n d² + d³)), one projection GEMM, then for
    every metric one Gram accumulation over ``max(n_components)`` columns and one top-k per p
    (:func:`gpuknn.model_selection.sweep.neighbors_for_p_sweep`). The refitted PCA's first p
    components are the CV's (same solver), up to each component's sign.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = PCAKNeighborsClassifierCV(n_components=[1, 2], n_neighbors=[1, 5], weights="uniform")
    >>> clf.fit(X, y).best_params_
    {'n_components': 2, 'n_neighbors': 5}
    """

    _inner_only = True

    def __init__(
        self,
        n_components: Any = (10, 20, 50, 100),
        n_neighbors: Any = tuple(range(1, 31)),
        *,
        weights: Any = ("uniform", "distance"),
        metric: Any = "euclidean",
        cv: Any = 5,
        scoring: str = "accuracy",
        random_state: Any = None,
        working_memory: float | None = None,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state
        self.working_memory = working_memory

    def fit(self, X: Any, y: Any) -> PCAKNeighborsClassifierCV:
        """Cross-validate every (p, k, ...), then refit PCA(p) + kNN(k) on all of ``(X, y)``."""
        metrics, weights, scoring = self._check_options()
        X, y_dev, n_classes, folds = self._prepare(X, y)
        upper = min(tr.size for tr, _ in folds)
        ks = _int_grid(self.n_neighbors, "n_neighbors", upper, "the smallest fold's training size")
        p_upper = min(int(X.shape[1]), upper)
        ps = _int_grid(self.n_components, "n_components", p_upper, "min(n_features, the smallest fold's training size)")
        k_sorted, p_sorted = sorted(set(ks)), sorted(set(ps))
        grid = {"n_components": ps, "n_neighbors": ks}
        if not isinstance(self.weights, str):
            grid["weights"] = weights
        if not isinstance(self.metric, str):
            grid["metric"] = metrics

        def fold_scores(f: int) -> dict:
            tr, te = folds[f]
            Xtr, ytr, Xte, yte = take_rows(X, tr), take_rows(y_dev, tr), take_rows(X, te), take_rows(y_dev, te)
            Ztr, Zte = fit_project(PCA(p_sorted[-1], random_state=self.random_state), Xtr, Xte)
            del Xtr, Xte  # the fold's copies of X are not needed past the projection
            out = {}
            for m in metrics:
                per_p = fold_kp_scores(
                    Ztr,
                    ytr,
                    Zte,
                    yte,
                    k_sorted,
                    p_sorted,
                    n_classes=n_classes,
                    metric=m,
                    weights=weights,
                    scoring=scoring,
                    working_memory=self.working_memory,
                )
                for p, sc in per_p.items():
                    for w in weights:
                        v = next(iter(sc[w].values()))
                        for j, k in enumerate(k_sorted):
                            key = {"metric": m, "n_components": p, "n_neighbors": k, "weights": w}
                            out[tuple(key[n] for n in sorted(grid))] = float(v[j])
            return out

        self._search(len(folds), grid, fold_scores)
        best = self.best_params_
        self.best_estimator_ = make_pipeline(
            PCA(best["n_components"], random_state=self.random_state),
            KNeighborsClassifier(
                best["n_neighbors"],
                metric=self._setting("metric", self.metric, best),
                weights=self._setting("weights", self.weights, best),
                working_memory=self.working_memory,
            ),
        ).fit(X, y)
        self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = int(X.shape[1])
        return self

    def kneighbors(self, X: Any, n_neighbors: int | None = None, return_distance: bool = True):
        """Neighbours of X projected by the refitted PCA among the projected training rows:
        ``(distances, indices)`` of shape (n, k)."""
        pipe = self._final()
        return pipe[-1].kneighbors(pipe[0].transform(X), n_neighbors, return_distance)
