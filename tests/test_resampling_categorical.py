"""SMOTENC and SMOTEN against imbalanced-learn 0.14.

gpuknn draws from ``numpy.random.default_rng`` in the order imbalanced-learn draws from its
``RandomState`` (made afresh from the seed per class, and per class again for SMOTE-NC's
tie-breaks); replacing the module's ``default_rng`` by a shim that replays ``RandomState``
(``integers`` -> ``randint``, ``uniform`` -> ``uniform``, ``permutation`` -> ``permutation``)
must then give imbalanced-learn's output exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ReplayRandomState, assert_same_resample, host

from gpuknn.errors import InvalidInputError
from gpuknn.resampling import categorical
from gpuknn.resampling.categorical import SMOTEN, SMOTENC

imb = pytest.importorskip("imblearn.over_sampling")


@pytest.fixture
def replay(monkeypatch):
    monkeypatch.setattr(categorical, "default_rng", ReplayRandomState)


def _mixed(seed, n=(70, 25, 12), d_cont=3, n_cat=(3, 4, 2)):
    """Continuous Gaussian blobs per class and categorical columns (float codes) whose
    distribution depends on the class; categorical columns interleaved with continuous."""
    rng = np.random.default_rng(seed)
    cont = np.concatenate([rng.normal(i, 1.0, (m, d_cont)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    cats = []
    for nc in n_cat:
        p = rng.dirichlet(np.ones(nc), size=len(n))
        cats.append(np.concatenate([rng.choice(nc, size=m, p=p[i]) for i, m in enumerate(n)]) * 1.5 + 2.0)
    X = np.column_stack([cont[:, 0], cats[0], cont[:, 1], cats[1], cats[2], cont[:, 2]])
    perm = rng.permutation(y.shape[0])
    return X[perm], y[perm]


_CAT = [1, 3, 4]


def _breast_cancer_mixed():
    """Breast cancer, its first 8 columns; columns 1, 4 and 6 binned into 3-5 quantile bins."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :8].copy()
    for j, b in zip((1, 4, 6), (3, 4, 5)):
        edges = np.quantile(X[:, j], np.linspace(0, 1, b + 1)[1:-1])
        X[:, j] = np.digitize(X[:, j], edges).astype(np.float64)
    return X, y, [1, 4, 6]


# ------------------------------------------------------------------ SMOTENC


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("strategy", ["auto", "minority", {1: 40, 2: 50}])
@pytest.mark.parametrize("mask", [False, True], ids=["indices", "mask"])
def test_smotenc_equals_imblearn(backend, replay, k, strategy, mask):
    X, y = _mixed(0)
    cf = [j in _CAT for j in range(X.shape[1])] if mask else _CAT  # a list: imblearn compares to "auto"
    ours = SMOTENC(cf, k_neighbors=k, sampling_strategy=strategy, random_state=7)
    ref = imb.SMOTENC(cf, k_neighbors=k, sampling_strategy=strategy, random_state=7)
    assert_same_resample(backend, ours, ref, X, y)
    assert set(ours.median_std_) == {int(c) for c in ref.median_std_}
    for c, v in ref.median_std_.items():
        assert ours.median_std_[int(c)] == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_smotenc_unsorted_indices_and_encoder(backend, replay, seed):
    from sklearn.preprocessing import OneHotEncoder

    X, y = _mixed(seed)
    cf = [4, 1, 3]
    enc = OneHotEncoder(handle_unknown="ignore")
    ours = SMOTENC(cf, categorical_encoder=enc, random_state=seed)
    ref = imb.SMOTENC(cf, categorical_encoder=enc, random_state=seed)
    assert_same_resample(backend, ours, ref, X, y)


def test_smotenc_breast_cancer(backend, replay):
    X, y, cf = _breast_cancer_mixed()
    assert_same_resample(backend, SMOTENC(cf, random_state=0), imb.SMOTENC(cf, random_state=0), X, y)


def test_smotenc_properties(backend):
    X, y = _mixed(4)
    sm = SMOTENC(_CAT, k_neighbors=4, random_state=0)
    Xr, yr = sm.fit_resample(backend.asarray(X), backend.asarray(y))
    Xr, yr = host(Xr), host(yr)
    np.testing.assert_array_equal(Xr[: X.shape[0]], X)
    assert np.bincount(yr).tolist() == [70, 70, 70]
    new = Xr[X.shape[0] :]
    cont = [0, 2, 5]
    for j in _CAT:
        assert np.isin(new[:, j], np.unique(X[:, j])).all()
    # continuous part on the segment base -> neighbour
    b, nb = X[sm.base_indices_][:, cont], X[sm.neighbor_indices_][:, cont]
    t = (new[:, cont] - b)[:, 0] / (nb - b)[:, 0]
    np.testing.assert_allclose(new[:, cont], b + t[:, None] * (nb - b), atol=1e-10)
    assert sm.categorical_features_.tolist() == _CAT and sm.continuous_features_.tolist() == cont


