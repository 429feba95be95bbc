"""Centroid displacement-based nearest neighbours (CDNN) and its ensemble variant (ECDNN).

CDNN (Nguyen, Chukova and Wang) looks at the k nearest training points of a query. For
every class j present among them, with ``n_j`` members of centroid ``c_j``, adding the
query moves the centroid by

    ‖(n_j c_j + x)/(n_j + 1) − c_j‖ = ‖x − c_j‖ / (n_j + 1),

and the class whose centroid moves least wins. **Ties** go to the class met first in the
neighbour list (distance order, equal distances -> lower training index).

ECDNN adds a confident case: when the ``n_confident`` nearest neighbours share one label,
that label is predicted directly, otherwise CDNN decides (the authors' code uses 2).
``n_confident=None`` means all k; then ECDNN and CDNN agree (k neighbours of one class
leave CDNN a single candidate).

Everything is batched per query tile: neighbour rows gathered as a (t, k, d) array,
one-hot labels (t, k, C), per-class sums by one batched matrix product (t, C, k)·(t, k, d).

**Metrics.** Neighbours are found with the chosen metric; the displacement is euclidean in
the metric's prepared space: raw features for ``euclidean``, ``sqeuclidean`` and ``inner``;
unit-normalised rows for ``cosine``; centred unit-normalised rows for ``correlation``
(the spaces where those metrics are euclidean-like).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._backend import array_namespace, check_int, device_of
from ..base import check_query
from ..errors import InvalidInputError
from ..ops.distance import prepare_rows
from ._base import NeighborsBase, NeighborsClassifierMixin

__all__ = ["CDNNClassifier", "ECDNNClassifier", "centroid_displacement_predict"]

_TILE_BYTES = 1 << 27  # gathered neighbour rows per tile (128 MiB)


def displacement_space(X: Any, metric: str) -> Any:
    """X mapped to the space where the displacement is measured (see module docstring)."""
    if metric in ("cosine", "correlation"):
        return prepare_rows(X, metric, role="reference").rows
    return X


def centroid_displacement_predict(
    Xq: Any,
    X_fit: Any,
    y_fit: Any,
    indices: Any,
    *,
    n_classes: int,
    ks: Sequence[int],
    n_confident: int | None = -1,
    metric: str = "euclidean",
    max_bytes: int = _TILE_BYTES,
) -> Any:
    """CDNN (or ECDNN) class indices for several k from one sorted neighbour list.

    Parameters
    ----------
    Xq : array of shape (n, d)
        Queries.
    X_fit : array of shape (n_train, d)
        Training rows; ``indices`` point into it.
    y_fit : int array of shape (n_train,)
        Class indices ``0 .. n_classes-1``.
    indices : int array of shape (n, k_max)
        Neighbours of each query, nearest first (e.g. from :func:`gpuknn.kneighbors`).
    n_classes : int
    ks : sequence of int
        Neighbourhood sizes, each ``1 <= k <= k_max``; the first k columns are used.
    n_confident : int, None or -1
        ``-1`` (default): plain CDNN. An int m >= 1: ECDNN, predicting the common label
        of the m nearest neighbours when they agree (m is capped at k). ``None``: ECDNN
        with m = k.
    metric : str
        Decides the displacement space (see module docstring).
    max_bytes : int
        Queries are processed in tiles whose gathered rows stay under this size.

    Returns
    -------
    predictions : int64 array of shape (len(ks), n)

    Complexity O(n · k_max · C · d) per k; memory O(tile · k_max · (d + C)).
    """
    xp = array_namespace(Xq, X_fit, y_fit, indices)
    n, k_max = indices.shape
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1 or max(ks) > k_max:
        raise InvalidInputError(f"every k must be in [1, {k_max}], got {ks}")
    Pq = displacement_space(Xq, metric)
    Pf = displacement_space(X_fit, metric)
    d = Pf.shape[1]
    itemsize = 8 if Pf.dtype == xp.float64 else 4
    per_query = k_max * (d + n_classes + 1) * itemsize + n_classes * d * itemsize * 3
    tile = max(1, min(n, max_bytes // max(1, per_query)))
    dev = device_of(indices)
    classes = xp.arange(n_classes, device=dev)
    out = []
    for t0 in range(0, n, tile):
        idx = indices[t0 : t0 + tile, :]
        t = idx.shape[0]
        flat = xp.reshape(idx, (-1,))
        rows = xp.reshape(xp.take(Pf, flat, axis=0), (t, k_max, d))
        labels = xp.reshape(xp.take(y_fit, flat), (t, k_max))
        onehot = xp.astype(labels[:, :, None] == classes[None, None, :], Pf.dtype)
        x = Pq[t0 : t0 + tile, :]
        preds = []
        for k in ks:
            p = _cdnn_tile(x, rows[:, :k, :], onehot[:, :k, :], xp)
            m = k if n_confident is None else (None if n_confident == -1 else min(n_confident, k))
            if m is not None:
                agree = xp.all(labels[:, :m] == labels[:, :1], axis=1)
                p = xp.where(agree, labels[:, 0], p)
            preds.append(p)
        out.append(xp.stack(preds, axis=0))
    res = out[0] if len(out) == 1 else xp.concat(out, axis=1)
    return xp.astype(res, xp.int64)


def _cdnn_tile(x: Any, rows: Any, onehot: Any, xp: Any) -> Any:
    """CDNN decision for one tile: x (t, d), rows (t, k, d), onehot (t, k, C) -> (t,)."""
    t, k, _ = rows.shape
    counts = xp.sum(onehot, axis=1)  # (t, C)
    sums = xp.matmul(xp.permute_dims(onehot, (0, 2, 1)), rows)  # (t, C, d)
    present = counts > 0
    safe = xp.where(present, counts, xp.ones_like(counts))
    diff = x[:, None, :] - sums / safe[:, :, None]
    disp = xp.sqrt(xp.sum(diff * diff, axis=2)) / (counts + 1.0)
    disp = xp.where(present, disp, xp.full_like(disp, math.inf))
    # Tie-break by first position of each class in the (distance-ordered) neighbour list.
    pos = xp.arange(k, device=device_of(rows), dtype=rows.dtype)
    first = xp.min(xp.where(onehot > 0, pos[None, :, None], xp.full_like(onehot, float(k))), axis=1)
    best = xp.min(disp, axis=1, keepdims=True)
    key = xp.where(disp == best, first, xp.full_like(first, float(k + 1)))
    return xp.argmin(key, axis=1)


class CDNNClassifier(NeighborsClassifierMixin, NeighborsBase):
    """Centroid displacement-based k-nearest-neighbour classifier (CDNN).

    Parameters
    ----------
    n_neighbors : int, default 5
    metric : {"euclidean", "sqeuclidean", "cosine", "correlation", "inner"}
        Neighbour search metric; the displacement is measured as described in
        :mod:`gpuknn.neighbors._cdnn`.
    algorithm : {"auto", "brute", "kd_tree"}
        Neighbour search (see :class:`KNeighborsClassifier`).
    working_memory : float, optional
        MiB for the distance tiles (see :func:`gpuknn.kneighbors`).

    Notes
    -----
    Among the classes of the k neighbours, predicts the one minimising
    ``‖x − c_j‖ / (n_j + 1)``; ties -> the class met first in distance order. Cost: the
    neighbour search plus O(n_queries · k · C · d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [1.0], [5.0], [6.0]]); y = np.array([0, 0, 1, 1, 1])
    >>> CDNNClassifier(n_neighbors=3).fit(X, y).predict(np.array([[0.8]]))  # kNN says 0
    array([1])
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        metric: str = "euclidean",
        algorithm: str = "auto",
        working_memory: float | None = None,
    ):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.algorithm = algorithm
        self.working_memory = working_memory

    def _n_confident(self) -> Any:
        return -1

    def fit(self, X: Any, y: Any) -> CDNNClassifier:
        """Store the validated training data and encode the labels."""
        self._fit(X)
        self._fit_labels(y)
        self._check_n_neighbors()
        self._n_confident()  # validates ECDNN's n_confident against k
        return self

    def predict(self, X: Any) -> Any:
        """Predicted labels, shape (n_queries,)."""
        X, _, mag = check_query(self, X, return_magnitude=True)
        idx = self._neighbors(X, self.n_neighbors, mag).indices
        pred = centroid_displacement_predict(
            X,
            self._fit_X,
            self._y,
            idx,
            n_classes=int(self.classes_.shape[0]),
            ks=[self.n_neighbors],
            n_confident=self._n_confident(),
            metric=self.metric,
        )
        return self._decode(pred[0, :])


class ECDNNClassifier(CDNNClassifier):
    """CDNN with a confident case: agreeing nearest neighbours decide directly (ECDNN).

    Parameters
    ----------
    n_neighbors : int, default 5
    n_confident : int or None, default 2
        If the ``n_confident`` nearest neighbours share one label, predict it; otherwise
        use CDNN. 2 is the authors' code; ``None`` uses all k (then identical to CDNN).
        Must satisfy ``1 <= n_confident <= n_neighbors``.
    metric, algorithm, working_memory
        As in :class:`CDNNClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [1.0], [5.0], [6.0]]); y = np.array([0, 0, 1, 1, 1])
    >>> ECDNNClassifier(n_neighbors=3).fit(X, y).predict(np.array([[0.3], [0.8]]))
    array([0, 1])
    """

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        n_confident: int | None = 2,
        metric: str = "euclidean",
        algorithm: str = "auto",
        working_memory: float | None = None,
    ):
        super().__init__(n_neighbors, metric=metric, algorithm=algorithm, working_memory=working_memory)
        self.n_confident = n_confident

    def _n_confident(self) -> Any:
        if self.n_confident is None:
            return None
        return check_int(self.n_confident, name="n_confident", low=1, high=self._check_n_neighbors())
