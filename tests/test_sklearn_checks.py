"""scikit-learn's estimator checks over every gpuknn estimator, imbalanced-learn's over every
sampler (issue 21)."""

import pytest
from imblearn.utils.estimator_checks import parametrize_with_checks as imblearn_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpuknn
import gpuknn.resampling as R
from gpuknn.cluster import FuzzyCMeans, KMeans

ESTIMATORS = [
    gpuknn.KNeighborsClassifier(),
    gpuknn.RadiusNeighborsClassifier(radius=1.0, outlier_label="most_frequent"),
    gpuknn.NearestCentroid(),
    gpuknn.CDNNClassifier(),
    gpuknn.ECDNNClassifier(),
    gpuknn.PCA(n_components=2),
    KMeans(n_clusters=3, random_state=0),
    FuzzyCMeans(n_clusters=3, random_state=0),
    gpuknn.NearestNeighbors(),
    gpuknn.KNeighborsTransformer(),
    gpuknn.KNeighborsRegressor(),
    gpuknn.RadiusNeighborsRegressor(),
    gpuknn.KNeighborsClassifierCV(n_neighbors=[1, 3, 5]),
    gpuknn.PCAKNeighborsClassifierCV(n_components=[1, 2], n_neighbors=[1, 3]),
]


def expected_failed_checks(estimator):
    """Checks that cannot pass, with the reason (the list is kept short on purpose)."""
    if isinstance(estimator, gpuknn.PCA):
        return {
            "check_transformer_n_iter": "PCA.n_iter_ holds one count per component (the power "
            "solvers iterate per component), like scikit-learn's cross-decomposition "
            "estimators; the check wants one integer",
        }
    if isinstance(estimator, KMeans):
        return {
            "check_sample_weight_equivalence_on_dense_data": "the check shuffles the weighted "
            "rows, so the random k-means++ seeding starts from other centres (scikit-learn "
            "lists the same expected failure for its own KMeans)",
        }
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


SAMPLERS = [
    R.ADASYN(random_state=0),
    R.AllKNN(),
    R.BorderlineSMOTE(random_state=0),
    R.ClusterCentroids(random_state=0),
    R.CNNTomek(random_state=0),
    R.CondensedNearestNeighbour(random_state=0),
    R.EditedNearestNeighbours(),
    R.InstanceHardnessThreshold(random_state=0),
    R.KMeansSMOTE(random_state=0),
    R.NearMiss(),
    R.NeighbourhoodCleaningRule(),
    R.OneSidedSelection(random_state=0),
    R.RandomOverSampler(random_state=0),
    R.RandomUnderSampler(random_state=0),
    R.RepeatedEditedNearestNeighbours(),
    R.SMOTE(random_state=0),
    R.SMOTEN(random_state=0),
    R.SMOTENC(categorical_features=[0], random_state=0),
    R.SMOTEENN(random_state=0),
    R.SMOTETomek(random_state=0),
    R.TomekLinks(),
]


def sampler_expected_failures(sampler):
    """imbalanced-learn checks a sampler cannot pass, with the reason."""
    return {}


def _listed(mark):
    """The same parametrize mark with its cases in a list: imbalanced-learn 0.14 passes a
    generator, which pytest >= 9.1 deprecates (an error under filterwarnings=error)."""
    names, values = mark.mark.args
    return pytest.mark.parametrize(names, list(values), **mark.mark.kwargs)


@_listed(imblearn_checks(SAMPLERS, expected_failed_checks=sampler_expected_failures))
def test_imblearn_compatible_sampler(estimator, check):
    check(estimator)


def _public_estimator_classes():
    import inspect

    import sklearn.base

    modules = [gpuknn, gpuknn.cluster, gpuknn.model_selection, gpuknn.resampling]
    found = set()
    for mod in modules:
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, sklearn.base.BaseEstimator):
                found.add(obj)
    return found


def test_every_public_estimator_is_checked():
    # a new estimator (or sampler) must join one of the two lists above
    from gpuknn.model_selection.splitters import _KFoldBase

    checked = {type(e) for e in ESTIMATORS + SAMPLERS}
    splitters = {c for c in _public_estimator_classes() if issubclass(c, _KFoldBase)}
    splitters.add(gpuknn.RepeatedStratifiedKFold)
    missing = _public_estimator_classes() - checked - splitters
    assert not missing, sorted(c.__name__ for c in missing)
