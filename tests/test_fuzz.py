"""Property/fuzz suite over the public API's argument space (issue 18, item 5).

Every input either gives the oracle's answer (scikit-learn / SciPy in float64, or a plain
NumPy loop) or raises a :class:`gpuknn.errors.GpuknnError` -- never another exception type,
never a silent difference. Inputs include 0 and 1 rows/columns, NaN, infinities, values whose
squares overflow, complex/int/bool/object dtypes, lists and ragged lists, options of the wrong
type, k out of range, float or bool k, labels of mixed types.

Deterministic (``derandomize=True``) and small (a few dozen examples per property), so the
file runs in well under a minute on two cores.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gpuknn  # noqa: E402
from gpuknn.errors import GpuknnError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FUZZ = settings(
    max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)

_OK, _ERR = "ok", "err"


def outcome(fn):
    """``("ok", result)`` or ``("err", exc)`` for a GpuknnError; any other exception
    propagates (and fails the test). Warnings are not errors here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _OK, fn()
        except GpuknnError as exc:
            return _ERR, exc


# ------------------------------------------------------------------------- strategies
_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "huge": 1e200}


@st.composite
def matrices(draw, max_rows=5, max_cols=3, allow_junk=True):
    """``(value, valid)``: something passed as a data matrix, and whether gpuknn must
    accept it (2-D, non-empty, real numbers, finite, squares representable)."""
    kind = draw(
        st.sampled_from(
            ["float64", "float64", "float32", "int64", "bool", "list"]
            + (
                ["complex", "object_num", "object_str", "ragged", "empty", "1d", "scalar", "str", "none"]
                if allow_junk
                else []
            )
        )
    )
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_cols))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, d)) * draw(st.sampled_from([1.0, 1e-3, 1e3]))
    special = draw(st.sampled_from([None, None, None, "nan", "inf", "-inf", "huge"]))
    if special is not None and kind in ("float64", "float32", "list", "object_num"):
        base[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = _SPECIAL[special]
    finite = special is None
    if kind == "float64":
        return base, finite
    if kind == "float32":
        with np.errstate(over="ignore"):
            return base.astype(np.float32), finite
    if kind == "int64":
        return rng.integers(-5, 6, size=(n, d)), True
    if kind == "bool":
        return rng.integers(0, 2, size=(n, d)).astype(bool), True
    if kind == "list":
        return base.tolist(), finite
    if kind == "complex":
        return base + 1j, False
    if kind == "object_num":
        return base.astype(object), finite
    if kind == "object_str":
        a = base.astype(object)
        a[0, 0] = "x"
        return a, False
    if kind == "ragged":
        rows = base.tolist()
        rows[-1] = rows[-1] + [1.0]
        return rows if n > 1 else [[1.0], [1.0, 2.0]], False
    if kind == "empty":
        return np.zeros(draw(st.sampled_from([(0, d), (n, 0)]))), False
    if kind == "1d":
        return base[:, 0], False
    if kind == "scalar":
        return 3.0, False
    if kind == "str":
        return "abc", False
    return None, False


def nrows(x):
    """Rows of a drawn matrix (1 for junk without a length; the test's own helper)."""
    try:
        return max(1, len(x))
    except TypeError:
        return 1


def as_float64(a):
    return np.asarray(a, dtype=np.float64)


ints_or_junk = st.one_of(
    st.integers(-2, 8),
    st.floats(-2, 8),
    st.just(math.nan),
    st.booleans(),
    st.sampled_from(["3", None, [2], 2.0, np.int64(2), np.float64(2.0)]),
)


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# ---------------------------------------------------------------- kneighbors / distances
@FUZZ
@given(
    Q=matrices(),
    R=matrices(),
    k=ints_or_junk,
    metric=st.sampled_from(["euclidean", "sqeuclidean", "cosine", "inner", "manhattan", 3]),
    wm=st.sampled_from([None, None, 1 / 2**20, 10_000 / 2**20, "big", -1, True, 2.5e6 / 2**20, 0.5]),
)
def test_kneighbors(Q, R, k, metric, wm):
    (q, q_ok), (r, r_ok) = Q, R
    kind, res = outcome(lambda: gpuknn.kneighbors(q, r, k, metric=metric, working_memory=wm))
    valid = (
        q_ok
        and r_ok
        and np.shape(q)[1] == np.shape(r)[1]
        and is_int(k)
        and 1 <= k <= np.shape(r)[0]
        and metric in ("euclidean", "sqeuclidean", "cosine", "inner")
        and wm not in ("big", -1, True)
    )
    if not valid:
        assert kind == _ERR, (q, r, k, metric, wm, res)
        return
    assert kind == _OK, res
    dist, idx = (np.asarray(gpuknn._backend.to_numpy(a)) for a in res)
    qf, rf = as_float64(q), as_float64(r)
    assert dist.shape == idx.shape == (qf.shape[0], k)
    assert len({tuple(row) for row in idx.T.tolist()}) == k or k == 1  # distinct per column set
    for i in range(qf.shape[0]):
        assert len(set(idx[i].tolist())) == k
    f32 = np.asarray(q).dtype == np.float32 or np.asarray(r).dtype == np.float32
    tol = (
        dict(rtol=1e-4, atol=1e-4 * max(1.0, np.abs(qf).max(), np.abs(rf).max()) ** 2)
        if f32
        else dict(rtol=1e-9, atol=1e-9 * max(1.0, np.abs(qf).max(), np.abs(rf).max()) ** 2)
    )
    if metric == "inner":
        full = qf @ rf.T
        want = -np.sort(-full, axis=1)[:, :k]
    else:
        from scipy.spatial.distance import cdist

        if metric == "cosine" and (not np.all(np.linalg.norm(qf, axis=1)) or not np.all(np.linalg.norm(rf, axis=1))):
            return  # zero rows: cosine is undefined (gpuknn's convention is its own)
        full = cdist(qf, rf, metric=metric)
        want = np.sort(full, axis=1)[:, :k]
        if metric == "cosine":
            tol = dict(rtol=1e-4, atol=1e-5) if f32 else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dist, want, **tol)
    # each returned index is at its returned distance (ties may pick any equal reference)
    np.testing.assert_allclose(np.take_along_axis(full, idx, axis=1), dist, **tol)


