"""Figures for comparing methods over many data sets: Demšar's critical-difference diagram and a
table of the scores with their within-data-set ranks (NumPy in, matplotlib ``fig, ax`` out).

Both build a :class:`matplotlib.figure.Figure` without pyplot (no global state, no GUI backend
needed) unless ``ax`` is given, in which case they draw into it; callers save the figure with
``fig.savefig(path)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextPath

from ..errors import InvalidInputError, InvalidInputTypeError
from ..stats import bonferroni_dunn_test, friedman_test, nemenyi_test, rank_table
from ..stats._validation import check_alpha, check_option, check_table

__all__ = ["critical_difference_diagram", "score_table_figure"]

_TESTS = ("nemenyi", "bonferroni-dunn")
_TEST_NAMES = {"nemenyi": "Nemenyi", "bonferroni-dunn": "Bonferroni–Dunn"}
_FONT = 10.0  # method names, points
_SMALL = 9.0  # tick labels, the CD value
_TITLE = 9.5


def _labels(labels: Any, n: int, *, name: str, what: str, default: str) -> list[str]:
    """``labels`` as ``n`` strings (``default.format(i)`` for i = 1..n when None)."""
    if labels is None:
        return [default.format(i + 1) for i in range(n)]
    if isinstance(labels, str) or not isinstance(labels, Sequence | np.ndarray):
        raise InvalidInputTypeError(f"{name} must be a sequence of {n} strings, got {type(labels).__name__}")
    out = [str(s) for s in labels]
    if len(out) != n:
        raise InvalidInputError(f"{name} has {len(out)} entries but scores has {n} {what}")
    return out


def _text_width(s: str, size: float, weight: str = "normal") -> float:
    """Width of ``s`` drawn at ``size`` points, in inches (font metrics, no renderer needed)."""
    if not s:
        return 0.0
    path = TextPath((0, 0), s, size=size, prop=FontProperties(weight=weight))
    return float(path.get_extents().width) / 72.0


def _new_axes(ax: Any, figsize: tuple[float, float]) -> tuple[Figure, Any]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _format_rank(r: float) -> str:
    return f"{r:.0f}" if float(r).is_integer() else f"{r:g}"


def _cliques(ranks_sorted: np.ndarray, nonsig: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs ``(i, j)`` (positions in rank order, i < j) of methods that do not differ
    pairwise: ``nonsig[i, j]`` for the run's ends (rank differences grow outwards)."""
    k = ranks_sorted.size
    out: list[tuple[int, int]] = []
    last = -1
    for i in range(k):
        j = i
        while j + 1 < k and nonsig[i, j + 1]:
            j += 1
        if j > i and j > last:  # not contained in the previous run
            out.append((i, j))
            last = j
    return out


def _pack_rows(spans: list[tuple[float, float]], gap: float) -> list[int]:
    """Greedy row of each span so that spans sharing a row do not overlap (``gap`` apart)."""
    ends: list[float] = []
    rows = []
    for lo, hi in spans:
        for r, end in enumerate(ends):
            if lo > end + gap:
                ends[r] = hi
                rows.append(r)
                break
        else:
            ends.append(hi)
            rows.append(len(ends) - 1)
    return rows


