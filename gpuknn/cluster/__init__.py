"""Clustering estimators, array-API generic: k-means (Lloyd, k-means++) and fuzzy c-means."""

from __future__ import annotations

from .fuzzy import FuzzyCMeans
from .kmeans import KMeans, kmeans_plusplus

__all__ = ["KMeans", "FuzzyCMeans", "kmeans_plusplus"]
