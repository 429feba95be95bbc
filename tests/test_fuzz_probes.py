"""Property suite over the probed surface of issue 32 (the fuzz suite grows, item 3).

Where :mod:`tests.test_fuzz` walks the argument space (types, shapes, junk), this file walks
the *numerical* and *operational* corners the probes of issue 32 found: offsets (translation
invariance of every distance), tiny and huge magnitudes (scale invariance, overflow),
repeated eigenvalues, integers beyond 2**53, overlapping shards, empty radius
neighbourhoods, degenerate splits, and the CLI's options and data files (odd numbers,
corrupt files of every supported format).

Each example ends in exactly one of: the oracle's answer (SciPy / scikit-learn /
``numpy.linalg.eigh`` / exact integer arithmetic, in float64, within a tolerance that follows
from the dtype), a :class:`gpuknn.errors.GpuknnError` (CLI: exit status 2 with a one-line
message) naming the offending argument, or the documented warning -- nothing else.

Deterministic (``derandomize=True``, no example database) and small: the whole file runs in
about a minute on two cores.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from array_api_compat import array_namespace  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.spatial.distance import cdist  # noqa: E402

import gpuknn  # noqa: E402
from gpuknn._backend import to_numpy  # noqa: E402
from gpuknn.errors import ConvergenceWarning, EmptyNeighborhoodWarning, GpuknnError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def fuzz(n, shrink=True):
    """Derandomised hypothesis settings with ``n`` examples (no deadline, no database, and
    no "explain" phase: it writes patch files into the work tree and slows failures down).
    ``shrink=False`` for properties whose examples take a second each (CLI runs): their
    draws are already small, and shrinking a failure would run dozens of them."""
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target] + ([Phase.shrink] if shrink else []),
    )


_OK, _ERR = "ok", "err"


def outcome(fn):
    """``(kind, result, warnings)``: kind ``"ok"`` with fn's result or ``"err"`` with the
    GpuknnError; any other exception propagates (and fails the test). Warnings are recorded,
    not raised, so that a documented warning can be told from an undocumented one."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = _OK, fn()
        except GpuknnError as exc:
            res = _ERR, exc
    return res[0], res[1], [w for w in caught if not issubclass(w.category, DeprecationWarning)]


def names(exc, *words):
    """The error's message names one of ``words`` (argument names) as a word of its own."""
    msg = str(exc)
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(w)}(?![A-Za-z0-9_])", msg) for w in words)


def host64(a):
    return np.asarray(to_numpy(a), dtype=np.float64)


def no_numpy_warnings(caught):
    """No RuntimeWarning of NumPy (overflow, invalid cast, ...) leaked out of gpuknn."""
    leaked = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not leaked, leaked


_EPS = {np.float32: 1e-3, np.float64: 1e-7}  # relative tolerance of a distance, per dtype


# ------------------------------------------------------------------ translation invariance
@st.composite
def offset_data(draw, max_rows=12, max_cols=5):
    """``(X, dtype)``: Gaussian rows of spread ~1..10 shifted by a large common offset
    (float32: up to 1e5, float64: up to 1e12), one row duplicated (its distance is 0)."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    offsets = [0.0, 1e2, 1e4, 1e5] if dtype is np.float32 else [0.0, 1e4, 1e8, 1e12]
    off = draw(st.sampled_from(offsets)) * draw(st.sampled_from([1.0, -1.0]))
    n, d = draw(st.integers(3, max_rows)), draw(st.integers(1, max_cols))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1.0, 3.0, 10.0])) + off * rng.uniform(0.5, 1.0, size=d)
    X[draw(st.integers(0, n - 1))] = X[draw(st.integers(0, n - 1))]
    return X.astype(dtype), dtype


def _check_distances(got, Xh, Yh, metric, dtype):
    """``got`` equals SciPy's distances of the float64 copy of the data (exactly what the
    caller passed), to the dtype's tolerance of the distance scale; 0 exactly where rows are
    equal."""
    want = cdist(Xh, Yh, metric=metric)
    scale = max(float(want.max()), np.finfo(np.float64).tiny)
    np.testing.assert_allclose(got, want, rtol=_EPS[dtype], atol=_EPS[dtype] * scale)
    same = np.all(Xh[:, None, :] == Yh[None, :, :], axis=2)
    assert np.all(got[same] == 0.0), got[same]


@pytest.mark.parametrize("backend_name", ["numpy", "torch"])
@fuzz(40)
@given(
    XX=offset_data(),
    with_y=st.booleans(),
    metric=st.sampled_from(["euclidean", "sqeuclidean"]),
    chunked=st.booleans(),
)
def test_pairwise_distances_are_translation_invariant(backend_name, XX, with_y, metric, chunked):
    from helpers import Backend

    if backend_name == "torch":
        torch = pytest.importorskip("torch")
        import array_api_compat.torch as tx

        be = Backend("torch", tx, torch.device("cpu"))
    else:
        be = Backend("numpy", np)
    X, dtype = XX
    Y = X[::-1][: max(1, X.shape[0] - 1)].copy() if with_y else None
    Xb, Yb = be.asarray(X), (None if Y is None else be.asarray(Y))

    def on_host(D):
        assert array_namespace(D) is array_namespace(Xb)  # the output stays in X's namespace
        return host64(D)

    def fn():
        if chunked:
            walk = gpuknn.pairwise_distances_chunked(Xb, Yb, metric=metric, working_memory=1e-3)
            return [(s, on_host(D)) for s, D in walk]
        return on_host(gpuknn.pairwise_distances(Xb, Yb, metric=metric))

    kind, res, caught = outcome(fn)
    assert kind == _OK, res
    no_numpy_warnings(caught)
    got = np.concatenate([D for _, D in res]) if chunked else res
    Xh = X.astype(np.float64)
    _check_distances(got, Xh, Xh if Y is None else Y.astype(np.float64), metric, dtype)


@st.composite
def offset_clusters(draw):
    """``(X, labels, dtype)``: 2-3 separated Gaussian clusters of 3-8 points, offset."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    off = draw(st.sampled_from([0.0, 1e4, 1e5] if dtype is np.float32 else [0.0, 1e8, 1e12]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    k, d = draw(st.integers(2, 3)), draw(st.integers(1, 4))
    sizes = [draw(st.integers(3, 8)) for _ in range(k)]
    centres = rng.normal(size=(k, d)) * draw(st.sampled_from([2.0, 5.0, 20.0]))
    X = np.concatenate([rng.normal(size=(m, d)) + c for m, c in zip(sizes, centres)]) + off
    labels = np.repeat(np.arange(k), sizes)
    perm = rng.permutation(labels.shape[0])
    return X[perm].astype(dtype), labels[perm], dtype


