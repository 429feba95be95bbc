"""Cross-validation splitters mirroring scikit-learn's, drawn once on the host.

Indices are host NumPy int64 arrays generated from ``numpy.random.default_rng(random_state)``,
so a NumPy run and a CuPy run of the same seed see identical folds. Move them to a device
with ``gpuknn._backend.from_numpy`` (or let the sweeps do it).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._backend import check_int, to_numpy
from .._delegation import on_input_device, take_rows
from ..base import BaseEstimator
from ..errors import InvalidInputError

__all__ = ["KFold", "StratifiedKFold", "RepeatedStratifiedKFold", "train_test_split"]


def _n_samples(X: Any) -> int:
    if hasattr(X, "shape"):
        return int(X.shape[0])
    return len(X)


def _check_splits(n_splits: Any) -> int:
    return check_int(n_splits, name="n_splits", low=2)


def _labels_host(y: Any, name: str = "y") -> np.ndarray:
    y_host = to_numpy(y) if hasattr(y, "shape") else np.asarray(y)
    if y_host.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got shape {y_host.shape}")
    _check_finite_classes(y_host, name)
    return y_host


def _check_finite_classes(y: np.ndarray, name: str) -> None:
    """Refuse NaN/infinity among class labels, as scikit-learn does ("Input y contains NaN."):
    ``np.unique`` would otherwise make NaN a class of its own and stratify on it."""
    if y.dtype.kind in "fc":
        bad = ~np.isfinite(y)
    elif y.dtype.kind == "O":
        # Object labels (strings mixed with a missing value) may hold a float NaN.
        bad = np.fromiter((isinstance(v, float) and not np.isfinite(v) for v in y), bool, y.shape[0])
    else:
        return
    if not bad.any():
        return
    where = np.flatnonzero(bad)
    what = "NaN" if any(np.isnan(y[i]) for i in where[:1]) else "infinity"
    raise InvalidInputError(
        f"Input {name} contains {what}: {where.size} label(s) not finite, at position(s) {where[:10].tolist()}"
    )


class _KFoldBase(BaseEstimator):
    """Parameters and ``get_n_splits`` shared by the K-fold splitters."""

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return _check_splits(self.n_splits)


class KFold(_KFoldBase):
    """K consecutive folds (shuffled first when ``shuffle=True``), like scikit-learn's.

    The first ``n % n_splits`` folds have one sample more.

    Examples
    --------
    >>> [t.tolist() for _, t in KFold(3).split(range(5))]
    [[0, 1], [2, 3], [4]]
    """

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train_idx, test_idx)`` host int64 arrays."""
        k = _check_splits(self.n_splits)
        n = _n_samples(X)
        if k > n:
            raise InvalidInputError(f"n_splits={k} is greater than the number of samples {n}")
        order = np.arange(n, dtype=np.int64)
        if self.shuffle:
            np.random.default_rng(self.random_state).shuffle(order)
        sizes = np.full(k, n // k, dtype=np.int64)
        sizes[: n % k] += 1
        start = 0
        for size in sizes:
            test = np.sort(order[start : start + size])
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.flatnonzero(mask).astype(np.int64), test
            start += size


class StratifiedKFold(_KFoldBase):
    """K folds keeping each class's share: every class has floor or ceil(n_c/K) per fold.

    Each class's indices (shuffled when ``shuffle=True``) are dealt round-robin to the
    folds, continuing where the previous class stopped, so fold sizes also differ by at
    most one. Not index-identical to scikit-learn's folds, but the same guarantees.
    """

    def fold_assignment(self, y: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Fold number (0..K-1) of every sample, host int64 array of shape (n,)."""
        k = _check_splits(self.n_splits)
        y_host = _labels_host(y)
        _, enc, counts = np.unique(y_host, return_inverse=True, return_counts=True)
        if counts.max() < k:
            raise InvalidInputError(
                f"n_splits={k} cannot be greater than the number of members in each class "
                f"(largest class has {counts.max()})"
            )
        if rng is None:
            rng = np.random.default_rng(self.random_state)
        fold = np.empty(y_host.shape[0], dtype=np.int64)
        offset = 0
        for c in range(counts.shape[0]):
            members = np.flatnonzero(enc == c)
            if self.shuffle:
                members = rng.permutation(members)
            fold[members] = (offset + np.arange(members.shape[0])) % k
            offset = (offset + members.shape[0]) % k
        return fold

    def split(self, X: Any, y: Any, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(train_idx, test_idx)`` host int64 arrays, sorted."""
        if y is None:
            raise InvalidInputError("StratifiedKFold.split needs y")
        y_host = _labels_host(y)
        if _n_samples(X) != y_host.shape[0]:
            raise InvalidInputError(f"X has {_n_samples(X)} samples but y has {y_host.shape[0]}")
        yield from _split_by_fold(self.fold_assignment(y_host), _check_splits(self.n_splits))


def _split_by_fold(fold: np.ndarray, k: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for f in range(k):
        test = np.flatnonzero(fold == f).astype(np.int64)
        train = np.flatnonzero(fold != f).astype(np.int64)
        yield train, test


class RepeatedStratifiedKFold(BaseEstimator):
    """``n_repeats`` shuffled :class:`StratifiedKFold` runs from one seeded generator."""

    def __init__(self, *, n_splits: int = 5, n_repeats: int = 10, random_state: Any = None):
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return _check_splits(self.n_splits) * self._repeats()

    def _repeats(self) -> int:
        return check_int(self.n_repeats, name="n_repeats", low=1)

    def split(self, X: Any, y: Any, groups: Any = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        rng = np.random.default_rng(self.random_state)
        inner = StratifiedKFold(self.n_splits, shuffle=True)
        y_host = _labels_host(y)
        for _ in range(self._repeats()):
            yield from _split_by_fold(inner.fold_assignment(y_host, rng), _check_splits(self.n_splits))


@on_input_device
def train_test_split(
    *arrays: Any,
    test_size: float | int | None = None,
    train_size: float | int | None = None,
    random_state: Any = None,
    shuffle: bool = True,
    stratify: Any = None,
) -> list[Any]:
    """Split arrays into train and test parts, like scikit-learn's ``train_test_split``.

    Returns ``[a_train, a_test, b_train, b_test, ...]``, each in its input's namespace
    (lists become NumPy arrays). ``test_size`` defaults to 0.25. With ``stratify``, each
    class contributes ``round(share·n_c)`` test samples (largest remainders first).
    """
    if not arrays:
        raise InvalidInputError("train_test_split needs at least one array")
    n = _n_samples(arrays[0])
    for a in arrays[1:]:
        if _n_samples(a) != n:
            raise InvalidInputError(f"arrays have inconsistent lengths: {[_n_samples(a) for a in arrays]}")
    n_test = _n_test(n, test_size, train_size)
    rng = np.random.default_rng(random_state)
    if stratify is not None:
        if not shuffle:
            raise InvalidInputError("stratify requires shuffle=True")
        strat = _labels_host(stratify, "stratify")
        if strat.shape[0] != n:
            raise InvalidInputError(f"stratify has {strat.shape[0]} labels but the arrays have {n} samples")
        test_idx = _stratified_test(strat, n_test, rng)
    elif shuffle:
        test_idx = np.sort(rng.permutation(n)[:n_test])
    else:
        test_idx = np.arange(n - n_test, n)
    mask = np.ones(n, dtype=bool)
    mask[test_idx] = False
    train_idx = np.flatnonzero(mask)
    if shuffle:
        train_idx = rng.permutation(train_idx)
        test_idx = rng.permutation(test_idx)
    out = []
    for a in arrays:
        out.extend([take_rows(a, train_idx), take_rows(a, test_idx)])
    return out


def _n_test(n: int, test_size: Any, train_size: Any) -> int:
    def count(size: Any, name: str) -> int | None:
        if size is None:
            return None
        if isinstance(size, (bool, np.bool_)):
            # True is an int to operator.index: it would have meant one sample (scikit-learn
            # refuses it with "Invalid value for test_size: True").
            raise InvalidInputError(
                f"Invalid value for {name}: {size!r} (a fraction in (0, 1), a number of samples, or None)"
            )
        if isinstance(size, (float, np.floating)):
            size = float(size)
            if not 0.0 < size < 1.0:
                raise InvalidInputError(f"{name} as a fraction must be in (0, 1), got {size}")
            return int(np.ceil(size * n)) if name == "test_size" else int(np.floor(size * n))
        size = operator.index(size)
        if not 0 < size < n:
            raise InvalidInputError(f"{name} must be in [1, {n - 1}], got {size}")
        return size

    t, tr = count(test_size, "test_size"), count(train_size, "train_size")
    if t is None:
        t = n - tr if tr is not None else int(np.ceil(0.25 * n))
    if tr is not None and t + tr > n:
        raise InvalidInputError(f"test_size + train_size = {t + tr} exceeds n_samples = {n}")
    if not 0 < t < n:
        raise InvalidInputError(f"the split leaves an empty part (n={n}, n_test={t})")
    return t


def _stratified_test(y: np.ndarray, n_test: int, rng: np.random.Generator) -> np.ndarray:
    classes, enc, counts = np.unique(y, return_inverse=True, return_counts=True)
    if counts.min() < 2:
        # A one-member class cannot be in both parts; scikit-learn refuses it in these words.
        few = classes[counts < 2].tolist()
        raise InvalidInputError(
            f"The least populated classes in y have only {int(counts.min())} member, which is too few. "
            "The minimum number of groups for any class cannot be less than 2. "
            f"Classes with too few members are: {few}"
        )
    # Every class in both parts needs parts at least as large as the number of classes:
    # scikit-learn refuses smaller ones in these words (gpuknn gave a split missing classes).
    for name, size in (("test_size", n_test), ("train_size", y.shape[0] - n_test)):
        if size < classes.shape[0]:
            raise InvalidInputError(
                f"The {name} = {size} should be greater or equal to the number of classes = {classes.shape[0]}"
            )
    exact = counts * (n_test / y.shape[0])
    take = np.floor(exact).astype(np.int64)
    short = n_test - int(take.sum())
    if short > 0:
        take[np.argsort(-(exact - take), kind="stable")[:short]] += 1
    picked = [rng.permutation(np.flatnonzero(enc == c))[: take[c]] for c in range(counts.shape[0])]
    return np.sort(np.concatenate(picked))
