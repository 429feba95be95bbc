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

from ..errors import InvalidInputError

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


def plot_cumulative_variance(
    ratio: Any,
    *,
    p: int | None = None,
    title: str | None = None,
    levels: Sequence[float] = (0.8, 0.9, 0.95, 0.99),
    zoom: int = 150,
) -> Figure:
    """Explained-variance ratio against the number of components, on linear axes.

    Two panels: the cumulative ratio over all components (with the component counts reaching
    ``levels``), and the share of each of the first ``zoom`` components in per cent (further on
    it is too small to see on a linear axis); ``p``, the number of components chosen, is marked
    on both by a vertical line and labelled with its cumulative ratio.

    Parameters
    ----------
    ratio : array, shape (n,)
        Explained-variance ratio per component, descending (e.g. the spectrum divided by
        its sum, or ``PCA.explained_variance_ratio_`` of a full fit).
    p : int, optional
        Number of components chosen (e.g. by cross-validation), 1 … n; not marked if None.
    title : str, optional
    levels : sequence of float, default (0.8, 0.9, 0.95, 0.99)
        Cumulative ratios whose component counts are marked.
    zoom : int, default 150
        Components shown in the lower panel (at least 1.3 ``p``, at most all).

    Returns
    -------
    matplotlib.figure.Figure
        Axes 0: cumulative ratio; axes 1: per cent of the variance per component.
    """
    r = np.asarray(ratio, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise InvalidInputError(f"ratio must be a non-empty 1-D array, got shape {r.shape}")
    if p is not None and not 1 <= p <= r.size:
        raise InvalidInputError(f"p must be in 1 … {r.size} (the number of components), got {p!r}")
    x = np.arange(1, r.size + 1)
    cum = np.cumsum(r)
    fig = Figure(figsize=(7.5, 6), layout="constrained")
    ax_cum, ax_one = fig.subplots(2, 1, height_ratios=(3, 2))
    ax_cum.plot(x, cum, lw=1.8, label="cumulative")
    for level in levels:
        k = int(np.searchsorted(cum, level)) + 1
        if k <= r.size:
            ax_cum.plot([k], [cum[k - 1]], "k.", ms=6)
            ax_cum.annotate(
                f"{level:.0%} at {k}", (k, cum[k - 1]), textcoords="offset points", xytext=(4, -12), fontsize="small"
            )
    shown = min(r.size, max(zoom, int(np.ceil(1.3 * p)) if p is not None else zoom))
    ax_one.plot(x[:shown], 100 * r[:shown], lw=1.2, color="C2", marker="o", ms=2.5)
    if p is not None:
        for ax in (ax_cum, ax_one):
            ax.axvline(p, color="C3", lw=1.2, ls="--", gid="chosen-p")
        ax_cum.annotate(
            f"chosen p = {p}: {cum[p - 1]:.1%} of the variance",
            (p, 0.02),
            xycoords=("data", "axes fraction"),
            textcoords="offset points",
            xytext=(4, 0),
            color="C3",
            fontsize="small",
            gid="chosen-p",
        )
    ax_cum.set_ylim(0, 1.02)
    ax_cum.set_xlim(0, r.size + 1)
    ax_cum.set_xlabel("number of components p")
    ax_cum.set_ylabel("cumulative explained variance ratio")
    ax_one.set_xlim(0, shown + 1)
    ax_one.set_ylim(bottom=0)
    ax_one.set_xlabel(f"component (first {shown} of {r.size})")
    ax_one.set_ylabel("% of the variance")
    for ax in (ax_cum, ax_one):
        ax.grid(True, alpha=0.3)
    fig.suptitle(title or "Explained variance")
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
