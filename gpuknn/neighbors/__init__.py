"""Neighbour estimators, shaped like ``sklearn.neighbors``: one :class:`NeighborsBase`
(``_base.py``) under classifiers (``_classification.py``), regressors (``_regression.py``),
unsupervised search (``_unsupervised.py``), the graph transformer (``_graph.py``), the nearest
centroid (``_nearest_centroid.py``) and the centroid-displacement classifiers (``_cdnn.py``);
dask data goes through ``_dask.py``. The search itself is the engine's
(:mod:`gpuknn.ops.kneighbors`).
"""

from ._cdnn import CDNNClassifier, ECDNNClassifier, centroid_displacement_predict
from ._classification import KNeighborsClassifier, RadiusNeighborsClassifier
from ._graph import KNeighborsTransformer
from ._nearest_centroid import NearestCentroid, class_means
from ._regression import KNeighborsRegressor, RadiusNeighborsRegressor
from ._unsupervised import NearestNeighbors

__all__ = [
    "CDNNClassifier",
    "ECDNNClassifier",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "KNeighborsTransformer",
    "NearestCentroid",
    "NearestNeighbors",
    "RadiusNeighborsClassifier",
    "RadiusNeighborsRegressor",
    "centroid_displacement_predict",
    "class_means",
]
