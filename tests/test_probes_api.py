"""Probes of issue 32 on the Python API: inputs scikit-learn refuses or warns about that gpuknn
used to accept without a word, and ``gpuknn.<subpackage>`` after a bare ``import gpuknn``."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn.metrics as skm
import sklearn.model_selection as skms

import gpuknn
from gpuknn import GpuknnError, InvalidInputError
from gpuknn.metrics import UndefinedMetricWarning, balanced_accuracy_score
from gpuknn.model_selection import KFold, RepeatedStratifiedKFold, StratifiedKFold, train_test_split

ROOT = Path(__file__).resolve().parents[1]

Y_NAN = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, np.nan, 1.0])


# --------------------------------------------------------------------------- NaN in y
@pytest.mark.parametrize(
    "split",
    [
        lambda X, y: list(StratifiedKFold(2).split(X, y)),
        lambda X, y: list(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y)),
        lambda X, y: list(RepeatedStratifiedKFold(n_splits=2, n_repeats=2, random_state=0).split(X, y)),
        lambda X, y: train_test_split(X, y, stratify=y, random_state=0),
    ],
    ids=["StratifiedKFold", "StratifiedKFold-shuffle", "RepeatedStratifiedKFold", "train_test_split"],
)
def test_nan_label_is_refused_not_made_a_class(split, backend):
    X = np.zeros((Y_NAN.shape[0], 2))
    # scikit-learn refuses it too (the oracle of the wording)
    with pytest.raises(ValueError, match="Input y contains NaN"):
        list(skms.StratifiedKFold(2).split(X, Y_NAN))
    with pytest.raises(InvalidInputError, match=r"Input (y|stratify) contains NaN.*position\(s\) \[6\]") as e:
        split(backend.asarray(X), backend.asarray(Y_NAN))
    assert isinstance(e.value, GpuknnError) and isinstance(e.value, ValueError)


def test_infinite_and_object_nan_labels_are_refused():
    X = np.zeros((6, 1))
    with pytest.raises(InvalidInputError, match="Input y contains infinity"):
        list(StratifiedKFold(2).split(X, np.array([0, 0, 0, 1, 1, np.inf])))
    y_obj = np.array(["a", "a", "a", "b", "b", np.nan], dtype=object)
    with pytest.raises(InvalidInputError, match="Input y contains NaN"):
        list(StratifiedKFold(2).split(X, y_obj))


def test_kfold_ignores_y_as_scikit_learn_does():
    # KFold does not look at y (scikit-learn's neither): a NaN there is not its business.
    X = np.zeros((8, 1))
    ours = [t.tolist() for _, t in KFold(4).split(X, Y_NAN)]
    theirs = [t.tolist() for _, t in skms.KFold(4).split(X, Y_NAN)]
    assert ours == theirs


# --------------------------------------------------------------------------- one-member class
def test_stratified_split_refuses_a_one_member_class(backend):
    X = np.arange(12, dtype=np.float64).reshape(6, 2)
    y = np.array([0, 0, 0, 1, 1, 2])
    with pytest.raises(ValueError, match="least populated classes in y have only 1 member"):
        skms.train_test_split(X, y, stratify=y, random_state=0)
    with pytest.raises(InvalidInputError, match=r"only 1 member, which is too few.*members are: \[2\]"):
        train_test_split(backend.asarray(X), backend.asarray(y), stratify=backend.asarray(y), random_state=0)
    # two members each: accepted, and every class on both sides
    y2 = np.array([0, 0, 1, 1, 2, 2])
    _, _, y_tr, y_te = train_test_split(X, y2, stratify=y2, test_size=3, random_state=0)
    assert sorted(np.asarray(y_te).tolist()) == [0, 1, 2]
    assert sorted(np.asarray(y_tr).tolist()) == [0, 1, 2]


@pytest.mark.parametrize("kw,part,size", [({}, "test_size", 1), ({"test_size": 3}, "train_size", 1)])
def test_stratified_parts_smaller_than_the_classes_are_refused(kw, part, size):
    """A stratified part with fewer rows than classes cannot hold every class: refused, in
    scikit-learn's words (gpuknn returned a split missing a class)."""
    X, y = np.zeros((4, 1)), np.array([0, 0, 1, 1])
    msg = f"The {part} = {size} should be greater or equal to the number of classes = 2"
    with pytest.raises(ValueError, match=msg):
        skms.train_test_split(X, y, stratify=y, random_state=0, **kw)
    with pytest.raises(InvalidInputError, match=msg):
        train_test_split(X, y, stratify=y, random_state=0, **kw)


def test_stratify_of_another_length_is_refused():
    X = np.zeros((6, 1))
    with pytest.raises(InvalidInputError, match="stratify has 4 labels but the arrays have 6 samples"):
        train_test_split(X, stratify=np.array([0, 0, 1, 1]))


