"""Small seeded synthetic data sets for tests, demos and the studies.

Randomness is drawn on the host with ``numpy.random.default_rng(random_state)`` and the
result moved to ``xp``, so a seed gives the same data on every backend.

* :func:`make_classification_images` / :func:`make_fashion_mnist_like`: a stand-in for
  Fashion-MNIST when the real files are absent (CLI tests, quick runs): 784 "pixels" with
  integer values 0..255, 10 balanced classes, learnable by kNN with the correlation metric
  far above chance but not perfectly.
* :func:`make_gaussian_classes`: two Gaussian classes with a controlled overlap and
  imbalance, for the two-class (positive/negative) studies.
"""

from __future__ import annotations

import math
from typing import Any

import array_api_compat
import numpy as np

from .._backend import from_numpy
from ..errors import InvalidInputError

__all__ = ["make_classification_images", "make_fashion_mnist_like", "make_gaussian_classes"]

_DTYPES = {"float32": np.float32, "float64": np.float64}


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_dtype(dtype: str) -> Any:
    if dtype not in _DTYPES:
        raise InvalidInputError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    return _DTYPES[dtype]


def _ns(xp: Any) -> Any:
    return array_api_compat.numpy if xp is None else xp


def _prototypes(rng: np.random.Generator, n_classes: int, n_features: int, class_sep: float) -> np.ndarray:
    # A shared "average image" plus a class-specific pattern: classes differ by a small
    # fraction of the pixel range, as garments of one data set share most of their pixels.
    base = rng.uniform(0.2, 0.8, size=n_features)
    return base + class_sep * rng.standard_normal((n_classes, n_features))