def _dunn(D, labels):
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(labels), dtype=bool)
    return D[~same].min() / D[same & off].max()


def _hubert(D, labels):
    iu = np.triu_indices(len(labels), 1)
    return float(np.corrcoef(D[iu], (labels[:, None] != labels[None, :])[iu].astype(float))[0, 1])


@fuzz(40)
@given(
    data=offset_clusters(),
    index=st.sampled_from(["silhouette_score", "silhouette_samples", "dunn_index", "hubert_gamma", "davies_bouldin"]),
)
def test_cluster_indices_are_translation_invariant(data, index):
    from sklearn import metrics as skm

    from gpuknn import metrics as gm

    X, labels, dtype = data
    Xh = X.astype(np.float64)  # the oracle sees exactly the values passed (after the cast)
    # SciPy's direct differences: scikit-learn's own euclidean distances (the GEMM formula)
    # are wrong from an offset of ~1e8 in float64, so its scores get these (precomputed)
    # or the data shifted by their mean (exact: values within a factor 2 of each other).
    D = cdist(Xh, Xh)
    fn, want = {
        "silhouette_score": (
            lambda: gm.silhouette_score(X, labels),
            skm.silhouette_score(D, labels, metric="precomputed"),
        ),
        "silhouette_samples": (
            lambda: host64(gm.silhouette_samples(X, labels)),
            skm.silhouette_samples(D, labels, metric="precomputed"),
        ),
        "dunn_index": (lambda: gm.dunn_index(X, labels), _dunn(D, labels)),
        "hubert_gamma": (lambda: gm.hubert_gamma(X, labels), _hubert(D, labels)),
        "davies_bouldin": (
            lambda: gm.davies_bouldin_score(X, labels),
            skm.davies_bouldin_score(Xh - Xh.mean(axis=0), labels),
        ),
    }[index]
    kind, res, caught = outcome(fn)
    assert kind == _OK, res
    no_numpy_warnings(caught)
    # every index is a ratio of distances: relative distance errors of eps move it by ~eps
    # times its magnitude (x a few, for the sums and differences inside)
    tol = 10 * _EPS[dtype]
    np.testing.assert_allclose(np.asarray(res, dtype=np.float64), want, rtol=tol, atol=tol)


# ------------------------------------------------------------------------ scale invariance
# Per dtype: tiny scales (squares far below the smallest normal number), ordinary ones,
# huge but representable ones, and ones whose squared norms overflow.
_SCALES = {
    np.float64: {
        "tiny": [1e-300, 2.0**-1000, 1e-170],
        "plain": [1.0, 1e-5, 1e5],
        "huge": [1e100, 1e150],
        "over": [1e160, 1e200, 1e300],
    },
    np.float32: {
        "tiny": [1e-25, 1e-30, 1e-20],
        "plain": [1.0, 1e-3, 1e3],
        "huge": [1e12, 1e15],
        "over": [1e20, 1e25, 1e30],
    },
}


