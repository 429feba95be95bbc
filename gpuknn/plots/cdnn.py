"""Figures of the CDNN study (NumPy in, matplotlib ``Figure`` out; callers save PNGs)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

__all__ = ["plot_f1_vs_k"]

_STYLE = {"kNN": "o-", "WKNN": "s-", "RNN": "v-", "NC": "--", "CDNN": "D-", "ECDNN": "^-"}


def plot_f1_vs_k(result: dict, *, title: str = "") -> Figure:
    """Mean macro-F1 over the CV folds vs k, one line per method.

    Parameters
    ----------
    result : dict
        One data set's entry of :func:`gpuknn.studies.cdnn_study.run_cdnn_study`
        (``"ks"``, ``"mean_f1"`` {method: (len(ks),)}, ``"f1"`` {method: (folds, len(ks))},
        ``"n_folds"``).
    title : str

    Returns
    -------
    matplotlib.figure.Figure
        Lines with ±1 standard error of the fold mean as a band.
    """
    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.add_subplot()
    ks = np.asarray(result["ks"])
    for method, mean in result["mean_f1"].items():
        mean = np.asarray(mean)
        folds = np.asarray(result["f1"][method])
        sem = folds.std(axis=0, ddof=1) / np.sqrt(folds.shape[0]) if folds.shape[0] > 1 else 0 * mean
        (line,) = ax.plot(ks, mean, _STYLE.get(method, "-"), label=method, markersize=4)
        ax.fill_between(ks, mean - sem, mean + sem, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("k (number of neighbours)")
    ax.set_ylabel(f"macro-F1 (mean of {result['n_folds']} folds)")
    ax.set_xticks(ks)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(ncol=3, fontsize="small")
    return fig
