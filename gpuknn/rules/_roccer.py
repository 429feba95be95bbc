"""ROCCER: rule selection by the ROC convex hull (Prati & Flach, IJCAI 2005).

A rule list (a decision list ending in the default rule) traces a ROC curve: rule ``k``,
counted on the rows no earlier rule covers, adds its ``(fp_k, tp_k)`` to the curve's point.
ROCCER starts from the default rule alone and scans candidate rules (class association rules
for the positive class), inserting a rule where it lies above the current curve, then removes
rules that make the curve concave; the list's curve stays convex, so it is its own ROC convex
hull, and a row's score is the slope (as a precision) of the segment of the first rule that
fires.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._labels import encode_host
from ..base import BaseEstimator, check_is_fitted, prediction_accuracy
from ..errors import InvalidInputError
from ._apriori import _mine, _rules_from, antecedent_matrix
from ._coverage import exact_float, rule_matches
from ._items import ItemEncoder, _is_device_array, check_2d

__all__ = ["ROCCERClassifier", "roccer_select", "first_match"]


def first_match(M: Any, xp: Any) -> Any:
    """Index of the first True column of each row of bool ``M`` (n, L); ``L`` where none is.

    One argmax over ``[M | 1]`` (int8), on M's device.

    Examples
    --------
    >>> import numpy as np, array_api_compat.numpy as xp
    >>> first_match(np.array([[False, True], [False, False], [True, True]]), xp).tolist()
    [1, 2, 0]
    """
    n = int(M.shape[0])
    ones = xp.ones((n, 1), dtype=xp.int8, device=device_of(M))
    return xp.argmax(xp.concat([xp.astype(M, xp.int8), ones], axis=1), axis=1)


def _contiguous(a: Any) -> Any:
    """``a`` laid out row-major (a transpose is a view in NumPy and torch)."""
    if hasattr(a, "contiguous"):  # torch
        return a.contiguous()
    if hasattr(a, "flags") and not a.flags["C_CONTIGUOUS"]:  # NumPy, CuPy
        return a.copy()
    return a


def _segments(R: Any, lst: list, pos: Any, xp: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(tp, fp, f)`` of rule list ``lst`` (rows of the candidates' transposed matches ``R``,
    (n_candidates, n_rows)): each rule's counts on the rows no earlier rule covers, the
    default rule last, and each row's first rule."""
    n = int(R.shape[1])
    dev = device_of(R)
    L = len(lst)
    if L:
        sel = xp.take(R, from_numpy(np.asarray(lst, dtype=np.int64), xp, device=dev), axis=0)
        k = xp.arange(L, dtype=xp.int64, device=dev)[:, None]
        # the first covering rule: a min down the columns (L if none), row-major friendly
        f = xp.min(xp.where(sel, k, xp.full_like(k, L)), axis=0)
    else:
        f = xp.zeros(n, dtype=xp.int64, device=dev)
    onehot = xp.astype(f[None, :] == xp.arange(L + 1, dtype=f.dtype, device=dev)[:, None], dtype)
    lab = xp.stack([xp.astype(pos, dtype), xp.astype(~pos, dtype)], axis=1)
    c = to_numpy(xp.astype(onehot @ lab, xp.int64))
    return c[:, 0], c[:, 1], f