@FUZZ
@given(
    X=matrices(),
    Y=st.one_of(st.none(), matrices()),
    metric=st.sampled_from(["euclidean", "sqeuclidean", "cosine", "nope", None]),
)
def test_pairwise_distances(X, Y, metric):
    (x, x_ok) = X
    y, y_ok = (None, True) if Y is None else Y
    y_ok = y_ok or y is None  # None is "Y = X"
    kind, res = outcome(lambda: gpuknn.pairwise_distances(x, y, metric=metric))
    valid = (
        x_ok
        and y_ok
        and (y is None or np.shape(x)[1] == np.shape(y)[1])
        and metric in ("euclidean", "sqeuclidean", "cosine")
    )
    if not valid:
        assert kind == _ERR, (x, y, metric, res)
        return
    assert kind == _OK, res
    from scipy.spatial.distance import cdist

    xf = as_float64(x)
    yf = xf if y is None else as_float64(y)
    if metric == "cosine" and (not np.all(np.linalg.norm(xf, axis=1)) or not np.all(np.linalg.norm(yf, axis=1))):
        return
    want = cdist(xf, yf, metric=metric)
    f32 = np.asarray(x).dtype == np.float32 or (y is not None and np.asarray(y).dtype == np.float32)
    scale = max(1.0, np.abs(xf).max(), np.abs(yf).max())
    got = gpuknn._backend.to_numpy(res)
    if metric == "sqeuclidean":
        scale = scale**2
    np.testing.assert_allclose(got, want, rtol=1e-4 if f32 else 1e-7, atol=(1e-4 if f32 else 1e-7) * scale)


