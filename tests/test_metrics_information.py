"""gpuknn.metrics.information: MI, NMI, AMI, homogeneity/completeness/V vs scikit-learn."""

import numpy as np
import pytest
from sklearn import metrics as sk

import gpuknn.metrics.information as info
from gpuknn.errors import InvalidInputError
from gpuknn.metrics.information import (
    adjusted_mutual_info_score,
    completeness_score,
    homogeneity_completeness_v_measure,
    homogeneity_score,
    mutual_info_score,
    normalized_mutual_info_score,
    v_measure_score,
)

RTOL, ATOL = 1e-10, 1e-12
AVERAGES = ["arithmetic", "geometric", "min", "max"]


def _pair(seed=0, n=300, r=5, c=7):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, r, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, c, n))  # related, not equal
    return t, p


def _all(t, p, *, gk=True):
    """Every score of a pair, from gpuknn (gk) or scikit-learn."""
    if gk:
        mod = info
    else:
        mod = sk
    out = [mod.mutual_info_score(t, p)]
    for m in AVERAGES:
        out.append(mod.normalized_mutual_info_score(t, p, average_method=m))
        out.append(mod.adjusted_mutual_info_score(t, p, average_method=m))
    out += list(mod.homogeneity_completeness_v_measure(t, p))
    out += list(mod.homogeneity_completeness_v_measure(t, p, beta=0.4))
    out += [mod.homogeneity_score(t, p), mod.completeness_score(t, p), mod.v_measure_score(t, p, beta=2.5)]
    return out


def _check(got, want):
    assert all(isinstance(g, float) for g in got), [type(g) for g in got]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", [0, 1])
def test_match_sklearn(backend, seed):
    t, p = _pair(seed)
    _check(_all(backend.asarray(t), backend.asarray(p)), _all(t, p, gk=False))


def test_independent_and_many_clusters(backend):
    rng = np.random.default_rng(5)
    t, p = rng.integers(0, 30, 2000), rng.integers(0, 45, 2000)  # AMI about 0
    _check(_all(backend.asarray(t), backend.asarray(p)), _all(t, p, gk=False))


def test_emi_batches(monkeypatch):
    t, p = _pair(3, n=500, r=12, c=9)
    want = adjusted_mutual_info_score(t, p)
    monkeypatch.setattr(info, "_BATCH", 7)  # many small batches of (pair, n_ij) terms
    assert adjusted_mutual_info_score(t, p) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(sk.adjusted_mutual_info_score(t, p), rel=RTOL)


@pytest.mark.parametrize(
    "kind",
    ["strings", "negative-ints", "floats", "mixed-host"],
)
def test_label_types(backend, kind):
    t, p = _pair(2, n=120)
    if kind == "strings":
        names = np.array(["x", "cat", "b", "zz", "a", "q", "k"])
        gt, gp = names[t], names[p]  # host strings
    elif kind == "negative-ints":
        gt, gp = backend.asarray(-7 * t - 1), backend.asarray(p - 3)
    elif kind == "floats":
        gt, gp = backend.asarray(t * 0.5 - 0.25), backend.asarray(p * 1.5e3)
    else:
        gt, gp = np.array(["u", "v", "w", "x", "y"])[t], backend.asarray(p)
    # the codes of sorted labels: sklearn on integers gives the same values, no warnings
    _check(_all(gt, gp), _all(t, p, gk=False))


def test_identical_and_permuted(backend):
    t, _ = _pair(0)
    perm = np.array([3, 0, 4, 1, 2])[t]
    for f in (
        normalized_mutual_info_score,
        adjusted_mutual_info_score,
        v_measure_score,
        homogeneity_score,
        completeness_score,
    ):
        assert f(backend.asarray(t), backend.asarray(perm)) == pytest.approx(1.0, rel=1e-12)
    assert mutual_info_score(backend.asarray(t), backend.asarray(perm)) == pytest.approx(
        sk.mutual_info_score(t, t), rel=RTOL
    )


def test_single_cluster_edge_cases(backend):
    one = np.zeros(10, dtype=np.int64)
    two = np.array([0, 1] * 5)
    b = backend.asarray
    for t, p in ((one, one), (one, two), (two, one), (np.array([0, 1, 2, 3]), np.array([0, 0, 0, 0]))):
        _check(_all(b(t), b(p)), _all(t, p, gk=False))
    assert adjusted_mutual_info_score(b(one), b(one)) == 1.0
    assert normalized_mutual_info_score(b(one), b(one)) == 1.0
    assert homogeneity_completeness_v_measure(b(one), b(one)) == (1.0, 1.0, 1.0)
    assert adjusted_mutual_info_score(b(one), b(two)) == 0.0
    assert mutual_info_score(b(one), b(two)) == 0.0
    # one point
    _check(_all(b(np.array([4])), b(np.array([2]))), _all(np.array([4]), np.array([2]), gk=False))


def test_empty(backend):
    e = backend.asarray(np.zeros(0, dtype=np.int64))
    assert normalized_mutual_info_score(e, e) == 1.0
    assert adjusted_mutual_info_score(e, e) == 1.0
    assert homogeneity_completeness_v_measure(e, e) == (1.0, 1.0, 1.0)
    with pytest.raises(InvalidInputError, match="empty"):
        mutual_info_score(e, e)


def test_errors(backend):
    t, p = _pair(0, n=20)
    bt, bp = backend.asarray(t), backend.asarray(p)
    with pytest.raises(InvalidInputError, match="different lengths: 20 and 19"):
        mutual_info_score(bt, backend.asarray(p[:19]))
    with pytest.raises(InvalidInputError, match="1-D"):
        normalized_mutual_info_score(backend.asarray(t.reshape(4, 5)), backend.asarray(p.reshape(4, 5)))
    with pytest.raises(InvalidInputError, match="average_method.*'median'"):
        adjusted_mutual_info_score(bt, bp, average_method="median")
    with pytest.raises(InvalidInputError, match="average_method.*'mean'"):
        normalized_mutual_info_score(bt, bp, average_method="mean")
    with pytest.raises(InvalidInputError, match="beta.*-1"):
        v_measure_score(bt, bp, beta=-1)
    with pytest.raises(InvalidInputError, match="NaN"):
        mutual_info_score(backend.asarray(np.array([0.0, np.nan])), backend.asarray(np.array([0.0, 1.0])))