# --------------------------------------------------------------------------- bool sizes
@pytest.mark.parametrize("name", ["test_size", "train_size"])
@pytest.mark.parametrize("value", [True, False, np.True_])
def test_bool_sizes_are_refused(name, value):
    X = np.zeros((10, 2))
    with pytest.raises(ValueError):
        skms.train_test_split(X, **{name: bool(value)})
    with pytest.raises(InvalidInputError, match=f"Invalid value for {name}: {value!r}"):
        train_test_split(X, **{name: value})


def test_numpy_sizes_still_accepted():
    X = np.arange(20).reshape(10, 2)
    a_tr, a_te = train_test_split(X, test_size=np.float64(0.3), random_state=0)
    s_tr, s_te = skms.train_test_split(X, test_size=np.float64(0.3), random_state=0)
    assert (a_tr.shape[0], a_te.shape[0]) == (s_tr.shape[0], s_te.shape[0]) == (7, 3)
    # a float32 fraction (scikit-learn refuses it) is taken as the float it is, not sent to
    # operator.index for a raw TypeError: float(float32(0.3)) * 10 = 3.0000001, 4 test rows
    a_tr, a_te = train_test_split(X, test_size=np.float32(0.3), random_state=0)
    assert (a_tr.shape[0], a_te.shape[0]) == (6, 4)
    a_tr, a_te = train_test_split(X, test_size=np.int64(4), random_state=0)
    assert (a_tr.shape[0], a_te.shape[0]) == (6, 4)


# --------------------------------------------------------------------------- balanced accuracy
@pytest.mark.parametrize(
    ("y_true", "y_pred", "expected"),
    [([1, 1], [1, 1], math.nan), ([1, 1], [1, 2], -math.inf), ([3, 3, 3], [3, 0, 3], -math.inf)],
)
def test_balanced_accuracy_adjusted_single_class_is_undefined(y_true, y_pred, expected, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's own RuntimeWarning / UserWarning
        oracle = skm.balanced_accuracy_score(
            np.array(y_true, dtype=np.float64), np.array(y_pred, dtype=np.float64), adjusted=True
        )
    assert (math.isnan(oracle) and math.isnan(expected)) or oracle == expected
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = balanced_accuracy_score(
            backend.asarray(np.array(y_true)), backend.asarray(np.array(y_pred)), adjusted=True
        )
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    seen = {(type(w.message), str(w.message).split(";")[0]) for w in caught}
    assert any(c is UndefinedMetricWarning and "single class" in m for c, m in seen), seen
    # a predicted class missing from y_true: scikit-learn's UserWarning as well, nothing else
    extra = set(y_pred) - set(y_true)
    assert any(m.startswith("y_pred contains classes not in y_true") for _, m in seen) == bool(extra), seen
    assert len(seen) == 1 + bool(extra), seen


def test_balanced_accuracy_single_class_unadjusted_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert balanced_accuracy_score(np.array([1, 1]), np.array([1, 1])) == 1.0
        assert balanced_accuracy_score(np.array([0, 1, 1]), np.array([0, 1, 0]), adjusted=True) == pytest.approx(
            skm.balanced_accuracy_score([0, 1, 1], [0, 1, 0], adjusted=True)
        )


# --------------------------------------------------------------------------- lazy sub-packages
SUBPACKAGES = [
    "resampling",
    "neighbors",
    "metrics",
    "model_selection",
    "decomposition",
    "datasets",
    "linalg",
    "cluster",
    "plots",
    "stats",
    "distributed",
    "studies",
]


def test_subpackages_reachable_after_bare_import_without_heavy_imports():
    code = (
        "import sys, gpuknn\n"
        "heavy = ('torch', 'cupy', 'dask', 'distributed', 'matplotlib')\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
        "assert 'gpuknn.resampling' not in sys.modules and 'gpuknn.plots' not in sys.modules\n"
        "assert gpuknn.resampling.SMOTE.__name__ == 'SMOTE'\n"
        "assert 'torch' not in sys.modules and 'cupy' not in sys.modules and 'dask' not in sys.modules\n"
        f"for name in {SUBPACKAGES!r}:\n"
        "    assert name in dir(gpuknn), name\n"
        "    mod = getattr(gpuknn, name)\n"
        "    assert mod.__name__ == 'gpuknn.' + name and sys.modules['gpuknn.' + name] is mod\n"
        "try:\n"
        "    gpuknn.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_thing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_subpackage_attribute_in_process():
    assert gpuknn.resampling.SMOTE is __import__("gpuknn.resampling", fromlist=["SMOTE"]).SMOTE
    with pytest.raises(AttributeError, match="nope"):
        gpuknn.nope  # noqa: B018
