"""The imbalanced-data studies and their plots, on tiny configurations."""

from __future__ import annotations

import numpy as np
import pytest

from gpuknn._backend import to_numpy
from gpuknn.errors import InvalidInputError
from gpuknn.plots.imbalanced import plot_auc_heatmap, plot_method_ranks, plot_overlap_auc
from gpuknn.resampling import SMOTE, RandomUnderSampler
from gpuknn.studies.overlap_study import make_overlap_domain, overlap_study
from gpuknn.studies.resampling_study import imbalanced_datasets, mean_ranks, resampling_study


def test_make_overlap_domain(xp):
    X, y = make_overlap_domain(400, 2.0, 0.05, random_state=0, xp=xp)
    Xh, yh = to_numpy(X), to_numpy(y)
    assert Xh.shape == (400, 5) and int(yh.sum()) == 20
    assert abs(Xh[yh == 1].mean() - 2.0) < 0.4 and abs(Xh[yh == 0].mean()) < 0.1
    X2, _ = make_overlap_domain(400, 2.0, 0.05, random_state=0, xp=xp)
    np.testing.assert_array_equal(to_numpy(X2), Xh)
    with pytest.raises(InvalidInputError):
        make_overlap_domain(400, 1.0, 1.5)


def test_overlap_study_shows_overlap_matters(xp):
    r = overlap_study(distances=(0.0, 3.0), shares=(0.05, 0.5), n_samples=400, n_splits=4, xp=xp)
    assert r.auc.shape == (2, 2, 2)
    assert np.all(r.auc[1] > 0.97)  # separated: learnt at any share
    assert np.all(np.abs(r.auc[0] - 0.5) < 0.2)  # full overlap: chance level
    fig = plot_overlap_auc(r.distances, r.shares, r.auc[:, :, 0])
    assert len(fig.axes[0].lines) == 2


def test_resampling_study_small(xp):
    X, y = make_overlap_domain(240, 1.0, 0.1, random_state=1)
    samplers = {"none": None, "RUS": RandomUnderSampler(random_state=0), "SMOTE": SMOTE(random_state=0)}
    r = resampling_study(
        datasets={"a": (X, y), "b": make_overlap_domain(240, 2.0, 0.1, random_state=2)},
        samplers=samplers,
        n_splits=3,
        xp=xp,
    )
    assert r.auc.shape == (2, 3, 7) and r.scorers[-1] == "BordaRank"
    assert np.all((r.auc > 0.5) & (r.auc <= 1.0))
    ranks = r.sampler_ranks()
    assert set(ranks) == set(samplers) and abs(sum(ranks.values()) - 6.0) < 1e-9  # ranks 1..3
    assert r.train_size[0, 1] < r.train_size[0, 0] < r.train_size[0, 2]  # RUS < none < SMOTE
    assert abs(sum(r.scorer_ranks().values()) - 28.0) < 1e-9  # ranks 1..7
    assert plot_method_ranks(ranks).axes and plot_auc_heatmap(r.datasets, r.samplers, r.auc[:, :, -1]).axes


def test_mean_ranks_and_datasets():
    np.testing.assert_allclose(mean_ranks(np.array([[0.9, 0.8, 0.8], [0.5, 0.7, 0.6]]), axis=1), [2.0, 1.75, 2.25])
    data = imbalanced_datasets(random_state=0)
    for name, (X, y) in data.items():
        assert set(np.unique(y)) == {0, 1} and 10 <= y.sum() <= 0.2 * y.size, name
        np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-8)


def test_every_new_sampler_runs_in_the_resampling_study():
    """The samplers of issue 20 plug into the study (and so into cross_validate_resampled)."""
    from gpuknn import resampling as rs

    X, y = make_overlap_domain(300, 1.0, 0.15, random_state=0)
    samplers = {
        "NearMiss-1": rs.NearMiss(version=1),
        "NearMiss-3": rs.NearMiss(version=3),
        "RENN": rs.RepeatedEditedNearestNeighbours(),
        "AllKNN": rs.AllKNN(),
        "IHT": rs.InstanceHardnessThreshold(random_state=0),
        "CC": rs.ClusterCentroids(random_state=0),
        "ADASYN": rs.ADASYN(random_state=0),
        "BSMOTE-2": rs.BorderlineSMOTE(kind="borderline-2", random_state=0),
        "KMeansSMOTE": rs.KMeansSMOTE(kmeans_estimator=2, cluster_balance_threshold=0.0, random_state=0),
    }
    r = resampling_study(datasets={"toy": (X, y)}, samplers=samplers, n_splits=3)
    assert r.auc.shape[:2] == (1, len(samplers))
    assert np.isfinite(r.auc).all() and (r.auc > 0.5).all()  # overlap 1.0: clearly above chance


def test_bayes_auc_matches_the_formula_and_the_optimal_score():
    from scipy.stats import norm

    from gpuknn.metrics import roc_auc_score
    from gpuknn.studies.overlap_study import THESIS_DISTANCES, THESIS_SHARES, bayes_auc

    # The worked value: d = 0.5 on each of 5 attributes -> Phi(0.5 * sqrt(5/2)) = 78.54 %.
    assert round(float(bayes_auc(0.5)), 4) == 0.7854
    assert np.allclose(bayes_auc([0.0, 1.0, 2.0], 3), norm.cdf(np.array([0.0, 1.0, 2.0]) * np.sqrt(1.5)))
    # The optimal score (sum of the attributes) on a large drawn domain reaches it.
    X, y = make_overlap_domain(40_000, 0.5, 0.3, random_state=1)
    assert abs(roc_auc_score(y, X.sum(axis=1)) - float(bayes_auc(0.5))) < 0.01
    # The thesis' grid: 10 domains (shifts 0-9), 14 minority shares from 1 % to 45 % plus 50 %.
    assert THESIS_DISTANCES == tuple(float(d) for d in range(10))
    assert len(THESIS_SHARES) == 15 and THESIS_SHARES[0] == 0.01 and THESIS_SHARES[-2:] == (0.45, 0.5)


def test_overlap_study_reports_the_bayes_auc(xp):
    from gpuknn.studies.overlap_study import bayes_auc

    r = overlap_study(distances=(0.5, 1.0), shares=(0.3,), n_samples=600, n_splits=3, xp=xp)
    assert np.array_equal(r.bayes, bayes_auc(np.array([0.5, 1.0])))
    assert np.all(r.auc[:, 0, :] <= r.bayes[:, None] + 0.06)  # no scorer beats Bayes beyond CV noise
