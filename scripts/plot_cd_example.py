"""Draw the critical-difference diagram of docs/metrics.md from made-up but plausible AUCs.

Five methods on 14 data sets, generated with a fixed seed: each data set has its own
difficulty, each method its own mean advantage, plus noise. Writes docs/img/cd_example.png
(and, with ``--table PATH``, the score table figure) and prints the Friedman and Nemenyi
results.

    python scripts/plot_cd_example.py [--out docs/img/cd_example.png] [--table /tmp/table.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gpuknn.plots import critical_difference_diagram, score_table_figure
from gpuknn.stats import friedman_test, nemenyi_test

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["kNN (k=11)", "CDNN", "kNN + PCA", "kNN + SMOTE", "nearest centroid"]
ADVANTAGE = np.array([0.020, 0.030, 0.012, 0.004, -0.035])  # mean AUC over the data sets' level


def example_scores(seed: int = 34, n_datasets: int = 14) -> np.ndarray:
    """AUCs of shape (n_datasets, 5), in [0.5, 1]."""
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.72, 0.93, size=(n_datasets, 1))
    auc = level + ADVANTAGE + rng.normal(0.0, 0.018, size=(n_datasets, ADVANTAGE.size))
    return np.clip(auc, 0.5, 1.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "cd_example.png")
    parser.add_argument("--table", type=Path, default=None, help="also save the score table figure here")
    args = parser.parse_args(argv)
    auc = example_scores()
    fried = friedman_test(auc)
    nem = nemenyi_test(auc)
    print(f"Friedman chi2_F = {fried.statistic:.2f}, p = {fried.pvalue:.2g}", end="; ")
    print(f"Iman-Davenport p = {fried.iman_davenport_pvalue:.2g}")
    print("average ranks:", dict(zip(METHODS, np.round(nem.average_ranks, 2).tolist())))
    print(f"Nemenyi CD = {nem.critical_difference:.3f}")
    fig, _ = critical_difference_diagram(auc, METHODS)
    fig.savefig(args.out, dpi=110)
    print("wrote", args.out)
    if args.table is not None:
        fig, _ = score_table_figure(auc, METHODS, [f"data set {i + 1}" for i in range(auc.shape[0])])
        fig.savefig(args.table, dpi=100)
        print("wrote", args.table)


if __name__ == "__main__":
    main()
