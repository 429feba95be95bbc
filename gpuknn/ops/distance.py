"""Distances as one matrix product per tile.

Every metric is turned into a *score to maximise* that a single GEMM of prepared rows
produces, so the hot loop is ``S = Q' @ R'.T`` followed by top-k selection:

==============  ======================================  =====================================
metric          prepared rows (query / reference)        distance from the score ``s``
==============  ======================================  =====================================
sqeuclidean     ``[q, 1]`` / ``[r, -|r|²/2]``            ``max(|q|² - 2 s, 0)``
euclidean       same                                     ``sqrt(max(|q|² - 2 s, 0))``
cosine          ``q/|q|`` / ``r/|r|``                    ``clip(1 - s, 0, 2)``
correlation     ``(q-q̄)/|q-q̄|`` (q̄ = mean of q's own     ``clip(1 - s, 0, 2)``
                components), same for r
inner           ``q`` / ``r``                            ``s`` itself (larger = closer)
==============  ======================================  =====================================

Zero-norm rows (after centring, for correlation) are left as zeros, so their similarity to
anything is 0 and their cosine/correlation distance is exactly **1** — scikit-learn's
``cosine_distances`` convention — never NaN.

The augmented column folds ``-|r|²/2`` into the GEMM for the euclidean family, so no extra
pass over the tile is needed before selection.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace

from .._backend import array_namespace, validate_matrix
from .._delegation import fp32_matmul, matmul_unit_roundoff, on_input_device, sqdist64, take_rows
from ..errors import InvalidInputError
from .certify import gamma
from .differences import difference_distances
from .limits import check_magnitude, check_working_memory, underflow_scale
from .metricspec import KNOWN_METRICS, is_difference, resolve_metric

__all__ = [
    "METRICS",
    "check_metric",
    "prepare_rows",
    "scores_to_distances",
    "pairwise_distances",
    "pairwise_distances_chunked",
    "validate_pair",
    "DistanceWalk",
]

METRICS = ("euclidean", "sqeuclidean", "cosine", "correlation", "inner")


def check_metric(metric: str) -> str:
    """Return ``metric`` if it is one of the inner-product :data:`METRICS` (the GEMM
    paths: the p-sweep, partial searches, centroids; ``"l2"`` and ``"minkowski"``, whose
    default p is 2, return ``"euclidean"``), else raise :class:`InvalidInputError`
    -- saying so for a difference metric (:mod:`gpuknn.ops.differences`), which only the
    neighbour searches, the estimators and :func:`pairwise_distances` serve."""
    if metric not in METRICS:
        if isinstance(metric, str) and metric in ("l2", "minkowski"):
            return "euclidean"  # other names of it (minkowski's default p = 2)
        if isinstance(metric, str) and metric in KNOWN_METRICS or is_difference(metric):
            raise InvalidInputError(
                f"metric {metric!r} is not served here: this computation runs on inner products "
                f"and takes only {METRICS} (difference metrics such as 'manhattan' are served by "
                "gpuknn.kneighbors, the neighbour estimators and gpuknn.pairwise_distances)"
            )
        raise InvalidInputError(f"unknown metric {metric!r}; expected one of {METRICS}")
    return metric


@dataclass
class PreparedRows:
    """Rows ready for the score GEMM, plus what is needed to turn scores into distances."""

    rows: Any  # (n, d) or (n, d + 1) for the euclidean family
    sqnorm: Any | None  # (n,) squared norms of the original rows (queries, euclidean family)


def _unit_rows(X: Any, xp: Any, *, owned: bool = False) -> Any:
    """Rows scaled to unit norm; zero rows stay zero (documented distance 1, not NaN).

    ``owned``: X is a temporary of ours and may be divided in place (saves a tile-sized
    allocation and a pass).
    """
    # vecdot: one fused pass, no squared temporary (5x faster than vector_norm here)
    norms = xp.sqrt(xp.vecdot(X, X, axis=-1))[:, None]
    safe = xp.where(norms > 0, norms, xp.ones_like(norms))
    if owned:
        X /= safe
        return X
    return X / safe


def prepare_rows(X: Any, metric: str, *, role: str) -> PreparedRows:
    """Prepare rows once for :func:`scores` (``role`` is ``"query"`` or ``"reference"``).

    Parameters
    ----------
    X : array of shape (n, d), floating, finite
    metric : str
        One of :data:`METRICS`.
    role : {"query", "reference"}
        The euclidean family augments queries with a column of ones and references with
        ``-|r|²/2`` so that ``Q' @ R'.T = q·r - |r|²/2``.

    Returns
    -------
    PreparedRows
        ``rows`` of shape (n, d) or (n, d + 1); ``sqnorm`` (n,) for euclidean queries.

    Complexity: O(n d) time, one copy of X.
    """
    xp = array_namespace(X)
    check_metric(metric)
    if metric in ("euclidean", "sqeuclidean"):
        sq = xp.vecdot(X, X, axis=-1)
        if role == "query":
            extra = xp.ones((X.shape[0], 1), dtype=X.dtype, device=_dev(X))
            return PreparedRows(xp.concat([X, extra], axis=1), sq)
        return PreparedRows(xp.concat([X, -0.5 * sq[:, None]], axis=1), None)
    if metric == "cosine":
        return PreparedRows(_unit_rows(X, xp), None)
    if metric == "correlation":
        centred = X - xp.mean(X, axis=1, keepdims=True)
        return PreparedRows(_unit_rows(centred, xp, owned=True), None)
    return PreparedRows(X, None)  # inner


def _dev(x: Any) -> Any:
    from .._backend import device_of

    return device_of(x)


def scores_to_distances(S: Any, metric: str, q_sqnorm: Any = None) -> Any:
    """Turn scores (any shape ``(rows, m)``) into distances; see the module table.

    ``q_sqnorm`` (rows,) is needed for the euclidean family.
    """
    xp = array_namespace(S)
    if metric in ("euclidean", "sqeuclidean"):
        d2 = xp.clip(q_sqnorm[:, None] - 2.0 * S, min=0.0)
        return xp.sqrt(d2) if metric == "euclidean" else d2
    if metric in ("cosine", "correlation"):
        return xp.clip(1.0 - S, min=0.0, max=2.0)
    return S


def validate_pair(
    Q: Any,
    R: Any,
    *,
    names: tuple[str, str] = ("Q", "R"),
    dtype: Any = None,
    check_finite: bool = True,
    with_top: bool = False,
):
    """Validate two matrices for a distance computation and bring them to one float dtype.

    Returns ``(Q, R, xp)``. Raises :class:`InvalidInputError` on wrong ndim, empty input,
    a feature-count mismatch, and (unless ``check_finite=False``, for callers that check
    values themselves) non-finite values, naming the rows, or values whose squares overflow
    (:func:`gpuknn.ops.limits.check_magnitude`: one host sync for both). ``with_top``:
    return ``(Q, R, xp, top)`` with ``top = max(|Q|, |R|)`` (the magnitude the distance
    walk's underflow scaling needs: validated once, handed on).
    """
    xp = array_namespace(Q, R)
    Q = validate_matrix(Q, xp, name=names[0], dtype=dtype, check_finite=False)
    R = validate_matrix(R, xp, name=names[1], dtype=dtype, check_finite=False)
    if Q.shape[1] != R.shape[1]:
        raise InvalidInputError(
            f"{names[0]} has {Q.shape[1]} features but {names[1]} has {R.shape[1]} "
            f"(shapes {tuple(Q.shape)} and {tuple(R.shape)})"
        )
    if Q.dtype != R.dtype:
        common = xp.result_type(Q.dtype, R.dtype)
        Q, R = xp.astype(Q, common), xp.astype(R, common)
    top = None
    if check_finite:  # finite values whose squared norms overflow give inf distances: refused
        top = check_magnitude(Q, R, xp, names=names)
    return (Q, R, xp, top) if with_top else (Q, R, xp)


# ------------------------------------------------------------------ the distance contract
# Rows whose mean is the euclidean family's centre (an evenly spread sample, as the kNN
# engine's :class:`gpuknn.ops.search.Reference` takes it).
_CENTRE_SAMPLE = 4096
# Bytes of float64 rows gathered at once by the exact recomputation.
_EXACT_BYTES = 16 << 20
# Largest power of two applied in one multiplication (2**100 is a normal float32).
_POW2_STEP = 100
_EUCLID = ("euclidean", "sqeuclidean")


def sample_mean(X: Any, xp: Any) -> Any:
    """Float64 mean (d,) of an evenly spread sample of at most 4096 rows of X, summed in
    chunks of about 1 MiB of float64 (no float64 copy of the sample)."""
    n, d = int(X.shape[0]), int(X.shape[1])
    step = max(1, -(-n // _CENTRE_SAMPLE))
    idx = list(range(0, n, step))
    per = max(1, (1 << 17) // max(1, d)) * step  # rows of X spanned by one chunk
    total = None
    for s in range(0, n, per):
        part = xp.sum(xp.astype(X[s : min(s + per, n) : step, :], xp.float64), axis=0)
        total = part if total is None else total + part
    return total / len(idx)


def _times_pow2(x: Any, e: int) -> Any:
    """``x * 2**e``, in steps whose factors the dtype represents (exact unless the result
    itself under- or overflows)."""
    while e:
        step = max(-_POW2_STEP, min(_POW2_STEP, e))
        x = x * math.ldexp(1.0, step)
        e -= step
    return x


class DistanceWalk:
    """What every tile of one distance computation shares: the contract of the module.

    Every distance the library returns (:func:`pairwise_distances`,
    :func:`pairwise_distances_chunked`, the silhouette and the clustering indices built on
    them) comes from :meth:`tile`:

    * **Underflow scaling.** Data of magnitude ``top`` are multiplied by the power of two
      :func:`gpuknn.ops.limits.underflow_scale` gives (1 for ordinary data), so their squares
      stay normal; distances are scaled back (euclidean by ``1/scale``, sqeuclidean and
      inner by ``1/scale**2``, cosine and correlation unchanged).
    * **Translation invariance** (euclidean family). Rows are centred on ``c``, the float64
      mean of an evenly spread sample of at most 4096 rows of the *reference* side, rounded
      once to the dtype: any fixed vector leaves the distances unchanged, and one inside
      the data keeps the norms of the GEMM formula ``|q_c|² − 2 q_c·r_c + |r_c|²`` of the
      size of the distances, whatever the data's offset.
    * **A certified bound.** That formula errs, in any summation order, by at most
      ``e(q, r) = g (|q_c|² + |r_c|²) + t`` with ``g = (2 γ_{d+1}(u_GEMM) + 2 γ_d(u) + 6 u)
      (1 + 4 u)`` (u the dtype's unit roundoff, ``γ_n = n u / (1 − n u)``,
      :func:`gpuknn.ops.certify.gamma`) and ``t`` the subnormal slack of the GEMM.
      GEMMs run in full FP32 (:func:`gpuknn._delegation.fp32_matmul`), so the bound never
      assumes more bits than the product has.
    * **Exact recomputation.** Every entry whose bound exceeds ``tol`` times the squared
      distance it returns is recomputed from the rows' direct differences in float64
      (:func:`gpuknn._delegation.sqdist64`), gathered pair by pair, in chunks of at most
      16 MiB of rows. ``tol = max(sqrt(u), 32 g)``: every other squared distance has
      relative error at most ``tol`` (a euclidean distance at most that too), which is
      ``sqrt(u)`` up to ``d`` of about 30 features in float32 and 5·10⁵ in float64, and
      ``32 g ≈ 128 d u`` beyond (the worst-case bound grows with ``d``; a tighter ``tol``
      would recompute a large share of ordinary high-dimensional data). Zero and
      near-zero distances -- duplicates -- are always recomputed, so they are exact.
      Ordinary (centred) data have ``d² ≈ |q_c|² + |r_c|²`` and touch almost no entry.

    Cosine and correlation (unit rows, ``1 − s``) are scaled but not centred (cosine is not
    translation invariant; correlation centres each row on its own mean); their absolute
    error is bounded by ``γ_d(u_GEMM) + 2 γ_{d+2}(u) + 6 u`` (correlation: plus a term in
    ``|x| / |x − mean(x)|``) and entries within ``1/tol`` of that bound are recomputed
    in float64 as ``|â − b̂|² / 2`` from unit rows formed in float64 (no cancellation).
    ``inner`` returns the GEMM's products (scaled back): no recomputation.

    Parameters
    ----------
    R : array (n_r, d)
        The reference side (validated), whose sample mean is the centre.
    metric : str
    top : float or None
        ``max |X|`` over both sides (:func:`validate_pair` ``with_top``); None: not scaled.
    """

    def __init__(self, R: Any, metric: str, top: float | None):
        xp = array_namespace(R)
        self.xp, self.metric, self.dtype = xp, metric, R.dtype
        self.d = int(R.shape[1])
        self.device = _dev(R)
        scale = 1.0 if top is None else underflow_scale(top, R.dtype, xp)
        self.scale_exp = math.frexp(scale)[1] - 1  # scale = 2**scale_exp
        self.u = float(xp.finfo(R.dtype).eps) / 2
        self.centre = None
        if metric in _EUCLID:
            self.centre = xp.astype(_times_pow2(sample_mean(R, xp), self.scale_exp), R.dtype)
        self.rmax = 0.0  # largest reference |r_c|² (euclidean), or kappa (correlation)

    # -- preparation -------------------------------------------------------------------
    def scaled(self, X: Any) -> Any:
        """X times the underflow scale (X itself when it is 1)."""
        return _times_pow2(X, self.scale_exp) if self.scale_exp else X

    def prepare(self, X: Any, role: str) -> PreparedRows:
        """Rows of a block ready for the GEMM (see the module table), centred and scaled.

        Euclidean family: ``[x_c, 1]`` (query) or ``[x_c, -|x_c|²/2]`` (reference), and
        ``sqnorm = |x_c|²`` for both; cosine/correlation: unit rows, ``sqnorm`` = the row's
        ``|x| / |x − mean(x)|`` (correlation, for its bound) or None; inner: the rows.
        """
        xp, metric = self.xp, self.metric
        X = self.scaled(X)
        if metric in _EUCLID:
            xc = X - self.centre[None, :]
            sq = xp.vecdot(xc, xc, axis=-1)
            if role == "query":
                last = xp.ones((X.shape[0], 1), dtype=X.dtype, device=self.device)
            else:
                last = -0.5 * sq[:, None]
            return PreparedRows(xp.concat([xc, last], axis=1), sq)
        if metric == "cosine":
            return PreparedRows(_unit_rows(X, xp), None)
        if metric == "correlation":
            centred = X - xp.mean(X, axis=1, keepdims=True)
            cn = xp.sqrt(xp.vecdot(centred, centred, axis=-1))
            xn = xp.sqrt(xp.vecdot(X, X, axis=-1))
            kappa = xp.where(cn > 0, xn / xp.where(cn > 0, cn, xp.ones_like(cn)), xp.zeros_like(cn))
            return PreparedRows(_unit_rows(centred, xp, owned=True), kappa)
        return PreparedRows(X, None)

    def note_rows(self, X: Any, rows: int) -> None:
        """Take the largest reference statistic of X (blocks of ``rows``) before a walk
        that prepares its references block by block (the per-row screen needs it)."""
        if self.metric not in (*_EUCLID, "correlation"):
            return
        n, rows = int(X.shape[0]), max(1, rows)
        for s in range(0, n, rows):
            self.reference(X[s : min(s + rows, n), :])

    def reference(self, R: Any) -> PreparedRows:
        """:meth:`prepare` of reference rows, remembering their largest norm (the bounds)."""
        rp = self.prepare(R, "reference")
        if rp.sqnorm is not None and rp.sqnorm.shape[0]:
            self.rmax = max(self.rmax, float(xp_max(rp.sqnorm, self.xp)))
        return rp

    # -- one tile ------------------------------------------------------------------------
    def tile(
        self, qp: PreparedRows, rp: PreparedRows, RT: Any, Xq: Any, Xr: Any, *, diagonal: int | None = None
    ) -> Any:
        """Distances ``(rows, cols)`` of prepared queries ``qp`` and references ``rp``
        (``RT`` = ``rp.rows.T``); ``Xq``/``Xr`` are the raw rows (for recomputation).

        ``diagonal``: the tile is part of a self-distance matrix whose query rows start at
        that column of the references: their own column gets exactly 0.
        """
        xp, metric = self.xp, self.metric
        with fp32_matmul(xp, self.device):
            S = qp.rows @ RT
            u_g, eta = matmul_unit_roundoff(S.dtype, xp, self.device)
        if metric == "inner":
            return _times_pow2(S, -2 * self.scale_exp) if self.scale_exp else S
        u, d = self.u, self.d
        if metric in _EUCLID:
            g = (2 * gamma(d + 1, u_g) + 2 * gamma(d, u) + 6 * u) * (1 + 4 * u)
            slack = 8 * (d + 2) * eta
            # In place on the GEMM's own result: one tile-sized temporary (the clip's), not
            # three, so that the tiles the callers plan fit their working memory.
            S *= -2.0
            S += qp.sqnorm[:, None]
            D = xp.clip(S, min=0.0)
        else:
            g = (gamma(d, u_g) + 2 * gamma(d + 2, u) + 6 * u) * (1 + 4 * u)
            slack = 4 * (d + 2) * eta
            S *= -1.0
            S += 1.0
            D = xp.clip(S, min=0.0, max=2.0)
        del S
        if diagonal is not None:
            D = _zero_self(D, diagonal, xp)
        k = min(g / math.sqrt(u), 1.0 / 32)  # g / tol, tol = max(sqrt(u), 32 g)
        D = self._certify(D, qp, rp, Xq, Xr, g, slack, k, diagonal)
        if metric == "euclidean":
            D = xp.sqrt(D)
            return _times_pow2(D, -self.scale_exp) if self.scale_exp else D
        if metric == "sqeuclidean" and self.scale_exp:
            return _times_pow2(D, -2 * self.scale_exp)
        return D

    def _bound(self, qs: Any, rs: Any, g: float, slack: float) -> Any:
        """The certified error ``e`` (tile units) of entries with row statistics qs, rs
        (broadcasting): euclidean ``g (|q_c|² + |r_c|²) + t``; cosine ``g + t``;
        correlation ``g + 4 u (κ_q + κ_r) + t`` (each row centred on its mean rounded to the
        dtype is off by at most ``u κ`` of its norm)."""
        if self.metric in _EUCLID:
            return (qs + rs) * g + slack
        if self.metric == "correlation":
            return (qs + rs) * (4 * self.u * (1 + g)) + (g + slack)
        return g + slack + 0 * (qs + rs)

    def _certify(self, D, qp, rp, Xq, Xr, g, slack, k, diagonal):
        """D with every entry whose bound exceeds ``tol · D`` recomputed exactly."""
        xp = self.xp
        qs = qp.sqnorm if qp.sqnorm is not None else xp.zeros((D.shape[0],), dtype=D.dtype, device=self.device)
        rs = rp.sqnorm if rp.sqnorm is not None else xp.zeros((D.shape[1],), dtype=D.dtype, device=self.device)
        # A cheap per-row screen first (one compare of the tile): the bound with the largest
        # reference statistic is at least every entry's own.
        row_bound = self._bound(qs, float(self.rmax), g, slack) * (k / g)
        screen = D < row_bound[:, None]
        if diagonal is not None:
            screen = _zero_self_mask(screen, diagonal, xp)
        native = is_numpy_namespace(xp) or is_torch_namespace(xp) or is_cupy_namespace(xp)
        if native:
            # Only the rows the screen caught (few, on ordinary data) get their own bounds.
            rows = xp.nonzero(xp.any(screen, axis=1))[0]
            del screen
            if not rows.shape[0]:
                return D
            sub = xp.take(D, rows, axis=0)
            T = self._bound(xp.take(qs, rows)[:, None], rs[None, :], g, slack)
            T *= k / g  # bound / tol
            keep = sub < T
            if diagonal is not None:
                keep = keep & ((rows[:, None] + diagonal) != xp.arange(D.shape[1], device=self.device)[None, :])
            del T, sub
            r_sub, c = xp.nonzero(keep)
            if not r_sub.shape[0]:
                return D
            r = xp.take(rows, r_sub)
            D[r, c] = xp.astype(self._exact(Xq, Xr, r, c), D.dtype)  # D is the walk's own array
            return D
        if not bool(xp.any(screen)):
            return D
        # Generic namespaces (no integer scatter): the whole tile's bounds and mask.
        T = self._bound(qs[:, None], rs[None, :], g, slack)
        T *= k / g  # bound / tol
        flag = screen & (D < T)
        del T, screen
        r, c = xp.nonzero(flag)
        if not r.shape[0]:
            return D
        exact = xp.astype(self._exact(Xq, Xr, r, c), D.dtype)
        # Each flagged entry's rank among the flagged ones (row-major) picks its value.
        flat = xp.reshape(flag, (-1,))
        pos = xp.clip(xp.cumulative_sum(xp.astype(flat, xp.int64)) - 1, min=0)
        return xp.reshape(xp.where(flat, xp.take(exact, pos), xp.reshape(D, (-1,))), D.shape)

    def _exact(self, Xq: Any, Xr: Any, r: Any, c: Any) -> Any:
        """Float64 values (tile units: squared distances or ``1 − cos``) of the pairs
        ``(Xq[r], Xr[c])``, from direct differences, in chunks of gathered rows."""
        xp, d = self.xp, self.d
        per = max(1, _EXACT_BYTES // (3 * 8 * d))
        out = []
        m = int(r.shape[0])
        for s in range(0, m, per):
            a = self.scaled(xp.astype(take_rows(Xq, r[s : min(s + per, m)]), xp.float64))
            b = self.scaled(xp.astype(take_rows(Xr, c[s : min(s + per, m)]), xp.float64))
            if self.metric in _EUCLID:
                out.append(sqdist64(a, b))
                continue
            if self.metric == "correlation":
                a = a - xp.mean(a, axis=1, keepdims=True)
                b = b - xp.mean(b, axis=1, keepdims=True)
            zero = (xp.sum(a * a, axis=1) == 0) | (xp.sum(b * b, axis=1) == 0)
            v = sqdist64(_unit_rows(a, xp), _unit_rows(b, xp)) * 0.5
            out.append(xp.clip(xp.where(zero, xp.ones_like(v), v), min=0.0, max=2.0))
        return out[0] if len(out) == 1 else xp.concat(out)


def xp_max(v: Any, xp: Any) -> float:
    """``max(v)`` as a Python float (one transfer)."""
    return float(xp.max(v))


def _zero_self_mask(M: Any, start: int, xp: Any) -> Any:
    """A boolean tile with its self-distance diagonal (rows from ``start``) cleared."""
    rows, cols = M.shape
    r = xp.arange(rows, device=_dev(M))[:, None] + start
    cidx = xp.arange(cols, device=_dev(M))[None, :]
    return M & (r != cidx)


@on_input_device
def pairwise_distances(X: Any, Y: Any = None, *, metric: str = "euclidean", p: float | None = None) -> Any:
    """Full distance matrix between the rows of X and Y (Y defaults to X).

    Parameters
    ----------
    X : array of shape (n_x, d)
    Y : array of shape (n_y, d), optional
    metric : str
        One of :data:`METRICS` (``inner`` returns the inner products), or a difference
        metric (``manhattan``/``cityblock``/``l1``, ``chebyshev``/``infinity``,
        ``minkowski`` with ``p``, ``canberra``, ``braycurtis``, ``hamming``; ``l2`` is
        euclidean): those are float64 values of every pair from the differences
        (:mod:`gpuknn.ops.differences`), exact and the same bits on every backend, in X's
        dtype.
    p : float, optional
        Minkowski's p (default 2).

    Returns
    -------
    D : array of shape (n_x, n_y), in X's namespace.

    Notes
    -----
    Materialises the whole matrix: use :func:`pairwise_distances_chunked` for large inputs.
    Complexity O(n_x n_y d), one GEMM.

    The distances follow :class:`DistanceWalk`'s contract: the euclidean family is centred
    (translation invariant); each squared distance (cosine/correlation: ``1 − cos``) has
    relative error at most ``tol = max(sqrt(u), 32 g)`` (g ≈ 4 d u, u the dtype's unit
    roundoff), entries the certified bound cannot vouch for being recomputed exactly in
    float64 (zeros of duplicates and of the diagonal are exact); tiny data are rescaled by
    a power of two (values whose squares overflow are refused).

    Examples
    --------
    >>> import numpy as np
    >>> pairwise_distances(np.array([[0.0, 0.0], [3.0, 4.0]]))
    array([[0., 5.],
           [5., 0.]])
    """
    blocks = [D for _, D in pairwise_distances_chunked(X, Y, metric=metric, p=p, working_memory=None)]
    xp = array_namespace(blocks[0])
    return blocks[0] if len(blocks) == 1 else xp.concat(blocks, axis=0)


@on_input_device
def pairwise_distances_chunked(
    X: Any, Y: Any = None, *, metric: str = "euclidean", p: float | None = None, working_memory: float | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(start_row, D_block)`` row blocks of the X-Y distance matrix.

    Each block has shape ``(rows, n_y)`` and is one GEMM, with :func:`pairwise_distances`'s
    contract (centring, certified relative error, exact recomputation of the few entries
    the bound cannot vouch for, rescaling of tiny data); the values do not depend on
    ``working_memory`` beyond the GEMM's own rounding.

    Parameters
    ----------
    X : array of shape (n_x, d)
    Y : array of shape (n_y, d), optional
        Default X (the diagonal is then exactly 0).
    metric : str
        As for :func:`pairwise_distances`.
    p : float, optional
        Minkowski's p (default 2).
    working_memory : float, optional
        MiB (as in scikit-learn; fractions allowed) for everything the walk holds: the
        prepared rows of Y (one copy, made once), and per block the prepared rows of X's
        block, the block and one temporary of its size -- at least one row whatever the
        budget. Default :func:`gpuknn._memory.default_working_memory` (256 MiB on the host,
        env ``GPUKNN_WORKING_MEMORY``).

    Raises
    ------
    InvalidInputError
        Bad input (as :func:`pairwise_distances`), unknown metric, or a ``working_memory``
        that is not a positive number of MiB (raised at the first block).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(6.0).reshape(3, 2)
    >>> [(s, D.shape) for s, D in pairwise_distances_chunked(X, working_memory=1)]
    [(0, (3, 3))]
    """
    metric = resolve_metric(metric, p)
    X, Yv, xp, top = validate_pair(X, X if Y is None else Y, names=("X", "Y"), with_top=True)
    budget = None if working_memory is None else check_working_memory(working_memory, xp)  # bytes
    if is_difference(metric):
        # Exact values of every pair (the diagonal of X with itself is 0 by construction).
        wm = check_working_memory(None, xp) if budget is None else budget
        for start, D in difference_distances(X, Yv, metric, budget=wm):
            yield start, xp.astype(D, X.dtype)
        return
    walk = DistanceWalk(Yv, metric, top)
    rp = walk.reference(Yv)
    if budget is None:
        budget = check_working_memory(None, xp)
    itemsize = 8 if X.dtype == xp.float64 else 4
    left = budget - rp.rows.shape[0] * rp.rows.shape[1] * itemsize
    per_row = (Yv.shape[0] * 2 + X.shape[1] + 2) * itemsize
    rows = max(1, min(X.shape[0], left // per_row))
    RT = rp.rows.T
    diag = Y is None and metric != "inner"
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        # Query rows are prepared block by block (preparation is row-wise: the same rows as
        # preparing all of X at once, without a second copy of X).
        Xb = X[start:stop, :]
        qp = walk.prepare(Xb, "query")
        yield start, walk.tile(qp, rp, RT, Xb, Yv, diagonal=start if diag else None)


def _zero_self(D: Any, start: int, xp: Any) -> Any:
    """Exact zeros on the diagonal of a self-distance block (GEMM rounding leaves ~1e-8)."""
    rows, cols = D.shape
    r = xp.arange(rows, device=_dev(D))[:, None] + start
    c = xp.arange(cols, device=_dev(D))[None, :]
    return xp.where(r == c, xp.zeros_like(D), D)
