"""Resampling methods under kNN + BordaRank of kNN scorers: prints markdown tables and saves
docs/img/imbalanced_*.png.

Usage: python scripts/resampling_study.py [--seed 0] [--out docs/img]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpuknn.plots.imbalanced import plot_auc_heatmap, plot_method_ranks
from gpuknn.studies.resampling_study import imbalanced_datasets, resampling_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    data = imbalanced_datasets(random_state=a.seed)
    print("| data set | n | d | positives |\n|---|---|---|---|")
    for name, (X, y) in data.items():
        print(f"| {name} | {X.shape[0]} | {X.shape[1]} | {int(y.sum())} ({100 * y.mean():.1f} %) |")
    t0 = time.perf_counter()
    r = resampling_study(datasets=data, random_state=a.seed)
    print(f"\nThe resampling study took {time.perf_counter() - t0:.1f} s.\n")
    b = r.scorers.index("BordaRank")
    print("## AUC of BordaRank(k = 3, 5, 11 × uniform, distance) per sampler\n")
    print("| data set | " + " | ".join(r.samplers) + " |\n|---|" + "---|" * len(r.samplers))
    for d, name in enumerate(r.datasets):
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in r.auc[d, :, b]) + " |")
    print("\n## Mean rank of each sampler over data sets (1 = best)\n")
    print("| sampler | BordaRank | k=5 uniform | k=11 distance | mean train size / s |\n|---|---|---|---|---|")
    rb, r5, r11 = r.sampler_ranks(), r.sampler_ranks("k=5 uniform"), r.sampler_ranks("k=11 distance")
    for m, name in sorted(enumerate(r.samplers), key=lambda t: rb[t[1]]):
        print(
            f"| {name} | {rb[name]:.2f} | {r5[name]:.2f} | {r11[name]:.2f} | "
            f"{r.train_size[:, m].mean():.0f} / {r.seconds[:, m].sum():.1f} |"
        )
    print("\n## Mean rank of each scorer over (data set, sampler) pairs (1 = best)\n")
    print("| scorer | mean rank | mean AUC |\n|---|---|---|")
    for s, (name, v) in enumerate(r.scorer_ranks().items()):
        print(f"| {name} | {v:.2f} | {r.auc[:, :, s].mean():.4f} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    figs = {
        "imbalanced_sampler_ranks.png": plot_method_ranks(rb, title="Samplers under kNN BordaRank: mean rank"),
        "imbalanced_scorer_ranks.png": plot_method_ranks(r.scorer_ranks(), title="kNN scorers vs BordaRank: mean rank"),
        "imbalanced_auc_heatmap.png": plot_auc_heatmap(r.datasets, r.samplers, r.auc[:, :, b], title="BordaRank AUC"),
    }
    for fname, fig in figs.items():
        fig.savefig(out / fname, dpi=110)
        print(f"saved {out / fname}")


if __name__ == "__main__":
    main()
