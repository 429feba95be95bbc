"""Frequent itemsets and class association rules, level by level, counted as matrix products.

Level 1 is a column sum; level 2 one ``BᵀB`` GEMM per class; level ``l >= 3`` joins the
itemsets of level ``l - 1`` that share their first ``l - 2`` items, prunes candidates with an
infrequent subset (the Apriori property), and counts the survivors in blocks of products
(:func:`gpuknn.rules.rule_matches`). Candidate generation is host NumPy/Python: it is
combinatorial bookkeeping on small integer tables, inherently sequential; all counting, the
part that reads the data, stays on the data's device.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._labels import encode
from ..errors import InvalidInputError
from ._coverage import class_counts, exact_float, rule_matches
from ._items import check_items

__all__ = ["RuleSet", "frequent_itemsets", "class_association_rules", "antecedent_matrix"]

# Elements of one block's (n_rows, n_candidates) match matrix.
_BLOCK_ELEMENTS = 2**23


class RuleSet(NamedTuple):
    """Class association rules ``antecedent -> class``.

    Attributes
    ----------
    antecedents : list of tuple of int
        Item indices of each rule's antecedent (sorted).
    target : int64 array, shape (n_rules,)
        Index (into ``classes``) of each rule's class.
    counts : int64 array, shape (n_rules, n_classes)
        Rows of each class the antecedent covers.
    support, confidence : float64 arrays, shape (n_rules,)
        ``count(antecedent and class) / n`` and ``count(antecedent and class) / count(antecedent)``.
    classes : array, shape (n_classes,)
        The class labels.
    """

    antecedents: list
    target: Any
    counts: Any
    support: Any
    confidence: Any
    classes: Any


def antecedent_matrix(antecedents: list, n_items: int, xp: Any, device: Any = None) -> Any:
    """0/1 antecedent matrix (n_rules, n_items) of item-index tuples, in ``xp`` on ``device``.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> antecedent_matrix([(0, 2), (1,)], 3, xp).astype(int)
    array([[1, 0, 1],
           [0, 1, 0]])
    """
    A = np.zeros((len(antecedents), n_items), dtype=bool)
    for r, items in enumerate(antecedents):
        A[r, list(items)] = True
    return from_numpy(A, xp, device=device)


def _check_fraction(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0 < v <= 1:
        raise InvalidInputError(f"{name} must be a number in (0, 1], got {v!r}")
    return float(v)


def _check_max_len(max_len: Any) -> int | None:
    if max_len is None:
        return None
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 1:
        raise InvalidInputError(f"max_len must be None or an integer >= 1, got {max_len!r}")
    return int(max_len)


def _join(prev: np.ndarray, known: set) -> np.ndarray:
    """Candidates of the next level from sorted itemsets ``prev`` (m, l): pairs sharing their
    first ``l - 1`` items, kept when every ``l``-subset is in ``known`` (Apriori pruning)."""
    m, ell = prev.shape
    if m < 2:
        return np.empty((0, ell + 1), dtype=np.int64)
    prefix_change = np.ones(m, dtype=bool)
    if ell > 1:
        prefix_change[1:] = np.any(prev[1:, :-1] != prev[:-1, :-1], axis=1)
    starts = np.flatnonzero(prefix_change).tolist() + [m]
    out = []
    for s, e in zip(starts[:-1], starts[1:]):
        if e - s < 2:
            continue
        a, b = np.triu_indices(e - s, k=1)
        block = np.concatenate([prev[s + a], prev[s + b, -1:]], axis=1)
        out.append(block)
    if not out:
        return np.empty((0, ell + 1), dtype=np.int64)
    cand = np.concatenate(out)
    if ell >= 2:
        # The subsets dropping one of the first l - 1 items; the two dropping one of the last
        # two items are the joined parents, frequent by construction.
        keep = np.ones(cand.shape[0], dtype=bool)
        for drop in range(ell - 1):
            sub = np.delete(cand, drop, axis=1)
            keep &= np.fromiter((tuple(r) in known for r in sub.tolist()), dtype=bool, count=sub.shape[0])
        cand = cand[keep]
    return cand


def _mine(B: Any, codes: Any, n_classes: int, min_frac: np.ndarray, max_len: int | None, xp: Any):
    """Antecedents frequent for at least one class: ``count(antecedent, c) / n >= min_frac[c]``.

    Returns ``(itemsets, counts)``: a list of tuples of item indices (by level, each level in
    lexicographic order) and a host int64 array (n_itemsets, n_classes) of their per-class counts.
    """
    n = int(B.shape[0])
    dev = device_of(B)
    dtype = exact_float(xp, n)
    onehot = xp.astype(codes[:, None] == xp.arange(n_classes, dtype=codes.dtype, device=dev)[None, :], dtype)

    def frequent(counts: np.ndarray) -> np.ndarray:
        # count / n in float64, as mlxtend computes a support, so thresholds at ties agree
        return np.any(counts / n >= min_frac[None, :], axis=1)

    Bf = xp.astype(B, dtype)
    c1 = to_numpy(xp.astype(Bf.T @ onehot, xp.int64))  # (n_items, k): one GEMM
    keep1 = np.flatnonzero(frequent(c1))
    itemsets = [(int(i),) for i in keep1]
    all_counts = [c1[keep1]]
    if (max_len is not None and max_len < 2) or keep1.size < 2:
        return itemsets, np.concatenate(all_counts) if all_counts else np.empty((0, n_classes), np.int64)
    F = from_numpy(keep1, xp, device=dev)
    Bk = xp.take(Bf, F, axis=1)  # (n, f1): the frequent items only
    f1 = keep1.size
    iu, ju = np.triu_indices(f1, k=1)
    pair_counts = np.empty((iu.size, n_classes), dtype=np.int64)
    for c in range(n_classes):
        # level 2: one BᵀB GEMM per class (the rows of class c weight the product)
        G = to_numpy(xp.astype(Bk.T @ (Bk * onehot[:, c : c + 1]), xp.int64))
        pair_counts[:, c] = G[iu, ju]
    keep2 = frequent(pair_counts)
    level = np.stack([keep1[iu[keep2]], keep1[ju[keep2]]], axis=1)
    itemsets += [tuple(r) for r in level.tolist()]
    all_counts.append(pair_counts[keep2])
    # Local positions of items within Bk for the block products of higher levels.
    local = {int(g): i for i, g in enumerate(keep1)}
    size = 2
    block = max(1, min(8192, _BLOCK_ELEMENTS // max(n, 1)))
    while level.shape[0] >= 2 and (max_len is None or size < max_len):
        known = {tuple(r) for r in level.tolist()}
        cand = _join(level, known)
        size += 1
        if cand.shape[0] == 0:
            break
        counts = np.empty((cand.shape[0], n_classes), dtype=np.int64)
        loc = np.vectorize(local.__getitem__, otypes=[np.int64])(cand)
        for s in range(0, cand.shape[0], block):
            part = loc[s : s + block]
            A = np.zeros((part.shape[0], f1), dtype=bool)
            np.put_along_axis(A, part, True, axis=1)
            M = rule_matches(Bk, from_numpy(A, xp, device=dev), xp)
            counts[s : s + block] = to_numpy(class_counts(M, codes, n_classes, xp))
        keep = frequent(counts)
        level = cand[keep]
        itemsets += [tuple(r) for r in level.tolist()]
        all_counts.append(counts[keep])
    return itemsets, np.concatenate(all_counts)


def frequent_itemsets(B: Any, min_support: float = 0.1, max_len: int | None = None) -> tuple[list, Any]:
    """Frequent itemsets of an item matrix (Apriori, counted by matrix products).

    Parameters
    ----------
    B : bool array, shape (n_rows, n_items)
        Item matrix (e.g. :class:`~gpuknn.rules.ItemEncoder` output); any namespace.
    min_support : float in (0, 1], default=0.1
        Minimum fraction of rows holding every item of a set.
    max_len : int, optional
        Largest itemset size.

    Returns
    -------
    itemsets : list of tuple of int
        Item indices, by size then lexicographically.
    support : float64 array, shape (n_itemsets,)
        In B's namespace and on its device.

    Notes
    -----
    Level ``l`` costs one pass of products over the data per block of candidates,
    O(n_rows * n_frequent_items * n_candidates); the host does the joins.

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 1, 0], [1, 1, 1], [1, 0, 1]], dtype=bool)
    >>> sets, support = frequent_itemsets(B, min_support=0.6)
    >>> sets, support.round(3).tolist()
    ([(0,), (1,), (2,), (0, 1), (0, 2)], [1.0, 0.667, 0.667, 0.667, 0.667])
    """
    xp = array_namespace(B)
    B = check_items(B, xp)
    min_support = _check_fraction(min_support, "min_support")
    max_len = _check_max_len(max_len)
    codes = xp.zeros(B.shape[0], dtype=xp.int64, device=device_of(B))
    sets, counts = _mine(B, codes, 1, np.asarray([min_support]), max_len, xp)
    return sets, from_numpy(counts[:, 0] / B.shape[0], xp, device=device_of(B))


def class_association_rules(
    B: Any,
    y: Any,
    *,
    min_support: float = 0.1,
    min_confidence: float = 0.5,
    max_len: int | None = None,
    classes: Any = None,
) -> RuleSet:
    """Class association rules ``antecedent -> class`` of an item matrix and class labels.

    A rule is kept when ``support = count(antecedent and class) / n >= min_support`` and
    ``confidence = count(antecedent and class) / count(antecedent) >= min_confidence``: exactly the rules of
    mlxtend's ``association_rules`` on ``[B | onehot(y)]`` whose consequent is one class item
    and whose antecedent holds no class item.

    Parameters
    ----------
    B : bool array, shape (n_rows, n_items)
    y : array-like, shape (n_rows,)
        Class labels.
    min_support : float in (0, 1], default=0.1
    min_confidence : float in (0, 1], default=0.5
    max_len : int, optional
        Largest antecedent size (mlxtend's ``max_len`` is one more: the class item).
    classes : array-like, optional
        Class labels in the order of ``counts``' columns (default: sorted labels of y).

    Returns
    -------
    RuleSet
        Rules ordered by antecedent (size, then items) and class; arrays in B's namespace
        and on its device.

    Notes
    -----
    Per level one product pass per block of candidates plus one ``matches.T @ onehot(y)``:
    O(n_rows * n_candidates * (n_frequent_items + n_classes)).

    Examples
    --------
    >>> import numpy as np
    >>> B = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=bool)
    >>> rules = class_association_rules(B, np.array([1, 1, 0, 0]), min_support=0.25, min_confidence=0.6)
    >>> rules.antecedents, rules.target.tolist(), rules.confidence.round(3).tolist()
    ([(0,), (1,), (0, 1)], [1, 0, 0], [0.667, 1.0, 1.0])
    """
    xp = array_namespace(B)
    B = check_items(B, xp)
    min_support = _check_fraction(min_support, "min_support")
    min_confidence = _check_fraction(min_confidence, "min_confidence")
    max_len = _check_max_len(max_len)
    n = int(B.shape[0])
    _, cls, (codes,) = encode(y, labels=classes, names=("y",), discrete=True)
    codes = to_numpy(codes)
    if codes.shape[0] != n:
        raise InvalidInputError(f"B has {n} rows but y has {codes.shape[0]} labels")
    if (codes < 0).any():
        raise InvalidInputError("y holds labels that are not in classes")
    k = int(cls.shape[0])
    codes_x = from_numpy(codes, xp, device=device_of(B))
    sets, counts = _mine(B, codes_x, k, np.full(k, min_support), max_len, xp)
    return _rules_from(sets, counts, n, min_support, min_confidence, cls, xp, device_of(B))


def _rules_from(sets, counts, n, min_support, min_confidence, classes, xp, dev, allowed=None) -> RuleSet:
    """The rules ``set -> c`` meeting the thresholds (``allowed``: classes that may head a rule;
    ``min_support`` a scalar or one threshold per class)."""
    k = counts.shape[1]
    cov = counts.sum(axis=1, keepdims=True)
    support = counts / n
    # the exact ratio of counts (a ratio of rounded supports can miss a tie at the threshold)
    conf = counts / np.where(cov == 0, 1, cov)
    ok = (support >= np.broadcast_to(np.asarray(min_support, dtype=np.float64), (k,))[None, :]) & (
        conf >= min_confidence
    )
    if allowed is not None:
        ok &= np.isin(np.arange(k), allowed)[None, :]
    r, c = np.nonzero(ok)
    return RuleSet(
        antecedents=[sets[i] for i in r.tolist()],
        target=from_numpy(c.astype(np.int64), xp, device=dev),
        counts=from_numpy(counts[r], xp, device=dev),
        support=from_numpy(support[r, c], xp, device=dev),
        confidence=from_numpy(conf[r, c], xp, device=dev),
        classes=classes,
    )
