"""Ranks of methods within each data set (Demšar 2006, section 3.2.2)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import rankdata

from ._validation import check_table

__all__ = ["average_ranks", "rank_table"]


def rank_table(scores: Any, *, greater_is_better: bool = True) -> np.ndarray:
    """Rank of each method within each data set: 1 = best, ties get the average of their ranks.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite.
    greater_is_better : bool, default True
        Whether a larger score is better (accuracy, AUC) or worse (error, loss).

    Returns
    -------
    ranks : numpy.ndarray of float64, shape (n_datasets, n_methods)
        Each row is a permutation of 1..n_methods, tied methods sharing their mean rank.

    Complexity O(N k log k) for N data sets and k methods.

    Examples
    --------
    >>> rank_table([[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]]).tolist()
    [[1.0, 2.5, 2.5], [2.0, 1.0, 3.0]]
    """
    s = check_table(scores, greater_is_better=greater_is_better, min_datasets=1, min_methods=1)
    return rankdata(-s, axis=1, method="average")


def average_ranks(scores: Any, *, greater_is_better: bool = True) -> np.ndarray:
    """Average rank of each method over the data sets (1 = best; ties averaged within a data set).

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite.
    greater_is_better : bool, default True
        Whether a larger score is better.

    Returns
    -------
    ranks : numpy.ndarray of float64, shape (n_methods,)
        ``R_j = (1/N) sum_i r_ij``; they sum to ``k (k + 1) / 2``.

    Complexity O(N k log k).

    References
    ----------
    J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
    JMLR 7:1–30, 2006 (section 3.2.2).

    Examples
    --------
    >>> average_ranks([[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]]).tolist()
    [1.5, 1.75, 2.75]
    >>> average_ranks([[0.1, 0.2], [0.3, 0.2]], greater_is_better=False).tolist()
    [1.5, 1.5]
    """
    return rank_table(scores, greater_is_better=greater_is_better).mean(axis=0)
