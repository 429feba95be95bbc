"""The gap statistic (Tibshirani, Walther & Hastie 2001): K by the one-standard-error rule
or the maximum, from the pooled within-cluster dispersion of the data against reference
sets drawn without cluster structure."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy, validate_matrix
from .._backend import device_of as _device
from .._delegation import on_input_device
from ..cluster.kmeans import KMeans
from ..errors import InvalidInputError
from .internal import Shifted, _label_codes

__all__ = ["gap_statistic", "GapResult", "GAP_RULES", "choose_gap_k", "within_dispersion"]


@dataclass
class GapResult:
    """Result of :func:`gap_statistic` (host NumPy arrays, one entry per K)."""

    k: np.ndarray
    gap: np.ndarray
    s_k: np.ndarray  # sd_k * sqrt(1 + 1/B)
    log_w: np.ndarray  # log W_k of the data
    ref_log_w: np.ndarray  # mean over B reference sets of log W*_kb
    sd_k: np.ndarray
    n_clusters: int  # K chosen by the ``rule`` given to gap_statistic
    extra: dict = field(default_factory=dict)
    rule: str = "1se"

    def choose(self, rule: str = "1se") -> int:
        """K chosen by ``rule`` from this table: see :func:`choose_gap_k`."""
        return choose_gap_k(self.k, self.gap, self.s_k, rule=rule)


GAP_RULES = ("1se", "max")


def choose_gap_k(k: Any, gap: Any, s_k: Any, *, rule: str = "1se") -> int:
    """Number of clusters from a gap table (host sequences, one entry per K, K increasing).

    ``rule="1se"`` (Tibshirani, Walther & Hastie's one-standard-error rule): the smallest K
    with ``Gap(K) >= Gap(K') − s_K'`` for the next K' of ``k``; the largest K if none.
    ``rule="max"``: the K of the largest Gap (the smallest such K on ties).

    Examples
    --------
    >>> choose_gap_k([1, 2, 3, 4], [0.1, 0.5, 0.45, 0.9], [0.1, 0.1, 0.1, 0.1], rule="1se")
    2
    >>> choose_gap_k([1, 2, 3, 4], [0.1, 0.5, 0.45, 0.9], [0.1, 0.1, 0.1, 0.1], rule="max")
    4
    """
    ks = [int(v) for v in np.asarray(k).tolist()]
    g = np.asarray(gap, dtype=np.float64)
    s = np.asarray(s_k, dtype=np.float64)
    if rule not in GAP_RULES:
        raise InvalidInputError(f"rule must be one of {GAP_RULES}, got {rule!r}")
    if not ks or g.shape != (len(ks),) or s.shape != (len(ks),):
        raise InvalidInputError(
            f"k, gap and s_k must be non-empty and of one length, got {len(ks)}, {g.shape}, {s.shape}"
        )
    if rule == "max":
        return ks[int(np.argmax(g))]  # argmax returns the first maximum: ties -> smaller K
    for i in range(len(ks) - 1):
        if g[i] >= g[i + 1] - s[i + 1]:
            return ks[i]
    return ks[-1]


@on_input_device
def within_dispersion(X: Any, labels: Any) -> float:
    """Pooled within-cluster sum of squares ``W = Σ_r Σ_{i∈r} ||x_i − μ_r||²``.

    (= Σ_r D_r / (2 n_r) with D_r the sum of squared pairwise distances in cluster r.)
    Computed in float64 on rows shifted by a common centre (and scaled by a power of two
    for tiny data), so an offset costs no digits. Complexity O(n d), float64 row chunks of
    about 32 MiB.
    """
    return math.ldexp(*_scaled_dispersion(X, labels))


def _scaled_dispersion(X: Any, labels: Any) -> tuple[float, int]:
    """``(W', e)`` with ``W = W' 2**e``: W of the rows shifted and scaled in float64
    (:class:`gpuknn.metrics.internal.Shifted`: a float32 centre of data near 1e5 is off by
    more than a cluster's spread; tiny data's squares underflow), in row chunks."""
    xp = array_namespace(X)
    X = validate_matrix(X, xp)
    codes, K = _label_codes(labels, X, int(X.shape[0]))
    sh = Shifted(X, xp)
    centres, _ = sh.centres(codes, K)
    total = 0.0
    for r0, B in sh.chunks():
        R = B - xp.take(centres, codes[r0 : r0 + B.shape[0]], axis=0)
        total = total + xp.sum(R * R)
    return float(total), -2 * (math.frexp(sh.w)[1] - 1)


def _default_clusterer(seed_rng: np.random.Generator) -> Callable[[Any, int], Any]:
    def fit(X: Any, k: int) -> Any:
        seed = int(seed_rng.integers(2**31 - 1))
        return KMeans(k, n_init=3, random_state=seed).fit(X).labels_

    return fit


@on_input_device
def gap_statistic(
    X: Any,
    *,
    k_range: Any = range(1, 11),
    B: int = 10,
    reference: str = "uniform",
    random_state: Any = None,
    clusterer: Callable[[Any, int], Any] | None = None,
    rule: str = "1se",
) -> GapResult:
    """Tibshirani's gap statistic; K chosen by the one-standard-error rule or the maximum.

    ``Gap(K) = mean_b log W*_Kb − log W_K`` where W is :func:`within_dispersion` of the
    clustering into K groups and W*_Kb that of the b-th of ``B`` reference sets drawn
    uniformly in the data's bounding box (``reference="uniform"``) or in the box of its
    principal axes (``"pca"``: centre, rotate by the right singular vectors, draw, rotate
    back). ``s_K = sd_K sqrt(1 + 1/B)`` with sd_K the population standard deviation of the
    B values. With ``rule="1se"`` (the default, Tibshirani et al.'s rule) the chosen K is the
    smallest K in ``k_range`` with ``Gap(K) >= Gap(K') − s_K'`` for the next K' of
    ``k_range``, the largest K if none; with ``rule="max"`` it is the K of the largest Gap
    (smaller K on ties). ``GapResult.choose(rule)`` gives the other rule's K from the same table.

    Parameters
    ----------
    X : array of shape (n, d)
    k_range : iterable of int
        Increasing cluster counts, 1 <= K <= n.
    B : int
        Number of reference sets (>= 1).
    reference : {"uniform", "pca"}
    random_state : int or None
        Seeds the reference draws (host NumPy) and the default clusterer.
    clusterer : callable ``(X, K) -> labels``, optional
        Default: ``KMeans(K, n_init=3)`` seeded from ``random_state``.
    rule : {"1se", "max"}
        How ``GapResult.n_clusters`` is chosen (see :func:`choose_gap_k`).

    Returns
    -------
    GapResult

    Complexity ``len(k_range) * (B + 1)`` clusterings.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.1, (20, 2)), rng.normal(5, 0.1, (20, 2))])
    >>> gap_statistic(X, k_range=range(1, 5), B=5, random_state=0).n_clusters
    2
    """
    xp = array_namespace(X)
    X = validate_matrix(X, xp)
    n, d = int(X.shape[0]), int(X.shape[1])
    ks = [int(k) for k in k_range]
    if not ks or any(k < 1 or k > n for k in ks) or any(b <= a for a, b in zip(ks, ks[1:])):
        raise InvalidInputError(f"k_range must be increasing integers in [1, n={n}], got {ks}")
    if int(B) < 1:
        raise InvalidInputError(f"B must be >= 1, got {B}")
    if reference not in ("uniform", "pca"):
        raise InvalidInputError(f"reference must be 'uniform' or 'pca', got {reference!r}")
    if rule not in GAP_RULES:
        raise InvalidInputError(f"rule must be one of {GAP_RULES}, got {rule!r}")
    rng = np.random.default_rng(random_state)
    fit = clusterer if clusterer is not None else _default_clusterer(rng)
    mean = xp.mean(X, axis=0)
    if reference == "pca":
        _, _, Vt = xp.linalg.svd(X - mean, full_matrices=False)
        base = (X - mean) @ Vt.T
    else:
        base = X
    lo, hi = to_numpy(xp.min(base, axis=0)), to_numpy(xp.max(base, axis=0))

    def log_w(data: Any, k: int) -> float:
        w, e = _scaled_dispersion(data, fit(data, k))  # log W of tiny data stays finite
        if w <= 0:
            raise InvalidInputError(f"W is 0 for K={k}: fewer than K distinct points")
        return math.log(w) + e * math.log(2.0)

    data_lw = np.array([log_w(X, k) for k in ks])
    ref = np.empty((int(B), len(ks)))
    for b in range(int(B)):
        Zb = from_numpy(rng.uniform(lo, hi, size=(n, base.shape[1])), xp, device=_device(X))
        if reference == "pca":
            Zb = Zb @ Vt[: base.shape[1], :] + mean
        Zb = xp.astype(Zb, X.dtype)
        ref[b] = [log_w(Zb, k) for k in ks]
    ref_mean = ref.mean(axis=0)
    sd = ref.std(axis=0)
    s_k = sd * math.sqrt(1.0 + 1.0 / int(B))
    gap = ref_mean - data_lw
    chosen = choose_gap_k(ks, gap, s_k, rule=rule)
    return GapResult(np.asarray(ks), gap, s_k, data_lw, ref_mean, sd, chosen, {"B": int(B), "d": d}, rule)
