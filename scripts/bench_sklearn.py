"""Benchmark: choosing k by 5-fold CV with KNeighborsClassifierCV against GridSearchCV.

On a stratified Fashion-MNIST training subset (default 20 000 images, float32), with the same
StratifiedKFold(5, shuffle=True, random_state=0) folds for all, over k = 1..30 (uniform votes;
``--weights both`` adds distance-weighted ones), times in the same run:

* ``GridSearchCV(gpuknn.KNeighborsClassifier())``: one neighbour search per (k, fold);
* ``GridSearchCV(sklearn.neighbors.KNeighborsClassifier(algorithm="brute"))``: the same with
  scikit-learn's kNN (skipped with ``--no-sklearn``);
* ``gpuknn.model_selection.search_cv.KNeighborsClassifierCV``: one neighbour search per fold.

Each includes the refit on all rows (GridSearchCV's ``refit=True``). It prints the best of
``--repeat`` wall times, the ratios to KNeighborsClassifierCV, and the k each chose and whether
they agree (scikit-learn's float32 distances and tie order may legitimately pick another k
of equal score).

    python scripts/bench_sklearn.py [--rows N] [--no-sklearn] [--repeat R] [--weights uniform|both]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _timing, also when imported by a test
from _timing import best_of  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000, help="training images used (stratified subset)")
    ap.add_argument("--kmax", type=int, default=30, help="k = 1..kmax")
    ap.add_argument("--weights", choices=["uniform", "both"], default="uniform")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs of each")
    ap.add_argument("--no-sklearn", action="store_true", help="skip GridSearchCV over scikit-learn's kNN")
    ap.add_argument("--device", default="auto", help="auto|cpu|gpu for the gpuknn estimators")
    ap.add_argument(
        "--synthetic",
        action="store_true",
        help="Gaussian classes instead of Fashion-MNIST (smoke tests without the data)",
    )
    return ap.parse_args(argv)


def load(rows: int, synthetic: bool) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` training images (a stratified subset) as float32, with their labels."""
    import gpuknn

    if synthetic:
        rng = np.random.default_rng(0)
        y = np.arange(rows) % 10
        return (rng.normal(size=(rows, 64)) + y[:, None] * 0.3).astype(np.float32), y
    X, y, _, _ = gpuknn.load_fashion_mnist(dtype="float32")
    if rows < X.shape[0]:
        X, _, y, _ = gpuknn.train_test_split(X, y, train_size=rows, random_state=0, stratify=y)
    return np.ascontiguousarray(X), np.asarray(y)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    import gpuknn
    from gpuknn._backend import from_numpy, resolve_device
    from gpuknn.model_selection.search_cv import KNeighborsClassifierCV

    xp = resolve_device(args.device)
    t0 = time.perf_counter()
    X, y = load(args.rows, args.synthetic)
    t_load = time.perf_counter() - t0
    ks = list(range(1, args.kmax + 1))
    weights = ["uniform"] if args.weights == "uniform" else ["uniform", "distance"]
    grid = {"n_neighbors": ks, "weights": weights}
    # The same host (train, test) pairs for every contender.
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    X_dev = from_numpy(X, xp)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; gpuknn namespace {xp.__name__}")
    print(
        f"data: {'synthetic' if args.synthetic else 'Fashion-MNIST'} {X.shape[0]} x {X.shape[1]} "
        f"float32 (loading {t_load:.1f} s, excluded); 5 stratified shuffled folds; "
        f"k = 1..{args.kmax}; weights {weights}; best of {args.repeat}\n",
        flush=True,
    )

    runs = {
        "KNeighborsClassifierCV": lambda: KNeighborsClassifierCV(
            ks, weights=weights if len(weights) > 1 else weights[0], cv=folds
        ).fit(X_dev, y),
        "GridSearchCV(gpuknn KNN)": lambda: GridSearchCV(gpuknn.KNeighborsClassifier(), grid, cv=folds).fit(X_dev, y),
    }
    if not args.no_sklearn:
        runs["GridSearchCV(sklearn KNN)"] = lambda: GridSearchCV(SkKNN(algorithm="brute"), grid, cv=folds).fit(X, y)
    results = {}
    for name, fn in runs.items():
        t, est = best_of(fn, args.repeat)
        best = dict(est.best_params_)
        best.setdefault("weights", weights[0])  # a fixed weighting is not in best_params_
        results[name] = (t, best, float(est.best_score_))
        print(
            f"  {name:28s} {t:9.2f} s   k*={best['n_neighbors']:<3d} {best['weights']:8s} "
            f"CV accuracy {est.best_score_:.4f}",
            flush=True,
        )

    t_ours = results["KNeighborsClassifierCV"][0]
    print()
    for name, (t, best, score) in results.items():
        if name == "KNeighborsClassifierCV":
            continue
        same = best == results["KNeighborsClassifierCV"][1]
        print(
            f"  {name:28s} / KNeighborsClassifierCV: {t / t_ours:7.1f} x the time; "
            f"choice {'agrees' if same else 'differs'} "
            f"(score difference {score - results['KNeighborsClassifierCV'][2]:+.2e})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