def _images(rng: np.random.Generator, protos: np.ndarray, n: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    n_classes, n_features = protos.shape
    y = rng.permutation(np.arange(n, dtype=np.int64) % n_classes)  # balanced to within 1
    # Per-image contrast changes Euclidean distances but not correlations (scale-invariant).
    contrast = rng.uniform(0.6, 1.0, size=(n, 1))
    X = contrast * (protos[y] + noise * rng.standard_normal((n, n_features)))
    return np.clip(np.rint(255.0 * X), 0.0, 255.0), y


def _check_image_args(n_features, n_classes, class_sep, noise) -> tuple[int, int]:
    n_features = _check_int(n_features, "n_features", 2)
    n_classes = _check_int(n_classes, "n_classes", 2)
    if not (class_sep >= 0 and noise >= 0 and math.isfinite(class_sep) and math.isfinite(noise)):
        raise InvalidInputError(f"class_sep and noise must be finite and >= 0, got {class_sep!r}, {noise!r}")
    return n_features, n_classes


def make_classification_images(
    n_samples: int,
    *,
    n_features: int = 784,
    n_classes: int = 10,
    class_sep: float = 0.06,
    noise: float = 0.3,
    random_state: Any = None,
    dtype: str = "float32",
    xp: Any = None,
) -> tuple[Any, Any]:
    """Fashion-MNIST-like synthetic images: class prototypes plus noise, pixels 0..255.

    Each class ``c`` has a prototype ``p_c = b + class_sep * z_c`` (``b`` a shared image,
    uniform in [0.2, 0.8]; ``z_c`` standard normal). An image of class ``c`` is
    ``clip(round(255 * s * (p_c + noise * e)), 0, 255)`` with a per-image contrast ``s`` in
    [0.6, 1] and standard normal ``e``. With the defaults and a few thousand samples, kNN
    with the correlation metric is right for roughly 80-95% of held-out images (chance: 10%).

    Parameters
    ----------
    n_samples : int
        Number of images, >= ``n_classes``. Labels are balanced to within one.
    n_features : int, default 784
        Pixels per image (784 = 28 x 28).
    n_classes : int, default 10
    class_sep : float, default 0.06
        Spread of the class patterns, in units of the pixel range; larger is easier.
    noise : float, default 0.3
        Per-pixel noise standard deviation, in units of the pixel range.
    random_state : None, int or numpy.random.Generator
        Seed of the host generator.
    dtype : {"float32", "float64"}, default "float32"
    xp : array namespace, optional
        Namespace of the results; ``None`` means NumPy.

    Returns
    -------
    X : array, shape (n_samples, n_features)
        Integer-valued floats in [0, 255].
    y : array of int64, shape (n_samples,)
        Labels 0..n_classes-1.

    Notes
    -----
    O(n_samples * n_features) time and memory.

    Examples
    --------
    >>> X, y = make_classification_images(100, random_state=0)
    >>> X.shape, float(X.min()) >= 0, float(X.max()) <= 255, sorted(set(y.tolist()))[:3]
    ((100, 784), True, True, [0, 1, 2])
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features, n_classes = _check_image_args(n_features, n_classes, class_sep, noise)
    if n_samples < n_classes:
        raise InvalidInputError(f"n_samples={n_samples} is smaller than n_classes={n_classes}")
    np_dtype = _check_dtype(dtype)
    rng = np.random.default_rng(random_state)
    X, y = _images(rng, _prototypes(rng, n_classes, n_features, class_sep), n_samples, noise)
    xp = _ns(xp)
    return from_numpy(X.astype(np_dtype), xp), from_numpy(y, xp)


def make_fashion_mnist_like(
    n_train: int = 6000,
    n_test: int = 1000,
    *,
    n_features: int = 784,
    n_classes: int = 10,
    class_sep: float = 0.06,
    noise: float = 0.3,
    random_state: Any = None,
    dtype: str = "float32",
    xp: Any = None,
) -> tuple[Any, Any, Any, Any]:
    """Train and test sets from the same prototypes, shaped like ``load_fashion_mnist``.

    Same model and parameters as :func:`make_classification_images`.

    Returns
    -------
    X_train : array, shape (n_train, n_features)
    y_train : array of int64, shape (n_train,)
    X_test : array, shape (n_test, n_features)
    y_test : array of int64, shape (n_test,)

    Examples
    --------
    >>> Xtr, ytr, Xte, yte = make_fashion_mnist_like(200, 50, random_state=0)
    >>> Xtr.shape, Xte.shape
    ((200, 784), (50, 784))
    """
    n_train = _check_int(n_train, "n_train", 1)
    n_test = _check_int(n_test, "n_test", 1)
    n_features, n_classes = _check_image_args(n_features, n_classes, class_sep, noise)
    np_dtype = _check_dtype(dtype)
    rng = np.random.default_rng(random_state)
    protos = _prototypes(rng, n_classes, n_features, class_sep)
    xp = _ns(xp)
    out = []
    for n in (n_train, n_test):
        X, y = _images(rng, protos, n, noise)
        out += [from_numpy(X.astype(np_dtype), xp), from_numpy(y, xp)]
    return tuple(out)  # type: ignore[return-value]


def make_gaussian_classes(
    n_samples: int,
    *,
    n_features: int = 2,
    centers_distance: float = 2.0,
    positive_fraction: float = 0.5,
    random_state: Any = None,
    dtype: str = "float64",
    xp: Any = None,
) -> tuple[Any, Any]:
    """Two overlapping Gaussian classes: negatives ``N(0, I)``, positives ``N(d * e_1, I)``.

    The classes differ only along the first axis, so the Bayes-optimal rule thresholds
    ``x_0`` and, for balanced classes, its error is ``Phi(-d / 2)`` (d = 0: pure noise;
    d = 2: about 15.9%; d = 4: about 2.3%). Exactly ``round(n_samples * positive_fraction)``
    rows are positive; rows are shuffled.

    Parameters
    ----------
    n_samples : int
        >= 2.
    n_features : int, default 2
    centers_distance : float, default 2.0
        Euclidean distance ``d >= 0`` between the class means.
    positive_fraction : float, default 0.5
        Share of positives, in (0, 1); the rounded count must leave both classes non-empty.
    random_state : None, int or numpy.random.Generator
    dtype : {"float64", "float32"}, default "float64"
    xp : array namespace, optional
        Namespace of the results; ``None`` means NumPy.

    Returns
    -------
    X : array, shape (n_samples, n_features)
    y : array of int64, shape (n_samples,)
        1 = positive, 0 = negative.

    Examples
    --------
    >>> X, y = make_gaussian_classes(100, n_features=3, positive_fraction=0.1, random_state=0)
    >>> X.shape, int(y.sum())
    ((100, 3), 10)
    """
    n_samples = _check_int(n_samples, "n_samples", 2)
    n_features = _check_int(n_features, "n_features", 1)
    if not (math.isfinite(centers_distance) and centers_distance >= 0):
        raise InvalidInputError(f"centers_distance must be finite and >= 0, got {centers_distance!r}")
    if not 0 < positive_fraction < 1:
        raise InvalidInputError(f"positive_fraction must be in (0, 1), got {positive_fraction!r}")
    n_pos = int(round(n_samples * positive_fraction))
    if not 0 < n_pos < n_samples:
        raise InvalidInputError(
            f"positive_fraction={positive_fraction} of n_samples={n_samples} gives {n_pos} "
            "positives; both classes need at least one sample"
        )
    np_dtype = _check_dtype(dtype)
    rng = np.random.default_rng(random_state)
    y = rng.permutation(np.r_[np.ones(n_pos, np.int64), np.zeros(n_samples - n_pos, np.int64)])
    X = rng.standard_normal((n_samples, n_features))
    X[:, 0] += centers_distance * y
    xp = _ns(xp)
    return from_numpy(X.astype(np_dtype), xp), from_numpy(y, xp)