@st.composite
def scaled_pair(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    regime = draw(st.sampled_from(["tiny", "tiny", "plain", "huge", "over"]))
    s = draw(st.sampled_from(_SCALES[dtype][regime]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n_q, n_r, d = draw(st.integers(1, 4)), draw(st.integers(2, 9)), draw(st.integers(1, 4))
    Q, R = rng.normal(size=(n_q, d)), rng.normal(size=(n_r, d))
    scaled = draw(st.sampled_from(["both", "Q", "R"])) if regime == "over" else "both"
    with np.errstate(over="ignore"):
        Qs = (Q * (s if scaled in ("both", "Q") else 1.0)).astype(dtype)
        Rs = (R * (s if scaled in ("both", "R") else 1.0)).astype(dtype)
    return Q, R, Qs, Rs, s, dtype, regime, scaled


@fuzz(60)
@given(P=scaled_pair(), k=st.integers(1, 3), metric=st.sampled_from(["euclidean", "sqeuclidean", "cosine"]))
def test_kneighbors_is_scale_invariant_and_refuses_overflow(P, k, metric):
    Q, R, Qs, Rs, s, dtype, regime, scaled = P
    k = min(k, R.shape[0])
    kind, res, caught = outcome(lambda: gpuknn.kneighbors(Qs, Rs, k, metric=metric))
    no_numpy_warnings(caught)
    if regime == "over":
        assert kind == _ERR, (s, scaled, res)
        assert names(res, *(("Q", "R") if scaled == "both" else (scaled,))), res
        return
    assert kind == _OK, res
    dist, idx = host64(res[0]), np.asarray(to_numpy(res[1]))
    # the oracle on the values actually passed, exactly rescaled by the power of two nearest
    # s (ldexp: no rounding, so nothing underflows or overflows in the oracle itself)
    e = int(np.round(np.log2(s)))
    full = cdist(np.ldexp(Qs.astype(np.float64), -e), np.ldexp(Rs.astype(np.float64), -e), metric=metric)
    order = np.argsort(full, axis=1, kind="stable")[:, :k]
    gap = np.diff(np.sort(full, axis=1), axis=1)
    if not np.any(gap[:, :k] < 1e-6 * max(1.0, full.max())):  # no near-ties: one answer
        np.testing.assert_array_equal(idx, order)
    back = _scale_back(metric, e)
    want = back(np.take_along_axis(full, idx, axis=1))  # the distances of what was returned
    tiny = float(np.finfo(dtype).tiny)
    np.testing.assert_allclose(dist, want, rtol=10 * _EPS[dtype], atol=tiny)
    np.testing.assert_allclose(back(np.sort(full, axis=1)[:, :k]), dist, rtol=10 * _EPS[dtype], atol=tiny)


def _scale_back(metric, e):
    """Distances of data scaled by 2**-e -> those of the data (exact powers of two)."""
    power = {"euclidean": 1, "sqeuclidean": 2, "cosine": 0}[metric]
    return lambda D: np.ldexp(D, power * e)


@fuzz(40)
@given(P=scaled_pair(), metric=st.sampled_from(["euclidean", "sqeuclidean", "cosine"]))
def test_pairwise_distances_are_scale_invariant_and_refuse_overflow(P, metric):
    Q, R, Qs, Rs, s, dtype, regime, scaled = P
    kind, res, caught = outcome(lambda: gpuknn.pairwise_distances(Qs, Rs, metric=metric))
    no_numpy_warnings(caught)
    if regime == "over":
        assert kind == _ERR, (s, scaled, res)
        assert names(res, *(("X", "Y") if scaled == "both" else ({"Q": "X", "R": "Y"}[scaled],))), res
        return
    assert kind == _OK, res
    e = int(np.round(np.log2(s)))
    full = cdist(np.ldexp(Qs.astype(np.float64), -e), np.ldexp(Rs.astype(np.float64), -e), metric=metric)
    want = _scale_back(metric, e)(full)
    np.testing.assert_allclose(host64(res), want, rtol=10 * _EPS[dtype], atol=float(np.finfo(dtype).tiny))


# --------------------------------------------------------------- repeated eigenvalues, PCA
_SPECTRA = [
    [4.0, 4.0, 1.0],
    [3.0, 3.0, 3.0, 1.0],
    [5.0, 2.0, 2.0, 2.0, 0.5],
    [2.0, 2.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 0.2, 0.2],
    [6.0, 6.0, 2.0, 1.0 + 1e-9, 1.0],
]


def data_with_spectrum(lam, n, seed):
    """``n`` rows whose sample covariance (divisor n - 1) is ``Q diag(lam) Q^T`` for a random
    rotation Q, up to rounding (the columns of the whitened noise are exactly orthonormal)."""
    rng = np.random.default_rng(seed)
    d = len(lam)
    Z = rng.normal(size=(n, d))
    Z -= Z.mean(axis=0)
    Z, _ = np.linalg.qr(Z)  # orthonormal, centred columns
    Z *= math.sqrt(n - 1)
    rot, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return Z * np.sqrt(lam) @ rot.T


def _eigh_top(X, p):
    return np.linalg.eigh(np.cov(X.astype(np.float64), rowvar=False))[0][::-1][:p]


@fuzz(40)
@given(
    spectrum=st.sampled_from(_SPECTRA),
    seed=st.integers(0, 2**16),
    solver=st.sampled_from(["eigh", "block", "deflation"]),
    frac=st.floats(0.2, 1.0),
    offset=st.sampled_from([0.0, 10.0]),
)
def test_pca_with_repeated_eigenvalues(spectrum, seed, solver, frac, offset):
    X = data_with_spectrum(spectrum, 30, seed) + offset
    p = max(1, int(round(frac * len(spectrum))))
    kind, res, caught = outcome(lambda: gpuknn.PCA(p, solver=solver, random_state=seed).fit(X))
    assert kind == _OK, res
    no_numpy_warnings(caught)
    want = _eigh_top(X, p)
    got = host64(res.explained_variance_)
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        assert not res.converged_  # the documented warning, and the attribute says so
        return
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * want[0])
    # the components span the same eigenspaces: C V = V diag(lam) (a residual, basis-free)
    V = host64(res.components_).T
    C = np.cov(X, rowvar=False)
    np.testing.assert_allclose(C @ V, V * got, atol=1e-5 * want[0])


@fuzz(40)
@given(
    spectrum=st.sampled_from(_SPECTRA),
    seed=st.integers(0, 2**16),
    frac=st.floats(0.2, 1.0),
    warm_start=st.booleans(),
    rotate=st.booleans(),
)
def test_deflated_power_method_with_repeated_eigenvalues(spectrum, seed, frac, warm_start, rotate):
    rng = np.random.default_rng(seed)
    rot = np.linalg.qr(rng.normal(size=(len(spectrum),) * 2))[0] if rotate else np.eye(len(spectrum))
    C = (rot * spectrum) @ rot.T
    C = (C + C.T) / 2
    p = max(1, int(round(frac * len(spectrum))))
    kind, res, caught = outcome(
        lambda: gpuknn.linalg.deflated_power_method(C, p, warm_start=warm_start, random_state=seed)
    )
    assert kind == _OK, res
    no_numpy_warnings(caught)
    want = np.linalg.eigh(C)[0][::-1][:p]
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        assert not np.all(res.converged)
        return
    assert np.all(res.converged)
    np.testing.assert_allclose(host64(res.eigenvalues), want, rtol=1e-6, atol=1e-6 * want[0])


@fuzz(30)
@given(
    seed=st.integers(0, 2**16),
    solver=st.sampled_from(["eigh", "block", "deflation"]),
    case=st.sampled_from([(np.float64, 1e-170), (np.float64, 1e-300), (np.float32, 1e-25), (np.float32, 1e-19)]),
    p=st.integers(1, 3),
)
def test_pca_of_tiny_data_is_scale_invariant(seed, solver, case, p):
    dtype, s = case
    X = np.random.default_rng(seed).normal(size=(25, 4))
    Xs = (X * s).astype(dtype)
    kind, res, caught = outcome(lambda: gpuknn.PCA(p, solver=solver, random_state=0).fit(Xs))
    assert kind == _OK, res
    no_numpy_warnings(caught)
    # the oracle: the spectrum of the values passed, exactly rescaled by a power of two
    p2 = 2.0 ** -np.round(np.log2(s))
    lam = np.linalg.eigh(np.cov(Xs.astype(np.float64) * p2, rowvar=False))[0][::-1]
    tol = 1e-3 if dtype is np.float32 else 1e-6
    np.testing.assert_allclose(host64(res.explained_variance_ratio_), lam[:p] / lam.sum(), rtol=tol, atol=tol)


# ---------------------------------------------------------------------- integer extremes
@st.composite
def big_integers(draw):
    """``(Q, R, Qi, Ri)``: integer data near a base (small, 2**53, 2**62 or 2**64 - 64), as
    int64 / uint64 arrays, Python-int lists or object arrays; Qi, Ri the exact Python ints."""
    base = draw(st.sampled_from([0, 2**20, 2**53 - 40, 2**53 + 7, 2**62, 2**63 - 64, 2**64 - 64]))
    kind = draw(st.sampled_from(["int64", "uint64", "list", "object"]))
    if kind == "int64" and base > 2**63 - 64:
        base = 2**63 - 64
    n_r, d = draw(st.integers(2, 6)), draw(st.integers(1, 2))
    spread = 60 if base else 2**20
    Ri = [[base + draw(st.integers(0, spread)) for _ in range(d)] for _ in range(n_r)]
    Qi = [[base + draw(st.integers(0, spread)) for _ in range(d)]]
    if kind in ("int64", "uint64"):
        return np.array(Qi, dtype=kind), np.array(Ri, dtype=kind), Qi, Ri
    if kind == "object":
        return np.array(Qi, dtype=object), np.array(Ri, dtype=object), Qi, Ri
    return Qi, Ri, Qi, Ri


@fuzz(60)
@given(data=big_integers(), k=st.integers(1, 3))
def test_kneighbors_of_integers_beyond_2_53(data, k):
    Q, R, Qi, Ri = data
    k = min(k, len(Ri))
    kind, res, caught = outcome(lambda: gpuknn.kneighbors(Q, R, k))
    no_numpy_warnings(caught)
    exact_in_float64 = all(abs(v) <= 2**53 for row in Qi + Ri for v in row)
    if kind == _ERR:
        assert not exact_in_float64, res  # only values a float64 cannot hold may be refused
        assert names(res, "Q", "R"), res
        return
    d2 = [sum((a - b) ** 2 for a, b in zip(Qi[0], r)) for r in Ri]  # exact squared distances
    idx = np.asarray(to_numpy(res[1]))[0].tolist()
    kth = sorted(d2)[:k]
    assert [d2[i] for i in idx] == kth, (Qi, Ri, idx, d2)  # ties may pick any equal row
    np.testing.assert_allclose(host64(res[0])[0], np.sqrt(np.array(kth, dtype=np.float64)), rtol=1e-12)


@fuzz(30)
@given(data=big_integers())
def test_classifier_on_integers_beyond_2_53(data):
    Q, R, Qi, Ri = data
    y = np.arange(len(Ri))  # each training row its own class: 1-NN must find the exact row
    kind, res, caught = outcome(lambda: gpuknn.KNeighborsClassifier(1).fit(R, y).predict(Q))
    no_numpy_warnings(caught)
    exact_in_float64 = all(abs(v) <= 2**53 for row in Qi + Ri for v in row)
    if kind == _ERR:
        assert not exact_in_float64, res
        assert names(res, "X"), res
        return
    d2 = [sum((a - b) ** 2 for a, b in zip(Qi[0], r)) for r in Ri]
    assert d2[int(np.asarray(to_numpy(res))[0])] == min(d2), (Qi, Ri, res)


# ---------------------------------------------------------------------- shard merges
@fuzz(40)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(4, 14),
    k=st.integers(1, 5),
    layout=st.sampled_from(["disjoint", "disjoint", "overlap", "repeat"]),
    data=st.data(),
)
def test_merge_partial_of_disjoint_overlapping_and_repeated_shards(seed, n, k, layout, data):
    from gpuknn.ops.partial import finalize_partial, kneighbors_partial, merge_partial

    rng = np.random.default_rng(seed)
    R, Q = rng.normal(size=(n, 3)), rng.normal(size=(3, 3))
    k = min(k, n)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), min_size=1, max_size=3)))
    bounds = list(zip([0] + cuts, cuts + [n]))
    if layout == "overlap":  # one shard reaches back into its predecessor
        j = data.draw(st.integers(1, len(bounds) - 1))
        a, b = bounds[j]
        bounds[j] = (data.draw(st.integers(bounds[j - 1][0], a - 1)), b)
    parts = [kneighbors_partial(Q, R[a:b], k, offset=a) for a, b in bounds]
    order = list(data.draw(st.permutations(range(len(parts)))))
    if layout == "repeat":  # one shard merged with itself first, the others after
        order.insert(0, order[0])

    def merged():
        m = parts[order[0]]
        for j in order[1:]:
            m = merge_partial(m, parts[j])
        return finalize_partial(m)

    kind, res, caught = outcome(merged)
    no_numpy_warnings(caught)
    full = cdist(Q, R)
    want_idx = np.argsort(full, axis=1, kind="stable")[:, :k]
    if kind == _ERR:  # only a merge of shards sharing references may be refused, naming them
        assert layout != "disjoint", (bounds, res)
        assert re.search(r"shard|overlap|twice|duplicate", str(res), re.I), res
        return
    # otherwise the full search's answer, whatever the layout: never a reference twice
    np.testing.assert_array_equal(np.asarray(res[1]), want_idx, err_msg=f"{bounds} merged in order {order}")
    np.testing.assert_allclose(np.asarray(res[0]), np.take_along_axis(full, want_idx, axis=1), rtol=1e-12)


