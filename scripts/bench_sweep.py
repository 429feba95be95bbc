"""Benchmark: the full default Fashion-MNIST study, per stage, against a scikit-learn estimate.

Runs `run_sweep` with the CLI's default settings (5-fold CV on 60 000 images, raw k = 1..300,
(k, p) heatmap with k = 1..30 over the default p grid, both weightings, final test) and prints
the time of each stage. In the same run it estimates what scikit-learn's
GridSearchCV(Pipeline([PCA, KNeighborsClassifier])) would need for the same grid: every grid
point is a separate PCA fit + kNN predict per fold there. A sample of those fits is timed (PCA fit
on a 48 000-image fold, kNN predict of a slice of the 12 000 validation images, at a few p and k)
and extrapolated linearly in the number of validation images and, between the sampled p, in p.

    python scripts/bench_sweep.py [--device auto|cpu|gpu] [--subset N] [--no-sklearn]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from _timing import timed_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--subset", type=int, default=None)
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--sample-queries", type=int, default=600)
    args = ap.parse_args()

    import gpuknn
    from gpuknn._backend import from_numpy, resolve_device
    from gpuknn.studies.fashion_sweep import SweepConfig

    xp = resolve_device(args.device)
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte = gpuknn.load_fashion_mnist(dtype="float32")
    if args.subset:
        Xtr, _, ytr, _ = gpuknn.train_test_split(Xtr, ytr, train_size=args.subset, random_state=0, stratify=ytr)
    t_load = time.perf_counter() - t0
    config = SweepConfig()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; namespace {xp.__name__}")
    print(f"data: {Xtr.shape[0]} training / {Xte.shape[0]} test images (loading {t_load:.1f} s, excluded)")
    print(
        f"grid: raw k 1..{max(config.ks_raw)}; heatmap k 1..{max(config.ks)} x {len(config.ps)} p "
        f"values; {config.folds} folds; weights {config.weights}\n"
    )

    total, stages, res = timed_sweep(from_numpy(Xtr, xp), ytr, from_numpy(Xte, xp), yte, config)
    for name, t in stages.items():
        print(f"  {name:28s} {t:8.1f} s")
    print(f"  {'total (data load excluded)':28s} {total:8.1f} s")
    print(
        f"chosen k*={res['k_best']} p*={res['p_best']} {res['weights_best']}: CV {res['cv_accuracy_best']:.4f}, "
        f"test accuracy {res['test_accuracy']:.4f}, macro-F1 {res['test_macro_f1']:.4f}\n"
    )

    if args.no_sklearn:
        return
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsClassifier

    n = Xtr.shape[0]
    n_val = n // config.folds
    tr = np.arange(n - n_val)
    Xf, yf, Xv = Xtr[tr], ytr[tr], Xtr[n - n_val :][: args.sample_queries]
    scale = n_val / Xv.shape[0]

    def cost(p, k):
        t = time.perf_counter()
        if p is None:
            Zf, Zv = Xf - Xf.mean(1, keepdims=True), Xv - Xv.mean(1, keepdims=True)
            t_fit = 0.0
        else:
            pca = PCA(p, svd_solver="covariance_eigh").fit(Xf)
            t_fit = time.perf_counter() - t
            Zf, Zv = pca.transform(Xf), pca.transform(Xv)
            Zf, Zv = Zf - Zf.mean(1, keepdims=True), Zv - Zv.mean(1, keepdims=True)
        t = time.perf_counter()
        KNeighborsClassifier(k, algorithm="brute", metric="cosine").fit(Zf, yf).predict(Zv)
        return t_fit + (time.perf_counter() - t) * scale

    sample_p = [5, 100, 715]
    per_p = {p: cost(p, 10) for p in sample_p}
    raw = cost(None, 10)
    grid_cost = sum(np.interp(p, sample_p, [per_p[s] for s in sample_p]) for p in config.ps)
    est_heat = grid_cost * len(config.ks) * len(config.weights) * config.folds
    est_raw = raw * len(config.ks_raw) * len(config.weights) * config.folds
    est = est_heat + est_raw
    print("scikit-learn GridSearchCV(Pipeline(PCA, KNN)) estimate, same grid (cosine on row-centred data):")
    for p in sample_p:
        print(f"  one fit+predict at p={p:3d}: {per_p[p]:7.2f} s (measured on {Xv.shape[0]} queries, x{scale:.0f})")
    print(f"  one raw-pixel kNN predict:  {raw:7.2f} s")
    print(
        f"  heatmap {len(config.ps)} p x {len(config.ks)} k x {len(config.weights)} weights x "
        f"{config.folds} folds: {est_heat / 3600:.1f} h"
    )
    print(
        f"  raw sweep {len(config.ks_raw)} k x {len(config.weights)} weights x {config.folds} folds: "
        f"{est_raw / 3600:.1f} h"
    )
    print(f"  total estimate {est / 3600:.1f} h  ->  gpuknn is {est / total:.0f} x faster")


if __name__ == "__main__":
    main()
