"""Figures of the Fashion-MNIST sweep (NumPy in, matplotlib ``Figure`` out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

__all__ = ["plot_accuracy_vs_k", "plot_heatmap", "plot_confusion_matrix"]


def plot_accuracy_vs_k(raw: dict, *, title: str | None = None, scoring: str = "accuracy") -> Figure:
    """Mean CV score (``scoring``: its name on the axis) vs k per weighting, with the fold
    spread (min-max band, ±1 std)."""
    name = scoring.replace("_", " ")
    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.add_subplot()
    ks = np.asarray(raw["ks"])
    weights = [w for w in raw if w != "ks"]
    if title is None:
        title = f"{name.capitalize()} vs k ({len(raw[weights[0]]['folds'])}-fold CV, raw features)"
    for w in weights:
        mean, std = np.asarray(raw[w]["mean"]), np.asarray(raw[w]["std"])
        (line,) = ax.plot(ks, mean, label=f"{w} votes")
        ax.fill_between(ks, raw[w]["min"], raw[w]["max"], color=line.get_color(), alpha=0.15)
        ax.fill_between(ks, mean - std, mean + std, color=line.get_color(), alpha=0.3)
        best = int(np.argmax(mean))
        ax.plot(ks[best], mean[best], "o", color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("k (number of neighbours)")
    ax.set_ylabel(f"CV {name}")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def plot_heatmap(heat: dict, weights: str) -> Figure:
    """Mean CV score over the (p, k) grid for one weighting (``heat["scoring"]``, default
    accuracy, names it)."""
    name = heat.get("scoring", "accuracy").replace("_", " ")
    acc = np.asarray(heat["mean"][weights])
    ps, ks = heat["ps"], heat["ks"]
    fig = Figure(figsize=(8, 0.28 * len(ps) + 1.8), layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(acc, aspect="auto", cmap="viridis", origin="lower")
    ax.set_xticks(range(len(ks)), [str(k) for k in ks], fontsize=7)
    ax.set_yticks(range(len(ps)), [str(p) for p in ps], fontsize=7)
    ax.set_xlabel("k")
    ax.set_ylabel("p (PCA components)")
    i, j = np.unravel_index(int(np.argmax(acc)), acc.shape)
    ax.plot(j, i, "r*", markersize=10)
    ax.set_title(f"CV {name}, {weights} votes (best {acc[i, j]:.4f} at p={ps[i]}, k={ks[j]})")
    fig.colorbar(im, ax=ax, label=name)
    return fig


def plot_confusion_matrix(cm: Sequence[Sequence[int]], labels: Sequence[str], *, title: str) -> Figure:
    """Confusion matrix with counts (rows: true class, columns: predicted)."""
    cm = np.asarray(cm)
    fig = Figure(figsize=(7, 6), layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(cm, cmap="Blues")
    n = cm.shape[0]
    ax.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    thresh = cm.max() / 2
    for a in range(n):
        for b in range(n):
            ax.text(
                b,
                a,
                str(cm[a, b]),
                ha="center",
                va="center",
                fontsize=7,
                color="white" if cm[a, b] > thresh else "black",
            )
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title)
    fig.colorbar(im, ax=ax)
    return fig