# ------------------------------------------------------------- empty radius neighbourhoods
@fuzz(40)
@given(
    seed=st.integers(0, 2**16),
    algorithm=st.sampled_from(["brute", "kd_tree", "auto"]),
    weights=st.sampled_from(["uniform", "distance"]),
    outputs=st.sampled_from([1, 2]),
    far=st.sampled_from(["all", "some"]),
)
def test_radius_regressor_without_neighbours_is_nan_with_the_warning(seed, algorithm, weights, outputs, far):
    from sklearn.neighbors import RadiusNeighborsRegressor as SkRNR

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, 2))
    y = rng.normal(size=(12, outputs)) if outputs > 1 else rng.normal(size=12)
    Q = rng.normal(size=(5, 2))
    lonely = np.ones(5, bool) if far == "all" else rng.random(5) < 0.5
    Q[lonely] += 100.0
    est = gpuknn.RadiusNeighborsRegressor(radius=1.5, weights=weights, algorithm=algorithm)
    kind, res, caught = outcome(lambda: est.fit(X, y).predict(Q))
    no_numpy_warnings(caught)
    assert kind == _OK, res
    got = host64(res).reshape(5, -1)
    if lonely.any():
        assert any(issubclass(w.category, EmptyNeighborhoodWarning) for w in caught), caught
    assert np.all(np.isnan(got[lonely])), got
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = SkRNR(radius=1.5, weights=weights, algorithm="brute").fit(X, y).predict(Q).reshape(5, -1)
    np.testing.assert_allclose(got[~lonely], want[~lonely], rtol=1e-10, atol=1e-12)


