"""``gpuknn evaluate``: kNN on tabular data (KEEL ``.dat``, CSV/TSV, ...), the KEEL study.

Each FILE is any source of :func:`gpuknn.datasets.load_table`: a KEEL ``.dat``, a
delimited text file (delimiter, quoting and header detected; ``--target`` picks the class
column by name or 0-based index, default the last), ``.npy``/``.npz``, an IDX directory, or
a named set (``iris``, ``wine``, ``breast_cancer``, ``digits``, ``fashion-mnist``). A source
with its own test split is pooled: this command makes its own split.

For each file: a seeded stratified hold-out (default 70/30) or ``--cv K`` stratified folds,
kNN with ``--k`` neighbours, then the positive-class counts (TP/FP/TN/FN, precision,
recall — the positive class is the first class of the file, as in the original study),
macro precision/recall, accuracy and macro-F1. A table goes to stdout, or JSON with
``--json``. With ``--cv`` the counts are summed over the folds (every sample is tested
once) and the ratios are the means of the per-fold ratios.

Rows with missing or non-finite values (empty, ``?``, ``NA``, ``nan``, ``inf``) are an
error naming the line and column, unless ``--drop-missing`` drops them (a line on stderr
counts them; the JSON has ``n_dropped``).

Errors (missing or malformed file, k too large, missing values without
``--drop-missing``) raise gpuknn errors: the message goes to stderr and the exit code is 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .._backend import from_numpy, resolve_device, to_numpy
from ..errors import InvalidInputError
from ..metrics import accuracy_score, positive_class_report, precision_recall_fscore_support
from ..model_selection import StratifiedKFold, train_test_split
from ..neighbors import KNeighborsClassifier
from ..ops.distance import METRICS
from ._args import positive_int, seed

__all__ = ["add_parser", "run", "evaluate_file"]

_RATIOS = ("precision", "recall", "macro_precision", "macro_recall", "accuracy", "macro_f1")


def _fraction(text: str) -> float:
    v = float(text)
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return v


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="kNN hold-out / CV evaluation of KEEL .dat, CSV and other tabular data",
        description="For each file: stratified hold-out (or --cv folds), kNN, and TP/FP/TN/FN, "
        "precision, recall of the positive class (the first class of the file), macro "
        "precision/recall, accuracy and macro-F1.",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="KEEL .dat, CSV/TSV/text, .npy, .npz, IDX directory, or a named set "
        "(iris, wine, breast_cancer, digits, fashion-mnist)",
    )
    p.add_argument(
        "--target",
        default=None,
        metavar="COL",
        help="class column of a CSV (name, else 0-based index) or .npy (index); default the last column",
    )
    p.add_argument("--k", type=positive_int, default=5, help="number of neighbours (default 5)")
    p.add_argument("--holdout", type=_fraction, default=0.3, help="test fraction (default 0.3)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the split, 0 to 2**32-1 (default 0)")
    p.add_argument("--metric", choices=list(METRICS), default="euclidean")
    p.add_argument("--weights", choices=["uniform", "distance"], default="uniform")
    p.add_argument(
        "--cv",
        type=positive_int,
        default=None,
        metavar="K",
        help="stratified K-fold CV instead of the hold-out (ratios averaged over folds, counts summed)",
    )
    p.add_argument(
        "--drop-missing", action="store_true", help="drop rows with missing or non-finite values ('', ?, NA, nan, inf)"
    )
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="cpu")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def _load(path: str, args: argparse.Namespace) -> tuple[Any, np.ndarray, np.ndarray]:
    """The source's table (own test split pooled), ``X`` in float64 and ``y``."""
    from ..datasets import load_table  # noqa: PLC0415 - only this sub-command needs it

    data = load_table(path, target=getattr(args, "target", None), drop_missing=args.drop_missing)
    X, y = data.X, data.y
    if data.X_test is not None:
        X, y = np.concatenate([X, data.X_test]), np.concatenate([y, data.y_test])
    if data.n_dropped:
        print(
            f"gpuknn evaluate: {path}: dropped {data.n_dropped} row(s) with missing or "
            f"non-finite values, {X.shape[0]} left",
            file=sys.stderr,
        )
    return data, X, y


def _scores(y_true: np.ndarray, y_pred: np.ndarray, pos_label: Any) -> dict:
    rep = positive_class_report(y_true, y_pred, pos_label=pos_label)
    mp, mr, mf, _ = precision_recall_fscore_support(y_true, y_pred, average="macro")
    return {
        "tp": int(rep["tp"]),
        "fp": int(rep["fp"]),
        "tn": int(rep["tn"]),
        "fn": int(rep["fn"]),
        "precision": float(rep["precision"]),
        "recall": float(rep["recall"]),
        "macro_precision": float(mp),
        "macro_recall": float(mr),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(mf),
    }


def _fit_predict(Xtr, ytr, Xte, args, xp) -> np.ndarray:
    if args.k > Xtr.shape[0]:
        raise InvalidInputError(f"--k {args.k} exceeds the {Xtr.shape[0]} training rows")
    clf = KNeighborsClassifier(args.k, metric=args.metric, weights=args.weights)
    clf.fit(from_numpy(Xtr, xp), ytr)
    return np.asarray(to_numpy(clf.predict(from_numpy(Xte, xp))))


def evaluate_file(path: str, args: argparse.Namespace, xp: Any) -> dict:
    """Scores of one file (see the module docstring) as a JSON-ready dict."""
    data, X, y = _load(path, args)
    pos = data.class_order[0]
    out = {
        "file": path,
        "source": data.source,
        "relation": data.name,
        "n_samples": int(X.shape[0]),
        "n_dropped": int(data.n_dropped),
        "n_features": int(X.shape[1]),
        "target": data.target_name,
        "positive_class": str(pos),
        "k": args.k,
        "metric": args.metric,
    }
    if args.cv is None:
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=args.holdout, random_state=args.seed, stratify=y)
        out.update(protocol=f"hold-out {1 - args.holdout:.0%}/{args.holdout:.0%}", n_test=int(len(yte)))
        out.update(_scores(yte, _fit_predict(Xtr, ytr, Xte, args, xp), pos))
        return out
    folds = [
        _scores(y[te], _fit_predict(X[tr], y[tr], X[te], args, xp), pos)
        for tr, te in StratifiedKFold(args.cv, shuffle=True, random_state=args.seed).split(X, y)
    ]
    out.update(protocol=f"stratified {args.cv}-fold CV (counts summed, ratios averaged)", n_test=int(X.shape[0]))
    for key in ("tp", "fp", "tn", "fn"):
        out[key] = int(sum(f[key] for f in folds))
    for key in _RATIOS:
        out[key] = float(np.mean([f[key] for f in folds]))
    return out


def _table(rows: list[dict]) -> str:
    head = ["file", "n", "pos", "TP", "FP", "TN", "FN", "prec", "recall", "macroP", "macroR", "acc", "macroF1"]
    body = [
        [
            Path(r["file"]).name,
            str(r["n_samples"]),
            r["positive_class"],
            str(r["tp"]),
            str(r["fp"]),
            str(r["tn"]),
            str(r["fn"]),
        ]
        + [f"{r[k]:.4f}" for k in _RATIOS]
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body])


def run(args: argparse.Namespace) -> int:
    xp = resolve_device(args.device)
    rows = [evaluate_file(path, args, xp) for path in args.files]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    first = rows[0]
    print(
        f"kNN k={args.k} metric={args.metric} weights={args.weights}, {first['protocol']}, "
        f"seed {args.seed}; positive class = first class of each file"
    )
    print(_table(rows))
    sys.stdout.flush()
    return 0
