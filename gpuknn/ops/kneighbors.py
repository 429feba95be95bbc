"""Exact k-nearest-neighbour search: the tile nominates, an exact pass decides.

:func:`kneighbors` runs in three steps per query chunk, under a memory budget:

1. **Tile pass** (:mod:`gpuknn.ops.search`): blocked GEMMs of prepared rows (faiss's
   scheme) keep each query's ``kk = k + margin`` best *tile scores*. Euclidean rows are
   centred on the reference mean first (translation invariance: a large common offset
   costs no digits).
2. **Exact pass**: a certified bound on the tile's rounding (:mod:`gpuknn.ops.certify`)
   tells which candidates the tile cannot order -- near-tie groups, and the k-th place's
   group -- and those get keys recomputed pair by pair in float64 from the caller's rows
   (:mod:`gpuknn.ops.exact`), ordered by (key, index) (:mod:`gpuknn.ops.groups`; float64
   input: every candidate, :mod:`gpuknn.ops.rerank`). The bound also proves, for almost
   every row, that no reference outside the list can enter the top k.
3. **Second pass** for the rows it cannot prove (exact duplicates or ties around the k-th
   neighbour, say): every reference whose float64 tile score comes within its bound of the
   k-th exact key is collected and decided exactly.

So the neighbour lists -- which neighbours, in which order -- are the same with any
``working_memory``, BLAS thread count or backend: the top k by exact distance, equal
distances to the lower index, up to distances that differ by less than their float64
rounding. Distances are exact for float64 input; for float32 input they are exact for near
ties and near duplicates and within the tile's certified bound elsewhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._backend import array_namespace, check_int, device_of, validate_matrix
from .._delegation import fp32_matmul, on_input_device
from .._memory import is_out_of_memory, preferred_tile_bytes
from ..errors import InvalidInputError
from .certify import reference_bound
from .differences import DifferenceReference, dense_search
from .distance import validate_pair
from .exact import distance_interval, exact_keys, keys_to_distances
from .groups import rerank_groups
from .limits import (
    check_magnitude,
    check_values,
    check_working_memory,
    raise_to_minimum,
    underflow_scale,
    warn_many_tiles,
)
from .metricspec import is_difference, resolve_metric
from .rerank import rerank
from .rerank import second_pass as _second_pass  # a module global: tests count its calls
from .rows import replace_rows
from .search import (
    Reference,
    TilePlan,
    nominate,
    plan_tiles,
    prep_rows,
    prepare_queries,
)

__all__ = [
    "PreparedReference",
    "Neighbors",
    "kneighbors",
    "search",
    "search_validated",
    "dense_neighbors",
    "reference_for",
    "kneighbors_keys",
    "plan_tiles",
    "candidate_margin",
    "drop_self",
    "tile_dtype_of",
]

# Float64 searches at least this large (queries x references x row width) run their tile
# pass in float32 (the exact pass restores float64); below it one float64 pass is cheaper.
_SCREEN_MIN_WORK = 1 << 27
# Largest |value| a float32 tile of float64 input may see: squares stay far inside range.
_FLOAT32_SAFE = 1e15
_EUCLID = ("euclidean", "sqeuclidean")


def candidate_margin(k: int) -> int:
    """Candidates kept beyond k by the tile pass, so that the k-th and the last differ."""
    return max(8, k // 16)


class PreparedReference:
    """Reference rows validated and prepared once, for repeated searches against them.

    Preparing 60 000 x 784 rows (statistics, centring, normalising) costs about as much as
    a 300-query search, so estimators build this at ``fit`` and pass it to
    :func:`kneighbors` in place of ``R``.

    Parameters
    ----------
    R : array of shape (n_ref, d)
    metric : str
        Any name :func:`gpuknn.ops.metricspec.resolve_metric` knows (aliases resolved;
        ``metric`` holds the engine's name).
    name : str, default "R"
        How messages about the rows name them (an estimator passes ``"X"``).
    magnitude : float, optional
        ``max |R|`` when the caller has validated R already (:func:`gpuknn.ops.limits.check_values`);
        otherwise R is checked here (finite, squares in range).
    working_memory : float, optional
        MiB, as for :func:`kneighbors`: the rows are prepared in blocks of a quarter of it
        (the whole reference at once on a GPU).
    p : float, optional
        Minkowski's p (with ``metric="minkowski"``; default 2).

    Examples
    --------
    >>> import numpy as np
    >>> ref = PreparedReference(np.array([[0.0], [1.0], [2.0]]), metric="euclidean")
    >>> kneighbors(np.array([[1.9]]), ref, 1, metric="euclidean")[1]
    array([[2]])
    """

    def __init__(
        self,
        R: Any,
        *,
        metric: str = "euclidean",
        name: str = "R",
        magnitude: float | None = None,
        working_memory: float | None = None,
        p: float | None = None,
    ):
        metric = resolve_metric(metric, p)
        xp = array_namespace(R)
        data = validate_matrix(R, xp, name=name, check_finite=False)
        # An estimator's fit has checked the rows already and passes their magnitude on.
        self.magnitude = check_values(data, xp, name=name) if magnitude is None else float(magnitude)
        self.metric = metric
        # Rows are prepared in blocks of a quarter of the budget (as a search would).
        budget = check_working_memory(working_memory, xp, device_of(data))
        if is_difference(metric):  # nothing to prepare: the pair values use the rows as they are
            self.reference = DifferenceReference(data, metric)
        else:
            self.reference = Reference(data, metric, keep_rows=True, prep_bytes=budget // 4)

    @property
    def data(self) -> Any:
        """The reference rows as validated (the caller's array when it was floating)."""
        return self.reference.data

    @property
    def shape(self) -> tuple[int, int]:
        return self.reference.shape

    @property
    def dtype(self) -> Any:
        return self.reference.dtype


@on_input_device
def kneighbors(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    p: float | None = None,
    working_memory: float | None = None,
    return_distance: bool = True,
):
    """Exact k nearest references of every query, tiled under a memory budget.

    Parameters
    ----------
    Q : array of shape (n_queries, d)
    R : array of shape (n_ref, d), or a :class:`PreparedReference`
        Same namespace as Q. Integer input is computed in float64; float32 stays float32.
        With a :class:`PreparedReference` (of the same metric), Q is cast to its dtype.
    k : int
        Number of neighbours, ``1 <= k <= n_ref``.
    metric : str, default "euclidean"
        Inner-product metrics ``"euclidean"`` (alias ``"l2"``), ``"sqeuclidean"``,
        ``"cosine"``, ``"correlation"``, ``"inner"`` (:mod:`gpuknn.ops.exact`; for
        ``"inner"`` the returned "distances" are the inner products, sorted from largest
        (closest) to smallest); difference metrics ``"manhattan"`` (``"cityblock"``,
        ``"l1"``), ``"chebyshev"`` (``"infinity"``), ``"minkowski"`` (with ``p``),
        ``"canberra"``, ``"braycurtis"``, ``"hamming"`` (:mod:`gpuknn.ops.differences`:
        float64 values of every pair, exact for float32 input too).
    p : float, optional
        Minkowski's p, ``0 < p <= inf`` (default 2): 1, 2 and inf run manhattan, euclidean
        and chebyshev.
    working_memory : float, optional
        MiB (as in scikit-learn; fractions allowed) for the prepared query chunk, the
        prepared reference block, the score tile with its selection scratch and the exact
        pass. Default: half the free GPU memory under CuPy, 256 MiB on the host (env
        ``GPUKNN_WORKING_MEMORY``, in MiB, replaces the host default and caps the GPU's:
        processes sharing one GPU). On the
        host the score tile (scores alone) is further capped at a cache-friendly 18 MiB.
    return_distance : bool
        Return ``(distances, indices)`` (default) or only ``indices``.

    Returns
    -------
    distances : array of shape (n_queries, k), ascending (``inner``: descending), Q's dtype
        Float64 input: the exact distances (float64, from the input rows). Float32 input:
        exact for near ties and near duplicates, elsewhere the tile's, within its
        certified bound (:func:`search` reports it per row).
    indices : int64 array of shape (n_queries, k)
        **Ties:** equal distances are ordered by lower reference index, on every backend,
        tiling and thread count (see the module docstring for what "equal" means).

    Raises
    ------
    InvalidInputError
        NaN/inf (rows named), values whose squared norms would overflow the dtype, k out of
        range, feature mismatch, empty or non-2-D input, unknown metric. Nothing is computed
        before validation passes.

    Notes
    -----
    Complexity O(n_queries · n_ref · d) in GEMMs, one compare and one ``nonzero`` per score
    tile, O(n_queries · (k + margin) · d) float64 work in the exact pass, and a second
    tile pass over the references for the rows the certificate cannot settle (usually none).
    Extra memory: ``working_memory`` + O(n_queries · k).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> kneighbors(np.array([[1.2]]), R, 2)
    (array([[0.2, 0.8]]), array([[1, 2]]))
    """
    nb = search(Q, R, k, metric=metric, p=p, working_memory=working_memory)
    if not return_distance:
        return nb.indices
    return nb.output_distances(), nb.indices


class Neighbors(NamedTuple):
    """A search's result with what exact decisions on its distances need.

    Attributes
    ----------
    keys : float64 array (n, k)
        Keys (:mod:`gpuknn.ops.exact`), descending; exact, or within ``err`` of exact.
    indices : int64 array (n, k)
    err : float64 array (n,)
        Bound on each row's key errors (0 where every key is exact).
    metric : str
    dtype : the queries' dtype (that of :meth:`output_distances`)
    refine : callable(rows) -> float64 array (len(rows), k)
        The exact distances of the given rows' neighbours, ascending (rank by rank), in
        the caller's units.
    scale : float, default 1.0
        The power of two the search multiplied both inputs by (tiny data whose squares
        would underflow: :func:`gpuknn.ops.limits.underflow_scale`); ``keys`` and ``err``
        are in those units, :attr:`distances`, :meth:`output_distances` and
        :meth:`vote_args` in the caller's.
    """

    keys: Any
    indices: Any
    err: Any
    metric: str
    dtype: Any
    refine: Any
    scale: float = 1.0

    @property
    def distances(self) -> Any:
        """Float64 distances of the keys, in the caller's units."""
        return unscale_distances(keys_to_distances(self.keys, self.metric), self.metric, self.scale)

    def output_distances(self) -> Any:
        """Distances in the queries' dtype, as :func:`kneighbors` returns them."""
        xp = array_namespace(self.keys)
        return xp.astype(self.distances, self.dtype)

    def vote_args(self) -> dict:
        """Keyword arguments of :func:`gpuknn.votes_for_many_k` for exact weighted votes."""
        xp = array_namespace(self.keys)
        bounds = None
        if bool(xp.any(self.err > 0)):
            bounds = tuple(
                unscale_distances(b, self.metric, self.scale)
                for b in distance_interval(self.keys, self.err, self.metric)
            )
        return {"distances": self.distances, "bounds": bounds, "refine": self.refine}


def unscale_distances(d: Any, metric: str, scale: float) -> Any:
    """Distances ``d`` of inputs multiplied by ``scale`` back in the inputs' own units:
    euclidean ``d / s``, sqeuclidean and inner ``d / s / s`` (two steps: ``s**2`` may
    overflow), cosine and correlation unchanged (scale invariant)."""
    if scale == 1.0 or metric in ("cosine", "correlation"):
        return d
    d = d / scale
    return d if metric == "euclidean" else d / scale


def search(
    Q: Any,
    R: Any,
    k: int,
    *,
    metric: str = "euclidean",
    p: float | None = None,
    working_memory: float | None = None,
    labels: Any = None,
    names: tuple[str, str] = ("Q", "R"),
) -> Neighbors:
    """:func:`kneighbors` returning a :class:`Neighbors` (for exact decisions downstream).

    ``working_memory``: MiB, as for :func:`kneighbors` (converted to bytes here, once).

    ``labels`` (one int label per reference): the caller reads only the neighbours' labels
    and certified distances (votes), so neighbours of one label may stay in tile order
    among themselves (:func:`gpuknn.ops.groups.rerank_groups`). ``names``: how messages name
    the queries and the references (the caller's argument names, e.g. ``("X_test", "X")``).
    ``metric`` and ``p`` as for :func:`kneighbors`.
    """
    metric = resolve_metric(metric, p)
    Q, ref, magnitude, xp = resolve_inputs(Q, R, metric, names=names)
    k = check_int(k, name="k", low=1, high=ref.shape[0])
    wm = check_working_memory(working_memory, xp, device_of(Q))
    return search_validated(Q, ref, k, magnitude=magnitude, working_memory=wm, labels=labels)


def search_validated(
    Q: Any,
    ref: Any,
    k: int,
    *,
    magnitude: float,
    working_memory: int,
    labels: Any = None,
    nominated: Any = None,
) -> Neighbors:
    """:func:`search`'s engine for input validated at a public boundary: it trusts its caller.

    ``Q`` validated (finite, in ``ref``'s dtype, namespace and device), ``ref`` a
    :class:`~gpuknn.ops.search.Reference` or :class:`PreparedReference` of the metric wanted,
    ``1 <= k <= n_ref``, ``magnitude`` the largest ``|value|`` of both (what
    :func:`gpuknn.ops.limits.check_values` returned), ``working_memory`` in bytes. Nothing
    is checked or scanned again: the estimators, the cross-validation and the sweeps call
    this after their one check at the boundary.

    ``nominated``: the tile pass's lists ``(scores, index, alone)``, when the caller has them
    already (:func:`gpuknn.ops.folds.fold_lists`: every fold's lists from one pass over the
    pairs of folds); the search then skips its tile pass (:func:`kneighbors_keys`: rows whose
    tile bound is 0 still get one of their own, and rows the certificate cannot settle the
    second pass).
    """
    if isinstance(ref, PreparedReference):
        ref = ref.reference
    xp = array_namespace(Q)
    metric = ref.metric
    if isinstance(ref, DifferenceReference):
        return dense_neighbors(Q, ref, k, working_memory)
    scale = underflow_scale(magnitude, Q.dtype, xp)
    if scale != 1.0:
        # Tiny data (squares below the normal range: cosine of rows of 1e-300 saw zero rows,
        # euclidean distances all tied, issue 32): both inputs times the same power of two
        # (exact), distances scaled back. Copies, and a reference prepared for this search
        # only, where the data need it.
        Q, ref = Q * scale, Reference(ref.data * scale, metric, keep_rows=False, prep_bytes=None)
        magnitude *= scale
        nominated = None  # lists of the unscaled rows' tiles: this search makes its own
    keys, idx, err = kneighbors_keys(
        Q, ref, k, working_memory=working_memory, magnitude=magnitude, labels=labels, nominated=nominated
    )

    def refine(rows: Any) -> Any:
        exact = exact_keys(xp.take(Q, rows, axis=0), ref.data, xp.take(idx, rows, axis=0), metric, ref.stats)
        # Sorted: with labels, a one-label group may be listed in tile order, and the
        # distance of rank j is what a vote at rank j needs.
        d = keys_to_distances(xp.sort(exact, axis=1, descending=True), metric)
        return unscale_distances(d, metric, scale)

    return Neighbors(keys, idx, err, metric, Q.dtype, refine, scale)


def dense_neighbors(Q: Any, ref: Any, k: int, working_memory: int) -> Neighbors:
    """The search of the difference metrics (``ref`` a :class:`DifferenceReference`) and of
    the host metrics (a :class:`gpuknn.ops.hostmetric.HostReference`): exact values of
    every pair (:func:`gpuknn.ops.differences.dense_search`), so the keys (minus the
    distances) are exact and ``err`` is 0. No rescaling: no squares (Minkowski's powers of
    tiny data underflow, as SciPy's do). ``working_memory`` in bytes."""
    xp = array_namespace(Q)
    s, idx = dense_search(Q, ref, k, budget=working_memory)
    keys = -ref.distances(s)

    def refine(rows: Any) -> Any:
        return -xp.take(keys, rows, axis=0)  # exact and sorted already

    err = xp.zeros(keys.shape[0], dtype=xp.float64, device=device_of(Q))
    return Neighbors(keys, idx, err, ref.metric, Q.dtype, refine)


def reference_for(
    R: Any, metric: str, *, centre: Any = None, summary: tuple | None = None
) -> Reference | DifferenceReference:
    """The reference a search of ``metric`` (an engine name: :func:`resolve_metric`'s) takes
    for validated rows R, prepared block by block at each search (``keep_rows=False``);
    ``centre`` and ``summary``: the euclidean translation and the rows' statistics when
    the caller has them (:class:`~gpuknn.ops.search.Reference`)."""
    if is_difference(metric):
        return DifferenceReference(R, metric)
    return Reference(R, metric, keep_rows=False, centre=centre, summary=summary)


def resolve_inputs(
    Q: Any, R: Any, metric: str, *, names: tuple[str, str] = ("Q", "R")
) -> tuple[Any, Reference, float, Any]:
    """Validate ``(Q, R)`` (R an array or a :class:`PreparedReference` of ``metric``).

    Returns ``(Q, reference, magnitude, xp)``: Q in the common float dtype, a
    :class:`~gpuknn.ops.search.Reference`, the largest |value| of both, the namespace.
    """
    qn, rn = names
    metric = resolve_metric(metric)  # callers that carry a user's name (partial searches)
    if isinstance(R, PreparedReference):
        if R.metric != metric:
            raise InvalidInputError(f"{rn} was prepared for metric {R.metric!r}, not {metric!r}")
        xp = array_namespace(Q, R.data)
        Q = validate_matrix(Q, xp, name=qn, dtype=R.dtype, check_finite=False)
        if Q.shape[1] != R.shape[1]:
            raise InvalidInputError(
                f"{qn} has {Q.shape[1]} features but {rn} has {R.shape[1]} (shapes {tuple(Q.shape)} and {R.shape})"
            )
        return Q, R.reference, max(R.magnitude, check_magnitude(Q, None, xp, names=names)), xp
    Q, R, xp = validate_pair(Q, R, names=names, check_finite=False)
    magnitude = check_magnitude(Q, R, xp, names=names)
    return Q, reference_for(R, metric), magnitude, xp


def kneighbors_keys(
    Q: Any,
    ref: Reference,
    k: int,
    *,
    working_memory: int,
    magnitude: float,
    exact_all: bool = False,
    labels: Any = None,
    nominated: Any = None,
) -> tuple[Any, Any, Any]:
    """Keys (float64, descending), indices (n_queries, k) and key errors of validated input.

    The engine of :func:`kneighbors` (and of :func:`gpuknn.ops.partial.kneighbors_partial`):
    plans the tiles, retries with halved tiles on an out-of-memory error. The order is the
    exact one always; ``err`` (n_queries,) bounds ``|key - exact key|`` of the entries
    whose order the tile settled (:mod:`gpuknn.ops.groups`; float32 input), 0 where every
    key is exact: float64 input (exact keys cost little beside its float64 or screened
    tiles), and every row with ``exact_all``. ``working_memory`` here is in **bytes** (from
    :func:`gpuknn.ops.limits.check_working_memory`), not the public MiB. ``nominated``: the
    tile pass's lists ``(scores, index, alone)``, (n_queries, kk) in the tile dtype and
    int64, as :func:`~gpuknn.ops.search.nominate` would return them against ``ref`` (any
    order of equal scores; :func:`gpuknn.ops.folds.fold_lists`), in place of the tile pass;
    ``alone`` False promises that no query row has a tile bound of 0 (else those rows get
    a tile pass of their own: their tile order is their answer).
    """
    xp = array_namespace(Q)
    n_q, n_ref = Q.shape[0], ref.shape[0]
    tile_dtype = tile_dtype_of(Q.dtype, n_q * n_ref * ref.width, magnitude, xp)
    kk = min(n_ref, k + candidate_margin(k))
    itemsize = 8 if tile_dtype == xp.float64 else 4
    working_memory = raise_to_minimum(working_memory, n_q, kk, ref.width)
    # A quarter of the budget is left to the float64 row preparation and the exact pass.
    cap = preferred_tile_bytes(xp)
    plan = plan_tiles(n_q, n_ref, ref.width, itemsize, max(1, working_memory * 3 // 4), tile_bytes=cap)
    # That quarter sizes the blocks of the row preparation and of the exact pass: on a GPU
    # the whole reference and every candidate at once (launches and syncs per call, not per
    # 1 024 rows); on the host cache-sized blocks, as for the score tile (larger ones only
    # add memory traffic there).
    block_bytes = working_memory // 4 if cap is None else min(working_memory // 4, cap)
    ref.prep_rows = prep_rows(n_ref, ref.shape[1], block_bytes)
    warn_many_tiles(plan, n_q, n_ref, working_memory)
    # Full-FP32 screening whatever the user's TF32 setting: under TF32 the certified bound
    # settles no row and every row would take the float64 second pass. The bound is read
    # inside the scope (reference_bound), so it is the one of the GEMMs that run.
    with fp32_matmul(xp, device_of(Q)):
        return _search_retrying(Q, ref, k, kk, plan, tile_dtype, xp, exact_all, labels, max(1, block_bytes), nominated)


def _search_retrying(Q, ref, k, kk, plan, tile_dtype, xp, exact_all, labels, exact_bytes, nominated):
    """:func:`_search` with the plan's tiles halved after each out-of-memory error."""
    while True:
        try:
            return _search(
                Q,
                ref,
                k,
                kk,
                plan,
                tile_dtype,
                xp,
                exact_all=exact_all or Q.dtype == xp.float64,
                labels=labels,
                exact_bytes=exact_bytes,
                nominated=nominated,
            )
        except Exception as exc:  # noqa: BLE001 - only allocation failures are retried
            if not is_out_of_memory(exc) or (plan.rows == 1 and plan.cols == 1):
                raise
            if plan.rows > 1:
                rows = max(1, plan.rows // 2)
                plan = TilePlan(max(rows, plan.query_chunk // 2), rows, plan.cols)
            else:
                plan = TilePlan(plan.query_chunk, 1, max(1, plan.cols // 2))


def tile_dtype_of(dtype: Any, work: int, magnitude: float, xp: Any) -> Any:
    """The tile dtype of a search of input ``dtype`` costing ``work`` (queries x references
    x row width) multiply-adds: float32 for float32 input, and for large float64 input when
    float32 tiles are sound (values below ``1e15``)."""
    if dtype == xp.float32:
        return xp.float32
    big = work >= _SCREEN_MIN_WORK
    return xp.float32 if big and magnitude < _FLOAT32_SAFE else xp.float64


def _search(Q: Any, ref: Reference, k: int, kk: int, plan: TilePlan, dtype: Any, xp: Any, **options: Any):
    """Run one tile plan: keys, indices (n_queries, k) and key errors (n_queries,);
    ``options`` (``exact_all``, ``labels``, ``exact_bytes``, ``nominated``) go to
    :func:`_search_chunk`, ``nominated`` cut to each query chunk's rows."""
    given = options.pop("nominated")
    out = []
    for q0 in range(0, Q.shape[0], plan.query_chunk):
        q1 = min(q0 + plan.query_chunk, Q.shape[0])
        lists = None if given is None else (given[0][q0:q1, :], given[1][q0:q1, :], given[2])
        out.append(_search_chunk(Q[q0:q1, :], ref, k, kk, plan, dtype, xp, nominated=lists, **options))
    if len(out) == 1:
        return out[0]
    return tuple(xp.concat([o[j] for o in out], axis=0) for j in range(3))


def _search_chunk(
    Qc: Any,
    ref: Reference,
    k: int,
    kk: int,
    plan: TilePlan,
    dtype: Any,
    xp: Any,
    *,
    exact_all: bool,
    labels: Any = None,
    exact_bytes: int,
    nominated: Any = None,
):
    """Tile pass (unless ``nominated`` gives its lists), exact pass and (if needed) second
    pass for one query chunk."""
    q_rows, q_stats, q_norm, q_sq = prepare_queries(Qc, ref, dtype)
    bound = reference_bound(ref, q_norm, q_stats, dtype)
    if nominated is None:
        scores, index = nominate(q_rows, ref, kk, plan, dtype)
    else:
        scores, index, alone = nominated
        # A row whose bound is 0 (a zero row of cosine/correlation/inner) keeps its tile
        # order, ties to the lower index, as its answer: its lists come from this search's
        # own tile pass, whose order of equal scores is the reference's.
        exact = xp.nonzero(bound == 0)[0] if alone else None
        if exact is not None and exact.shape[0]:
            again = nominate(xp.take(q_rows, exact, axis=0), ref, kk, plan, dtype)
            scores, index = replace_rows(exact, Qc.shape[0], [(scores, again[0]), (index, again[1])])
    euclid = ref.metric in _EUCLID
    # Tile units of a key: the key itself, or (|q - c|^2 + key) / 2 for the euclidean family.
    common = dict(
        bound=bound,
        scale=0.5 if euclid else None,
        shift=0.5 * q_sq if euclid else None,
        complete=kk >= ref.shape[0],
        max_bytes=exact_bytes,
    )
    if exact_all:
        res = rerank(Qc, ref.data, scores, index, k, ref.metric, ref.stats, q_stats, **common)
    else:
        res = rerank_groups(Qc, ref.data, scores, index, k, ref.metric, ref.stats, q_stats, labels=labels, **common)
    if bool(xp.all(res.ok)):
        return res.keys, res.index, res.err
    bad = xp.nonzero(~res.ok)[0]
    keys_bad, idx_bad = _second_pass(xp.take(Qc, bad, axis=0), ref, k, plan, xp, kth=xp.take(res.keys[:, k - 1], bad))
    keys, idx, err = replace_rows(
        bad,
        res.ok.shape[0],
        [(res.keys, keys_bad), (res.index, idx_bad), (res.err, xp.zeros_like(res.err[: bad.shape[0]]))],
    )
    return keys, idx, err


def drop_self(dist: Any, idx: Any, xp: Any) -> tuple[Any, Any]:
    """Lists of k + 1 without each row's own index (or, absent, without the first entry);
    row i's own index is i (a dask task shifts a chunk's indices by its first row)."""
    n, k1 = int(idx.shape[0]), int(idx.shape[1])
    dev = device_of(idx)
    own = xp.astype(idx == xp.arange(n, dtype=idx.dtype, device=dev)[:, None], xp.int32)
    at = xp.argmax(own, axis=1)  # its column; 0 when absent (scikit-learn drops the first)
    left = xp.arange(k1 - 1, device=dev)[None, :] < xp.astype(at, xp.int64)[:, None]
    # Entries left of the dropped one stay, those right of it shift one place left.
    return (xp.where(left, dist[:, :-1], dist[:, 1:]), xp.where(left, idx[:, :-1], idx[:, 1:]))
