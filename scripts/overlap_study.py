"""Class overlap vs imbalance study: prints markdown tables, saves docs/img/imbalanced_overlap*.png.

Usage: python scripts/overlap_study.py [--n-samples 5000] [--out docs/img]
       python scripts/overlap_study.py --thesis   # the thesis' grid: 10 shifts x 15 shares, 10 000 rows
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpuknn.plots.imbalanced import plot_overlap_auc
from gpuknn.studies.overlap_study import THESIS_DISTANCES, THESIS_SHARES, overlap_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-samples", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--thesis", action="store_true", help="the thesis' grid (shifts 0-9, 15 shares) at 10 000 rows")
    a = ap.parse_args()
    grid = {}
    if a.thesis:
        grid = {"distances": THESIS_DISTANCES, "shares": THESIS_SHARES}
        a.n_samples = 10_000 if a.n_samples == 5000 else a.n_samples
    t0 = time.perf_counter()
    r = overlap_study(n_samples=a.n_samples, random_state=a.seed, **grid)
    print(f"# overlap study: n={r.n_samples}, 5 attributes, 10-fold stratified CV ({time.perf_counter() - t0:.1f} s)")
    for s, name in enumerate(r.names):
        print(f"\n## AUC, scorer {name} (rows: centroid shift in sd per attribute; columns: % positives)\n")
        print("| shift | Bayes | " + " | ".join(f"{100 * p:g} %" for p in r.shares) + " |")
        print("|---|---|" + "---|" * len(r.shares))
        for i, d in enumerate(r.distances):
            cells = " | ".join(
                f"{r.auc[i, j, s]:.3f}" + ("" if a.thesis else f" ± {r.std[i, j, s]:.3f}") for j in range(len(r.shares))
            )
            print(f"| {d:g} | {r.bayes[i]:.4f} | {cells} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = "_thesis" if a.thesis else ""
    for s, name in enumerate(r.names):
        fig = plot_overlap_auc(
            r.distances, r.shares, r.auc[:, :, s], bayes=r.bayes, title=f"kNN ({name}) AUC vs share of positives"
        )
        path = out / f"imbalanced_overlap{tag}_{name.replace('=', '').replace(' ', '_')}.png"
        fig.savefig(path, dpi=110)
        print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
