"""Class overlap vs imbalance study: prints markdown tables, saves docs/img/imbalanced_overlap*.png.

Usage: python scripts/overlap_study.py [--n-samples 5000] [--out docs/img]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpuknn.plots.imbalanced import plot_overlap_auc
from gpuknn.studies.overlap_study import overlap_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-samples", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    t0 = time.perf_counter()
    r = overlap_study(n_samples=a.n_samples, random_state=a.seed)
    print(f"# overlap study: n={r.n_samples}, 5 attributes, 10-fold stratified CV ({time.perf_counter() - t0:.1f} s)")
    for s, name in enumerate(r.names):
        print(f"\n## AUC, scorer {name} (rows: centroid shift in sd per attribute; columns: % positives)\n")
        print("| shift | " + " | ".join(f"{100 * p:g} %" for p in r.shares) + " |")
        print("|---|" + "---|" * len(r.shares))
        for i, d in enumerate(r.distances):
            cells = " | ".join(f"{r.auc[i, j, s]:.3f} ± {r.std[i, j, s]:.3f}" for j in range(len(r.shares)))
            print(f"| {d:g} | {cells} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for s, name in enumerate(r.names):
        fig = plot_overlap_auc(r.distances, r.shares, r.auc[:, :, s], title=f"kNN ({name}) AUC vs share of positives")
        path = out / f"imbalanced_overlap_{name.replace('=', '').replace(' ', '_')}.png"
        fig.savefig(path, dpi=110)
        print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