@fuzz(20)
@given(
    seed=st.integers(0, 2**16),
    algorithm=st.sampled_from(["brute", "kd_tree", "auto"]),
    outlier=st.sampled_from([None, -1]),
)
def test_radius_classifier_without_neighbours(seed, algorithm, outlier):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(12, 2)), rng.integers(0, 2, size=12)
    Q = rng.normal(size=(4, 2))
    Q[0] += 100.0
    est = gpuknn.RadiusNeighborsClassifier(radius=1.5, algorithm=algorithm, outlier_label=outlier)
    kind, res, caught = outcome(lambda: est.fit(X, y).predict(Q))
    no_numpy_warnings(caught)
    if outlier is None:  # documented: an error naming those queries (scikit-learn raises too)
        assert kind == _ERR and "radius" in str(res), res
        return
    assert kind == _OK, res
    assert int(np.asarray(to_numpy(res))[0]) == -1


# ------------------------------------------------------------------------------ splitters
@fuzz(60)
@given(
    counts=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    nan=st.booleans(),
    splitter=st.sampled_from(["skf", "tts"]),
    size=st.sampled_from([None, 0.25, 0.5, 2, True, False, 0, 1.0, -0.5, np.nan]),
    seed=st.integers(0, 1000),
)
def test_splitters_refuse_what_scikit_learn_refuses(counts, nan, splitter, size, seed):
    from sklearn import model_selection as skms

    from gpuknn import model_selection as gms

    y = np.repeat(np.arange(len(counts), dtype=np.float64), counts)
    if nan:
        y[seed % len(y)] = np.nan
    X = np.arange(len(y), dtype=np.float64)[:, None]
    if splitter == "skf":
        n_splits = 2 if size is None or not isinstance(size, int) or isinstance(size, bool) else max(size, 2)
        theirs = lambda: list(skms.StratifiedKFold(n_splits).split(X, y))  # noqa: E731
        ours = lambda: list(gms.StratifiedKFold(n_splits).split(X, y))  # noqa: E731
        argnames = ("y", "n_splits")
    else:
        theirs = lambda: skms.train_test_split(X, y, test_size=size, stratify=y, random_state=0)  # noqa: E731
        ours = lambda: gms.train_test_split(X, y, test_size=size, stratify=y, random_state=0)  # noqa: E731
        argnames = ("y", "test_size", "stratify")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = theirs()
        refused = False
    except (ValueError, TypeError):
        refused = True
    if isinstance(size, bool) and splitter == "tts":
        refused = True  # scikit-learn's parameter validation refuses bools as sizes
    kind, res, caught = outcome(ours)
    no_numpy_warnings(caught)
    if refused:
        assert kind == _ERR, (y, size, res)
        # the argument, or the data size that makes the split impossible
        assert names(res, *argnames, "n_samples", "n") or "class" in str(res), res
        return
    assert kind == _OK, res
    if splitter == "skf":
        assert [len(te) for _, te in res] == [len(te) for _, te in want]
        assert sorted(np.concatenate([te for _, te in res]).tolist()) == list(range(len(y)))
    else:
        assert [len(a) for a in res] == [len(a) for a in want]


