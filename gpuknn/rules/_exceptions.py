"""Exception rules: what holds on the examples a general rule covers but misclassifies.

For each general rule ``if A then c`` (a ROCCER rule, or a decision tree's leaf), the rows it
covers of another class are its errors; exception rules ``if E then d`` (``d != c``) are class
association rules mined on the covered rows, with support counted against the errors.
An exception is kept when it is found again on most cross-validation folds' training parts
(stable), as in the thesis: "if A then c, except if E then d".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backend import array_namespace, device_of, from_numpy, to_numpy
from .._labels import encode_host
from ..base import BaseEstimator, check_is_fitted
from ..errors import InvalidInputError
from ._apriori import _check_fraction, _check_max_len, _mine, _rules_from
from ._coverage import rule_matches
from ._items import ItemEncoder
from ._roccer import ROCCERClassifier, _as_table, first_match

__all__ = ["ExceptionRules", "tree_rules"]


def tree_rules(tree: Any, feature_names: list[str] | None = None) -> list[tuple[int, str, int]]:
    """The leaves of a fitted scikit-learn decision tree as rules.

    Parameters
    ----------
    tree : DecisionTreeClassifier (fitted)
    feature_names : list of str, optional
        Names of the tree's features (default: ``feature_names_in_`` or ``x0, x1, ...``).

    Returns
    -------
    list of (leaf, condition, class_index)
        ``leaf`` is the node id that ``tree.apply`` returns, ``condition`` the conjunction of
        the tests on the path (``"x2 <= 0.5 and x0 > 1.2"``), ``class_index`` the leaf's
        majority class (an index into ``tree.classes_``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> t = DecisionTreeClassifier(max_depth=1).fit(np.array([[0.0], [1.0]]), [0, 1])
    >>> tree_rules(t)
    [(1, 'x0 <= 0.5', 0), (2, 'x0 > 0.5', 1)]
    """
    t = tree.tree_
    if feature_names is None:
        names = getattr(tree, "feature_names_in_", None)
        feature_names = list(names) if names is not None else [f"x{j}" for j in range(tree.n_features_in_)]
    out = []
    stack = [(0, [])]
    while stack:
        node, conds = stack.pop()
        left, right = t.children_left[node], t.children_right[node]
        if left == right:  # a leaf
            out.append((int(node), " and ".join(conds) or "true", int(np.argmax(t.value[node][0]))))
            continue
        name, thr = feature_names[t.feature[node]], float(t.threshold[node])
        stack.append((right, [*conds, f"{name} > {thr:.4g}"]))
        stack.append((left, [*conds, f"{name} <= {thr:.4g}"]))
    return sorted(out)


class ExceptionRules(BaseEstimator):
    """Stable exception rules of a rule list or a decision tree.

    Parameters
    ----------
    general : ROCCERClassifier or DecisionTreeClassifier
        A fitted model whose rules are the general rules: a ROCCER rule list (each rule, as
        it fires in the list; for two classes the default rule too) or a tree's leaves.
    min_support : float in (0, 1], default=0.3
        Minimum share of a general rule's misclassified rows that an exception must cover
        (with their class).
    min_confidence : float in (0, 1], default=0.8
        Minimum precision of an exception on the rows the general rule covers.
    max_len : int, default=2
        Largest exception antecedent.
    n_splits : int, default=5
        Cross-validation folds for the stability check (stratified).
    min_stability : float in [0, 1], default=0.6
        Minimum fraction of folds (their training parts) on which an exception is found again.
    min_errors : int, default=3
        General rules with fewer misclassified rows get no exceptions.
    n_bins : int, default=4
        Item bins for a tree's general rules (a ROCCER model brings its own items).
    random_state : int, default=0
        Seed of the folds.

    Attributes
    ----------
    exceptions_ : list of dict
        ``general`` (its text), ``items`` (names), ``cls`` (the exception's class label),
        ``support`` (share of the general rule's errors), ``confidence``, ``count`` (rows)
        and ``stability`` (fraction of folds).
    text_ : list of str
        General rules with their exceptions, readable.

    Notes
    -----
    Per general rule and fold, one Apriori run (products) on the rows it covers: the cost is
    about ``n_splits + 1`` times mining the data once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 0], [1, 1], [0, 0]] * 16)
    >>> y = np.array([0, 0, 1, 1, 0, 0] * 16)   # "if x0 > 0.5 then 1" fails where x1 = 1
    >>> tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    >>> ex = ExceptionRules(tree, n_splits=2).fit(X, y)
    >>> print("\\n".join(ex.text_))
    if x0 <= 0.5 then 0
    if x0 > 0.5 then 1
        except if x1 = 1 then 0  [16 rows, support 1.00 of the errors, confidence 1.00, stability 1.00]
    """

    def __init__(
        self,
        general: Any,
        *,
        min_support: float = 0.3,
        min_confidence: float = 0.8,
        max_len: int = 2,
        n_splits: int = 5,
        min_stability: float = 0.6,
        min_errors: int = 3,
        n_bins: int = 4,
        random_state: int = 0,
    ) -> None:
        self.general = general
        self.min_support = min_support
        self.min_confidence = min_confidence
        self.max_len = max_len
        self.n_splits = n_splits
        self.min_stability = min_stability
        self.min_errors = min_errors
        self.n_bins = n_bins
        self.random_state = random_state

    def _general_rules(self, X: Any) -> tuple[Any, list[str], Any, list[tuple[str, Any, Any]]]:
        """``(B, item names, classes, [(text, covered (n,) bool, class label)])``."""
        g = self.general
        if isinstance(g, ROCCERClassifier):
            check_is_fitted(g, "models_")
            B = g.encoder_.transform(X)
            xp = array_namespace(B)
            names, classes = g.encoder_.items_, np.asarray(g._classes_host)
            rules, lines = [], iter(g.rules_)
            for m in g.models_:
                f = first_match(rule_matches(B, m["A"], xp), xp) if m["antecedents"] else None
                L = len(m["antecedents"])
                for k in range(L + 1):
                    text = next(lines)
                    if k == L and len(classes) != 2:
                        continue  # "not c" is no single class
                    cls = m["positive"] if k < L else 1 - m["positive"]
                    cov = f == k if f is not None else xp.ones(B.shape[0], dtype=xp.bool, device=device_of(B))
                    rules.append((text.split("  [")[0], cov, classes[cls]))
            return B, names, classes, rules
        if hasattr(g, "tree_") and hasattr(g, "apply"):
            enc = ItemEncoder(n_bins=self.n_bins).fit(X)
            B = enc.transform(X)
            xp = array_namespace(B)
            leaf = from_numpy(
                np.asarray(g.apply(to_numpy(X) if not hasattr(X, "columns") else X)), xp, device=device_of(B)
            )
            rules = [
                (f"if {cond} then {g.classes_[c]}", leaf == node, g.classes_[c]) for node, cond, c in tree_rules(g)
            ]
            return B, enc.items_, np.asarray(g.classes_), rules
        raise InvalidInputError(
            f"general must be a fitted ROCCERClassifier or DecisionTreeClassifier, got {type(g).__name__}"
        )

    def _exceptions_of(self, B, codes, cov_idx, c, k, xp, dev) -> dict:
        """Exceptions ``E -> d`` of the general rule predicting class ``c`` on rows ``cov_idx``."""
        if cov_idx.size == 0:
            return {}
        cc = codes[cov_idx]
        errors = int(np.sum(cc != c))
        if errors < self.min_errors:
            return {}
        m = cov_idx.size
        thr = np.full(k, np.inf)
        thr[np.arange(k) != c] = self.min_support * errors / m
        Bs = xp.take(B, from_numpy(cov_idx, xp, device=dev), axis=0)
        sets, cnt = _mine(Bs, from_numpy(cc, xp, device=dev), k, thr, self.max_len, xp)
        others = [d for d in range(k) if d != c]
        rs = _rules_from(sets, cnt, m, thr, self.min_confidence, None, np, None, allowed=others)
        out = {}
        for a, d, row, conf in zip(rs.antecedents, rs.target.tolist(), rs.counts, rs.confidence.tolist()):
            out[(a, d)] = (int(row[d]), int(row[d]) / errors, conf)
        return out

    def fit(self, X: Any, y: Any) -> ExceptionRules:
        """Find the stable exceptions of every general rule on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
        y : array-like, shape (n_samples,)

        Returns
        -------
        self
        """
        from sklearn.model_selection import StratifiedKFold  # noqa: PLC0415

        _check_fraction(self.min_support, "min_support")
        _check_fraction(self.min_confidence, "min_confidence")
        _check_max_len(self.max_len)
        if not (isinstance(self.min_stability, (int, float)) and 0 <= self.min_stability <= 1):
            raise InvalidInputError(f"min_stability must be in [0, 1], got {self.min_stability!r}")
        X = _as_table(X)
        B, names, classes, rules = self._general_rules(X)
        xp, dev = array_namespace(B), device_of(B)
        n = int(B.shape[0])
        cls_y, codes, counts, _ = encode_host(y, n)
        # the general model's classes index the codes (a tree may know classes y lacks)
        lookup = {v: i for i, v in enumerate(classes.tolist())}
        if any(v not in lookup for v in cls_y.tolist()):
            raise InvalidInputError(
                f"y holds classes the general model does not know: {sorted(set(cls_y.tolist()) - set(lookup))}"
            )
        codes = np.asarray([lookup[v] for v in cls_y.tolist()], dtype=np.int64)[codes]
        k = len(classes)
        covs = [np.flatnonzero(to_numpy(cov)) for _, cov, _ in rules]
        heads = [lookup[label] for _, _, label in rules]
        n_splits = min(self.n_splits, int(np.min(counts))) if counts.size > 1 else 0
        folds = []
        if n_splits >= 2:
            skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=self.random_state)
            folds = [tr for tr, _ in skf.split(np.zeros((n, 1)), codes)]
        self.exceptions_, self.text_ = [], []
        for (text, _, _), idx, c in zip(rules, covs, heads):
            self.text_.append(text)
            found = self._exceptions_of(B, codes, idx, c, k, xp, dev)
            if not found:
                continue
            seen = dict.fromkeys(found, 0)
            for tr in folds:
                again = self._exceptions_of(B, codes, np.intersect1d(idx, tr), c, k, xp, dev)
                for key in seen:
                    seen[key] += key in again
            kept = []
            for (a, d), (count, sup, conf) in sorted(found.items(), key=lambda kv: (-kv[1][0], len(kv[0][0]))):
                stability = seen[(a, d)] / len(folds) if folds else 1.0
                if stability < self.min_stability:
                    continue
                # an extra item that changes no count (true on every row already) says nothing
                if any(d == d2 and count == c2 and set(a2) <= set(a) for a2, d2, c2 in kept):
                    continue
                kept.append((a, d, count))
                items = [names[i] for i in a]
                self.exceptions_.append(
                    {
                        "general": text,
                        "items": items,
                        "cls": classes[d],
                        "support": sup,
                        "confidence": conf,
                        "count": count,
                        "stability": stability,
                    }
                )
                self.text_.append(
                    f"    except if {' and '.join(items)} then {classes[d]}  "
                    f"[{count} rows, support {sup:.2f} of the errors, confidence {conf:.2f}, "
                    f"stability {stability:.2f}]"
                )
        return self
