"""Neighbour-based classifiers (one module per family)."""

from .cdnn import CDNNClassifier, ECDNNClassifier
from .centroid import NearestCentroid
from .knn import KNeighborsClassifier
from .radius import RadiusNeighborsClassifier

__all__ = [
    "CDNNClassifier",
    "ECDNNClassifier",
    "KNeighborsClassifier",
    "NearestCentroid",
    "RadiusNeighborsClassifier",
]
