"""Every public function and estimator on every backend and device.

Each case runs once on NumPy (the reference) and once on the backend under test (NumPy,
``array_api_strict`` on its default device and on ``Device("device1")``, torch on the CPU,
CuPy and torch on CUDA where present). Results must come back in the backend's namespace
and on its device, with the reference's shape, and equal to it (integers and labels
exactly, floats to rounding: the backends' BLAS differ). Oracles against scikit-learn,
SciPy and imbalanced-learn live in each module's own tests.
"""

from __future__ import annotations

import numbers

import numpy as np
import pytest
from helpers import assert_xp

import gpuknn
from gpuknn import cluster, linalg, metrics, model_selection, resampling
from gpuknn.errors import InvalidInputError

RNG = np.random.default_rng(7)
X = np.concatenate([RNG.normal(loc=c, size=(30, 5)) for c in (0.0, 2.5, 5.0)])
Y = np.repeat([0, 1, 2], 30)
Q = RNG.normal(loc=2.0, size=(12, 5))
Y_Q = RNG.integers(0, 3, size=12)
C = np.cov(X, rowvar=False)
Y_BIN = (np.arange(90) % 7 == 0).astype(np.int64)  # 13 positives among 90: imbalanced
X_IMB = X + Y_BIN[:, None] * 1.5
SCORES_4x5 = RNG.random((4, 5)).round(1)  # with ties
U = np.abs(RNG.normal(size=(90, 3))) + np.eye(3)[Y]
U /= U.sum(1, keepdims=True)  # fuzzy memberships, rows sum to 1
SCORE = np.linspace(0, 1, 90) + 0.3 * Y_BIN


class OnHost:
    """A result that is host data by design on every backend (seeded split indices, as
    scikit-learn's splitters give; summary tables of a study)."""

    def __init__(self, value):
        self.value = value


def _fit_predict(est, *fit_args, method="predict", query=Q):
    def run(c):
        fitted = est.fit(*(c(a) for a in fit_args))
        return getattr(fitted, method)(c(query))

    return run


def _resample(sampler):
    return lambda c: sampler.fit_resample(c(X_IMB), c(Y_BIN))


