"""Prototype generation by clustering (imbalanced-learn's ``ClusterCentroids``) on gpuknn's
:class:`~gpuknn.cluster.KMeans` and :func:`~gpuknn.ops.kneighbors.kneighbors`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, into_namespace, validate_matrix
from .._delegation import take_rows
from ..base import clone, validate_data
from ..cluster import KMeans
from ..errors import InvalidInputError, ResamplingError
from ..ops.kneighbors import kneighbors
from ._base import BaseSampler, check_sampling_strategy, encode_labels

__all__ = ["ClusterCentroids"]

_VOTING = ("auto", "soft", "hard")


class ClusterCentroids(BaseSampler):
    """Replace each class to under-sample by the centres of a clustering of that class.

    A class asked to keep ``n`` samples is clustered into ``n`` clusters (by default
    ``gpuknn.cluster.KMeans(n_clusters=n, random_state=random_state)``); its samples are
    replaced by the ``n`` centres (``voting="soft"``) or by the original sample nearest to
    each centre (``voting="hard"``). The other classes are kept as they are.

    Parameters
    ----------
    sampling_strategy : str, float, dict or callable, default "auto"
        imbalanced-learn's meaning for under-samplers; ``"auto"`` = every class but the
        minority is cut down to the minority's count.
    random_state : int, numpy Generator or None
        Seed of the default KMeans (ignored when ``estimator`` is given).
    estimator : object, optional
        A clustering estimator with an ``n_clusters`` parameter (``get_params``/
        ``set_params``) and a fitted ``cluster_centers_``: gpuknn's or scikit-learn's
        ``KMeans``, ... A fresh copy is fitted per class; its centres are moved into X's
        namespace and device.
    voting : {"auto", "soft", "hard"}, default "auto"
        ``"soft"``: the centres; ``"hard"``: the nearest original sample of the class to each
        centre (ties -> lower index). ``"auto"`` is ``"hard"`` for sparse input in
        imbalanced-learn; gpuknn's input is always dense, so ``"auto"`` = ``"soft"``.

    Attributes
    ----------
    sampling_strategy_ : dict ``{label: samples kept}``
    voting_ : str, the voting used
    estimator_ : the estimator fitted last (on the last resampled class)

    Raises
    ------
    InvalidInputError
        A bad ``voting``, ``sampling_strategy`` or an estimator without ``n_clusters``.
    ResamplingError
        The fitted estimator has no ``cluster_centers_`` (a ``RuntimeError``, as
        imbalanced-learn raises).

    Notes
    -----
    Same algorithm and output order as imbalanced-learn: class by class in sorted-label
    order, the centres (or their nearest samples) of a resampled class in cluster order, the
    kept classes in index order. The default KMeans draws its k-means++ seeds from
    ``numpy.random.default_rng``, so its centres differ from scikit-learn's for the same seed;
    with the same initial centres (``init=`` array, ``n_init=1``) both run the same Lloyd
    iterations. No ``sample_indices_`` (the samples are new points), as imbalanced-learn.
    Cost: one KMeans per resampled class, plus one 1-NN search per class for hard voting.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [9.0, 9.0]])
    >>> y = np.array([0, 0, 0, 0, 1])
    >>> Xr, yr = ClusterCentroids(random_state=0).fit_resample(X, y)
    >>> Xr.tolist(), yr.tolist()
    ([[0.5, 0.5], [9.0, 9.0]], [0, 1])
    """

    _sampling_type = "under-sampling"
    _selects_rows = False  # new rows: no sample_indices_

    def __init__(
        self, *, sampling_strategy: Any = "auto", random_state: Any = None, estimator: Any = None, voting: str = "auto"
    ):
        self.sampling_strategy = sampling_strategy
        self.random_state = random_state
        self.estimator = estimator
        self.voting = voting

    def _check_params(self) -> None:
        if not isinstance(self.voting, str) or self.voting not in _VOTING:
            raise InvalidInputError(f"voting must be one of {_VOTING}, got {self.voting!r}")
        if self.estimator is not None:
            est = self.estimator
            if not (hasattr(est, "get_params") and hasattr(est, "set_params") and hasattr(est, "fit")):
                raise InvalidInputError(
                    f"estimator must be a clustering estimator with get_params/set_params/fit, got {est!r}"
                )
            if "n_clusters" not in est.get_params(deep=False):
                raise InvalidInputError(
                    f"estimator must have an n_clusters parameter and a fitted cluster_centers_, got {est!r}"
                )

    def _centres(self, Xc: Any, n: int, xp: Any) -> Any:
        if self.estimator is None:
            est = KMeans(n_clusters=n, random_state=self.random_state)
        else:
            est = clone(self.estimator).set_params(n_clusters=n)
        est.fit(Xc)
        self.estimator_ = est
        C = getattr(est, "cluster_centers_", None)
        if C is None:
            raise ResamplingError(
                f"estimator {est!r} should be a clustering estimator exposing a fitted cluster_centers_"
            )
        dev = device_of(Xc)
        C = into_namespace(C, xp, device=dev)
        C = validate_matrix(C, xp, name="cluster_centers_", dtype=Xc.dtype, device=dev)
        if tuple(C.shape) != (n, int(Xc.shape[1])):
            raise InvalidInputError(
                f"estimator gave cluster_centers_ of shape {tuple(C.shape)}, expected {(n, int(Xc.shape[1]))}"
            )
        return C

    def _fit_resample(self, X: Any, y: Any, one_hot: int | None = None) -> tuple[Any, Any]:
        """:meth:`~gpuknn.resampling._base.BaseSampler.fit_resample` on arrays: centres of
        the resampled classes, the other classes' rows unchanged."""
        self._check_params()
        xp = array_namespace(X)
        X = validate_data(self, X, reset=True, xp=xp)
        lab = encode_labels(y, int(X.shape[0]))
        self._strategy = check_sampling_strategy(self.sampling_strategy, lab, self._sampling_type)
        self.sampling_strategy_ = {lab.label(c): n for c, n in self._strategy.items()}
        self.n_features_in_ = int(X.shape[1])
        self.voting_ = "soft" if self.voting == "auto" else self.voting
        X_parts, y_rows = [], []
        for c in range(lab.classes.shape[0]):
            members = np.flatnonzero(lab.codes == c)
            if c not in self._strategy:
                X_parts.append(take_rows(X, members))
                y_rows.append(members)
                continue
            n = int(self._strategy[c])
            y_rows.append(np.full(n, lab.first[c], dtype=np.int64))
            if n == 0:
                continue
            Xc = take_rows(X, members)
            C = self._centres(Xc, n, xp)
            if self.voting_ == "hard":
                nearest = kneighbors(C, Xc, 1, return_distance=False)
                C = xp.take(Xc, xp.reshape(nearest, (-1,)), axis=0)
            X_parts.append(C)
        rows = np.concatenate(y_rows).astype(np.int64)
        return xp.concat(X_parts, axis=0), take_rows(y, rows)