# ------------------------------------------------------------------------------ labels
@st.composite
def label_vectors(draw, n):
    """``(labels, kind)``: kind one of int, intfloat, str, nan, continuous, mixed, short."""
    kind = draw(st.sampled_from(["int", "int", "intfloat", "str", "nan", "continuous", "mixed", "short"]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    c = rng.integers(0, draw(st.integers(1, 3)), size=n)
    if kind == "int":
        return (c.tolist() if draw(st.booleans()) else c), kind
    if kind == "intfloat":
        return c.astype(np.float64), kind
    if kind == "str":
        return np.array(["a", "b", "c"])[c], kind
    if kind == "nan":
        v = c.astype(np.float64)
        v[draw(st.integers(0, n - 1))] = np.nan
        return v, kind
    if kind == "continuous":
        return c + 0.5, kind
    if kind == "mixed" and n == 1:
        return np.array(["a"]), "str"
    if kind == "mixed":
        v = c.astype(object)
        v[0] = "a"
        if draw(st.booleans()):
            return v, kind
        return v.tolist(), "str"  # NumPy (and scikit-learn) read a list of str and int as strings
    return c[:-1], kind


@FUZZ
@given(n=st.integers(1, 6), data=st.data(), fn=st.sampled_from(["accuracy", "f1", "confusion"]))
def test_classification_metrics(n, data, fn):
    from sklearn import metrics as skm

    from gpuknn import metrics as gm

    yt, kt = data.draw(label_vectors(n))
    yp, kp = data.draw(label_vectors(n))
    ours = {
        "accuracy": lambda: gm.accuracy_score(yt, yp),
        "f1": lambda: gm.f1_score(yt, yp, average="macro"),
        "confusion": lambda: gm.confusion_matrix(yt, yp),
    }[fn]
    theirs = {
        "accuracy": lambda: skm.accuracy_score(yt, yp),
        "f1": lambda: skm.f1_score(yt, yp, average="macro", zero_division=0.0),
        "confusion": lambda: skm.confusion_matrix(yt, yp),
    }[fn]
    kind, res = outcome(ours)
    must_fail = (
        {kt, kp} & {"nan", "continuous", "mixed"}
        or {kt, kp} == {"str", "int"}
        or {kt, kp} == {"str", "intfloat"}
        or (kt == "short") != (kp == "short")
    )
    if must_fail:
        assert kind == _ERR, (yt, yp, res)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = theirs()
        except ValueError:  # e.g. empty vectors, or binary-only options on more classes
            assert kind == _ERR, res
            return
    assert kind == _OK, res
    np.testing.assert_allclose(gpuknn._backend.to_numpy(res), want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- votes
@FUZZ
@given(
    data=st.data(),
    n=st.integers(0, 4),
    k_max=st.integers(1, 4),
    n_classes=st.sampled_from([1, 2, 3, 2.0, 0, True, "2"]),
    weights=st.sampled_from(["uniform", "distance", "both", ["uniform"]]),
    label_kind=st.sampled_from(["ok", "ok", "neg", "high", "float", "bool"]),
    dist_kind=st.sampled_from(["ok", "ok", "zero", "nan", "neg", "shape", "none"]),
)
def test_votes_for_many_k(data, n, k_max, n_classes, weights, label_kind, dist_kind):
    nc = n_classes if is_int(n_classes) else 2
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    lab = rng.integers(0, max(1, nc), size=(n, k_max))
    if n and label_kind == "neg":
        lab[0, 0] = -1
    if n and label_kind == "high":
        lab[-1, -1] = nc
    if label_kind == "float":
        lab = lab.astype(np.float64)
    if label_kind == "bool":
        lab = lab.astype(bool)
    d = np.sort(rng.uniform(0.1, 2.0, size=(n, k_max)), axis=1)
    if dist_kind == "zero" and n:
        d[:, 0] = 0.0
    if dist_kind == "nan" and n:
        d[0, -1] = np.nan
    if dist_kind == "neg" and n:
        d[0, 0] = -0.5
    if dist_kind == "shape":
        d = d[:, :-1] if k_max > 1 else np.zeros((n + 1, 1))
    if dist_kind == "none":
        d = None
    ks = data.draw(
        st.one_of(
            st.lists(st.integers(1, k_max), min_size=1, max_size=3), st.lists(ints_or_junk, min_size=0, max_size=3)
        )
    )
    kind, res = outcome(lambda: gpuknn.votes_for_many_k(lab, ks, n_classes=n_classes, distances=d, weights=weights))
    labels_ok = label_kind in ("ok",) or (n == 0 and label_kind in ("neg", "high"))
    dist_ok = d is None or (dist_kind in ("ok", "zero") or (n == 0 and dist_kind in ("nan", "neg")))
    if dist_kind == "shape" and d is not None and d.shape == lab.shape:
        dist_ok = True
    valid = (
        is_int(n_classes)
        and n_classes >= 1
        and labels_ok
        and dist_ok
        and ks
        and all(is_int(k) and 1 <= k <= k_max for k in ks)
        and weights in ("uniform", "distance")
        and not (weights == "distance" and d is None)
    )
    if not valid:
        assert kind == _ERR, (lab, ks, n_classes, d, weights, res)
        return
    assert kind == _OK, res
    got = gpuknn._backend.to_numpy(res)
    assert got.shape == (len(ks), n)
    for j, k in enumerate(ks):  # the oracle: a plain loop, ties to the lowest class
        for i in range(n):
            tot = np.zeros(n_classes)
            row_d = d[i, :k] if weights == "distance" else None
            for c, pos in zip(lab[i, :k], range(k)):
                if weights == "uniform":
                    w = 1.0
                elif d[i, 0] == 0:
                    w = 1.0 if row_d[pos] == 0 else 0.0
                else:
                    w = 1.0 / row_d[pos]
                tot[c] += w
            assert got[j, i] == int(np.argmax(tot)), (lab[i], d, k)


# ---------------------------------------------------------------- estimators
@FUZZ
@given(
    X=matrices(max_rows=7),
    data=st.data(),
    n_neighbors=ints_or_junk,
    weights=st.sampled_from(["uniform", "distance", "nope", None]),
)
def test_kneighbors_classifier(X, data, n_neighbors, weights):
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    x, x_ok = X
    n = nrows(x)
    y, ky = data.draw(label_vectors(max(n, 1)))
    if ky == "mixed":
        return  # known, not this module's: see test_classifier_object_labels_of_mixed_types
    kind, res = outcome(
        lambda: gpuknn.KNeighborsClassifier(n_neighbors, weights=weights, algorithm="brute").fit(x, y).predict(x)
    )
    valid = (
        x_ok
        and ky in ("int", "intfloat", "str")
        and is_int(n_neighbors)
        and 1 <= n_neighbors <= n
        and weights in ("uniform", "distance")
    )
    if not valid:
        assert kind == _ERR, (x, y, n_neighbors, weights, res)
        return
    assert kind == _OK, res
    xf = as_float64(x)
    if len(np.unique(np.round(xf, 12), axis=0)) < xf.shape[0] or n_neighbors < n and _has_ties(xf):
        return  # tied distances: neighbour choice among equals is implementation-defined
    want = SkKNN(n_neighbors=n_neighbors, weights=weights, algorithm="brute").fit(xf, y).predict(xf)
    np.testing.assert_array_equal(np.asarray(gpuknn._backend.to_numpy(res)), want)


def _has_ties(X):
    from scipy.spatial.distance import cdist

    D = np.sort(cdist(X, X), axis=1)
    return bool(np.any(np.abs(np.diff(D, axis=1)) < 1e-9 * max(1.0, D.max())))


@FUZZ
@given(
    X=matrices(max_rows=6, max_cols=4),
    n_components=st.sampled_from([None, 1, 2, 0.5, 0, 7, 1.5, "2", True]),
    dtype=st.sampled_from([None, "float32", np.float64, np.int32, "int64", float, complex]),
)
def test_pca(X, n_components, dtype):
    from sklearn.decomposition import PCA as SkPCA

    x, x_ok = X
    kind, res = outcome(lambda: gpuknn.PCA(n_components, dtype=dtype).fit(x))
    n, d = (np.shape(x) + (0, 0))[:2] if x_ok else (0, 0)
    limit = min(n, d)
    nc_ok = (
        n_components is None
        or (is_int(n_components) and 1 <= n_components <= limit)
        or (isinstance(n_components, float) and 0 < n_components < 1)
    )
    valid = x_ok and n >= 2 and nc_ok and dtype in (None, "float32", np.float64, float)
    zero = (
        x_ok and n >= 2 and is_int(n_components) and n_components == 0 and dtype in (None, "float32", np.float64, float)
    )
    if zero:  # scikit-learn's full solver (what "auto" picks for small data) accepts 0: no components
        assert kind == _OK, res
        assert res.n_components_ == 0 and tuple(res.components_.shape) == (0, d)
        return
    if not valid:
        assert kind == _ERR, (x, n_components, dtype, res)
        return
    assert kind == _OK, res
    xf = as_float64(x)
    sk = SkPCA(n_components, svd_solver="full").fit(xf)
    f32 = dtype == "float32" or (dtype is None and np.asarray(x).dtype == np.float32)
    scale = max(1.0, float(np.abs(xf).max())) ** 2
    got = gpuknn._backend.to_numpy(res.explained_variance_)
    if res.n_components_ == sk.n_components_:
        np.testing.assert_allclose(
            got, sk.explained_variance_, rtol=1e-3 if f32 else 1e-7, atol=(1e-3 if f32 else 1e-9) * scale
        )
    z_kind, z = outcome(lambda: res.transform(x))
    assert z_kind == _OK and tuple(z.shape) == (n, res.n_components_)


# ------------------------------------------------------------------ model selection
@FUZZ
@given(
    ks=st.one_of(st.lists(ints_or_junk, min_size=0, max_size=3), ints_or_junk),
    weights=st.sampled_from(["uniform", "distance", ["uniform", "distance"], "both", 3]),
    cv=st.sampled_from([2, 3, None, 3.5, "x", 1, True]),
)
def test_cross_validate_k(ks, weights, cv):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.array([0, 1] * 6)
    kind, res = outcome(lambda: gpuknn.model_selection.cross_validate_k(X, y, ks, cv=cv, weights=weights))
    grid = ks if isinstance(ks, list) else [ks]
    min_train = {2: 6, 3: 8, None: 9}.get(cv, 0)
    valid = (
        cv in (2, 3, None)
        and cv is not True
        and grid
        and all(is_int(k) and 1 <= k <= min_train for k in grid)
        and weights in ("uniform", "distance", ["uniform", "distance"])
    )
    if not valid:
        assert kind == _ERR, (ks, weights, cv, res)
        return
    assert kind == _OK, res
    ws = [weights] if isinstance(weights, str) else weights
    n_folds = 5 if cv is None else cv
    assert len(res.rows) == n_folds * len(ws) * len(set(grid))
    assert {r["k"] for r in res.rows} == set(grid) and {r["weights"] for r in res.rows} == set(ws)
    assert all(0.0 <= r["accuracy"] <= 1.0 for r in res.rows)


@FUZZ
@given(X=matrices(max_rows=7), data=st.data())
def test_silhouette_score(X, data):
    from sklearn.metrics import silhouette_score as sk_sil

    from gpuknn.metrics import silhouette_score

    x, x_ok = X
    n = nrows(x)
    labels, kl = data.draw(label_vectors(max(n, 1)))
    if _huge(x):
        return  # known, not this module's: see test_silhouette_of_values_whose_squares_overflow
    kind, res = outcome(lambda: silhouette_score(x, labels))
    if not x_ok or kl in ("nan", "short", "mixed", "continuous"):
        if kl == "continuous" and kind == _OK and x_ok:
            pass  # clustering labels may be any distinct values (scikit-learn encodes them)
        else:
            assert kind == _ERR, (x, labels, res)
            return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = sk_sil(as_float64(x), np.asarray(labels))
        except ValueError:
            assert kind == _ERR, res  # e.g. one cluster only, or as many clusters as samples
            return
    assert kind == _OK, res
    assert float(res) == pytest.approx(want, rel=1e-6, abs=1e-9)


# ------------------------------------------------------------------- known, not ours
def _huge(x):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.any(np.abs(a[np.isfinite(a)]) > 1e150)) if a.size else False


def test_silhouette_of_values_whose_squares_overflow():
    from gpuknn.metrics import silhouette_score

    X = np.array([[1e200], [-0.13], [0.64], [0.1]])
    kind, res = outcome(lambda: silhouette_score(X, np.array([1, 1, 1, 0])))
    assert kind == _ERR


def test_classifier_object_labels_of_mixed_types():
    X = np.random.default_rng(0).normal(size=(2, 1))
    kind, _ = outcome(lambda: gpuknn.KNeighborsClassifier(1).fit(X, np.array(["a", 0], dtype=object)))
    assert kind == _ERR


def test_kd_tree_query_with_huge_values():
    X = np.random.default_rng(0).normal(size=(20, 3))
    Q = X.copy()
    Q[3, 1] = 1e200
    model = gpuknn.KNeighborsClassifier(3, algorithm="kd_tree").fit(X, np.arange(20) % 2)
    kind, _ = outcome(lambda: model.predict(Q))
    assert kind == _ERR