# ------------------------------------------------------------------------------------ CLI
def _cli(argv, capsys):
    """``(status, stderr, stdout)`` of the CLI run in-process (argparse's SystemExit is a
    status)."""
    from gpuknn.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    cap = capsys.readouterr()
    return code, cap.err, cap.out


def _assert_one_line_error(err, *words):
    """stderr ends with one ``gpuknn ...: error: ...`` line naming one of ``words``, and
    holds no Python traceback."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and re.match(r"^(gpuknn|usage:)", lines[0]) and "error" in lines[-1], err
    assert any(w.lower() in lines[-1].lower() for w in words), (words, lines[-1])


_SWEEP = [
    "sweep",
    "--k",
    "1-3",
    "--k-raw",
    "1-3",
    "--p",
    "2,3",
    "--folds",
    "2",
    "--quiet",
    "--device",
    "cpu",
    "--skip-raw",
]

# option -> (values that must be refused, odd values that may run or be refused naming it,
#            words that name it)
_SWEEP_OPTIONS = {
    "--seed": (["-1", "-7", "abc", "1.5"], ["0", "4294967295", "4294967296", str(2**63)], ["--seed", "seed"]),
    "--synthetic": (["0", "-3", "5", "1.5", "nan"], ["30", "120", "301"], ["--synthetic", "synthetic"]),
    "--subset": (["0", "-2", "x"], ["20", "100", "1000000"], ["--subset", "subset"]),
    "--test-size": (
        ["0", "-0.5", "nan", "inf", "-3"],
        ["0.5", "0.9", "12", "1", "1.0", "1000000"],
        ["--test-size", "test_size", "test size"],
    ),
    "--k": (["0", "-1", "3-1", "1-3:0", ",", "1-3:-1"], ["2", "1-3:2", "50"], ["--k", "k="]),
    "--p": (["0", "-1", "0-3", "x"], ["1", "1-784:200", "5000"], ["--p", "p="]),
    "--working-memory": (
        ["0", "-1", "x"],
        ["1", "0.5", str(2**40)],
        ["--working-memory", "working_memory", "working memory"],
    ),
    "--out": ([""], [], ["--out", "out"]),
}


@pytest.fixture
def quick_sweep(monkeypatch):
    """No figures (seconds each): the fuzz is about the options, not the drawing."""
    from gpuknn.cli import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "_figures", lambda res: {})


@fuzz(30, shrink=False)
@given(option=st.sampled_from(sorted(_SWEEP_OPTIONS)), bad=st.booleans(), data=st.data())
def test_cli_sweep_options(option, bad, data, tmp_path_factory, capsys, quick_sweep, monkeypatch):
    must_refuse, odd, words = _SWEEP_OPTIONS[option]
    if not odd:
        bad = True
    value = data.draw(st.sampled_from(must_refuse if bad else odd))
    work = tmp_path_factory.mktemp("sweep")
    monkeypatch.chdir(work)  # an empty --out must not write into the caller's directory
    argv = list(_SWEEP) + ["--out", str(work / "run")]
    if option not in ("--synthetic", "--subset"):
        argv += ["--synthetic", "300"]
    if option == "--subset":
        argv += ["--synthetic", "300"]
    if option == "--out":
        argv = argv[:-2]
    argv += [f"{option}={value}"]  # '=': values starting with '-' are values, not options
    code, err, out = _cli(argv, capsys)
    if bad:
        assert code == 2, (argv, code, err)
        _assert_one_line_error(err, *words)
        assert not any(work.iterdir()) or not (work / "results.json").exists()
        return
    assert code in (0, 2), (argv, code, err)
    if code == 2:  # an odd value may clash with another option (--synthetic 30 with --folds 2)
        _assert_one_line_error(err, *words, "--")
        return
    res = json.loads((work / "run" / "results.json").read_text())
    assert 0.0 <= res["test_accuracy"] <= 1.0


def _write_table(path, fmt, rng):
    """A small valid data file of format ``fmt`` (two classes, 40 rows, 3 features)."""
    X = np.round(rng.normal(size=(40, 3)), 3)
    y = np.repeat([0, 1], 20)
    if fmt == "csv":
        lines = ["a,b,c,label"] + [",".join(f"{v:.3f}" for v in row) + f",{c}" for row, c in zip(X, y)]
        path.write_text("\n".join(lines) + "\n")
    elif fmt == "dat":
        head = ["@relation t"] + [f"@attribute {a} real [-9, 9]" for a in "abc"]
        head += ["@attribute Class {positive, negative}", "@inputs a, b, c", "@outputs Class", "@data"]
        rows = [", ".join(f"{v:.3f}" for v in row) + (", positive" if c else ", negative") for row, c in zip(X, y)]
        path.write_text("\n".join(head + rows) + "\n")
    elif fmt == "npy":
        np.save(path, np.column_stack([X, y]))
    elif fmt == "npz":
        np.savez(path, X=X, y=y)
    else:  # an IDX directory, raw or gzipped
        from gpuknn.datasets.idx import write_idx

        path.mkdir()
        gz = ".gz" if fmt == "idx-gz" else ""
        imgs = rng.integers(0, 256, size=(40, 2, 2), dtype=np.uint8)
        write_idx(path / f"train-images-idx3-ubyte{gz}", imgs[:30])
        write_idx(path / f"train-labels-idx1-ubyte{gz}", y[:30].astype(np.uint8))
        write_idx(path / f"t10k-images-idx3-ubyte{gz}", imgs[30:])
        write_idx(path / f"t10k-labels-idx1-ubyte{gz}", y[30:].astype(np.uint8))
    return path


_SUFFIX = {"csv": ".csv", "dat": ".dat", "npy": ".npy", "npz": ".npz", "idx-raw": "", "idx-gz": ""}


def _corrupt(path, fmt, how, data):
    """Damage the file (for IDX: one of the four files, drawn) in the way ``how`` says."""
    target = path
    if fmt.startswith("idx"):
        target = data.draw(st.sampled_from(sorted(path.iterdir())))
    raw = target.read_bytes()
    if how == "empty":
        new = b""
    elif how == "garbage":
        new = b"\xff\xfe\x00\x13" + bytes(np.random.default_rng(len(raw)).integers(0, 256, 60, dtype=np.uint8))
    elif fmt in ("csv", "dat"):
        # cut a text file one character into a data line: a ragged last row (a cut at a
        # line end would leave a valid, shorter file)
        text = raw.decode()
        starts = [m.end() for m in re.finditer("\n", text)][-10:-1]
        new = text[: data.draw(st.sampled_from(starts)) + 1].encode()
    else:
        plain = gzip.decompress(raw) if target.name.endswith(".gz") else raw
        cut = data.draw(st.integers(1, len(plain) - 1))
        new = plain[:cut]
        if target.name.endswith(".gz"):
            new = data.draw(st.sampled_from([gzip.compress(new), raw[: min(cut, len(raw) - 1)]]))
    target.write_bytes(new)
    return target


@fuzz(36, shrink=False)
@given(
    fmt=st.sampled_from(sorted(_SUFFIX)),
    how=st.sampled_from(["truncated", "garbage", "empty"]),
    command=st.sampled_from(["evaluate", "sweep"]),
    data=st.data(),
)
def test_cli_corrupt_data_files(fmt, how, command, data, tmp_path_factory, capsys, quick_sweep):
    work = tmp_path_factory.mktemp("corrupt")
    path = _write_table(work / f"t{_SUFFIX[fmt]}", fmt, np.random.default_rng(0))
    damaged = _corrupt(path, fmt, how, data)
    if command == "evaluate":
        argv = ["evaluate", str(path), "--k", "3"]
    else:
        argv = _SWEEP + ["--data", str(path), "--out", str(work / "run")]
    code, err, out = _cli(argv, capsys)
    assert code == 2, (fmt, how, code, err)
    _assert_one_line_error(err, damaged.name, path.name)
    assert not (work / "run" / "results.json").exists()


_EVALUATE_OPTIONS = {
    "--k": (["0", "-1", "1.5", "1000000"], ["1", "27"], ["--k", "k", "n_neighbors"]),
    "--holdout": (
        ["0", "1", "-0.1", "nan", "inf", "1.5"],
        ["0.05", "0.95", "0.5"],
        ["--holdout", "holdout", "test_size"],
    ),
    "--seed": (["-1", "-99", "x"], ["0", "4294967295", "4294967296"], ["--seed", "seed", "random_state"]),
    "--cv": (["0", "-2", "1", "1000"], ["2", "20"], ["--cv", "cv", "n_splits"]),
    "--target": (["99", "-99", "nope"], ["label", "3", "-1"], ["--target", "target", "column"]),
}


@fuzz(30, shrink=False)
@given(option=st.sampled_from(sorted(_EVALUATE_OPTIONS)), bad=st.booleans(), data=st.data())
def test_cli_evaluate_options(option, bad, data, tmp_path_factory, capsys):
    must_refuse, odd, words = _EVALUATE_OPTIONS[option]
    value = data.draw(st.sampled_from(must_refuse if bad else odd))
    work = tmp_path_factory.mktemp("evaluate")
    path = _write_table(work / "t.csv", "csv", np.random.default_rng(1))
    code, err, out = _cli(["evaluate", str(path), "--json", f"{option}={value}"], capsys)
    if bad:
        assert code == 2, (option, value, code, err)
        _assert_one_line_error(err, *words)
        return
    assert code in (0, 2), (option, value, code, err)
    if code == 2:  # an odd value may clash with another option (--holdout 0.95 with --k 5)
        _assert_one_line_error(err, *words, "--")
        return
    (row,) = json.loads(out)
    assert row["n_samples"] == 40 and 0.0 <= row["accuracy"] <= 1.0
