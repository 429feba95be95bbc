"""Figures of the Fashion-MNIST sweep (NumPy in, matplotlib ``Figure`` out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.collections import PatchCollection
from matplotlib.colors import FuncNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..errors import InvalidInputError
from .pca import plot_component_variance, plot_cumulative_variance

__all__ = ["plot_accuracy_vs_k", "plot_heatmap", "plot_confusion_matrix", "study_figures"]


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


def _two_slope_norm(near: float, low: float, share: float) -> Normalize:
    """Colour norm on "points below the best" (``-low`` … 0, vmax = 0 = the best cell) giving
    ``share`` of the colour range to the top ``near`` points and the rest to ``-low`` … ``-near``.

    Linear in each part, so the colour bar reads as two linear scales; a value below ``-low``
    falls under the range (the colour map's "under" colour).
    """
    if low <= near:  # every cell is near the best: one linear scale over all of them
        return Normalize(vmin=-low, vmax=0.0)
    top = share / near  # slope (colour units per point) of the top part
    bottom = (1.0 - share) / (low - near)  # slope of the lower part

    # np.minimum keeps masked cells masked (np.where would not)
    def forward(d):
        return top * d + (bottom - top) * np.minimum(d + near, 0.0)

    def inverse(t):
        return t / top + (1.0 / bottom - 1.0 / top) * np.minimum(t + share, 0.0)

    return FuncNorm((forward, inverse), vmin=-low, vmax=0.0)


def _tick_positions(n: int, max_labels: int) -> list[int]:
    """Every ``step``-th of ``n`` categorical positions so that at most ``max_labels`` show."""
    step = max(1, -(-n // max_labels))
    return list(range(0, n, step))


def _colour_ticks(norm: Normalize, near: float, low: float) -> list[float]:
    """Colour-bar ticks: quarters of the top part, round values of the lower part (none
    closer than 6 % of the bar to another)."""
    top = [-near, -0.75 * near, -0.5 * near, -0.25 * near, 0.0] if low > near else list(np.linspace(-low, 0.0, 5))
    ticks = sorted(top)
    for t in [-low] + [-c * near for c in (2, 5, 10, 20, 50, 100)]:
        if -low <= t < -near and all(abs(float(norm(t)) - float(norm(u))) >= 0.06 for u in ticks):
            ticks.append(t)
    return sorted(ticks)


def plot_heatmap(
    heat: dict,
    weights: str,
    *,
    near: float = 1.0,
    share: float = 0.85,
    floor: float = 10.0,
    max_labels: int = 40,
) -> Figure:
    """Mean CV score over the (p, k) grid for one weighting, coloured relative to the best cell.

    The colour is the score minus the best cell's, in points (hundredths), on a scale fitted to
    the useful range: the top ``near`` points take ``share`` of the colour range, so the best
    region's structure shows (the cells within ``near`` points of the best span at least 95 % of
    ``share`` of it: 80 % by default), and the cells more than ``floor`` points below the best
    (very small p) are clipped to a grey, hatched colour (the colour bar's "≤ best − floor" arrow).

    Parameters
    ----------
    heat : dict
        ``results.json``'s ``"heatmap"``: ``"ps"``, ``"ks"``, ``"mean"`` (weighting -> rows per
        p of the mean score per k) and optionally ``"scoring"`` (default accuracy) naming it.
    weights : str
        Which weighting of ``heat["mean"]`` to draw.
    near : float, default 1.0
        Points below the best that get ``share`` of the colour range. Where the grid is coarse
        (no cell within 5 % of ``near`` of that depth), the top part ends at the lowest cell
        within ``near`` points instead, so that those cells still span ``share`` of the range.
    share : float, default 0.85
        Fraction of the colour range given to the top ``near`` points.
    floor : float, default 10.0
        Points below the best where the colour scale ends; lower cells are clipped.
    max_labels : int, default 40
        Most tick labels per axis (k and p are categorical: every cell is one grid value);
        beyond that every second, third, ... value is labelled.

    Returns
    -------
    matplotlib.figure.Figure
        One image (its norm is the colour scale), the best cell boxed and starred (the value
        in the title), and a colour bar.
    """
    if not near > 0:
        raise InvalidInputError(f"near must be > 0 points, got {near!r}")
    if not 0 < share < 1:
        raise InvalidInputError(f"share must be in (0, 1), got {share!r}")
    if not floor >= near:
        raise InvalidInputError(f"floor must be >= near ({near!r}), got {floor!r}")
    if weights not in heat["mean"]:
        raise InvalidInputError(f"weights {weights!r} is not one of the heatmap's {list(heat['mean'])}")
    name = heat.get("scoring", "accuracy").replace("_", " ")
    score = np.asarray(heat["mean"][weights], dtype=np.float64)
    if score.shape != (len(heat["ps"]), len(heat["ks"])):
        raise InvalidInputError(
            f"heat['mean'][{weights!r}] has shape {score.shape}, not (len(ps), len(ks)) = "
            f"({len(heat['ps'])}, {len(heat['ks'])})"
        )
    ps, ks = list(heat["ps"]), list(heat["ks"])
    i, j = np.unravel_index(int(np.nanargmax(score)), score.shape)
    best = score[i, j]
    below = 100.0 * (score - best)  # <= 0: points below the best cell
    spread = float(-np.nanmin(below))
    low = min(floor, spread) if spread > 0 else near
    depth = float(-np.nanmin(below[below >= -near]))  # the lowest cell within near points
    knee = near if depth >= 0.95 * near or depth == 0 else depth
    norm = _two_slope_norm(knee, low, share)
    clipped = below < -low

    fig = Figure(figsize=(8.5, max(5.0, 0.2 * len(ps) + 2.2)), layout="constrained")
    ax = fig.add_subplot()
    cmap = colormaps["viridis"].with_extremes(under="0.82")
    im = ax.imshow(below, aspect="auto", cmap=cmap, norm=norm, origin="lower", interpolation="nearest")
    # ``marked`` first: the star is the axes' first line, the box its first patch
    ax.plot(j, i, marker="*", color="red", markersize=11, markeredgecolor="white", markeredgewidth=0.6, ls="none")
    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=1.8))
    if clipped.any():
        rows, cols = np.nonzero(clipped)
        ax.add_collection(
            PatchCollection(
                [Rectangle((c - 0.5, r - 0.5), 1, 1) for r, c in zip(rows, cols)],
                facecolor="none",
                edgecolor="0.55",
                hatch="///",
                linewidth=0,
                gid="clipped",
            )
        )
    xt, yt = _tick_positions(len(ks), max_labels), _tick_positions(len(ps), max_labels)
    ax.set_xticks(xt, [str(ks[t]) for t in xt], fontsize=8)
    ax.set_yticks(yt, [str(ps[t]) for t in yt], fontsize=8)
    ax.set_xlabel("k (number of neighbours)")
    ax.set_ylabel("p (PCA components; one row per value tried)")
    ax.set_title(
        f"CV {name}, {weights} votes: best {best:.4f} at p={ps[i]}, k={ks[j]}\n"
        f"colour: {name} − best, in points; top {knee:.3g} point{'' if knee == 1 else 's'} = {share:.0%} of the scale",
        fontsize=10,
    )
    cbar = fig.colorbar(im, ax=ax, extend="min" if clipped.any() else "neither", shrink=0.9)
    cbar.set_label(f"{name} − best (points)")
    ticks = _colour_ticks(norm, knee, low)
    cbar.set_ticks(ticks, labels=[f"{t:.3g}".replace("-", "−") for t in ticks])
    if low > knee:  # where the scale changes slope
        cbar.ax.axhline(-knee, color="white", lw=1.2)
    if clipped.any():
        cbar.ax.text(0.5, -0.065, f"≤ best − {low:g}", transform=cbar.ax.transAxes, ha="center", va="top", fontsize=8)
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


def study_figures(res: dict) -> dict[str, Callable[[], Figure]]:
    """The study's figures from its ``results.json``: file name -> function drawing it.

    Drawn one by one by the caller (``RunDirectory.save_figures`` in ``gpuknn sweep``,
    ``scripts/results_doc.py`` for the docs), so that a failure while drawing one figure
    does not stop the others.

    Parameters
    ----------
    res : dict
        ``results.json`` of ``gpuknn sweep``: ``"variance"``, ``"heatmap"``, ``"best"``,
        ``"test"``, ``"class_names"``, ``"test_accuracy"`` and optionally ``"raw"``.

    Returns
    -------
    dict of str to callable
        ``accuracy_vs_k.png`` (if ``"raw"``), ``variance_cumulative.png`` (the chosen p
        marked), ``variance_components.png``, ``heatmap_<weights>.png`` per weighting and
        ``confusion_matrix.png``.
    """
    b = res["best"]
    figs: dict[str, Callable[[], Figure]] = {}
    if "raw" in res:
        figs["accuracy_vs_k.png"] = lambda: plot_accuracy_vs_k(res["raw"], scoring=res.get("scoring", "accuracy"))
    figs["variance_cumulative.png"] = lambda: plot_cumulative_variance(
        np.asarray(res["variance"]["explained_variance_ratio"]), p=int(b["p"])
    )
    figs["variance_components.png"] = lambda: plot_component_variance(np.asarray(res["variance"]["explained_variance"]))
    for w in res["heatmap"]["weights"]:
        figs[f"heatmap_{w}.png"] = lambda w=w: plot_heatmap(res["heatmap"], w)
    figs["confusion_matrix.png"] = lambda: plot_confusion_matrix(
        res["test"]["confusion_matrix"],
        res["class_names"],
        title=f"Test set, k={b['k']}, p={b['p']}, {b['weights']} (accuracy {res['test_accuracy']:.4f})",
    )
    return figs
