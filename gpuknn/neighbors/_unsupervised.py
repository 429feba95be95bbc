"""Unsupervised neighbour search with scikit-learn's API: :class:`NearestNeighbors`
(``sklearn.neighbors``' contract: ``X=None`` asks about the training rows, each left out of
its own neighbours).

* **k nearest**: the engine of every neighbour estimator (:func:`gpuknn.ops.kdtree.neighbors`):
  the top k by exact distance, ties to the lower index.
* **within a radius**: query blocks under ``working_memory``, never the whole
  ``n x n_fit`` matrix; membership (``distance <= radius``) and distances exact
  (:mod:`gpuknn.ops.radius`).
"""

from __future__ import annotations

from typing import Any

from .._backend import check_int
from ._base import KNeighborsMixin, NeighborsBase, RadiusNeighborsMixin, check_radius_value

__all__ = ["NearestNeighbors"]


class NearestNeighbors(KNeighborsMixin, RadiusNeighborsMixin, NeighborsBase):
    """Unsupervised neighbour search, exact, on NumPy, CuPy, torch or any array-API namespace.

    scikit-learn's ``sklearn.neighbors.NearestNeighbors`` on gpuknn's engine.

    Parameters
    ----------
    n_neighbors : int, default 5
        Default k of :meth:`kneighbors` and :meth:`kneighbors_graph`.
    radius : float, default 1.0
        Default radius of :meth:`radius_neighbors` (metric units: ``sqeuclidean`` squared,
        ``cosine``/``correlation`` ``1 - similarity``); ``math.inf``: every training row.
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
        As in :class:`~gpuknn.KNeighborsClassifier` (``"ball_tree"`` runs as ``"auto"``);
        same answers either way.
    working_memory : float, optional
        MiB for the search tiles (see :func:`gpuknn.kneighbors`); with dask data, for
        each task (:func:`gpuknn.distributed.kneighbors`).
    leaf_size : int, default 30
        Accepted for scikit-learn compatibility (checked ``>= 1``); SciPy's k-d tree
        chooses its own leaves.
    n_jobs : int, optional
        Accepted for scikit-learn compatibility; the engine runs on the array library's
        own threads (NumPy's BLAS, torch's intra-op pool, the GPU).

    Attributes
    ----------
    n_features_in_, n_samples_fit_ : int
    effective_metric_ : str
    effective_metric_params_ : dict
        scikit-learn's: ``metric="minkowski"`` gives ``effective_metric_`` ``"euclidean"``
        (p = 2), ``"manhattan"`` (1), ``"chebyshev"`` (inf), else ``"minkowski"`` with
        ``{"p": p, "w": None}``.

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
        metric: Any = "minkowski",
        p: float = 2,
        metric_params: dict | None = None,
        algorithm: str = "auto",
        working_memory: float | None = None,
        leaf_size: int = 30,
        n_jobs: int | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.working_memory = working_memory
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    _accepts_dask = True  # dask X: gpuknn.neighbors._dask (see Notes)
    _needs_distance = True

    def _check_params(self) -> None:
        check_int(self.n_neighbors, name="n_neighbors", low=1)
        check_radius_value(self.radius)

    def fit(self, X: Any, y: Any = None) -> NearestNeighbors:
        """Store the validated training rows ``X`` (n_samples, n_features); ``y`` is ignored.
        X may also be a fitted gpuknn neighbour estimator, or scikit-learn's ``KDTree`` /
        ``BallTree``: their training rows are used (scikit-learn's rule).

        Builds the search structure once: the prepared rows of the brute-force engine, or a
        k-d tree (``algorithm`` resolved as in :class:`~gpuknn.KNeighborsClassifier`).
        """
        self._fit(X)
        return self
