"""RepeatedEditedNearestNeighbours and AllKNN against imbalanced-learn (run in the test)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_xp, gaussian_classes, subsample_classes

from gpuknn.errors import InvalidInputError
from gpuknn.resampling.repeated import AllKNN, RepeatedEditedNearestNeighbours

imb = pytest.importorskip("imblearn.under_sampling")
datasets = pytest.importorskip("sklearn.datasets")


def _real():
    Xb, yb = datasets.load_breast_cancer(return_X_y=True)
    Xd, yd = datasets.load_digits(return_X_y=True)
    Xd, yd = subsample_classes(Xd, yd, (90, 60, 40, 25, 12), 1)
    # integer pixels tie exactly; a tiny jitter makes every distance distinct
    Xd = Xd + np.random.default_rng(2).normal(0.0, 1e-3, Xd.shape)
    return [subsample_classes(Xb, yb, (60, 200), 0), (Xd, yd)]


def _check(backend, ours, ref, X, y):
    Xr, yr = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    Xe, ye = ref.fit_resample(X, y)
    np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
    assert ours.sample_indices_.dtype == np.int64
    assert_xp(Xr, Xe, backend)
    assert_xp(yr, ye, backend)
    return ours


FIXTURES = [(0, (60, 25, 10)), (1, (80, 20)), (2, (40, 30, 30, 7)), (3, (30, 30))]


@pytest.mark.parametrize("seed,n", FIXTURES)
@pytest.mark.parametrize("kind_sel", ["all", "mode"])
@pytest.mark.parametrize(
    "strategy,k,max_iter", [("auto", 3, 100), ("all", 3, 100), ("not majority", 5, 100), ("auto", 1, 2)]
)
def test_renn_matches_imblearn(backend, seed, n, kind_sel, strategy, k, max_iter):
    X, y = gaussian_classes(seed, n, spread=0.8)
    kw = dict(sampling_strategy=strategy, n_neighbors=k, kind_sel=kind_sel, max_iter=max_iter)
    ref = imb.RepeatedEditedNearestNeighbours(**kw)
    ours = _check(backend, RepeatedEditedNearestNeighbours(**kw), ref, X, y)
    assert ours.n_iter_ == ref.n_iter_


@pytest.mark.parametrize("seed,n", FIXTURES)
@pytest.mark.parametrize("kind_sel", ["all", "mode"])
@pytest.mark.parametrize(
    "strategy,k,allow", [("auto", 3, False), ("auto", 5, True), ("all", 4, False), ("not majority", 3, True)]
)
def test_allknn_matches_imblearn(backend, seed, n, kind_sel, strategy, k, allow):
    X, y = gaussian_classes(seed, n, spread=0.8)
    kw = dict(sampling_strategy=strategy, n_neighbors=k, kind_sel=kind_sel, allow_minority=allow)
    _check(backend, AllKNN(**kw), imb.AllKNN(**kw), X, y)


@pytest.mark.parametrize("which", [0, 1])
def test_real_data(backend, which):
    X, y = _real()[which]
    for kind_sel in ("all", "mode"):
        kw = dict(kind_sel=kind_sel)
        ref = imb.RepeatedEditedNearestNeighbours(**kw)
        ours = _check(backend, RepeatedEditedNearestNeighbours(**kw), ref, X, y)
        assert ours.n_iter_ == ref.n_iter_
        _check(backend, AllKNN(**kw), imb.AllKNN(**kw), X, y)
        _check(
            backend,
            AllKNN(allow_minority=True, n_neighbors=5, **kw),
            imb.AllKNN(allow_minority=True, n_neighbors=5, **kw),
            X,
            y,
        )


def test_renn_runs_several_rounds(backend):
    X, y = gaussian_classes(9, (120, 40, 15), spread=0.6)
    ref = imb.RepeatedEditedNearestNeighbours(sampling_strategy="majority")
    ours = _check(backend, RepeatedEditedNearestNeighbours(sampling_strategy="majority"), ref, X, y)
    assert ours.n_iter_ == ref.n_iter_ > 1


def test_renn_nothing_removed_first_round(backend):
    """Separated, shuffled classes: round 1 removes nothing. imbalanced-learn 0.14 then
    composes the class-grouping permutation twice in ``sample_indices_``; ours indexes X_res."""
    rng = np.random.default_rng(10)
    y = rng.permutation(np.repeat([0, 1, 2], [20, 15, 10]))
    X = rng.normal(0.0, 0.1, (45, 2)) + 10.0 * y[:, None]
    ours = RepeatedEditedNearestNeighbours()
    Xr, yr = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    ref = imb.RepeatedEditedNearestNeighbours()
    Xe, ye = ref.fit_resample(X, y)
    grouped = np.argsort(y, kind="stable")
    np.testing.assert_array_equal(ours.sample_indices_, grouped)
    np.testing.assert_array_equal(ref.sample_indices_, grouped[grouped])
    assert_xp(Xr, Xe, backend)
    assert_xp(yr, ye, backend)
    assert ours.n_iter_ == ref.n_iter_ == 1


def test_string_labels_and_list_strategy(backend):
    X, y = gaussian_classes(11, (50, 20, 12), spread=0.8)
    names = np.array(["cat", "dog", "eel"])[y]
    for cls in (RepeatedEditedNearestNeighbours, AllKNN):
        ours = cls(sampling_strategy=["cat", "dog"])
        Xr, yr = ours.fit_resample(backend.asarray(X), names)
        ref = getattr(imb, cls.__name__)(sampling_strategy=["cat", "dog"])
        ref.fit_resample(X, names)
        np.testing.assert_array_equal(ours.sample_indices_, ref.sample_indices_)
        assert isinstance(yr, np.ndarray) and yr.tolist() == names[ref.sample_indices_].tolist()
        assert_xp(Xr, X[ref.sample_indices_], backend)


@pytest.mark.parametrize("cls", [RepeatedEditedNearestNeighbours, AllKNN])
def test_bad_arguments(backend, cls):
    X, y = gaussian_classes(12, (20, 10))
    Xb, yb = backend.asarray(X), backend.asarray(y)
    with pytest.raises(InvalidInputError, match="kind_sel"):
        cls(kind_sel="most").fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        cls(n_neighbors=0).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="n_neighbors"):
        cls(n_neighbors=2.5).fit_resample(Xb, yb)
    if cls is RepeatedEditedNearestNeighbours:  # AllKNN's rounds 1, 2, ... stop first
        with pytest.raises(InvalidInputError, match="need at least"):
            cls(n_neighbors=30).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="dict"):
        cls(sampling_strategy={0: 3}).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="not present"):
        cls(sampling_strategy=[7]).fit_resample(Xb, yb)
    with pytest.raises(InvalidInputError, match="at least 2 classes"):
        cls().fit_resample(Xb, backend.asarray(np.zeros(30, dtype=np.int64)))
    if cls is RepeatedEditedNearestNeighbours:
        with pytest.raises(InvalidInputError, match="max_iter"):
            cls(max_iter=0).fit_resample(Xb, yb)
    else:
        with pytest.raises(InvalidInputError, match="allow_minority"):
            cls(allow_minority="yes").fit_resample(Xb, yb)