CASES = {
    # engine
    "kneighbors": lambda c: gpuknn.kneighbors(c(Q), c(X), 4),
    "kneighbors-correlation": lambda c: gpuknn.kneighbors(c(Q), c(X), 4, metric="correlation"),
    "partial+merge": lambda c: gpuknn.finalize_partial(
        gpuknn.merge_partial(
            gpuknn.kneighbors_partial(c(Q), c(X[:40]), 4),
            gpuknn.kneighbors_partial(c(Q), c(X[40:]), 4, offset=40),
        )
    ),
    "pairwise_distances": lambda c: gpuknn.pairwise_distances(c(Q), c(X), metric="cosine"),
    "pairwise_distances_chunked": lambda c: tuple(
        d for _, d in gpuknn.pairwise_distances_chunked(c(Q), c(X), working_memory=1000 / 2**20)
    ),
    "votes_for_many_k": lambda c: gpuknn.votes_for_many_k(
        c(Y[gpuknn.kneighbors(Q, X, 6)[1]]),
        [1, 3, 6],
        n_classes=3,
        distances=c(gpuknn.kneighbors(Q, X, 6)[0]),
        weights="distance",
    ),
    "vote_counts": lambda c: gpuknn.vote_counts(c(Y[gpuknn.kneighbors(Q, X, 6)[1]]), [1, 3, 6], n_classes=3),
    # classifiers
    "KNeighborsClassifier": _fit_predict(gpuknn.KNeighborsClassifier(3), X, Y),
    "KNeighborsClassifier-proba": _fit_predict(
        gpuknn.KNeighborsClassifier(4, weights="distance"), X, Y, method="predict_proba"
    ),
    "KNeighborsClassifier-kneighbors": _fit_predict(
        gpuknn.KNeighborsClassifier(3, metric="cosine"), X, Y, method="kneighbors"
    ),
    "RadiusNeighborsClassifier": _fit_predict(
        gpuknn.RadiusNeighborsClassifier(2.0, outlier_label=0), X, Y, method="predict_proba"
    ),
    "NearestCentroid": _fit_predict(gpuknn.NearestCentroid(), X, Y),
    "CDNNClassifier": _fit_predict(gpuknn.CDNNClassifier(3), X, Y),
    "ECDNNClassifier": _fit_predict(gpuknn.ECDNNClassifier(3), X, Y),
    "score": lambda c: gpuknn.KNeighborsClassifier(3).fit(c(X), c(Y)).score(c(Q), c(Y_Q)),
    # PCA and linear algebra
    "PCA-eigh": _fit_predict(gpuknn.PCA(3), X, method="transform"),
    "PCA-deflation": _fit_predict(gpuknn.PCA(2, solver="deflation", random_state=0), X, method="transform"),
    "PCA-block": _fit_predict(gpuknn.PCA(2, solver="block", random_state=0), X, method="transform"),
    "covariance": lambda c: linalg.covariance(c(X)),
    "covariance_spectrum": lambda c: linalg.covariance_spectrum(c(X)),
    "eigh": lambda c: linalg.eigh(c(C), 3).eigenvalues,
    "power_method": lambda c: linalg.power_method(c(C), random_state=0).eigenvalue,
    "deflated_power_method": lambda c: linalg.deflated_power_method(c(C), 2, random_state=0).eigenvalues,
    "block_eigh": lambda c: linalg.block_eigh(c(C), 2, random_state=0).eigenvalues,
    # model selection
    "split-indices": lambda c: OnHost(
        tuple(
            t
            for cv in (
                gpuknn.KFold(3),
                gpuknn.StratifiedKFold(3, shuffle=True, random_state=0),
                gpuknn.RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0),
            )
            for pair in cv.split(c(X), c(Y))
            for t in pair
        )
    ),
    "train_test_split": lambda c: tuple(
        gpuknn.train_test_split(c(X), c(Y), test_size=0.25, random_state=0, stratify=c(Y))
    ),
    "cross_validate_k": lambda c: (
        model_selection.cross_validate_k(
            c(X),
            c(Y),
            [1, 3, 5],
            cv=gpuknn.StratifiedKFold(3),
            weights=("uniform", "distance"),
            scoring=("accuracy", "macro_f1"),
        ).rows
    ),
    "cross_validate_kp": lambda c: (
        model_selection.cross_validate_kp(c(X), c(Y), [1, 3], [2, 4], cv=gpuknn.StratifiedKFold(3), random_state=0).rows
    ),
    # metrics
    "accuracy_score": lambda c: metrics.accuracy_score(c(Y[:12]), c(Y_Q)),
    "balanced_accuracy_score": lambda c: metrics.balanced_accuracy_score(c(Y[::7][:12]), c(Y_Q)),
    "confusion_matrix": lambda c: metrics.confusion_matrix(c(Y[::7][:12]), c(Y_Q), labels=[2, 1, 0]),
    "f1_score": lambda c: metrics.f1_score(c(Y[::7][:12]), c(Y_Q), average=None),
    "f1_score-no-true-positive": lambda c: metrics.f1_score(
        c(np.array([0, 0, 1])), c(np.array([1, 1, 0])), average="macro"
    ),
    "precision_recall_fscore_support": lambda c: metrics.precision_recall_fscore_support(
        c(Y[::7][:12]), c(Y_Q), average="weighted"
    ),
    "positive_class_report": lambda c: metrics.positive_class_report(c(Y_BIN), c(Y_BIN[::-1]), pos_label=1),
    "roc_curve": lambda c: metrics.roc_curve(c(Y_BIN), c(SCORE)),
    "roc_auc_score": lambda c: metrics.roc_auc_score(c(Y_BIN), c(SCORE)),
    "roc_convex_hull": lambda c: metrics.roc_convex_hull(*metrics.roc_curve(c(Y_BIN), c(SCORE))[:2]),
    "borda_rank": lambda c: metrics.borda_rank(c(SCORES_4x5)),
    "contingency_matrix": lambda c: metrics.contingency_matrix(c(Y), c(Y[::-1])),
    "pair_counts": lambda c: metrics.pair_counts(c(Y), c(Y % 2)),
    "rand_score": lambda c: metrics.rand_score(c(Y), c(Y % 2)),
    "adjusted_rand_score": lambda c: metrics.adjusted_rand_score(c(Y), c(Y % 2)),
    "pair_jaccard_score": lambda c: metrics.pair_jaccard_score(c(Y), c(Y % 2)),
    "fowlkes_mallows_score": lambda c: metrics.fowlkes_mallows_score(c(Y), c(Y % 2)),
    "hubert_gamma": lambda c: metrics.hubert_gamma(c(X), c(Y)),
    "cophenetic_correlation": lambda c: metrics.cophenetic_correlation(c(X)),
    "gap_statistic": lambda c: OnHost(metrics.gap_statistic(c(X), k_range=range(1, 4), B=3, random_state=0).gap),
    "within_dispersion": lambda c: metrics.within_dispersion(c(X), c(Y)),
    "dunn_index": lambda c: metrics.dunn_index(c(X), c(Y)),
    "davies_bouldin_score": lambda c: metrics.davies_bouldin_score(c(X), c(Y)),
    "sd_index": lambda c: metrics.sd_index(c(X), c(Y), alpha=2.0),
    "sd_scat_dis": lambda c: metrics.sd_scat_dis(c(X), c(Y)),
    "partition_coefficient": lambda c: metrics.partition_coefficient(c(U)),
    "xie_beni_index": lambda c: metrics.xie_beni_index(c(X), c(U), c(np.stack([X[Y == j].mean(0) for j in range(3)]))),
    # clustering
    "KMeans": lambda c: cluster.KMeans(3, n_init=2, random_state=0).fit(c(X)).predict(c(Q)),
    "KMeans-transform": lambda c: cluster.KMeans(3, n_init=2, random_state=0).fit(c(X)).transform(c(Q)),
    "FuzzyCMeans": lambda c: cluster.FuzzyCMeans(3, random_state=0).fit(c(X)).predict(c(Q)),
    "kmeans_plusplus": lambda c: (lambda centers, idx: (centers, OnHost(idx)))(
        *cluster.kmeans_plusplus(c(X), 3, random_state=0)
    ),
    # imbalanced data
    "RandomOverSampler": _resample(resampling.RandomOverSampler(random_state=0)),
    "RandomUnderSampler": _resample(resampling.RandomUnderSampler(random_state=0)),
    "TomekLinks": _resample(resampling.TomekLinks()),
    "EditedNearestNeighbours": _resample(resampling.EditedNearestNeighbours()),
    "NeighbourhoodCleaningRule": _resample(resampling.NeighbourhoodCleaningRule()),
    "CondensedNearestNeighbour": _resample(resampling.CondensedNearestNeighbour(random_state=0)),
    "OneSidedSelection": _resample(resampling.OneSidedSelection(random_state=0)),
    "CNNTomek": _resample(resampling.CNNTomek(random_state=0)),
    "SMOTE": _resample(resampling.SMOTE(random_state=0)),
    "SMOTEENN": _resample(resampling.SMOTEENN(random_state=0)),
    "SMOTETomek": _resample(resampling.SMOTETomek(random_state=0)),
    "knn_positive_scores": lambda c: tuple(
        resampling.knn_positive_scores(c(X_IMB), c(Y_BIN), c(Q), resampling.default_knn_scorers((3,)))
    ),
    "cross_validate_resampled": lambda c: OnHost(
        resampling.cross_validate_resampled(
            c(X_IMB),
            c(Y_BIN),
            sampler=resampling.TomekLinks(),
            cv=gpuknn.StratifiedKFold(3),
            pos_label=1,
            scorers=resampling.default_knn_scorers((3,)),
        ).fold_auc
    ),
}


