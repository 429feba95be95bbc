"""Apriori by matrix products against mlxtend (the oracle): frequent itemsets and class
association rules (issue 35)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import assert_xp, host
from test_rules_items import contact_lenses

from gpuknn.errors import InvalidInputError
from gpuknn.rules import ItemEncoder, class_association_rules, frequent_itemsets

mlxtend_fp = pytest.importorskip("mlxtend.frequent_patterns")


def random_items(seed, n=120, m=10, density=0.45):
    rng = np.random.default_rng(seed)
    # correlated columns, so that long itemsets are frequent
    base = rng.random((n, 3)) < 0.5
    B = (rng.random((n, m)) < density) | base[:, rng.integers(0, 3, m)] & (rng.random((n, m)) < 0.5)
    return B, rng.integers(0, 3, n)


def mlxtend_itemsets(B, min_support, max_len):
    df = pd.DataFrame(B, columns=[str(j) for j in range(B.shape[1])])
    fi = mlxtend_fp.apriori(df, min_support=min_support, max_len=max_len)
    return {tuple(sorted(int(i) for i in s)): v for s, v in zip(fi.itemsets, fi.support)}


def mlxtend_class_rules(B, y, min_support, min_confidence, max_len):
    """Rules of mlxtend on [B | onehot(y)] whose consequent is one class item."""
    items = pd.DataFrame(B, columns=[f"i{j}" for j in range(B.shape[1])])
    classes = pd.get_dummies(pd.Series(y).astype(str)).add_prefix("c")
    df = pd.concat([items, classes], axis=1)
    fi = mlxtend_fp.apriori(df, min_support=min_support, use_colnames=True, max_len=max_len + 1)
    ar = mlxtend_fp.association_rules(fi, len(df), metric="confidence", min_threshold=min_confidence)
    out = {}
    for a, c, s, conf in zip(ar.antecedents, ar.consequents, ar.support, ar.confidence):
        (head,) = c if len(c) == 1 else (None,)
        if head is None or not head.startswith("c") or any(x.startswith("c") for x in a):
            continue
        out[(tuple(sorted(int(x[1:]) for x in a)), int(head[1:]))] = (s, conf)
    return out


@pytest.mark.parametrize(("seed", "min_support", "max_len"), [(0, 0.1, None), (1, 0.2, 3), (2, 0.05, 2)])
def test_frequent_itemsets_equal_mlxtend(seed, min_support, max_len):
    B, _ = random_items(seed)
    want = mlxtend_itemsets(B, min_support, max_len)
    sets, support = frequent_itemsets(B, min_support=min_support, max_len=max_len)
    assert max(len(s) for s in sets) >= 3 or max_len == 2  # the block-product levels ran
    assert dict(zip(sets, support.tolist())) == pytest.approx(want, rel=0, abs=0)
    assert len(sets) == len(want)


def test_frequent_itemsets_on_every_backend(backend):
    B, _ = random_items(3)
    sets_np, sup_np = frequent_itemsets(B, min_support=0.15)
    sets, sup = frequent_itemsets(backend.asarray(B), min_support=0.15)
    assert sets == sets_np
    assert_xp(sup, sup_np, backend, dtype=backend.xp.float64)


@pytest.mark.parametrize(("seed", "min_support", "min_confidence", "max_len"), [(0, 0.05, 0.4, 3), (4, 0.08, 0.5, 2)])
def test_class_association_rules_equal_mlxtend(backend, seed, min_support, min_confidence, max_len):
    B, y = random_items(seed)
    want = mlxtend_class_rules(B, y, min_support, min_confidence, max_len)
    rules = class_association_rules(
        backend.asarray(B), backend.asarray(y), min_support=min_support, min_confidence=min_confidence, max_len=max_len
    )
    keys = list(zip(rules.antecedents, host(rules.target).tolist()))
    assert len(keys) == len(set(keys)) and set(keys) == set(want)
    np.testing.assert_allclose(host(rules.support), [want[k][0] for k in keys], rtol=1e-12)
    np.testing.assert_allclose(host(rules.confidence), [want[k][1] for k in keys], rtol=1e-12)
    counts = host(rules.counts)
    assert_xp(rules.counts, counts, backend)
    for (a, _c), row in zip(keys, counts):  # counts: a plain recount
        covered = B[:, list(a)].all(axis=1)
        np.testing.assert_array_equal(row, np.bincount(y[covered], minlength=3))


def test_contact_lenses_class_rules():
    X, y = contact_lenses()
    enc = ItemEncoder().fit(X)
    names = list(enc.get_feature_names_out())
    rules = class_association_rules(enc.transform(X), y, min_support=0.2, min_confidence=0.8, max_len=2)
    text = {
        (" and ".join(names[i] for i in a), str(rules.classes[c])): conf
        for a, c, conf in zip(rules.antecedents, rules.target.tolist(), rules.confidence.tolist())
    }
    assert text["astigmatism = no and tear-prod-rate = normal", "soft"] == pytest.approx(5 / 6)
    assert text["tear-prod-rate = reduced", "none"] == 1.0


def test_thresholds_are_checked():
    B, y = random_items(0)
    with pytest.raises(InvalidInputError, match="min_support"):
        frequent_itemsets(B, min_support=0)
    with pytest.raises(InvalidInputError, match="min_confidence"):
        class_association_rules(B, y, min_confidence=1.5)
    with pytest.raises(InvalidInputError, match="max_len"):
        frequent_itemsets(B, max_len=0)
    with pytest.raises(InvalidInputError, match="rows but y"):
        class_association_rules(B, y[:-1])