def test_smotenc_zero_median_std(backend, replay):
    """Constant continuous columns in a class: median std 0, categorical votes still made."""
    X, y = _mixed(5)
    X[y == 2, 0] = 1.0
    X[y == 2, 2] = 2.0
    ref = imb.SMOTENC(_CAT, random_state=1)
    assert_same_resample(backend, SMOTENC(_CAT, random_state=1), ref, X, y)
    assert ref.median_std_[2] == 0


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        ({"categorical_features": "auto"}, "categorical_features"),
        ({"categorical_features": [0, 1, 2, 3, 4, 5]}, "categorical_features"),
        ({"categorical_features": [6]}, "categorical_features"),
        ({"categorical_features": [-1]}, "categorical_features"),
        ({"categorical_features": [1, 1]}, "categorical_features"),
        ({"categorical_features": [True, False]}, "categorical_features"),
        ({"categorical_features": [False] * 6}, "categorical_features"),
        ({"categorical_features": []}, "categorical_features"),
        ({"categorical_features": [1.5]}, "categorical_features"),
        ({"categorical_features": [1], "k_neighbors": 0}, "k_neighbors"),
        ({"categorical_features": [1], "k_neighbors": 20}, "k_neighbors"),
        ({"categorical_features": [1], "categorical_encoder": "onehot"}, "categorical_encoder"),
        ({"categorical_features": [1], "sampling_strategy": "majority"}, "sampling_strategy"),
    ],
)
def test_smotenc_errors(kwargs, arg):
    X, y = _mixed(0)
    with pytest.raises(InvalidInputError, match=arg):
        SMOTENC(**kwargs).fit_resample(X, y)


# ------------------------------------------------------------------ SMOTEN


def _nominal(seed, n=(60, 25, 12), n_cat=(3, 4, 5, 6)):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    cols = []
    for nc in n_cat:
        p = rng.dirichlet(np.ones(nc), size=len(n))
        cols.append(np.concatenate([rng.choice(nc, size=m, p=p[i]) for i, m in enumerate(n)]) * 2.0 - 1.0)
    perm = rng.permutation(y.shape[0])
    return np.column_stack(cols)[perm], y[perm]


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize("strategy", ["auto", "minority", {1: 40, 2: 50}])
def test_smoten_equals_imblearn(backend, replay, k, strategy):
    X, y = _nominal(0)
    ours = SMOTEN(k_neighbors=k, sampling_strategy=strategy, random_state=5)
    ref = imb.SMOTEN(k_neighbors=k, sampling_strategy=strategy, random_state=5)
    assert_same_resample(backend, ours, ref, X, y)


def test_smoten_vdm_matches_imblearn():
    from imblearn.metrics.pairwise import ValueDifferenceMetric
    from sklearn.preprocessing import OrdinalEncoder

    X, y = _nominal(1)
    sm = SMOTEN(random_state=0).fit(X, y)
    Xe = OrdinalEncoder(dtype=np.int32).fit_transform(X)
    vdm = ValueDifferenceMetric(n_categories=[len(c) for c in sm.categories_]).fit(Xe, y)
    for a, b in zip(sm.proba_per_class_, vdm.proba_per_class_):
        np.testing.assert_array_equal(a, b)


def _breast_cancer_nominal():
    """Breast cancer, 5 columns each binned into 4-8 quantile bins (all categorical)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, [0, 1, 4, 7, 9]].copy()
    for j, b in enumerate((4, 5, 6, 7, 8)):
        edges = np.quantile(X[:, j], np.linspace(0, 1, b + 1)[1:-1])
        X[:, j] = np.digitize(X[:, j], edges).astype(np.float64)
    return X, y


def test_smoten_breast_cancer(backend, replay):
    X, y = _breast_cancer_nominal()
    assert_same_resample(backend, SMOTEN(random_state=0), imb.SMOTEN(random_state=0), X, y)


def test_smoten_working_memory_chunks(backend):
    """1 MiB: the 424 x 424 distances of the over-sampled class in three chunks of rows."""
    X, y = _breast_cancer_nominal()
    X, y = np.concatenate([X, X]), np.concatenate([y, y])
    a = SMOTEN(random_state=3).fit_resample(backend.asarray(X), y)[0]
    b = SMOTEN(random_state=3, working_memory=1).fit_resample(backend.asarray(X), y)[0]
    np.testing.assert_array_equal(host(a), host(b))
    c = SMOTEN(random_state=3, working_memory=0.25).fit_resample(backend.asarray(X), y)[0]  # MiB fractions
    np.testing.assert_array_equal(host(a), host(c))


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        ({"k_neighbors": 0}, "k_neighbors"),
        ({"k_neighbors": 12}, "k_neighbors"),
        ({"working_memory": 0}, "working_memory"),
        ({"sampling_strategy": "majority"}, "sampling_strategy"),
    ],
)
def test_smoten_errors(kwargs, arg):
    X, y = _nominal(0)
    with pytest.raises(InvalidInputError, match=arg):
        SMOTEN(**kwargs).fit_resample(X, y)
