"""Figures of the cluster-validity study (NumPy/list data in, matplotlib ``Figure`` out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["plot_external_indices", "plot_gap", "plot_groups", "plot_relative_indices"]


def _plt():
    import matplotlib  # noqa: PLC0415 - keep matplotlib out of `import gpuknn`

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def plot_external_indices(
    result: dict, *, names: Sequence[str] = ("rand", "pair_jaccard", "adjusted_rand", "fowlkes_mallows")
):
    """Line plot of external indices against K (Rand and Jaccard first, solid)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    ks = result["k"]
    for i, name in enumerate(names):
        vals = [np.nan if v is None else v for v in result["indices"][name]]
        ax.plot(ks, vals, marker="o", linestyle="-" if i < 2 else "--", label=name.replace("_", " "))
    n_groups = result["config"]["n_groups"]
    ax.axvline(n_groups, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("number of k-means clusters K")
    ax.set_ylabel("agreement with the generating labels")
    ax.set_title(f"External indices ({n_groups} true groups)")
    ax.set_xticks(ks)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_relative_indices(
    result: dict,
    *,
    names: Sequence[str] = (
        "dunn",
        "davies_bouldin",
        "sd",
        "xie_beni",
        "partition_coefficient",
        "hubert_gamma_internal",
    ),
):
    """One small panel per internal/relative index against K."""
    plt = _plt()
    cols = 3
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3 * rows))
    ks = result["k"]
    for ax, name in zip(np.ravel(axes), names):
        vals = [np.nan if v is None else v for v in result["indices"][name]]
        ax.plot(ks, vals, marker="o")
        best = result["chosen_k"].get(name)
        ax.set_title(f"{name.replace('_', ' ')} (best K={best})", fontsize=9)
        ax.set_xticks(ks)
    for ax in np.ravel(axes)[len(names) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_gap(result: dict):
    """Gap(K) with ±s_K error bars and the K chosen by the one-standard-error rule."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    ks = result["k"]
    ax.errorbar(ks, result["gap"]["gap"], yerr=result["gap"]["s_k"], marker="o", capsize=3)
    ax.axvline(result["gap"]["chosen"], color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("K")
    ax.set_ylabel("Gap(K)")
    ax.set_title(f"Gap statistic, chosen K = {result['gap']['chosen']}")
    ax.set_xticks(ks)
    fig.tight_layout()
    return fig


def plot_groups(X, labels):
    """3-D scatter of the data coloured by ``labels``."""
    plt = _plt()
    X, labels = np.asarray(X), np.asarray(labels)
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="3d")
    ax.scatter(X[:, 0], X[:, 1], X[:, 2], c=labels, cmap="tab10", s=8)
    ax.set_title("Data: generating groups")
    fig.tight_layout()
    return fig
