"""Exact kNN, covariance and PCA of ``dask.array`` data (NumPy or CuPy chunks), lazily.

Install with ``pip install "gpuknn[dask]"``; Dask is imported only when one of these
functions runs, never at ``import gpuknn``. The chunks are processed by the single-device
engine: :func:`gpuknn.kneighbors_partial` / :func:`gpuknn.merge_partial` (exact partial
searches with global indices, merged by (key, index)) and :mod:`gpuknn.linalg.moments`
(mergeable n, column sums, Gram). ``PCA().fit`` and ``PCA().transform`` accept dask arrays
through :func:`pca_moments` and :func:`project`. See docs/distributed.md.
"""

from __future__ import annotations

from .neighbors import kneighbors
from .pca import covariance, covariance_and_mean, moments, pca_moments, project

__all__ = ["kneighbors", "moments", "covariance", "covariance_and_mean", "pca_moments", "project"]
