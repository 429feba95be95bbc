"""Unsupervised neighbour search with scikit-learn's API: ``NearestNeighbors``
(``sklearn.neighbors``' contract: ``X=None`` asks about the training rows, each left out of
its own neighbours). Its fitted-data storage, k-nearest queries and k-neighbours graphs
(``_NeighborsBase``) are shared with :class:`~gpuknn.KNeighborsTransformer`
(:mod:`gpuknn.transformer`).

* **k nearest**: the engine of :class:`~gpuknn.KNeighborsClassifier`
  (:func:`gpuknn.ops.kdtree.neighbors`): the top k by exact distance, ties to the lower index.
* **within a radius**: query blocks under ``working_memory``, never the whole
  ``n x n_fit`` matrix; membership (``distance <= radius``) and distances exact
  (:mod:`gpuknn.ops.radius_search`).

**Where the results live.** ``kneighbors`` answers in the input's namespace and on its
device. ``radius_neighbors`` returns host NumPy object arrays of per-query NumPy arrays, as
scikit-learn does (no array library has ragged arrays). Graphs are
``cupyx.scipy.sparse.csr_matrix`` on the input's GPU for CuPy input and
``scipy.sparse.csr_matrix`` on the host otherwise (torch, ``array_api_strict``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import array_namespace, check_int, default_working_memory, device_of, to_numpy
from ._delegation import bincount, csr_matrix, device_scope, order_rows
from .base import BaseEstimator, check_is_fitted, check_query, uses_dask, validate_data
from .errors import InvalidInputError
from .neighbors import PreparedReference
from .ops.distance import check_metric
from .ops.kdtree import build_tree, neighbors, resolve_algorithm
from .ops.limits import check_working_memory
from .ops.radius_search import check_radius, radius_block, radius_block_kdtree, ragged

__all__ = ["NearestNeighbors"]

_MODES = ("connectivity", "distance")
# Bytes per score of a radius block: the tile, its float64 copy, the candidate mask and, when
# every pair is a candidate, their positions, rows, columns, keys and distances.
_RADIUS_BYTES_PER_PAIR = 80


class _NeighborsBase(BaseEstimator):
    """Fitted-data storage, k-nearest queries and k-neighbours graphs of ``NearestNeighbors`` and
    :class:`~gpuknn.KNeighborsTransformer` (:mod:`gpuknn.transformer`)."""

    def _check_params(self) -> None:
        """Estimator-specific parameter checks (run first in ``fit``)."""

    def fit(self, X: Any, y: Any = None) -> _NeighborsBase:
        """Store the validated training rows ``X`` (n_samples, n_features); ``y`` is ignored.

        Builds the search structure once: the prepared rows of the brute-force engine, or a
        k-d tree (``algorithm`` resolved as in :class:`~gpuknn.KNeighborsClassifier`).
        """
        check_metric(self.metric)
        if self.metric == "inner":
            raise InvalidInputError(
                f"{type(self).__name__} needs a distance; metric='inner' is not one "
                "(gpuknn.kneighbors(..., metric='inner') ranks by inner product)"
            )
        if self.working_memory is not None:
            check_working_memory(self.working_memory, np)
        check_int(self.n_neighbors, name="n_neighbors", low=1)
        self._check_params()
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)  # a dask X (if accepted) stays lazy
        self._fit_X = X
        self.n_features_in_ = int(X.shape[1])
        self.n_samples_fit_ = int(X.shape[0])
        self.effective_metric_ = self.metric
        self.effective_metric_params_ = {}
        self._fit_method = resolve_algorithm(self.algorithm, xp, self.metric, self.n_features_in_)
        self._build_index()
        return self

    def _build_index(self) -> None:
        if uses_dask(self):  # searched by gpuknn.distributed at each query: nothing to build
            self._tree = self._ref = None
            return
        brute = self._fit_method == "brute"
        self._tree = None if brute else build_tree(self._fit_X, name="X")
        # Prepared once here, not at every query (the engine's reference statistics and rows).
        self._ref = PreparedReference(self._fit_X, metric=self.metric, name="X") if brute else None

    def __getstate__(self) -> dict:
        # The prepared reference holds its array module, which does not pickle: rebuilt on load.
        return {k: v for k, v in super().__getstate__().items() if k not in ("_ref", "_tree")}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "_fit_X" in state:
            self._build_index()

    def _check_k(self, n_neighbors: Any, query_is_train: bool) -> int:
        k = check_int(self.n_neighbors if n_neighbors is None else n_neighbors, name="n_neighbors", low=1)
        n_fit = self.n_samples_fit_
        if k > n_fit - query_is_train:
            rule = (
                "n_neighbors < n_samples_fit (X=None: each sample is left out of its own list)"
                if query_is_train
                else "n_neighbors <= n_samples_fit"
            )
            raise InvalidInputError(f"expected {rule}, got n_neighbors={k}, n_samples_fit={n_fit}")
        return k

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None, return_distance: bool = True):
        """The k nearest training rows of each query, nearest first.

        Parameters
        ----------
        X : array of shape (n_queries, n_features), optional
            None: the training rows, each left out of its own list (if more than
            ``n_neighbors`` duplicates of a row precede it, the first of them is left out
            instead -- scikit-learn's rule).
        n_neighbors : int, optional
            Default ``self.n_neighbors``; at most ``n_samples_fit_`` (one less with X=None).
        return_distance : bool, default True

        Returns
        -------
        distances : array of shape (n_queries, k), X's dtype, namespace and device
            Exact for float64 input (see :func:`gpuknn.kneighbors` for float32).
        indices : int64 array of shape (n_queries, k)
            Equal distances: lower training index first.

        Complexity: O(n_queries · n_samples_fit · n_features) in GEMMs (brute), far less
        with a k-d tree in low dimension.
        """
        check_is_fitted(self, "_fit_X")
        train = X is None
        k = self._check_k(n_neighbors, train)
        X, xp = (self._fit_X, array_namespace(self._fit_X)) if train else check_query(self, X)
        if uses_dask(self, X):  # dask data: lazy for a dask query (or X=None), else computed
            from .distributed.estimators import kneighbors  # noqa: PLC0415 - Dask only with its arrays

            return kneighbors(self, None if train else X, k, return_distance)
        # On the fitted data's device (CuPy creates on the current one; X=None names none).
        with device_scope(self._fit_X):
            nb = neighbors(
                X,
                self._ref if self._ref is not None else self._fit_X,
                k + train,
                metric=self.metric,
                algorithm=self._fit_method,
                working_memory=self.working_memory,
                tree=self._tree,
                names=("X", "X"),
            )
            dist, idx = nb.output_distances(), nb.indices
            if train:
                dist, idx = drop_self(dist, idx, array_namespace(idx))
        return (dist, idx) if return_distance else idx

    def kneighbors_graph(self, X: Any = None, n_neighbors: int | None = None, mode: str = "connectivity"):
        """Sparse ``(n_queries, n_samples_fit_)`` graph of :meth:`kneighbors`.

        ``mode="connectivity"``: 1.0 (float64) at each neighbour; ``"distance"``: the
        distance (stored even when 0). k stored values per row. A CSR matrix on the input's
        GPU for CuPy input, ``scipy.sparse.csr_matrix`` on the host otherwise; computed for
        dask data too (a sparse matrix is no dask array).
        """
        check_is_fitted(self, "_fit_X")
        _check_mode(mode)
        if mode == "connectivity":
            idx, data = self.kneighbors(X, n_neighbors, return_distance=False), None
        else:
            data, idx = self.kneighbors(X, n_neighbors)
        if uses_dask(self, idx):
            from .distributed.estimators import computed  # noqa: PLC0415

            data, idx = computed(data, idx)
        xp, dev = array_namespace(idx), device_of(idx)
        n, k = int(idx.shape[0]), int(idx.shape[1])
        with device_scope(idx):
            data = xp.ones(n * k, dtype=xp.float64, device=dev) if data is None else xp.reshape(data, (-1,))
            indptr = xp.arange(0, n * k + 1, k, dtype=xp.int64, device=dev)
            return csr_matrix(data, xp.reshape(idx, (-1,)), indptr, (n, self.n_samples_fit_))


def _check_mode(mode: Any) -> None:
    if mode not in _MODES:
        raise InvalidInputError(f"mode must be 'connectivity' or 'distance', got {mode!r}")


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


class NearestNeighbors(_NeighborsBase):
    """Unsupervised neighbour search, exact, on NumPy, CuPy, torch or any array-API namespace.

    scikit-learn's ``sklearn.neighbors.NearestNeighbors`` on gpuknn's engine.

    Parameters
    ----------
    n_neighbors : int, default 5
        Default k of :meth:`kneighbors` and :meth:`kneighbors_graph`.
    radius : float, default 1.0
        Default radius of :meth:`radius_neighbors` (metric units: ``sqeuclidean`` squared,
        ``cosine``/``correlation`` ``1 - similarity``).
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation"}
    algorithm : {"auto", "brute", "kd_tree"}
        As in :class:`~gpuknn.KNeighborsClassifier`; same answers either way.
    working_memory : int, optional
        Byte budget of the search tiles (see :func:`gpuknn.kneighbors`); with dask data, of
        each task (:func:`gpuknn.distributed.kneighbors`).

    Attributes
    ----------
    n_features_in_, n_samples_fit_ : int
    effective_metric_ : str
    effective_metric_params_ : dict (empty)

    Notes
    -----
    :meth:`radius_neighbors` returns **host NumPy object arrays** (one NumPy array per
    query, as scikit-learn); the graph methods return CSR matrices (CuPy's for CuPy input,
    SciPy's otherwise). Ties: equal distances -> lower training index. Each query costs
    O(n_samples_fit · n_features) (brute).

    **Dask training data.** ``fit`` keeps a dask X lazy (nothing computed);
    :meth:`kneighbors` runs :func:`gpuknn.distributed.kneighbors` (the same lists as the
    NumPy fit; lazy dask arrays chunked by rows for a dask query or ``X=None``, computed
    arrays in the query's namespace otherwise) and :meth:`kneighbors_graph` computes its
    graph. ``algorithm="kd_tree"`` and the radius methods refuse dask data.

    Examples
    --------
    >>> import numpy as np
    >>> nn = NearestNeighbors(n_neighbors=1, radius=1.5).fit(np.array([[0.0], [1.0], [5.0]]))
    >>> nn.kneighbors(np.array([[0.9]]))
    (array([[0.1]]), array([[1]]))
    >>> dist, ind = nn.radius_neighbors(np.array([[0.5]]), sort_results=True)
    >>> ind[0], dist[0]
    (array([0, 1]), array([0.5, 0.5]))
    >>> nn.kneighbors_graph().toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 1., 0.]])
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        radius: float = 1.0,
        *,
        metric: str = "euclidean",
        algorithm: str = "auto",
        working_memory: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.metric = metric
        self.algorithm = algorithm
        self.working_memory = working_memory

    _accepts_dask = True  # dask X: gpuknn.distributed.estimators (see Notes)

    def _check_params(self) -> None:
        check_radius(self.radius)

    def radius_neighbors(
        self, X: Any = None, radius: float | None = None, return_distance: bool = True, sort_results: bool = False
    ):
        """Every training row within ``radius`` (distance ``<= radius``) of each query.

        Parameters
        ----------
        X : array of shape (n_queries, n_features), optional
            None: the training rows, each left out of its own list (its duplicates stay).
        radius : float, optional
            Default ``self.radius``.
        return_distance : bool, default True
        sort_results : bool, default False
            Nearest first (equal distances: lower index first); needs ``return_distance``.
            Otherwise each list is in ascending training index.

        Returns
        -------
        distances : NumPy object array of shape (n_queries,)
            Entry i: host NumPy array of the exact distances (the fitted dtype).
        indices : NumPy object array of shape (n_queries,)
            Entry i: host int64 NumPy array of the neighbours' training indices.

        Complexity: O(n_queries · n_samples_fit · n_features) in GEMMs over query blocks of
        ``working_memory``, O(n_features) float64 work per pair near or inside the radius.
        """
        check_is_fitted(self, "_fit_X")
        if sort_results and not return_distance:
            raise InvalidInputError("return_distance must be True if sort_results is True")
        indptr, cols, dist = self._radius_pairs(X, radius, sort_results)
        ptr = to_numpy(indptr)
        ind = ragged(to_numpy(cols), ptr)
        return (ragged(to_numpy(dist), ptr), ind) if return_distance else ind

    def radius_neighbors_graph(
        self, X: Any = None, radius: float | None = None, mode: str = "connectivity", sort_results: bool = False
    ):
        """Sparse ``(n_queries, n_samples_fit_)`` graph of :meth:`radius_neighbors`.

        ``mode`` as in :meth:`kneighbors_graph`; ``sort_results`` orders each row's stored
        values by distance (``mode="distance"`` only, as scikit-learn). Built on the input's
        device (CuPy: a CuPy CSR matrix, no host round trip).
        """
        check_is_fitted(self, "_fit_X")
        _check_mode(mode)
        indptr, cols, dist = self._radius_pairs(X, radius, sort_results and mode == "distance")
        with device_scope(cols):
            if mode == "connectivity":
                xp = array_namespace(cols)
                dist = xp.ones(int(cols.shape[0]), dtype=xp.float64, device=device_of(cols))
            return csr_matrix(dist, cols, indptr, (int(indptr.shape[0]) - 1, self.n_samples_fit_))

    def _radius_pairs(self, X: Any, radius: Any, sort: bool) -> tuple[Any, Any, Any]:
        """``(indptr, columns, distances)`` of the CSR radius graph, in X's namespace."""
        if uses_dask(self, X):
            raise InvalidInputError(
                f"{type(self).__name__}'s radius methods do not accept dask arrays (fitted or queried): "
                "use kneighbors / kneighbors_graph, or compute the arrays first"
            )
        radius = check_radius(self.radius if radius is None else radius)
        train = X is None
        X, xp = (self._fit_X, array_namespace(self._fit_X)) if train else check_query(self, X)
        with device_scope(self._fit_X):  # X=None names no device: the fitted data's
            n, dev = int(X.shape[0]), device_of(X)
            wm = self.working_memory if self.working_memory is not None else default_working_memory(xp)
            rows = max(1, min(n, int(wm) // (self.n_samples_fit_ * _RADIUS_BYTES_PER_PAIR)))
            parts = []
            for b0 in range(0, n, rows):
                Xb = X[b0 : min(b0 + rows, n), :]
                if self._ref is not None:
                    r, c, d = radius_block(Xb, self._ref.reference, radius, budget=int(wm))
                else:
                    r, c, d = radius_block_kdtree(Xb, self._tree, radius, self.metric)
                r = r + b0
                if train:  # each sample leaves its own list (its duplicates stay)
                    keep = xp.nonzero(r != c)[0]
                    r, c, d = xp.take(r, keep), xp.take(c, keep), xp.take(d, keep)
                if sort:
                    o = order_rows(r, -xp.astype(d, xp.float64), c)
                    r, c, d = xp.take(r, o), xp.take(c, o), xp.take(d, o)
                parts.append((r, c, d))
            r, c, d = (xp.concat([p[j] for p in parts]) if len(parts) > 1 else parts[0][j] for j in range(3))
            counts = bincount(r, n)
            indptr = xp.concat([xp.zeros(1, dtype=xp.int64, device=dev), xp.cumulative_sum(counts)])
            return indptr, c, d
