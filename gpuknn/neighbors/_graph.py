"""The k-neighbours graph transformer :class:`KNeighborsTransformer`: scikit-learn's
``sklearn.neighbors.KNeighborsTransformer`` on the search every neighbour estimator shares
(:class:`~gpuknn.neighbors._base.NeighborsBase`: the same exact lists and the same CSR
graphs as :class:`~gpuknn.NearestNeighbors`, SciPy's on the host, cupyx's on the input's GPU
for CuPy input).
"""

from __future__ import annotations

from typing import Any

from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .._backend import check_int
from ..base import check_is_fitted
from ._base import KNeighborsMixin, NeighborsBase, check_mode

__all__ = ["KNeighborsTransformer"]


class KNeighborsTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, KNeighborsMixin, NeighborsBase):
    """X -> sparse graph of its k nearest training rows, scikit-learn's
    ``sklearn.neighbors.KNeighborsTransformer`` on gpuknn's exact engine.

    For ``metric="precomputed"`` estimators in a Pipeline (``Isomap``, ``DBSCAN``,
    ``TSNE``, ``SpectralClustering``...): the neighbours are found once, here.

    Parameters
    ----------
    mode : {"distance", "connectivity"}, default "distance"
    n_neighbors : int, default 5
        Neighbours per row. ``mode="distance"`` stores ``n_neighbors + 1`` (each training
        row is its own first neighbour at distance 0, stored, when X is the fitted data);
        ``"connectivity"`` stores ``n_neighbors`` (scikit-learn's convention).
    metric : str or callable, default "minkowski"
        ``"minkowski"`` (with ``p``), the engine's metrics ``"euclidean"`` (``"l2"``),
        ``"sqeuclidean"``, ``"cosine"``, ``"correlation"``, the difference metrics
        ``"manhattan"`` (``"cityblock"``, ``"l1"``), ``"chebyshev"`` (``"infinity"``),
        ``"canberra"``, ``"braycurtis"``, ``"hamming"``, ``"precomputed"`` (X holds
        distances) or a callable on two host NumPy rows (see
        :class:`~gpuknn.neighbors._base.NeighborsBase`).
    p : float, default 2
        Minkowski's p (``0 < p <= inf``; 1, 2, inf run manhattan, euclidean, chebyshev).
    metric_params : dict, optional
        Minkowski: ``{"p": ...}`` (``"w"`` is refused); a callable: its keyword arguments.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree"}
    working_memory : float, optional
        MiB for the search tiles (see :func:`gpuknn.kneighbors`).
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``); SciPy's k-d tree
        chooses its own leaves.
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the engine runs on the array library's
        own threads (NumPy's BLAS, torch's intra-op pool, the GPU).

    Dask training data (``fit`` on a dask array) stays lazy; ``transform`` searches it with
    :func:`gpuknn.distributed.kneighbors` and returns the computed sparse graph (see
    docs/distributed.md).

    Attributes
    ----------
    n_features_in_, n_samples_fit_ : int
    effective_metric_ : str

    Notes
    -----
    :meth:`transform` returns a ``cupyx.scipy.sparse.csr_matrix`` for CuPy input and a
    ``scipy.sparse.csr_matrix`` on the host otherwise, of shape ``(n_queries, n_samples_fit_)``.
    Ties: lower training index first. Cost O(n_queries · n_samples_fit · n_features).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> KNeighborsTransformer(n_neighbors=1).fit_transform(X).toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 2., 0.]])
    """

    _accepts_dask = True  # the dask path of every k-neighbour estimator (gpuknn.neighbors._dask)
    _needs_distance = True

    def __init__(
        self,
        *,
        mode: str = "distance",
        n_neighbors: int = 5,
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.mode = mode
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    def _check_params(self) -> None:
        check_int(self.n_neighbors, name="n_neighbors", low=1)
        check_mode(self.mode)

    def fit(self, X: Any, y: Any = None) -> KNeighborsTransformer:
        """Store the validated training rows X (n_samples, n_features); ``y`` is ignored."""
        self._fit(X)
        self._n_features_out = self.n_samples_fit_  # output columns (get_feature_names_out)
        return self

    def transform(self, X: Any) -> Any:
        """CSR graph ``(n_queries, n_samples_fit_)`` of each row's nearest training rows."""
        check_is_fitted(self, "_fit_X")
        return self.kneighbors_graph(X, mode=self.mode, n_neighbors=self.n_neighbors + (self.mode == "distance"))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Inputs of any namespace are accepted, but the output is a sparse matrix (SciPy's,
        # or CuPy's), not an array of the input's namespace as the array-API tag promises.
        tags.array_api_support = False
        return tags

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).transform(X)``: each row is its own first neighbour (distance 0)."""
        return self.fit(X).transform(X)