def roccer_select(M: Any, pos: Any, xp: Any, *, block: int = 64) -> tuple[list, np.ndarray, np.ndarray]:
    """Select a rule list from candidates by the ROC convex hull.

    Parameters
    ----------
    M : bool array, shape (n_rows, n_candidates)
        Which rows each candidate rule covers, candidates in scan order.
    pos : bool array, shape (n_rows,)
        The positive class.
    xp : namespace
    block : int, default=64
        Candidates scored per product (doubled while a block inserts nothing).

    Returns
    -------
    rules : list of int
        Selected candidates, in list order.
    tp, fp : int64 ndarray, shape (len(rules) + 1,)
        Each rule's counts on the rows no earlier rule covers; the default rule last.

    Notes
    -----
    For a block of candidates, their counts at every position ``j`` of the current list (on
    the rows not covered by rules ``0..j-1``) are two products, ``M_blockᵀ @ (U ∘ pos)`` and
    ``M_blockᵀ @ (U ∘ ¬pos)`` with ``U[i, j] = first_rule(i) >= j``: O(n_rows * block * L).
    A candidate goes above the curve at position ``j`` exactly when its slope there,
    ``tp_cj / fp_cj``, exceeds that of rule ``j`` (the segment leaving the same point); it is
    inserted at the first such ``j``. After an insertion, while two consecutive segments
    turn upwards (``tp_k fp_{k+1} < tp_{k+1} fp_k``), the rule of the shallower one is
    removed (the next rule if the shallower one is the new rule; the rule, whatever it is,
    if the steeper segment is the default rule's), and rules that no longer cover anything
    are dropped; once convex, rules left without positives (slope 0) are dropped too. The
    host holds only the list's few counts (sequential and small).

    Examples
    --------
    >>> import numpy as np, array_api_compat.numpy as xp
    >>> pos = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    >>> M = np.array([[1, 1, 0, 0, 0, 0, 0, 0],      # 2 positives, no negative
    ...               [1, 1, 1, 1, 1, 1, 1, 1]], dtype=bool).T   # everything: the default's slope
    >>> rules, tp, fp = roccer_select(M, pos, xp)
    >>> rules, tp.tolist(), fp.tolist()
    ([0], [2, 1], [0, 5])
    """
    n = int(M.shape[0])
    dev = device_of(M)
    dtype = exact_float(xp, n)
    n_cand = int(M.shape[1])
    lst: list[int] = []
    # Candidates as rows, converted once: each block is a slice of rows, the list's rules a
    # gather of rows, and both read memory in order.
    R = _contiguous(M.T)
    MT = xp.astype(R, dtype)
    tp, fp, f = _segments(R, lst, pos, xp, dtype)
    posf, negf = xp.astype(pos, dtype), xp.astype(~pos, dtype)
    start, size, W = 0, block, None
    while start < n_cand:
        stop = min(n_cand, start + size)
        L = len(lst)
        if W is None:  # the list changed: [U ∘ pos | U ∘ ¬pos], U[i, j] = first_rule(i) >= j
            U = xp.astype(f[:, None] >= xp.arange(L + 1, dtype=f.dtype, device=dev)[None, :], dtype)
            W = xp.concat([U * posf[:, None], U * negf[:, None]], axis=1)
        counts = to_numpy(xp.astype(MT[start:stop, :] @ W, xp.int64))  # (b, 2 (L+1))
        tpc, fpc = counts[:, : L + 1], counts[:, L + 1 :]
        above = (tpc * fp[None, :] > tp[None, :] * fpc) & (tpc > 0)
        hit = np.flatnonzero(above.any(axis=1))
        if hit.size == 0:
            start, size = stop, size * 2
            continue
        c = int(hit[0])
        j = int(np.argmax(above[c]))
        new = start + c
        lst.insert(j, new)
        while True:  # remove what the insertion made concave (or empty)
            tp, fp, f = _segments(R, lst, pos, xp, dtype)
            empty = [k for k in range(len(lst)) if tp[k] + fp[k] == 0]
            if empty:
                for k in reversed(empty):
                    del lst[k]
                continue
            bad = np.flatnonzero(tp[:-1] * fp[1:] < tp[1:] * fp[:-1])
            if bad.size == 0:
                # Convex. A rule left without positives has slope 0, and so (convexity) has
                # every segment after it: dropping such rules leaves the curve as it is.
                useless = [k for k in range(len(lst)) if tp[k] == 0]
                if not useless:
                    break
                for k in reversed(useless):
                    del lst[k]
                continue
            k = int(bad[0])
            if k + 1 == len(lst):  # the steeper segment is the default rule's: rule k goes
                del lst[k]
            elif lst[k] == new:
                del lst[k + 1]
            else:
                del lst[k]
        start, size, W = new + 1, block, None
    return lst, tp, fp