def critical_difference_diagram(
    scores: Any,
    names: Sequence[str] | None = None,
    *,
    alpha: float = 0.05,
    test: str = "nemenyi",
    control: int | str | None = None,
    greater_is_better: bool = True,
    ax: Any = None,
) -> tuple[Figure, Any]:
    """Demšar's critical-difference diagram of methods' average ranks over data sets.

    A rank axis 1..k runs along the top, the best rank on the left. Each method's average rank
    is marked by a line bending to its name: the better half of the methods to the left, the
    other half to the right, with the average rank written above the line. The critical
    difference CD is drawn as a bar of that length above the axis.

    * ``test="nemenyi"``: thick bars join every maximal group of methods (consecutive in rank
      order) whose pairwise average-rank differences are at most CD, i.e. that the Nemenyi test
      does not tell apart; no bar lies within another.
    * ``test="bonferroni-dunn"``: a thick bar marks the interval of ±CD around the control's
      rank (clipped to [1, k]); methods outside it differ significantly from the control,
      whose name is bold.

    The title gives N, k, α, the test and the p-value of Friedman's test.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set (or CV fold), one column per method; finite; N ≥ 2, k ≥ 2.
    names : sequence of str of length n_methods, optional
        Method names; default ``"method 1"``, ``"method 2"``, ….
    alpha : float, default 0.05
        Family-wise significance level of the critical difference.
    test : {"nemenyi", "bonferroni-dunn"}, default "nemenyi"
    control : int or str, optional
        Bonferroni–Dunn only: the control method, by column (negative counts from the end)
        or by name; default the best-ranked method.
    greater_is_better : bool, default True
        Whether a larger score is better (accuracy, AUC) or worse (error, loss).
    ax : matplotlib.axes.Axes, optional
        Axes to draw into (its figure's size is then the caller's); by default a new figure
        sized to the number of methods and the length of their names.

    Returns
    -------
    fig : matplotlib.figure.Figure
    ax : matplotlib.axes.Axes
        Axis lines hidden; x in rank units (the CD bar is CD long in data units), y in
        inches below (negative) and above the rank axis at y = 0.

    Raises
    ------
    InvalidInputError
        A bad table (see :func:`gpuknn.stats.friedman_test`), ``names`` of the wrong length,
        an unknown ``test``, ``alpha`` outside (0, 1), or a ``control`` that is out of range,
        not a name, or given with ``test="nemenyi"``.

    See Also
    --------
    gpuknn.stats.nemenyi_test, gpuknn.stats.bonferroni_dunn_test, gpuknn.stats.critical_difference
    score_table_figure : the same table as numbers.

    References
    ----------
    J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
    JMLR 7:1–30, 2006 (figures 1 and 2).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> auc = 0.8 + 0.1 * rng.random((12, 1)) + [0.03, 0.02, 0.0, -0.04] + 0.02 * rng.random((12, 4))
    >>> fig, ax = critical_difference_diagram(auc, ["kNN", "CDNN", "SVM", "tree"])
    >>> fig.axes[0] is ax
    True
    >>> fig.savefig("cd.png")  # doctest: +SKIP
    """
    s = check_table(scores, greater_is_better=greater_is_better)
    n, k = s.shape
    labels = _labels(names, k, name="names", what="methods (columns)", default="method {}")
    a = check_alpha(alpha)
    check_option(test, "test", _TESTS)
    fried = friedman_test(s)
    if test == "nemenyi":
        if control is not None:
            raise InvalidInputError('control is for test="bonferroni-dunn"; the Nemenyi test compares all pairs')
        res = nemenyi_test(s, alpha=a)
        ctrl = None
    else:
        if control is None:
            ctrl = int(np.argmin(rank_table(s).mean(axis=0)))
        elif isinstance(control, str):
            if control not in labels:
                raise InvalidInputError(f"control {control!r} is not one of names {labels}")
            ctrl = labels.index(control)
        else:
            ctrl = control
        res = bonferroni_dunn_test(s, control=ctrl, alpha=a)
        ctrl = res.control
    ranks = np.asarray(res.average_ranks, dtype=np.float64)
    cd = float(res.critical_difference)
    order = np.argsort(ranks, kind="stable")
    rs = ranks[order]

    # Groups drawn as thick bars under the axis: (lo, hi) in rank units.
    if ctrl is None:
        nonsig = ~np.asarray(res.significant)[np.ix_(order, order)]
        spans = [(float(rs[i]), float(rs[j])) for i, j in _cliques(rs, nonsig)]
    else:
        spans = [(max(1.0, ranks[ctrl] - cd), min(float(k), ranks[ctrl] + cd))]
    bar_rows = _pack_rows(spans, gap=0.1)
    n_bar_rows = max(bar_rows, default=-1) + 1

    # Layout in inches: ``u`` inches per rank unit; label margins on both sides.
    h = (k + 1) // 2  # methods named on the left
    weights = ["bold" if j == ctrl else "normal" for j in range(k)]
    pad = 0.45  # the free stretch of line between the axis end and a name (holds the rank)
    name_w = max(_text_width(labels[j], _FONT, weights[j]) for j in range(k))
    margin = pad + 0.08 + name_w + 0.1
    row_h, bar_h = 0.26, 0.11
    top = 0.9  # axis ticks, the CD bar and its value
    first = -(0.2 + n_bar_rows * bar_h + 0.12)  # first name row
    bottom = first - (h - 1) * row_h - 0.25
    what = "control " + labels[ctrl] if ctrl is not None else "all pairs"
    title = (
        f"{_TEST_NAMES[test]} test ({what}), α = {a:g}: N = {n} data sets, k = {k} methods; "
        f"Friedman p = {fried.pvalue:.2g}"
    )
    if ax is None:
        u = min(1.1, max(0.55, 7.0 / max(k - 1, 1)))
        width = max((k - 1) * u + 2 * margin, _text_width(title, _TITLE) + 0.2) + 0.1
        u = (width - 0.1 - 2 * margin) / max(k - 1, 1)  # a wide title widens the axis
        fig, ax = _new_axes(None, (width, top - bottom + 0.45))
    else:
        fig = ax.figure
        bbox = ax.get_position()
        axes_w = bbox.width * fig.get_figwidth()
        u = max((axes_w - 2 * margin) / max(k - 1, 1), 0.05)
        if _text_width(title, _TITLE) > axes_w:
            title = title.replace(": N =", ":\nN =")
    m = margin / u  # margin in rank units
    p = pad / u
    ax.set_axis_off()
    ax.set_xlim(1 - m, k + m)
    ax.set_ylim(bottom, top)

    # Rank axis with ticks at integers (labelled) and halves.
    ax.plot([1, k], [0, 0], color="k", lw=1.0, solid_capstyle="butt", gid="cd-axis")
    for t in np.arange(1.0, k + 0.25, 0.5):
        major = float(t).is_integer()
        ax.plot([t, t], [0, 0.1 if major else 0.05], color="k", lw=0.8)
        if major:
            ax.text(t, 0.13, f"{t:.0f}", ha="center", va="bottom", fontsize=_SMALL)

    # The critical difference, above the axis at the left.
    y_cd = 0.55
    ax.plot([1, 1 + cd], [y_cd, y_cd], color="k", lw=1.2, gid="cd-bar")
    for x in (1, 1 + cd):
        ax.plot([x, x], [y_cd - 0.05, y_cd + 0.05], color="k", lw=1.2)
    ax.text(1 + cd / 2, y_cd + 0.07, f"CD = {cd:.3g}", ha="center", va="bottom", fontsize=_SMALL)

    # Groups: Nemenyi cliques or the control's ±CD interval.
    ext = 0.06 / u  # bars reach a little past the ranks they join
    for (lo, hi), row in zip(spans, bar_rows):
        y = -(0.2 + row * bar_h)
        gid = "cd-clique" if ctrl is None else "cd-control-interval"
        if ctrl is None:
            ax.plot([lo - ext, hi + ext], [y, y], color="k", lw=3.5, solid_capstyle="butt", gid=gid)
        else:
            ax.plot([lo, hi], [y, y], color="tab:red", lw=3.5, alpha=0.8, solid_capstyle="butt", gid=gid)
            ax.plot([ranks[ctrl]], [y], "o", color="tab:red", ms=7, mec="k", mew=0.8)

    # Methods: vertical line from the axis, then to the side, the name at the end.
    for pos, j in enumerate(order):
        r = float(ranks[j])
        left = pos < h
        row = pos if left else k - 1 - pos
        y = first - row * row_h
        x_end = 1 - p if left else k + p
        ax.plot([r, r, x_end], [0, y, y], color="k", lw=0.8, gid="cd-method")
        ax.text(
            x_end + (-0.06 if left else 0.06) / u,
            y,
            labels[j],
            ha="right" if left else "left",
            va="center",
            fontsize=_FONT,
            fontweight=weights[j],
            gid="cd-name",
        )
        ax.text(
            x_end + (0.04 if left else -0.04) / u,
            y + 0.03,
            f"{r:.2f}",
            ha="left" if left else "right",
            va="bottom",
            fontsize=_SMALL - 1.5,
            color="0.35",
            gid="cd-rank",
        )

    ax.set_title(title, fontsize=_TITLE)
    return fig, ax