def _compare(got, want, backend, where):
    if isinstance(want, OnHost):
        assert isinstance(got, OnHost), where
        got, want = got.value, want.value
        for g, w in zip(*((v,) if isinstance(v, np.ndarray) else v for v in (got, want))):
            assert isinstance(g, np.ndarray), f"{where}: host data expected, got {type(g)}"
            if np.issubdtype(w.dtype, np.floating):
                np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, err_msg=where)
            else:
                np.testing.assert_array_equal(g, w, err_msg=where)
    elif hasattr(got, "shape") and not isinstance(got, np.ndarray) and got.shape == ():
        # A 0-d result (an eigenvalue, say) stays on the device, as an array of the backend.
        assert_xp(got, np.asarray(want), backend, exact=False, rtol=1e-7, atol=1e-9)
    elif isinstance(want, np.ndarray):
        exact = not np.issubdtype(want.dtype, np.floating)
        assert_xp(got, want, backend, exact=exact, rtol=1e-7, atol=1e-9)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, backend, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for key in want:
            _compare(got[key], want[key], backend, f"{where}[{key!r}]")
    elif isinstance(want, numbers.Number):
        # Scalars are Python numbers on every backend, never 0-d device arrays.
        assert isinstance(got, numbers.Number), f"{where}: {type(got)} is not a Python number"
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=where)
    else:
        assert got == want, where