def _as_table(X: Any) -> Any:
    """A DataFrame or an array of some namespace as it is; other host data as a NumPy array."""
    if hasattr(X, "tocsr"):
        raise InvalidInputError(
            f"X is a sparse matrix ({type(X).__name__}); sparse input is not supported: "
            "pass a dense array (X.toarray())"
        )
    if hasattr(X, "columns") or _is_device_array(X) or isinstance(X, np.ndarray):
        return X
    try:
        return np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"X cannot be read as a table: {exc}") from None


class ROCCERClassifier(ClassifierMixin, BaseEstimator):
    """Rule list selected by the ROC convex hull (ROCCER, Prati & Flach 2005).

    Candidate rules are class association rules (Apriori over the items of
    :class:`~gpuknn.rules.ItemEncoder`) whose head is the positive class; they are scanned in
    order of decreasing Laplace accuracy (then support, then shorter antecedent first) and
    inserted into a decision list while they lie above its ROC curve (see
    :func:`roccer_select`). Two classes: the positive class is the smaller one (the later
    label on a tie). More classes: one list per class against the rest.

    Rules for the negative class are not used. Reversed, such a rule would rank its rows last:
    in a decision list it can only stand just before the default rule, where the positive
    rules of low confidence that ROCCER already scans play the same part; leaving them out
    halves the candidates.

    Parameters
    ----------
    min_support : float in (0, 1], default=0.05
        Minimum support of a rule as a fraction of the positive class's rows (the thesis'
        form: ``count(antecedent and positive) >= min_support * n_positive``).
    min_confidence : float in (0, 1], default=0.5
        Minimum precision of a candidate on the training data.
    max_len : int, default=3
        Largest antecedent.
    n_bins : int, default=4
        Equal-frequency bins of numeric attributes (:class:`ItemEncoder`).
    nominal : list, optional
        Nominal columns (:class:`ItemEncoder`).

    Attributes
    ----------
    classes_ : array, shape (n_classes,)
    encoder_ : ItemEncoder
    models_ : list of dict
        One per positive class (one for two classes): ``positive`` (class index),
        ``antecedents`` (item-index tuples, list order), ``tp``, ``fp`` (counts per segment,
        the default rule last) and ``proba`` (each segment's precision ``tp / (tp + fp)``).
    rules_ : list of str
        The rule lists as text, e.g. ``"if tear-prod-rate = normal and astigmatism = no then
        soft  [tp=5 fp=1 p=0.833]"``, each list ending with its default rule.
    n_features_in_ : int

    Notes
    -----
    Fitting mines the candidates once for all classes (:func:`gpuknn.rules.class_association_rules`'
    products), forms the candidates' match matrix (one GEMM, n_rows x n_candidates) and runs
    :func:`roccer_select` per positive class. Predicting is one GEMM against the selected
    rules and an argmax.

    Examples
    --------
    >>> import numpy as np
    >>> from gpuknn.rules import ROCCERClassifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 5)
    >>> y = np.array([0, 0, 0, 1] * 5)
    >>> clf = ROCCERClassifier(min_support=0.5).fit(X, y)
    >>> clf.rules_
    ['if x0 = 1 and x1 = 1 then 1  [tp=5 fp=0 p=1]', 'else 0  [tp=0 fp=15 p=0]']
    >>> clf.predict(np.array([[1, 1], [0, 1]])).tolist()
    [1, 0]
    """

    def __init__(
        self,
        min_support: float = 0.05,
        min_confidence: float = 0.5,
        max_len: int = 3,
        n_bins: int = 4,
        nominal: Any = None,
    ) -> None:
        self.min_support = min_support
        self.min_confidence = min_confidence
        self.max_len = max_len
        self.n_bins = n_bins
        self.nominal = nominal

    def _bookkeeping(self, X: Any, reset: bool) -> None:
        from sklearn.utils.validation import validate_data as _sk_validate  # noqa: PLC0415

        try:
            _sk_validate(self, X, skip_check_array=True, reset=reset)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None

    def fit(self, X: Any, y: Any) -> ROCCERClassifier:
        """Mine candidate rules and select rule lists by the ROC convex hull.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self
        """
        from ._apriori import _check_fraction, _check_max_len  # noqa: PLC0415

        min_support = _check_fraction(self.min_support, "min_support")
        min_conf = _check_fraction(self.min_confidence, "min_confidence")
        max_len = _check_max_len(self.max_len)
        if max_len is None:
            raise InvalidInputError("max_len must be an integer >= 1 for ROCCERClassifier, got None")
        X = _as_table(X)
        self.encoder_ = ItemEncoder(n_bins=self.n_bins, nominal=self.nominal).fit(X)
        B = self.encoder_.transform(X)
        self._bookkeeping(X if hasattr(X, "columns") or _is_device_array(X) else np.asarray(X, dtype=object), True)
        xp = array_namespace(B)
        dev = device_of(B)
        n = int(B.shape[0])
        classes, codes, counts, _ = encode_host(y, n)
        self._classes_host = classes.tolist()  # a list: bookkeeping, not an array attribute
        self.classes_ = classes
        if classes.dtype.kind in "biuf" and _is_device_array(X):
            self.classes_ = from_numpy(classes, xp, device=dev)
        k = classes.shape[0]
        if k == 1:
            positives = []
        elif k == 2:
            positives = [0 if counts[0] < counts[1] else 1]
        else:
            positives = list(range(k))
        # Thresholds per positive class, as fractions of n (the thesis' support is relative to
        # the positive class's share); the other classes never make an antecedent frequent.
        thr = np.full(k, np.inf)
        for c in positives:
            thr[c] = min_support * counts[c] / n
        codes_x = from_numpy(codes, xp, device=dev)
        if positives:
            sets, cnt = _mine(B, codes_x, k, thr, max_len, xp)
            rules = _rules_from(sets, cnt, n, thr, min_conf, classes, np, None, allowed=positives)
        self.models_ = []
        for c in positives:
            sel = np.flatnonzero(rules.target == c)
            ante = [rules.antecedents[i] for i in sel]
            rc = rules.counts[sel]
            tpc, cov = rc[:, c], rc.sum(axis=1)
            lap = (tpc + 1) / (cov + 2)
            order = np.lexsort((np.asarray([len(a) for a in ante]), -tpc, -lap))
            ante = [ante[i] for i in order]
            pos = codes_x == c
            if ante:
                A = antecedent_matrix(ante, B.shape[1], xp, dev)
                M = rule_matches(B, A, xp)
                lst, tp, fp = roccer_select(M, pos, xp)
            else:
                lst, tp, fp = [], np.asarray([counts[c]]), np.asarray([n - counts[c]])
            cov = tp + fp
            proba = np.where(cov > 0, tp / np.where(cov == 0, 1, cov), 0.0)
            chosen = [ante[i] for i in lst]
            self.models_.append(
                {
                    "positive": c,
                    "antecedents": chosen,
                    "tp": tp,
                    "fp": fp,
                    "proba": proba,
                    "A": antecedent_matrix(chosen, B.shape[1], xp, dev),
                }
            )
        self.rules_ = self._text()
        return self

    def _text(self) -> list[str]:
        names = self.encoder_.items_
        lines = []
        if not self.models_:
            return [f"else {self._classes_host[0]}  (one class)"]
        for m in self.models_:
            c = self._classes_host[m["positive"]]
            for a, tp, fp, p in zip(m["antecedents"], m["tp"], m["fp"], m["proba"]):
                cond = " and ".join(names[i] for i in a)
                lines.append(f"if {cond} then {c}  [tp={tp} fp={fp} p={p:.3g}]")
            rest = self._classes_host[1 - m["positive"]] if len(self._classes_host) == 2 else f"not {c}"
            lines.append(f"else {rest}  [tp={m['tp'][-1]} fp={m['fp'][-1]} p={m['proba'][-1]:.3g}]")
        return lines

    def _scores(self, X: Any) -> tuple[Any, Any]:
        """Per model, each row's segment precision (n_samples, n_models), and the namespace."""
        check_is_fitted(self, "models_")
        X = _as_table(X)
        check_2d(X)
        self._bookkeeping(X if hasattr(X, "columns") or _is_device_array(X) else np.asarray(X, dtype=object), False)
        B = self.encoder_.transform(X)
        xp = array_namespace(B)
        dev = device_of(B)
        cols = []
        for m in self.models_:
            p = from_numpy(m["proba"], xp, device=dev)
            A = m["A"] if array_namespace(m["A"]) is xp else antecedent_matrix(m["antecedents"], B.shape[1], xp, dev)
            if len(m["antecedents"]):
                f = first_match(rule_matches(B, A, xp), xp)
            else:
                f = xp.zeros(B.shape[0], dtype=xp.int64, device=dev)
            cols.append(xp.take(p, f))
        if not cols:
            return xp.zeros((B.shape[0], 0), dtype=xp.float64, device=dev), xp
        return xp.stack(cols, axis=1), xp

    def _index_to_label(self, idx: Any, xp: Any) -> Any:
        if isinstance(self.classes_, np.ndarray):  # string labels (or host data): on the host
            return self.classes_[to_numpy(idx)]
        return xp.take(self.classes_, idx)

    def decision_function(self, X: Any) -> Any:
        """Rule-list scores: the precision of the hull segment of the first rule that fires.

        Parameters
        ----------
        X : array-like, shape (n_samples, n_features)

        Returns
        -------
        scores : float64 array, shape (n_samples,) for two classes, else (n_samples, n_classes)
            Two classes: ``p - 0.5`` for ``classes_[1]`` (positive means ``classes_[1]``),
            with ``p`` that class's segment precision; more: each class's precision.
        """
        check_is_fitted(self, "models_")
        S, xp = self._scores(X)
        if len(self._classes_host) == 2:
            s = S[:, 0] - 0.5
            return s if self.models_[0]["positive"] == 1 else -s
        if len(self._classes_host) == 1:
            return xp.zeros(S.shape[0], dtype=xp.float64, device=device_of(S))
        return S

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities: the segment precisions (rows normalised for more classes).

        Returns
        -------
        proba : float64 array, shape (n_samples, n_classes)
        """
        check_is_fitted(self, "models_")
        S, xp = self._scores(X)
        k = len(self._classes_host)
        dev = device_of(S)
        if k == 1:
            return xp.ones((S.shape[0], 1), dtype=xp.float64, device=dev)
        if k == 2:
            p = S[:, 0]
            cols = [1 - p, p] if self.models_[0]["positive"] == 1 else [p, 1 - p]
            return xp.stack(cols, axis=1)
        tot = xp.sum(S, axis=1, keepdims=True)
        flat = xp.full_like(S, 1.0 / k)
        return xp.where(tot > 0, S / xp.where(tot > 0, tot, xp.ones_like(tot)), flat)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y`` (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), optional

        Returns
        -------
        float
        """
        return prediction_accuracy(self.predict(X), y, sample_weight)

    def predict(self, X: Any) -> Any:
        """Predicted class labels.

        Returns
        -------
        y : array, shape (n_samples,)
        """
        check_is_fitted(self, "models_")
        k = len(self._classes_host)
        if k == 1:
            S, xp = self._scores(X)
            idx = xp.zeros(S.shape[0], dtype=xp.int64, device=device_of(S))
        elif k == 2:
            d = self.decision_function(X)
            xp = array_namespace(d)
            idx = xp.astype(d > 0, xp.int64)
        else:
            S, xp = self._scores(X)
            idx = xp.argmax(S, axis=1)
        return self._index_to_label(idx, xp)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value sets no item: the rule does not fire
        return tags
