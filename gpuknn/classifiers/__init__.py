"""Neighbour-based classifiers (one module per family)."""

from .knn import KNeighborsClassifier

__all__ = ["KNeighborsClassifier"]