def _numpy(a):
    return np.asarray(a)


@pytest.mark.parametrize("case", sorted(CASES))
def test_public_api_on_every_backend(backend, case):
    want = CASES[case](_numpy)
    got = CASES[case](backend.asarray)
    _compare(got, want, backend, case)


FIT_PREDICT = [
    gpuknn.KNeighborsClassifier(3),
    gpuknn.RadiusNeighborsClassifier(3.0),
    gpuknn.NearestCentroid(),
    gpuknn.CDNNClassifier(3),
    gpuknn.PCA(2),
    cluster.KMeans(3, n_init=1, random_state=0),
]


def test_kd_tree_is_numpy_only(backend):
    est = gpuknn.KNeighborsClassifier(3, algorithm="kd_tree")
    if backend.name == "numpy":
        assert_xp(est.fit(X, Y).predict(Q), gpuknn.KNeighborsClassifier(3).fit(X, Y).predict(Q), backend)
    else:
        with pytest.raises(InvalidInputError, match="kd_tree.*NumPy arrays only"):
            est.fit(backend.asarray(X), backend.asarray(Y))


@pytest.mark.parametrize("est", FIT_PREDICT, ids=lambda e: type(e).__name__)
def test_mixed_namespaces_are_refused(est):
    """Fitted on NumPy, asked about another namespace: an error naming both and the cure."""
    strict = pytest.importorskip("array_api_strict")
    est.fit(X, Y)
    method = "transform" if isinstance(est, gpuknn.PCA) else "predict"
    with pytest.raises(InvalidInputError, match=r"(?s)numpy.*array_api_strict.*convert"):
        getattr(est, method)(strict.asarray(Q))


def test_mixed_devices_are_refused():
    strict = pytest.importorskip("array_api_strict")
    est = gpuknn.KNeighborsClassifier(3).fit(strict.asarray(X), strict.asarray(Y))
    Qd = strict.asarray(Q, device=strict.Device("device1"))
    with pytest.raises(InvalidInputError, match="device"):
        est.predict(Qd)
    with pytest.raises(InvalidInputError, match="device"):
        gpuknn.kneighbors(Qd, strict.asarray(X), 3)


def test_backend_device_is_the_device_its_arrays_report(backend):
    # torch.device("cuda") != torch.device("cuda:0"), the device a CUDA tensor reports: a
    # fixture naming the former failed every device check of ~560 torch-cuda tests.
    from helpers import torch_device

    from gpuknn._backend import device_of

    a = backend.asarray(np.arange(3.0))
    if backend.device is not None:
        assert device_of(a) == backend.device
    if backend.name.startswith("torch"):
        import torch

        assert torch_device("cuda", 0) == torch.device("cuda:0") != torch.device("cuda")
        assert torch_device("cpu") == torch.empty(1).device
