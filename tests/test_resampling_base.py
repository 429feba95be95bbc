"""gpuknn.resampling._base: imbalanced-learn's fit_resample contract (input and output kinds,
tags) and the samplers inside imbalanced-learn's Pipeline."""

import numpy as np
import pytest
from imblearn.pipeline import make_pipeline
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score

import gpuknn
from gpuknn.resampling import SMOTE, EditedNearestNeighbours, RandomUnderSampler


@pytest.fixture
def data():
    X, y = load_breast_cancer(return_X_y=True)
    keep = np.r_[np.flatnonzero(y == 0)[:60], np.flatnonzero(y == 1)]  # 60 vs 357
    return X[keep], y[keep]


@pytest.mark.parametrize(
    "sampler", [SMOTE(random_state=0), EditedNearestNeighbours(), RandomUnderSampler(random_state=0)]
)
def test_in_imblearn_pipeline_resamples_at_fit_only(data, sampler):
    X, y = data
    pipe = make_pipeline(sampler, gpuknn.KNeighborsClassifier(3)).fit(X, y)
    X_res, y_res = gpuknn.base.clone(sampler).fit_resample(X, y)
    direct = gpuknn.KNeighborsClassifier(3).fit(X_res, y_res)
    np.testing.assert_array_equal(pipe.predict(X), direct.predict(X))  # every row predicted
    scores = cross_val_score(make_pipeline(sampler, gpuknn.KNeighborsClassifier(3)), X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores > 0.5) & (scores <= 1.0))


def test_output_kinds_follow_input_kinds(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    X_ref, y_ref = SMOTE(random_state=0).fit_resample(X, y)
    X_df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).astype("float32")
    y_s = pd.Series(np.where(y == 1, "benign", "malignant"), name="diagnosis")
    X_res, y_res = SMOTE(random_state=0).fit_resample(X_df, y_s)
    assert isinstance(X_res, pd.DataFrame) and list(X_res.columns) == list(X_df.columns)
    assert all(str(t) == "float32" for t in X_res.dtypes)
    assert isinstance(y_res, pd.Series) and y_res.name == "diagnosis"
    assert X_res.shape == X_ref.shape
    X_l, y_l = SMOTE(random_state=0).fit_resample(X.tolist(), y.tolist())
    assert isinstance(X_l, list) and isinstance(y_l, list)
    np.testing.assert_allclose(np.asarray(X_l), X_ref)
    np.testing.assert_array_equal(np.asarray(y_l), y_ref)
    onehot = np.eye(2, dtype=np.int64)[y]
    X_o, y_o = SMOTE(random_state=0).fit_resample(X, onehot)
    np.testing.assert_allclose(X_o, X_ref)
    np.testing.assert_array_equal(y_o, np.eye(2, dtype=np.int64)[y_ref])
    X_c, y_c = SMOTE(random_state=0).fit_resample(X, y[:, None])  # a column: no warning
    np.testing.assert_array_equal(y_c, y_ref)


def test_sampler_tags_and_feature_names(data):
    from sklearn.utils import get_tags

    X, y = data
    assert get_tags(SMOTE()).sampler_tags.sample_indices is False
    assert get_tags(EditedNearestNeighbours()).sampler_tags.sample_indices is True
    enn = EditedNearestNeighbours().fit(X, y)
    assert hasattr(enn, "sample_indices_")
    names = [f"f{i}" for i in range(X.shape[1])]
    assert list(enn.get_feature_names_out(names)) == names
