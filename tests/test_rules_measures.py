"""Coverage as matrix products and rule measures, against plain-Python references (issue 35)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import assert_xp
from test_rules_items import contact_lenses

from gpuknn.errors import InvalidInputError
from gpuknn.rules import MEASURES, ItemEncoder, laplace, rule_counts, rule_matches, rule_measures
from gpuknn.rules._coverage import exact_float


def random_rules(seed, n=50, m=9, r=14, k=3):
    rng = np.random.default_rng(seed)
    B = rng.random((n, m)) < 0.5
    A = np.zeros((r, m), dtype=bool)
    for i in range(1, r):  # rule 0: the empty antecedent (matches every row)
        A[i, rng.choice(m, size=rng.integers(1, 4), replace=False)] = True
    y = rng.integers(0, k, n)
    target = rng.integers(0, k, r)
    return B, A, y, target


def reference_counts(B, A, y, k):
    """Plain Python: a row matches a rule when it holds each item of the antecedent."""
    out = []
    for a in A.tolist():
        items = [j for j, v in enumerate(a) if v]
        row = [0] * k
        for b, c in zip(B.tolist(), y.tolist()):
            if all(b[j] for j in items):
                row[c] += 1
        out.append(row)
    return np.asarray(out)


def div(a, b):
    return a / b if b else 0.0


def reference_measures(counts, totals, target, m=2.0):
    """Every measure of each rule from its contingency table, one rule at a time."""
    n, k = sum(totals), len(totals)
    out = {name: [] for name in MEASURES}
    for row, t in zip(counts.tolist(), target.tolist()):
        tp, cov = row[t], sum(row)
        fp, P = cov - tp, totals[t]
        N = n - P
        fn, tn = P - tp, N - fp
        prec, rec = div(tp, cov), div(tp, P)
        num, den = tp * tn, fp * fn
        vals = {
            "coverage": cov / n,
            "support": tp / n,
            "confidence": prec,
            "sensitivity": rec,
            "specificity": div(tn, N),
            "fpr": div(fp, N),
            "negrel": div(tn, tn + fn),
            "f_measure": div(2 * prec * rec, prec + rec),
            "wracc": cov / n * (prec - P / n),
            "laplace": (tp + 1) / (cov + k),
            "m_estimate": (tp + m * P / n) / (cov + m),
            "odds_ratio": num / den if den else (math.inf if num else math.nan),
            "lift": div(prec, P / n),
        }
        for name in MEASURES:
            out[name].append(vals[name])
    return {name: np.asarray(v) for name, v in out.items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_coverage_counts_and_measures_match_plain_python(backend, seed):
    B, A, y, target = random_rules(seed)
    k = 3
    want_counts = reference_counts(B, A, y, k)
    matches = rule_matches(backend.asarray(B), backend.asarray(A))
    want_matches = np.asarray([[all(b[j] for j in np.flatnonzero(a)) for a in A] for b in B])
    assert_xp(matches, want_matches, backend)
    counts = rule_counts(backend.asarray(B), backend.asarray(A), backend.asarray(y), k)
    assert_xp(counts, want_counts, backend)
    totals = np.bincount(y, minlength=k)
    got = rule_measures(counts, backend.asarray(totals), backend.asarray(target), m=3.0)
    want = reference_measures(want_counts, totals.tolist(), target, m=3.0)
    assert set(got) == set(MEASURES)
    for name in MEASURES:
        assert_xp(got[name], want[name], backend, dtype=backend.xp.float64, exact=False, rtol=1e-12)


def test_laplace_worked_values():
    assert laplace(1, 1, 2) == pytest.approx(2 / 3)  # 1 positive, 0 negatives covered
    assert laplace(1, 2, 2) == pytest.approx(1 / 2)  # 1 and 1
    m = rule_measures(np.array([[1, 0], [1, 1]]), np.array([4, 6]), np.array([0, 0]))
    np.testing.assert_allclose(m["laplace"], [2 / 3, 1 / 2])


def _lenses_from_arff():
    """The contact-lenses data as gpuknn's ARFF loader reads tests/data/contact-lenses.arff
    (the values as written, for rule learning)."""
    from pathlib import Path

    from gpuknn.datasets import encode_nominal, load_table

    t = load_table(Path(__file__).parent / "data" / "contact-lenses.arff")
    X = encode_nominal(t.X, t.categories, encoding="strings", feature_names=t.feature_names).X
    return pd.DataFrame(X, columns=t.feature_names), np.asarray(t.y).astype(str)


def test_contact_lenses_file_equals_the_rows_in_the_tests():
    X, y = _lenses_from_arff()
    X0, y0 = contact_lenses()
    order = np.lexsort(X.to_numpy().T[::-1])
    order0 = np.lexsort(X0.to_numpy().T[::-1])
    np.testing.assert_array_equal(X.to_numpy()[order], X0.to_numpy()[order0])
    np.testing.assert_array_equal(y[order], y0[order0])


@pytest.mark.parametrize("source", ["arff", "rows"])
def test_contact_lenses_rule_precision(source):
    X, y = _lenses_from_arff() if source == "arff" else contact_lenses()
    enc = ItemEncoder().fit(X)
    B = enc.transform(X)
    names = list(enc.get_feature_names_out())
    A = np.zeros((1, len(names)), dtype=bool)
    A[0, [names.index("astigmatism = no"), names.index("tear-prod-rate = normal")]] = True
    classes, codes = np.unique(y, return_inverse=True)
    counts = rule_counts(B, A, codes, 3)
    assert dict(zip(classes.tolist(), counts[0].tolist())) == {"hard": 0, "none": 1, "soft": 5}
    soft = int(np.flatnonzero(classes == "soft")[0])
    m = rule_measures(counts, np.bincount(codes), np.array([soft]))
    assert m["confidence"][0] == pytest.approx(5 / 6)
    assert m["sensitivity"][0] == pytest.approx(1.0)
    assert m["laplace"][0] == pytest.approx(6 / 9)
    assert m["wracc"][0] == pytest.approx(6 / 24 * (5 / 6 - 5 / 24))


def test_float32_products_only_while_exact(backend):
    xp = backend.xp
    assert exact_float(xp, 2**24) == xp.float32
    assert exact_float(xp, 2**24 + 1) == xp.float64


def test_shapes_are_checked():
    with pytest.raises(InvalidInputError, match="n_items"):
        rule_matches(np.ones((3, 4), bool), np.ones((2, 5), bool))
    with pytest.raises(InvalidInputError, match="does not agree"):
        rule_measures(np.ones((2, 3), int), np.ones(2, int), np.zeros(2, int))
