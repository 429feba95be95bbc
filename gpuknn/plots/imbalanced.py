"""Figures for the imbalanced-data studies (NumPy in, ``Figure`` out; callers save PNGs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["plot_overlap_auc", "plot_method_ranks", "plot_auc_heatmap"]


def _plt():
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def plot_overlap_auc(
    distances: Sequence[float],
    shares: Sequence[float],
    auc: np.ndarray,
    *,
    bayes: Sequence[float] | None = None,
    title: str = "",
):
    """AUC (rows: distances, columns: shares) against the positive share, one line per distance.

    Shares sit at equal steps (the thesis' 15 shares crowd a log axis); ``bayes`` (one value
    per distance) draws each domain's Bayes-optimal AUC as a dashed line of its colour.
    Domains at 1.000 in every cell (and by Bayes) are drawn once, labelled with their range.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.6, 4.4))
    auc = np.asarray(auc, dtype=np.float64)
    x = np.arange(len(shares))
    perfect = [i for i in range(len(distances)) if np.all(np.round(auc[i], 3) == 1.0)]
    if bayes is not None:
        perfect = [i for i in perfect if round(float(bayes[i]), 3) == 1.0]
    shown = [i for i in range(len(distances)) if i not in perfect[1:]]
    for i in shown:
        label = f"{distances[i]:g} sd"
        if perfect and i == perfect[0] and len(perfect) > 1:
            label = f"{distances[perfect[0]]:g}-{distances[perfect[-1]]:g} sd (all 1.000)"
        (line,) = ax.plot(x, auc[i], marker="o", label=label)
        if bayes is not None and i not in perfect:
            ax.axhline(float(bayes[i]), color=line.get_color(), linestyle="--", linewidth=1.0)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{100 * s:g}" for s in shares])
    ax.set_xlabel("positives (% of the data)")
    ax.set_ylabel("ROC AUC (10-fold CV)")
    ax.set_ylim(0.4, 1.02)
    handles, labels = ax.get_legend_handles_labels()
    if bayes is not None:
        handles.append(plt.Line2D([], [], color="grey", linestyle="--"))
        labels.append("Bayes-optimal AUC")
    ax.legend(handles, labels, title="centroid shift", fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(alpha=0.3)
    ax.set_title(title or "kNN AUC: imbalance hurts when the classes overlap")
    fig.tight_layout()
    return fig


def plot_method_ranks(ranks: dict[str, float], *, title: str = "Mean rank (1 = best AUC)"):
    """Horizontal bars of mean ranks, best at the top."""
    plt = _plt()
    items = sorted(ranks.items(), key=lambda kv: kv[1], reverse=True)
    fig, ax = plt.subplots(figsize=(6.0, 0.35 * len(items) + 1.2))
    ax.barh([k for k, _ in items], [v for _, v in items], color="tab:blue")
    ax.set_xlabel("mean rank over data sets")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_auc_heatmap(datasets: Sequence[str], methods: Sequence[str], auc: np.ndarray, *, title: str = "ROC AUC"):
    """Data sets × methods heat map with the values written in."""
    plt = _plt()
    auc = np.asarray(auc)
    fig, ax = plt.subplots(figsize=(0.75 * len(methods) + 2.5, 0.45 * len(datasets) + 1.6))
    im = ax.imshow(auc, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods, rotation=45, ha="right")
    ax.set_yticks(range(len(datasets)))
    ax.set_yticklabels(datasets)
    for i in range(auc.shape[0]):
        for j in range(auc.shape[1]):
            ax.text(
                j,
                i,
                f"{auc[i, j]:.3f}",
                ha="center",
                va="center",
                fontsize=7,
                color="w" if auc[i, j] < auc.mean() else "k",
            )
    fig.colorbar(im, ax=ax)
    ax.set_title(title)
    fig.tight_layout()
    return fig
