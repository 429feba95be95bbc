"""The samplers take imbalanced-learn 0.14's options (issue 33): the estimator seeding of
InstanceHardnessThreshold, RuntimeErrors, NearestNeighbors objects as k/n/m_neighbors,
RandomOverSampler(shrinkage), non-numeric X in the random samplers, n_jobs.
imbalanced-learn is the oracle where the result is deterministic."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, host

import gpuknn
from gpuknn.errors import GpuknnError, InvalidInputError, ResamplingError
from gpuknn.resampling import (
    ADASYN,
    SMOTE,
    SMOTEN,
    SMOTENC,
    BorderlineSMOTE,
    ClusterCentroids,
    InstanceHardnessThreshold,
    KMeansSMOTE,
    RandomOverSampler,
    RandomUnderSampler,
)

imb_over = pytest.importorskip("imblearn.over_sampling")
imb_under = pytest.importorskip("imblearn.under_sampling")
imb_combine = pytest.importorskip("imblearn.combine")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_neighbors = pytest.importorskip("sklearn.neighbors")
sk_ms = pytest.importorskip("sklearn.model_selection")

_INT32_MAX = np.iinfo(np.int32).max


def _data(seed=0, n=(60, 24, 16), d=3):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    X = rng.normal(size=(y.shape[0], d)) + y[:, None] * 1.2
    p = rng.permutation(y.shape[0])
    return X[p], y[p]


# --- 1. InstanceHardnessThreshold seeds its estimator's random_state --------------------


@pytest.mark.parametrize("forest_seed", [1, 7])
def test_iht_seeds_estimator_as_imblearn(forest_seed):
    X, y = _data(1)
    forest = sk_ensemble.RandomForestClassifier(n_estimators=10, random_state=forest_seed)
    ref = imb_under.InstanceHardnessThreshold(estimator=forest, random_state=0)
    ref.fit_resample(X, y)
    # imbalanced-learn draws the forest's seed from RandomState(0), then shuffles its folds
    # with the same RandomState: the same folds here come from that state after one draw.
    rs = np.random.RandomState(0)
    rs.randint(_INT32_MAX)
    cv = sk_ms.StratifiedKFold(5, shuffle=True, random_state=rs)
    iht = InstanceHardnessThreshold(estimator=forest, random_state=0, cv=cv)
    iht.fit_resample(X, y)
    np.testing.assert_array_equal(iht.sample_indices_, ref.sample_indices_)
    assert iht.estimator_.random_state == np.random.RandomState(0).randint(_INT32_MAX)
    assert forest.random_state == forest_seed  # the given estimator is left alone


def test_iht_result_independent_of_estimator_seed():
    X, y = _data(2)
    got = [
        InstanceHardnessThreshold(
            estimator=sk_ensemble.RandomForestClassifier(n_estimators=10, random_state=s), random_state=3
        )
        .fit(X, y)
        .sample_indices_
        for s in (0, 1, 2)
    ]
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[0], got[2])


def test_iht_seeds_nested_random_states():
    X, y = _data(3)
    bag = sk_ensemble.BaggingClassifier(
        estimator=sk_ensemble.RandomForestClassifier(n_estimators=3, random_state=5), n_estimators=2, random_state=9
    )
    iht = InstanceHardnessThreshold(estimator=bag, random_state=4).fit(X, y)
    rs = np.random.RandomState(4)
    # sorted parameter names: "estimator__random_state" < "random_state"
    assert iht.estimator_.estimator.random_state == rs.randint(_INT32_MAX)
    assert iht.estimator_.random_state == rs.randint(_INT32_MAX)


def test_iht_default_knn_and_n_jobs(backend):
    X, y = _data(4)
    iht = InstanceHardnessThreshold(random_state=0, n_jobs=4)
    Xr, yr = iht.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = InstanceHardnessThreshold(random_state=0).fit(X, y)
    np.testing.assert_array_equal(iht.sample_indices_, ref.sample_indices_)
    assert_xp(Xr, X[ref.sample_indices_], backend)
    assert isinstance(iht.estimator_, gpuknn.KNeighborsClassifier)


# --- 2. RuntimeErrors where imbalanced-learn raises them ----------------------------------


def test_kmeans_smote_no_cluster_is_runtime_error(backend):
    X, y = _data(5)
    sm = KMeansSMOTE(kmeans_estimator=gpuknn.cluster.KMeans(4, random_state=0), cluster_balance_threshold=0.999)
    with pytest.raises(ResamplingError, match="cluster_balance_threshold") as err:
        sm.fit_resample(backend.asarray(X), backend.asarray(y))
    assert isinstance(err.value, RuntimeError) and isinstance(err.value, GpuknnError)
    with pytest.raises(RuntimeError):
        imb_over.KMeansSMOTE(cluster_balance_threshold=0.999, random_state=0).fit_resample(X, y)


class _NoCentres(gpuknn.base.BaseEstimator):
    """A clusterer with n_clusters and fit, but no cluster_centers_."""

    def __init__(self, n_clusters=2):
        self.n_clusters = n_clusters

    def fit(self, X, y=None):
        self.labels_ = np.zeros(int(X.shape[0]), dtype=np.int64)
        return self

    def predict(self, X):
        return np.zeros(int(X.shape[0]), dtype=np.int64)


def test_cluster_centroids_without_centres_is_runtime_error(backend):
    X, y = _data(6)
    with pytest.raises(ResamplingError, match="cluster_centers_") as err:
        ClusterCentroids(estimator=_NoCentres()).fit_resample(backend.asarray(X), backend.asarray(y))
    assert isinstance(err.value, RuntimeError)
    with pytest.raises(RuntimeError):
        imb_under.ClusterCentroids(estimator=_NoCentres()).fit_resample(X, y)


# --- 3. NearestNeighbors objects as k_neighbors / n_neighbors / m_neighbors ---------------

_NN_CASES = [
    (SMOTE, "k_neighbors", "nn_k_"),
    (ADASYN, "n_neighbors", "nn_"),
    (BorderlineSMOTE, "k_neighbors", "nn_k_"),
    (BorderlineSMOTE, "m_neighbors", "nn_m_"),
    (KMeansSMOTE, "k_neighbors", "nn_k_"),
]


@pytest.mark.parametrize(("cls", "param", "attr"), _NN_CASES)
@pytest.mark.parametrize("kind", ["sklearn", "gpuknn"])
def test_neighbors_object_equals_int(backend, cls, param, attr, kind):
    X, y = _data(7, n=(80, 30, 30))
    extra = {"kmeans_estimator": gpuknn.cluster.KMeans(2, random_state=0)} if cls is KMeansSMOTE else {}
    nn = sk_neighbors.NearestNeighbors(n_neighbors=4) if kind == "sklearn" else gpuknn.NearestNeighbors(n_neighbors=4)
    Xb, yb = backend.asarray(X), backend.asarray(y)
    by_int = cls(random_state=0, **{param: 3}, **extra)
    X_int, _ = by_int.fit_resample(Xb, yb)
    by_obj = cls(random_state=0, **{param: nn}, **extra)
    X_obj, y_obj = by_obj.fit_resample(Xb, yb)
    assert_xp(X_obj, host(X_int), backend, exact=False, rtol=1e-12, atol=1e-12)
    fitted = getattr(by_obj, attr)
    assert fitted is not nn and type(fitted) is type(nn) and fitted.n_neighbors == 4
    assert hasattr(fitted, "n_samples_fit_")  # fitted, as imbalanced-learn's
    assert getattr(by_int, attr).n_neighbors == 4 and hasattr(getattr(by_int, attr), "n_samples_fit_")
    assert not hasattr(nn, "n_samples_fit_")  # the given object is cloned


def test_smote_neighbors_object_matches_imblearn_structure():
    X, y = _data(8)
    nn = sk_neighbors.NearestNeighbors(n_neighbors=3)
    sm = SMOTE(k_neighbors=nn, random_state=0)
    Xr, yr = sm.fit_resample(X, y)
    ref = imb_over.SMOTE(k_neighbors=nn, random_state=0)
    Xe, ye = ref.fit_resample(X, y)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))
    # every new point lies on a segment from its base sample to one of its 2 nearest
    # same-class neighbours (found by the given object)
    for i, (b, nb) in enumerate(zip(sm.base_indices_, sm.neighbor_indices_)):
        members = np.flatnonzero(y == y[b])
        knn = sk_neighbors.NearestNeighbors(n_neighbors=3).fit(X[members])
        near = members[knn.kneighbors(X[b : b + 1], return_distance=False)[0]]
        assert nb in near[near != b]
        p = Xr[y.shape[0] + i]
        t = np.dot(p - X[b], X[nb] - X[b]) / np.dot(X[nb] - X[b], X[nb] - X[b])
        np.testing.assert_allclose(p, X[b] + t * (X[nb] - X[b]), atol=1e-12)
        assert -1e-12 <= t <= 1 + 1e-12


def test_borderline_in_danger_indices_as_imblearn():
    X, y = _data(9, n=(80, 30))
    bs = BorderlineSMOTE(random_state=0).fit(X, y)
    ref = imb_over.BorderlineSMOTE(random_state=0)
    ref.fit_resample(X, y)
    assert set(bs.in_danger_indices) == {int(k) for k in ref.in_danger_indices}
    for k, v in ref.in_danger_indices.items():
        np.testing.assert_array_equal(bs.in_danger_indices[int(k)], v)
    assert bs.in_danger_indices.keys() == bs.in_danger_indices_.keys()


def test_smotenc_neighbors_object():
    rng = np.random.default_rng(10)
    X = np.column_stack([rng.normal(size=60), rng.integers(0, 3, 60), rng.normal(size=60)])
    y = np.array([0] * 45 + [1] * 15)
    a = SMOTENC([1], k_neighbors=3, random_state=0).fit_resample(X, y)[0]
    sm = SMOTENC([1], k_neighbors=sk_neighbors.NearestNeighbors(n_neighbors=4), random_state=0)
    b = sm.fit_resample(X, y)[0]
    np.testing.assert_allclose(b, a, rtol=1e-12)
    assert sm.nn_k_.n_samples_fit_ == 15


def test_combined_samplers_take_neighbors_object():
    X, y = _data(11)
    nn = sk_neighbors.NearestNeighbors(n_neighbors=4)
    for cls in (gpuknn.resampling.SMOTETomek, gpuknn.resampling.SMOTEENN):
        a = cls(k_neighbors=3, random_state=0, n_jobs=2).fit_resample(X, y)
        b = cls(k_neighbors=nn, random_state=0).fit_resample(X, y)
        np.testing.assert_allclose(b[0], a[0], rtol=1e-12)
        np.testing.assert_array_equal(b[1], a[1])


@pytest.mark.parametrize(
    "bad",
    [0, "five", object(), sk_neighbors.NearestNeighbors(n_neighbors=1), 2.5, True],
)
def test_neighbors_param_errors(bad):
    X, y = _data(12)
    with pytest.raises(InvalidInputError, match="k_neighbors"):
        SMOTE(k_neighbors=bad).fit_resample(X, y)


# --- 4. RandomOverSampler(shrinkage) and non-numeric X ------------------------------------


@pytest.mark.parametrize("shrinkage", [0.5, {1: 1.0, 2: 2.0}])
def test_shrinkage_smoothed_bootstrap(backend, shrinkage):
    X, y = _data(13)
    ros = RandomOverSampler(random_state=0, shrinkage=shrinkage)
    Xr, yr = ros.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = imb_over.RandomOverSampler(random_state=0, shrinkage=shrinkage)
    Xe, ye = ref.fit_resample(X, y)
    assert ros.shrinkage_ == {int(k): float(v) for k, v in ref.shrinkage_.items()}
    np.testing.assert_array_equal(np.bincount(host(yr)), np.bincount(ye))
    n, d = X.shape
    assert_xp(Xr[:n, :], X, backend)
    idx = ros.sample_indices_
    np.testing.assert_array_equal(host(yr), y[idx])
    # each smoothed row is its drawn row plus noise of per-feature scale
    # shrinkage * h * std(class), h = (4 / ((d + 2) n)) ** (1 / (d + 4))
    h = (4 / ((d + 2) * n)) ** (1 / (d + 4))
    noise = host(Xr)[n:] - X[idx[n:]]
    for c in (1, 2):
        rows = y[idx[n:]] == c
        scale = ros.shrinkage_[c] * h * X[y == c].std(axis=0)
        z = noise[rows] / scale
        assert np.all(np.abs(z) > 0)
        assert abs(z.mean()) < 0.5 and 0.6 < z.std() < 1.4  # standard normal draws
    again = RandomOverSampler(random_state=0, shrinkage=shrinkage).fit_resample(backend.asarray(X), backend.asarray(y))
    assert_xp(again[0], host(Xr), backend)


def test_shrinkage_zero_is_plain_bootstrap():
    X, y = _data(14)
    ros = RandomOverSampler(random_state=1, shrinkage=0.0)
    Xr, _ = ros.fit_resample(X, y)
    np.testing.assert_array_equal(Xr, X[ros.sample_indices_])
    plain = RandomOverSampler(random_state=1)
    plain.fit_resample(X, y)
    assert plain.shrinkage_ is None


@pytest.mark.parametrize(
    ("shrinkage", "match"),
    [({1: 1.0}, "missing classes"), (-1.0, ">= 0"), ({1: 1.0, 2: -0.5}, ">= 0"), ("big", "shrinkage")],
)
def test_shrinkage_errors(shrinkage, match):
    X, y = _data(15)
    with pytest.raises(InvalidInputError, match=match):
        RandomOverSampler(shrinkage=shrinkage).fit_resample(X, y)
    with pytest.raises(ValueError):
        imb_over.RandomOverSampler(shrinkage=shrinkage).fit_resample(X, y)


def _strings(n=(9, 3)):
    y = np.array([0] * n[0] + [1] * n[1])
    X = np.array([[f"s{i}", i, i * 0.5] for i in range(y.shape[0])], dtype=object)
    return X, y


@pytest.mark.parametrize("cls", [RandomOverSampler, RandomUnderSampler])
def test_random_samplers_pass_objects_through(cls):
    X, y = _strings()
    s = cls(random_state=0)
    Xr, yr = s.fit_resample(X, y)
    assert Xr.dtype == object
    np.testing.assert_array_equal(Xr, X[s.sample_indices_])
    np.testing.assert_array_equal(yr, y[s.sample_indices_])
    Xe, ye = getattr(imb_over if cls is RandomOverSampler else imb_under, cls.__name__)(random_state=0).fit_resample(
        X, y
    )
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))
    assert s.n_features_in_ == 3
    # the rows drawn are the rows the numeric data would give (same draws)
    numeric = cls(random_state=0)
    numeric.fit_resample(X[:, 1:].astype(np.float64), y)
    np.testing.assert_array_equal(s.sample_indices_, numeric.sample_indices_)


def test_random_samplers_pass_string_arrays_and_frames():
    pd = pytest.importorskip("pandas")
    X, y = _strings()
    Xs = X.astype(str)
    ros = RandomOverSampler(random_state=0)
    Xr, _ = ros.fit_resample(Xs, y)
    assert Xr.dtype == Xs.dtype
    np.testing.assert_array_equal(Xr, Xs[ros.sample_indices_])
    df = pd.DataFrame({"name": X[:, 0].astype(str), "n": X[:, 1].astype(np.int64), "v": X[:, 2].astype(float)})
    rus = RandomUnderSampler(random_state=0)
    Xd, yd = rus.fit_resample(df, y)
    assert list(Xd.columns) == ["name", "n", "v"]
    assert Xd.dtypes.tolist() == df.dtypes.tolist()
    np.testing.assert_array_equal(Xd["name"].to_numpy(), df["name"].to_numpy()[rus.sample_indices_])
    np.testing.assert_array_equal(rus.feature_names_in_, ["name", "n", "v"])
    with pytest.raises(InvalidInputError, match="numeric"):
        RandomOverSampler(shrinkage=1.0).fit_resample(X, y)


# --- n_jobs ---------------------------------------------------------------------------------


def test_n_jobs_accepted_where_imblearn_has_it():
    X, y = _data(16)
    for name in [
        "KMeansSMOTE",
        "InstanceHardnessThreshold",
        "NearMiss",
        "TomekLinks",
        "EditedNearestNeighbours",
        "RepeatedEditedNearestNeighbours",
        "AllKNN",
        "OneSidedSelection",
        "CondensedNearestNeighbour",
        "NeighbourhoodCleaningRule",
        "SMOTEENN",
        "SMOTETomek",
    ]:
        cls = getattr(gpuknn.resampling, name)
        peer = next(getattr(m, name) for m in (imb_over, imb_under, imb_combine) if hasattr(m, name))
        assert "n_jobs" in peer().get_params()
        kw = {"random_state": 0} if "random_state" in cls().get_params() else {}
        a = cls(n_jobs=3, **kw).fit_resample(X, y)
        b = cls(**kw).fit_resample(X, y)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


# --- string / object categories in SMOTENC and SMOTEN -------------------------------------


def _mixed(seed=17, n=(30, 10)):
    rng = np.random.default_rng(seed)
    m = sum(n)
    X = np.empty((m, 3), dtype=object)
    X[:, 0] = rng.normal(size=m)
    X[:, 1] = rng.choice(["red", "green", "blue"], m)
    X[:, 2] = rng.normal(size=m)
    return X, np.repeat(np.arange(len(n)), n)


def _as_codes(X, cols):
    out = X.copy()
    for j in cols:
        out[:, j] = np.searchsorted(np.unique(X[:, j]), X[:, j])
    return out.astype(np.float64)


def test_smotenc_string_categories_equal_coded_run():
    X, y = _mixed()
    sm = SMOTENC([1], k_neighbors=3, random_state=0)
    Xr, yr = sm.fit_resample(X, y)
    assert Xr.dtype == object
    np.testing.assert_array_equal(Xr[: X.shape[0]], X)
    coded = SMOTENC([1], k_neighbors=3, random_state=0).fit_resample(_as_codes(X, [1]), y)[0]
    n = X.shape[0]
    np.testing.assert_allclose(Xr[n:, [0, 2]].astype(np.float64), coded[n:, [0, 2]], rtol=1e-12)
    np.testing.assert_array_equal(Xr[n:, 1], np.array(["blue", "green", "red"])[coded[n:, 1].astype(np.int64)])
    np.testing.assert_array_equal(sm.categories_[0], ["blue", "green", "red"])
    ref_X, ref_y = imb_over.SMOTENC([1], k_neighbors=3, random_state=0).fit_resample(X, y)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ref_y))
    assert set(Xr[n:, 1]) <= {"red", "green", "blue"}


@pytest.mark.parametrize("cf", ["auto", ["colour"], [1], [False, True, False]])
def test_smotenc_dataframe_categorical_features(cf):
    pd = pytest.importorskip("pandas")
    X, y = _mixed(18)
    df = pd.DataFrame({"a": X[:, 0].astype(float), "colour": pd.Categorical(X[:, 1]), "b": X[:, 2].astype(float)})
    sm = SMOTENC(cf, k_neighbors=3, random_state=0)
    Xr, yr = sm.fit_resample(df, y)
    ref = imb_over.SMOTENC(cf, k_neighbors=3, random_state=0)
    Xe, ye = ref.fit_resample(df, y)
    np.testing.assert_array_equal(sm.categorical_features_, ref.categorical_features_)
    np.testing.assert_array_equal(sm.continuous_features_, ref.continuous_features_)
    assert Xr.dtypes.tolist() == Xe.dtypes.tolist() and list(Xr.columns) == list(Xe.columns)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))
    np.testing.assert_array_equal(sm.feature_names_in_, ["a", "colour", "b"])
    plain = SMOTENC([1], k_neighbors=3, random_state=0).fit_resample(X, y)[0]
    np.testing.assert_array_equal(Xr["colour"].to_numpy().astype(object), plain[:, 1])


def test_smotenc_name_errors():
    pd = pytest.importorskip("pandas")
    X, y = _mixed(19)
    with pytest.raises(InvalidInputError, match="DataFrame"):
        SMOTENC("auto").fit_resample(X, y)
    df = pd.DataFrame({"a": X[:, 0].astype(float), "c": X[:, 1], "b": X[:, 2].astype(float)})
    with pytest.raises(InvalidInputError, match="no column named"):
        SMOTENC(["nope"]).fit_resample(df, y)
    with pytest.raises(InvalidInputError, match="no category column"):
        SMOTENC("auto").fit_resample(df, y)
    with pytest.raises(InvalidInputError, match="column 1"):
        SMOTENC([0]).fit_resample(X, y)  # strings in a continuous column


def test_smoten_strings_and_encoder():
    preprocessing = pytest.importorskip("sklearn.preprocessing")
    rng = np.random.default_rng(20)
    X = np.column_stack([rng.choice(["a", "b", "c"], 40), rng.choice(["x", "y"], 40)])
    y = np.array([0] * 30 + [1] * 10)
    sm = SMOTEN(k_neighbors=3, random_state=0)
    Xr, yr = sm.fit_resample(X, y)
    assert Xr.dtype == X.dtype
    coded = SMOTEN(k_neighbors=3, random_state=0).fit_resample(_as_codes(X.astype(object), [0, 1]), y)[0]
    decoded = np.column_stack([np.unique(X[:, j])[coded[:, j].astype(np.int64)] for j in range(2)])
    np.testing.assert_array_equal(Xr, decoded)
    Xe, ye = imb_over.SMOTEN(k_neighbors=3, random_state=0).fit_resample(X, y)
    np.testing.assert_array_equal(np.bincount(yr), np.bincount(ye))
    enc = SMOTEN(k_neighbors=3, random_state=0, categorical_encoder=preprocessing.OrdinalEncoder())
    np.testing.assert_array_equal(enc.fit_resample(X, y)[0], Xr)


@pytest.mark.parametrize("name", ["EditedNearestNeighbours", "RepeatedEditedNearestNeighbours", "AllKNN"])
def test_cleaners_take_neighbors_object(backend, name):
    X, y = _data(21, n=(90, 40, 20))
    ours, peer = getattr(gpuknn.resampling, name), getattr(imb_under, name)
    nn = sk_neighbors.NearestNeighbors(n_neighbors=4)
    s = ours(n_neighbors=nn)
    Xr, _ = s.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = peer(n_neighbors=nn)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(np.sort(s.sample_indices_), np.sort(ref.sample_indices_))
    by_int = ours(n_neighbors=3)
    by_int.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(s.sample_indices_, by_int.sample_indices_)
    assert_xp(Xr, X[s.sample_indices_], backend)
    assert isinstance(s.nn_, sk_neighbors.NearestNeighbors) and s.nn_ is not nn
    assert isinstance(by_int.nn_, gpuknn.NearestNeighbors) and by_int.nn_.n_neighbors == 4


# --- NearMiss, NeighbourhoodCleaningRule, CNN and OSS take neighbour estimator objects ------


def _nn_object(kind, n):
    return sk_neighbors.NearestNeighbors(n_neighbors=n) if kind == "sklearn" else gpuknn.NearestNeighbors(n_neighbors=n)


@pytest.mark.parametrize("kind", ["sklearn", "gpuknn"])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_nearmiss_takes_neighbors_objects(backend, version, kind):
    X, y = _data(22, n=(70, 30, 15))
    kw = dict(version=version, n_neighbors=_nn_object(kind, 2), n_neighbors_ver3=_nn_object(kind, 8))
    ours = gpuknn.resampling.NearMiss(**kw)
    Xr, _ = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = imb_under.NearMiss(**kw)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
    assert_xp(Xr, X[ref.sample_indices_], backend)
    assert ours.nn_ is not kw["n_neighbors"] and type(ours.nn_) is type(kw["n_neighbors"])
    assert ours.nn_.n_samples_fit_ == ref.nn_.n_samples_fit_ == 15  # fitted on the minority
    assert hasattr(ours, "nn_ver3_") == hasattr(ref, "nn_ver3_") == (version == 3)
    if version == 3:
        assert ours.nn_ver3_.n_samples_fit_ == ref.nn_ver3_.n_samples_fit_
    by_int = gpuknn.resampling.NearMiss(version=version, n_neighbors=2, n_neighbors_ver3=8)
    by_int.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(by_int.sample_indices_, ref.sample_indices_)
    assert isinstance(by_int.nn_, gpuknn.NearestNeighbors) and by_int.nn_.n_neighbors == 2
    assert by_int.nn_.n_samples_fit_ == 15


def test_nearmiss_refuses_non_estimators():
    X, y = _data(23)
    with pytest.raises(InvalidInputError, match="n_neighbors_ver3 must be an int"):
        gpuknn.resampling.NearMiss(version=3, n_neighbors_ver3="three").fit_resample(X, y)


@pytest.mark.parametrize("kind", ["sklearn", "gpuknn"])
@pytest.mark.parametrize("strategy", ["auto", "majority"])
def test_ncr_takes_neighbors_object(backend, kind, strategy):
    X, y = _data(24, n=(90, 40, 20))
    nn = _nn_object(kind, 4)
    ours = gpuknn.resampling.NeighbourhoodCleaningRule(n_neighbors=nn, sampling_strategy=strategy)
    Xr, _ = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    # imbalanced-learn recognises scikit-learn's NearestNeighbors only: its twin is the oracle
    ref = imb_under.NeighbourhoodCleaningRule(n_neighbors=_nn_object("sklearn", 4), sampling_strategy=strategy)
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
    assert_xp(Xr, X[ref.sample_indices_], backend)
    assert isinstance(ours.nn_, gpuknn.KNeighborsClassifier) and ours.nn_.n_neighbors == ref.nn_.n_neighbors == 3
    assert ours.nn_.n_samples_fit_ == X.shape[0]
    enn, enn_ref = ours.edited_nearest_neighbours_, ref.edited_nearest_neighbours_
    assert isinstance(enn, gpuknn.resampling.EditedNearestNeighbours) and enn.kind_sel == "mode"
    np.testing.assert_array_equal(np.sort(enn.sample_indices_), np.sort(enn_ref.sample_indices_))
    assert type(enn.nn_) is type(nn) and enn.nn_ is not nn
    by_int = gpuknn.resampling.NeighbourhoodCleaningRule(n_neighbors=3, sampling_strategy=strategy)
    by_int.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(by_int.sample_indices_, ours.sample_indices_)


class _ReplayedDraws(np.random.RandomState):
    """A RandomState whose ``randint`` replays given draws (imbalanced-learn's seeds)."""

    def __init__(self, draws):
        super().__init__(0)
        self._draws = [np.asarray(d) for d in draws]

    def randint(self, low, high=None, size=None, dtype=int):  # noqa: ARG002 - replayed
        return self._draws.pop(0)


@pytest.mark.parametrize("kind", ["sklearn", "gpuknn"])
@pytest.mark.parametrize("name", ["CondensedNearestNeighbour", "OneSidedSelection"])
def test_condensers_take_kneighbors_classifier(backend, name, kind):
    rng = np.random.default_rng(25)
    X = np.concatenate([rng.normal(0.0, 1.0, (70, 2)), rng.normal(1.5, 1.0, (12, 2))])
    y = np.repeat([0, 1], [70, 12])  # the condensed class first: imblearn's skip list is exact
    knc = sk_neighbors.KNeighborsClassifier(3) if kind == "sklearn" else gpuknn.KNeighborsClassifier(3)
    ours = getattr(gpuknn.resampling, name)(n_neighbors=knc, random_state=0)
    Xr, _ = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    draws = [np.searchsorted(np.flatnonzero(y == c), s) for c, s in sorted(ours.seed_indices_.items())]
    ref = getattr(imb_under, name)(n_neighbors=sk_neighbors.KNeighborsClassifier(3), random_state=_ReplayedDraws(draws))
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
    assert_xp(Xr, X[ref.sample_indices_], backend)
    assert len(ours.estimators_) == len(ref.estimators_) == 1
    est = ours.estimators_[0]
    assert type(est) is type(knc) and est is not knc and est.n_neighbors == 3
    assert est.n_samples_fit_ == ref.estimators_[0].n_samples_fit_
    by_int = getattr(gpuknn.resampling, name)(n_neighbors=3, random_state=0)
    by_int.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(by_int.sample_indices_, ours.sample_indices_)
    assert isinstance(by_int.estimators_[0], gpuknn.KNeighborsClassifier)


def test_condensers_refuse_unsupported_classifiers():
    X, y = _data(26)
    for bad in (
        sk_neighbors.KNeighborsClassifier(3, weights="distance"),
        sk_neighbors.KNeighborsClassifier(3, metric="manhattan"),
        sk_neighbors.NearestNeighbors(n_neighbors=3),
    ):
        with pytest.raises(InvalidInputError, match="n_neighbors"):
            gpuknn.resampling.CondensedNearestNeighbour(n_neighbors=bad).fit_resample(X, y)


@pytest.mark.parametrize("kind_sel", ["all", "mode"])
def test_ncr_takes_edited_nearest_neighbours_sampler(backend, kind_sel):
    X, y = _data(27, n=(90, 40, 20))
    ours = gpuknn.resampling.NeighbourhoodCleaningRule(
        edited_nearest_neighbours=gpuknn.resampling.EditedNearestNeighbours(n_neighbors=4, kind_sel=kind_sel)
    )
    Xr, _ = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = imb_under.NeighbourhoodCleaningRule(
        edited_nearest_neighbours=imb_under.EditedNearestNeighbours(n_neighbors=4, kind_sel=kind_sel)
    )
    ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
    assert_xp(Xr, X[ref.sample_indices_], backend)
    enn = ours.edited_nearest_neighbours_
    assert enn.kind_sel == kind_sel and enn.n_neighbors == 4
    np.testing.assert_array_equal(np.sort(enn.sample_indices_), np.sort(ref.edited_nearest_neighbours_.sample_indices_))
    # imbalanced-learn's own sampler is run on host copies: the same answer
    peer_enn = gpuknn.resampling.NeighbourhoodCleaningRule(
        edited_nearest_neighbours=imb_under.EditedNearestNeighbours(n_neighbors=4, kind_sel=kind_sel)
    )
    peer_enn.fit_resample(backend.asarray(X), backend.asarray(y))
    np.testing.assert_array_equal(peer_enn.sample_indices_, ref.sample_indices_)
    with pytest.raises(InvalidInputError, match="edited_nearest_neighbours"):
        gpuknn.resampling.NeighbourhoodCleaningRule(edited_nearest_neighbours=3).fit_resample(X, y)


# --- 6. imbalanced-learn's conformance details (issue 33) -------------------------------------


@pytest.mark.parametrize(("cls", "attr"), [("SMOTEENN", "enn_"), ("SMOTETomek", "tomek_")])
def test_combined_validate_estimator_passes_n_jobs(cls, attr):
    from gpuknn import resampling

    for n_jobs in (None, 8):
        s = getattr(resampling, cls)(random_state=0, n_jobs=n_jobs)
        s._validate_estimator()  # imbalanced-learn's private method, called by its tests
        assert isinstance(s.smote_, SMOTE) and getattr(s, attr).n_jobs == n_jobs
    X, y = _data(21)
    a = getattr(resampling, cls)(random_state=0).fit_resample(X, y)
    b = getattr(resampling, cls)(random_state=0, n_jobs=2).fit_resample(X, y)
    np.testing.assert_array_equal(a[0], b[0])


def test_smotenc_and_smoten_categorical_encoder_attribute():
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    X, y = _mixed()
    s = SMOTENC(categorical_features=[1], random_state=0).fit(X, y)
    assert isinstance(s.categorical_encoder_, OneHotEncoder) and s.categorical_encoder_.sparse_output is True
    assert [list(c) for c in s.categorical_encoder_.categories_] == [["blue", "green", "red"]]
    enc = OneHotEncoder(sparse_output=False)
    s.set_params(categorical_encoder=enc).fit(X, y)
    assert s.categorical_encoder is enc and s.categorical_encoder_ is not enc
    assert s.categorical_encoder_.sparse_output is False
    Xc = X[:, [1]]
    n = SMOTEN(random_state=0).fit(Xc, y)
    assert isinstance(n.categorical_encoder_, OrdinalEncoder) and n.categorical_encoder_.dtype == np.int32
    enc = OrdinalEncoder(dtype=np.int64)
    n.set_params(categorical_encoder=enc).fit(Xc, y)
    assert n.categorical_encoder_ is not enc and n.categorical_encoder_.dtype == np.int64


@pytest.mark.parametrize("drop", ["first", "if_binary"])
def test_smotenc_encoder_dropping_columns_is_refused(drop):
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = np.hstack([rng.normal(size=(100, 2)), rng.integers(0, 2, (100, 1)), rng.integers(0, 4, (100, 1))]).astype(
        object
    )
    y = np.repeat([0, 1], [80, 20])
    s = SMOTENC(categorical_features=[2, 3], categorical_encoder=OneHotEncoder(drop=drop), random_state=0)
    with pytest.raises(InvalidInputError, match="requires a one-hot encoding with one column per category"):
        s.fit_resample(X, y)
    with pytest.raises(ValueError, match="requires a one-hot encoding with one column per category"):
        imb_over.SMOTENC(categorical_features=[2, 3], categorical_encoder=OneHotEncoder(drop=drop)).fit_resample(X, y)


def test_smoten_neighbors_object():
    """An object ``k_neighbors`` (imbalanced-learn's) counts the sample itself: n_neighbors=k+1
    gives the int k's result (a euclidean search of the distance rows finds the same here)."""
    rng = np.random.default_rng(5)
    X = rng.choice(np.array(["a", "b", "c"], dtype=object), size=(60, 3))
    X[:20, 0] = "a"  # the minority's first feature is informative
    y = np.repeat([1, 0], [20, 40])
    a = SMOTEN(k_neighbors=sk_neighbors.NearestNeighbors(n_neighbors=4), random_state=0)
    Xa, ya = a.fit_resample(X, y)
    Xb, yb = SMOTEN(k_neighbors=3, random_state=0).fit_resample(X, y)
    assert Xa.shape == (80, 3) and (ya == 1).sum() == 40
    assert isinstance(a.nn_k_, sk_neighbors.NearestNeighbors)
    assert (Xa[60:, 0] == "a").all() and (Xb[60:, 0] == "a").all()
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        SMOTEN(k_neighbors=sk_neighbors.NearestNeighbors(n_neighbors=1)).fit_resample(X, y)


@pytest.mark.parametrize("cls", [RandomOverSampler, RandomUnderSampler])
def test_random_samplers_take_non_finite_rows(backend, cls):
    X, y = _data(22)
    X[[1, 30, 70], [0, 1, 2]] = [np.nan, np.inf, -np.inf]
    s = cls(random_state=0)
    Xr, yr = s.fit_resample(backend.asarray(X), backend.asarray(y))
    assert_xp(Xr, X[s.sample_indices_], backend)  # rows through untouched, NaN included
    ref = cls(random_state=0).fit_resample(np.nan_to_num(X), y)[1]
    assert_xp(yr, ref, backend)  # the same draws as for finite X
    with pytest.raises(InvalidInputError, match="NaN or infinity"):
        SMOTE(random_state=0).fit_resample(X, y)  # samplers computing with X still refuse them


@pytest.mark.parametrize("cls", [RandomOverSampler, RandomUnderSampler])
def test_random_samplers_keep_frame_dtypes_full_nat(cls):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"s": ["abc", "def", "xyz"], "t": pd.to_timedelta([np.nan] * 3), "n": [1, 2, 3]})
    s = cls(random_state=0)
    Xr, yr = s.fit_resample(X, np.array([0, 0, 1]))
    assert Xr.shape == ((4, 3) if cls is RandomOverSampler else (2, 3))
    assert Xr["t"].dtype.kind == "m" and Xr["t"].isna().all()
    assert Xr.dtypes.to_dict() == X.dtypes.to_dict() and list(Xr.index) == list(range(Xr.shape[0]))
    assert Xr["n"].tolist() == X["n"].to_numpy()[s.sample_indices_].tolist()


@pytest.mark.parametrize("cls", ["CondensedNearestNeighbour", "OneSidedSelection"])
def test_prototype_selection_takes_gpuknn_default_classifier(cls):
    """gpuknn's KNeighborsClassifier (metric="minkowski", p=2 by default) is euclidean."""
    from gpuknn import resampling

    X, y = _data(23)
    a = getattr(resampling, cls)(random_state=0, n_neighbors=gpuknn.KNeighborsClassifier(n_neighbors=1))
    b = getattr(resampling, cls)(random_state=0, n_neighbors=1)
    np.testing.assert_array_equal(a.fit_resample(X, y)[0], b.fit_resample(X, y)[0])
    with pytest.raises(InvalidInputError, match="metric"):
        getattr(resampling, cls)(n_neighbors=gpuknn.KNeighborsClassifier(1, p=1)).fit_resample(X, y)