def score_table_figure(
    scores: Any,
    names: Sequence[str] | None = None,
    dataset_names: Sequence[str] | None = None,
    *,
    greater_is_better: bool = True,
    fmt: str = "{:.3f}",
    ax: Any = None,
) -> tuple[Figure, Any]:
    """Table of scores per data set (rows) and method (columns), with their ranks.

    Each cell reads ``score (rank)``, the rank being the method's within-row rank (1 = best,
    ties averaged); each row's best score is bold. A last, shaded row gives the average ranks
    (the best bold), as :func:`gpuknn.stats.average_ranks`.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods)
        One row per data set, one column per method; finite.
    names : sequence of str of length n_methods, optional
        Column headers; default ``"method 1"``, ….
    dataset_names : sequence of str of length n_datasets, optional
        Row labels; default ``"data set 1"``, ….
    greater_is_better : bool, default True
        Whether a larger score is better (bold and ranks follow it).
    fmt : str, default "{:.3f}"
        :meth:`str.format` pattern of one score.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new figure whose size grows with the table.

    Returns
    -------
    fig : matplotlib.figure.Figure
    ax : matplotlib.axes.Axes
        Axis lines hidden; ``ax.tables[0]`` is the :class:`matplotlib.table.Table`, its cell
        ``(i, j)`` the score of data set ``i − 1`` and method ``j − 1`` (row 0: the headers;
        column 0: the data set names; row ``n_datasets + 1``: the average ranks).

    Raises
    ------
    InvalidInputError
        A bad table (not 2-D, empty, NaN), ``names`` or ``dataset_names`` of the wrong length,
        or a ``fmt`` that cannot format a number.

    See Also
    --------
    critical_difference_diagram, gpuknn.stats.rank_table

    Examples
    --------
    >>> fig, ax = score_table_figure([[0.91, 0.88], [0.75, 0.79]], ["kNN", "CDNN"], ["iris", "wine"])
    >>> fig.axes[0] is ax
    True
    >>> ax.tables[0][1, 1].get_text().get_text()
    '0.910 (1)'
    """
    raw = check_table(scores, min_datasets=1, min_methods=1)
    n, k = raw.shape
    labels = _labels(names, k, name="names", what="methods (columns)", default="method {}")
    rows = _labels(dataset_names, n, name="dataset_names", what="data sets (rows)", default="data set {}")
    if not isinstance(fmt, str):
        raise InvalidInputTypeError(f"fmt must be a format string such as '{{:.3f}}', got {type(fmt).__name__}")
    try:
        fmt.format(0.5)
    except (ValueError, IndexError, KeyError) as exc:
        raise InvalidInputError(f"fmt {fmt!r} cannot format a number: {exc}") from exc
    ranks = rank_table(raw, greater_is_better=greater_is_better)
    avg = ranks.mean(axis=0)
    cells = [[f"{fmt.format(raw[i, j])} ({_format_rank(ranks[i, j])})" for j in range(k)] for i in range(n)]
    text = [[rows[i], *cells[i]] for i in range(n)]
    text.append(["average rank", *(f"{r:.2f}" for r in avg)])
    header = ["data set", *labels]

    size = 9.0
    col_w = [max(_text_width(row[c], size, "bold") for row in (header, *text)) + 0.25 for c in range(k + 1)]
    row_h = 0.26
    title = "score (rank within the data set, 1 = best); each data set's best in bold"
    width, height = max(sum(col_w), _text_width(title, size + 0.5) + 0.1), row_h * (n + 2)
    fig, ax = _new_axes(ax, (width + 0.15, height + 0.45))
    ax.set_axis_off()
    ax.set_title(title, fontsize=size + 0.5)
    table = ax.table(cellText=text, colLabels=header, cellLoc="center", bbox=(0.0, 0.0, 1.0, 1.0))
    table.auto_set_font_size(False)
    table.set_fontsize(size)
    for (i, c), cell in table.get_celld().items():
        cell.set_width(col_w[c])
        cell.set_linewidth(0.5)
        cell.set_edgecolor("0.6")
        if i == 0 or c == 0:
            cell.get_text().set_fontweight("bold")
        if i in (0, n + 1) or c == 0:
            cell.set_facecolor("0.92")
    for i in range(n):
        for j in np.flatnonzero(ranks[i] == ranks[i].min()):
            table[i + 1, j + 1].get_text().set_fontweight("bold")
    for j in np.flatnonzero(avg == avg.min()):
        table[n + 1, j + 1].get_text().set_fontweight("bold")
    return fig, ax
