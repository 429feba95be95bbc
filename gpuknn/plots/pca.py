"""Figures for PCA: power-method study curves and explained-variance curves.

Functions take host NumPy data and return a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, no GUI backend needed); callers save it with
``fig.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "plot_power_study",
    "plot_cumulative_variance",
    "plot_component_variance",
]

_LABELS = ("10", "10 − ε", "5", "2", "1")


def plot_power_study(
    eps: np.ndarray,
    summary: dict[str, np.ndarray],
    *,
    quantity: str = "residual",
    labels: Sequence[str] = _LABELS,
) -> Figure:
    """Log-log curves of a power-study quantity against the gap, one line per eigenvalue.

    Parameters
    ----------
    eps : array, shape (n_eps,)
        Gaps.
    summary : dict
        :meth:`PowerStudyResult.summary` output.
    quantity : {"residual", "iterations", "eigenvalue_error"}
        Which statistic to draw: the mean as a line, min-max as a shaded band.
    labels : sequence of str
        Legend entries per eigenpair.

    Returns
    -------
    matplotlib.figure.Figure
    """
    mean = np.asarray(summary[f"{quantity}_mean"], dtype=np.float64)
    lo = np.asarray(summary[f"{quantity}_min"], dtype=np.float64)
    hi = np.asarray(summary[f"{quantity}_max"], dtype=np.float64)
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    floor = np.finfo(np.float64).tiny  # log axes cannot show exact zeros
    for j in range(mean.shape[1]):
        (line,) = ax.plot(eps, np.maximum(mean[:, j], floor), marker="o", ms=3, label=f"λ = {labels[j]}")
        ax.fill_between(
            eps, np.maximum(lo[:, j], floor), np.maximum(hi[:, j], floor), color=line.get_color(), alpha=0.15, lw=0
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue gap ε = λ₁ − λ₂")
    names = {"residual": "error ‖Av − λv‖₂", "iterations": "iterations to converge", "eigenvalue_error": "|λ − λ_true|"}
    ax.set_ylabel(names.get(quantity, quantity))
    ax.set_title(f"Power method + deflation: {names.get(quantity, quantity)} (mean, min-max)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def plot_cumulative_variance(ratio: Any, *, title: str | None = None) -> Figure:
    """Cumulative explained-variance ratio against the number of components (log axes).

    Parameters
    ----------
    ratio : array, shape (n,)
        Explained-variance ratio per component, descending (e.g. the spectrum divided by
        its sum, or ``PCA.explained_variance_ratio_`` of a full fit).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    r = np.asarray(ratio, dtype=np.float64)
    p = np.arange(1, r.size + 1)
    cum = np.cumsum(r)
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(p, cum, lw=1.5)
    for level in (0.8, 0.9, 0.95, 0.99):
        k = int(np.searchsorted(cum, level)) + 1
        if k <= r.size:
            ax.axhline(level, color="grey", lw=0.6, ls=":")
            ax.annotate(
                f"{level:.0%}: p={k}", (k, level), textcoords="offset points", xytext=(4, -12), fontsize="small"
            )
            ax.plot([k], [level], "k.", ms=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of components p")
    ax.set_ylabel("cumulative explained variance ratio")
    ax.set_title(title or "Cumulative explained variance")
    ax.grid(True, which="both", alpha=0.3)
    return fig


def plot_component_variance(variance: Any, *, zoom: int = 100, title: str | None = None) -> Figure:
    """Per-component variance (log y), with a second panel zoomed on the first ``zoom``.

    Parameters
    ----------
    variance : array, shape (n,)
        Variance (covariance eigenvalue) per component, descending.
    zoom : int, default 100
        Components shown in the right panel.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    v = np.asarray(variance, dtype=np.float64)
    p = np.arange(1, v.size + 1)
    pos = v > 0  # zero variances (constant pixels) cannot be drawn on a log axis
    fig = Figure(figsize=(10, 4.2), layout="constrained")
    ax_all, ax_zoom = fig.subplots(1, 2)
    ax_all.plot(p[pos], v[pos], lw=1.2)
    ax_all.set_xlabel("component")
    ax_all.set_title(f"all {v.size} components")
    k = min(zoom, v.size)
    ax_zoom.plot(p[:k][pos[:k]], v[:k][pos[:k]], marker="o", ms=2.5, lw=1)
    ax_zoom.set_xlabel("component")
    ax_zoom.set_title(f"first {k} components")
    for ax in (ax_all, ax_zoom):
        ax.set_yscale("log")
        ax.set_ylabel("explained variance")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title or "Variance per principal component")
    return fig
