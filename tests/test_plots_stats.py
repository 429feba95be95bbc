"""Critical-difference diagram and score-table figure (gpuknn.plots.stats)."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from gpuknn.errors import InvalidInputError
from gpuknn.plots import critical_difference_diagram, score_table_figure
from gpuknn.stats import average_ranks, critical_difference, friedman_test

_ONES = np.ones((4, 3))


def _gid(ax, gid):
    return [a for a in (*ax.lines, *ax.texts) if a.get_gid() == gid]


def _table(ranks_per_row):
    """Scores whose within-row ranks are the given rows (rank 1 = highest score)."""
    return -np.asarray(ranks_per_row, dtype=np.float64)


# 4 methods on 14 data sets: average ranks A 1.29, B 2.14, C 2.71, D 3.86.
_ROWS = [[1, 2, 3, 4]] * 6 + [[2, 1, 3, 4]] * 2 + [[1, 3, 2, 4]] * 2 + [[2, 3, 1, 4]] * 2 + [[1, 2, 4, 3]] * 2


@pytest.fixture
def close():
    figs = []
    yield figs.append
    for fig in figs:
        fig.clear()


def _names_in_rank_order(ax):
    """Name labels read from the diagram: left side top to bottom, then right side bottom to top."""
    names = _gid(ax, "cd-name")
    left = sorted((t for t in names if t.get_ha() == "right"), key=lambda t: -t.get_position()[1])
    right = sorted((t for t in names if t.get_ha() == "left"), key=lambda t: t.get_position()[1])
    return [t.get_text() for t in left + right]


@pytest.mark.parametrize("k", [3, 5, 10])
def test_diagram_places_every_method_at_its_average_rank(k, close):
    rng = np.random.default_rng(k)
    scores = rng.random((12, k)) + np.linspace(0.5, 0.0, k)
    names = [f"m{j}" for j in rng.permutation(k)]
    fig, ax = critical_difference_diagram(scores, names)
    close(fig)
    assert isinstance(fig, Figure) and fig.axes[0] is ax
    ranks = average_ranks(scores)
    order = np.argsort(ranks, kind="stable")
    assert _names_in_rank_order(ax) == [names[j] for j in order]
    # one line per method, starting on the axis at its rank and bending to its side
    lines = _gid(ax, "cd-method")
    assert len(lines) == k
    starts = sorted(float(line.get_xdata()[0]) for line in lines)
    np.testing.assert_allclose(starts, np.sort(ranks))
    for line in lines:
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert y[0] == 0 and y[1] < 0 and x[0] == x[1]
        assert x[2] < 1 or x[2] > k  # ends outside the rank axis, next to the name
    axis = _gid(ax, "cd-axis")[0]
    assert list(axis.get_xdata()) == [1, k]
    x0, x1 = ax.get_xlim()
    assert x0 < 1 and x1 > k
    rank_texts = sorted(t.get_text() for t in _gid(ax, "cd-rank"))
    assert rank_texts == sorted(f"{r:.2f}" for r in ranks)


@pytest.mark.parametrize("test", ["nemenyi", "bonferroni-dunn"])
def test_cd_bar_is_the_critical_difference_in_rank_units(test, close):
    scores = _table(_ROWS)
    kwargs = {"control": 0} if test == "bonferroni-dunn" else {}
    fig, ax = critical_difference_diagram(scores, list("ABCD"), alpha=0.1, test=test, **kwargs)
    close(fig)
    cd = critical_difference(4, 14, alpha=0.1, test=test)
    (bar,) = _gid(ax, "cd-bar")
    x = np.asarray(bar.get_xdata())
    assert x[1] - x[0] == pytest.approx(cd)
    assert any(t.get_text() == f"CD = {cd:.3g}" for t in ax.texts)
    title = ax.get_title()
    p = friedman_test(scores).pvalue
    for part in ("N = 14", "k = 4", "α = 0.1", f"p = {p:.2g}"):
        assert part in title
    assert ("Nemenyi" if test == "nemenyi" else "Bonferroni–Dunn") in title


def _groups(ax, ranks):
    """The set of names each clique bar spans, given ``{name: average rank}``."""
    out = []
    for bar in _gid(ax, "cd-clique"):
        lo, hi = sorted(bar.get_xdata())
        out.append({name for name, r in ranks.items() if lo <= r <= hi})
    return sorted(out, key=sorted)


def test_nemenyi_bars_join_exactly_the_maximal_groups(close):
    # N = 14, CD = 1.254: A 1.29, B 2.07, C 2.64, D 4.0. A–B and B–C are below CD, A–C
    # (1.36) and C–D (1.36) above: two bars, {A, B} and {B, C}; D stands alone.
    rows = [[1, 2, 3, 4]] * 5 + [[2, 1, 3, 4]] * 4 + [[1, 3, 2, 4]] * 5
    scores = _table(rows)
    ranks = average_ranks(scores)
    cd = critical_difference(4, 14)
    assert ranks[1] - ranks[0] <= cd and ranks[2] - ranks[1] <= cd
    assert ranks[2] - ranks[0] > cd and ranks[3] - ranks[2] > cd
    fig, ax = critical_difference_diagram(scores, list("ABCD"))
    close(fig)
    assert _groups(ax, dict(zip("ABCD", ranks))) == [{"A", "B"}, {"B", "C"}]
    # the same ranks with the methods' columns shuffled
    perm = [2, 0, 3, 1]
    fig, ax = critical_difference_diagram(scores[:, perm], [list("ABCD")[j] for j in perm])
    close(fig)
    assert _groups(ax, dict(zip("ABCD", ranks))) == [{"A", "B"}, {"B", "C"}]


def test_nemenyi_bars_one_over_all_or_none(close):
    # C–D below CD as well: a third bar; a strict order on 20 data sets (ranks 1, 2, 3 exactly,
    # CD = 0.74) has no group; near-equal methods on 4 data sets share one bar over all.
    rows = [[1, 2, 3, 4]] * 7 + [[2, 1, 3, 4]] * 3 + [[1, 3, 2, 4]] * 2 + [[1, 2, 4, 3]] * 2
    fig, ax = critical_difference_diagram(_table(rows), list("ABCD"))
    close(fig)
    assert _groups(ax, dict(zip("ABCD", average_ranks(_table(rows))))) == [{"A", "B"}, {"B", "C"}, {"C", "D"}]
    fig, ax = critical_difference_diagram(_table([[1, 2, 3]] * 20), list("ABC"))
    close(fig)
    assert _gid(ax, "cd-clique") == []
    scores = _table([[1, 2, 3, 4], [2, 1, 4, 3], [3, 4, 1, 2], [4, 3, 2, 1]])
    fig, ax = critical_difference_diagram(scores, list("ABCD"))
    close(fig)
    assert _groups(ax, dict(zip("ABCD", average_ranks(scores)))) == [set("ABCD")]


def test_bonferroni_dunn_draws_the_interval_around_the_control(close):
    scores = _table(_ROWS)
    ranks = average_ranks(scores)
    cd = critical_difference(4, 14, test="bonferroni-dunn")
    fig, ax = critical_difference_diagram(scores, list("ABCD"), test="bonferroni-dunn", control="C")
    close(fig)
    (interval,) = _gid(ax, "cd-control-interval")
    lo, hi = sorted(interval.get_xdata())
    assert lo == pytest.approx(max(1.0, ranks[2] - cd)) and hi == pytest.approx(min(4.0, ranks[2] + cd))
    assert _gid(ax, "cd-clique") == []
    bold = [t.get_text() for t in _gid(ax, "cd-name") if t.get_fontweight() == "bold"]
    assert bold == ["C"]
    assert "control C" in ax.get_title()
    # by column, and by default the best-ranked method
    fig, ax = critical_difference_diagram(scores, list("ABCD"), test="bonferroni-dunn", control=-1)
    close(fig)
    assert "control D" in ax.get_title()
    fig, ax = critical_difference_diagram(scores, list("ABCD"), test="bonferroni-dunn")
    close(fig)
    assert "control A" in ax.get_title()


def test_diagram_with_losses_and_a_given_axes(close):
    scores = _table(_ROWS)
    fig = Figure(figsize=(8, 3))
    close(fig)
    ax = fig.add_subplot()
    out_fig, out_ax = critical_difference_diagram(-scores, list("ABCD"), greater_is_better=False, ax=ax)
    assert out_fig is fig and out_ax is ax
    assert _names_in_rank_order(ax) == list("ABCD")
    fig2, ax2 = critical_difference_diagram(scores)
    close(fig2)
    assert _names_in_rank_order(ax2) == ["method 1", "method 2", "method 3", "method 4"]


def test_table_figure_has_a_cell_per_score_bold_bests_and_average_ranks(close):
    scores = np.array([[0.91, 0.88, 0.91], [0.75, 0.79, 0.70]])
    fig, ax = score_table_figure(scores, ["kNN", "CDNN", "SVM"], ["iris", "wine"])
    close(fig)
    assert fig.axes[0] is ax
    (table,) = ax.tables
    cells = table.get_celld()
    n, k = scores.shape
    assert set(cells) == {(i, c) for i in range(n + 2) for c in range(k + 1)}
    texts = {key: cell.get_text().get_text() for key, cell in cells.items()}
    assert [texts[0, c] for c in range(k + 1)] == ["data set", "kNN", "CDNN", "SVM"]
    assert [texts[i, 0] for i in range(n + 2)][1:] == ["iris", "wine", "average rank"]
    assert [texts[1, c] for c in (1, 2, 3)] == ["0.910 (1.5)", "0.880 (3)", "0.910 (1.5)"]
    assert [texts[2, c] for c in (1, 2, 3)] == ["0.750 (2)", "0.790 (1)", "0.700 (3)"]
    assert [texts[3, c] for c in (1, 2, 3)] == ["1.75", "2.00", "2.25"]

    def bold(i, c):
        return cells[i, c].get_text().get_fontweight() == "bold"

    assert [bold(1, c) for c in (1, 2, 3)] == [True, False, True]  # ties share the bold
    assert [bold(2, c) for c in (1, 2, 3)] == [False, True, False]
    assert [bold(3, c) for c in (1, 2, 3)] == [True, False, False]


def test_table_figure_grows_with_the_table_and_follows_the_options(close):
    rng = np.random.default_rng(1)
    small, _ = score_table_figure(rng.random((3, 3)))
    big, ax = score_table_figure(rng.random((14, 10)), fmt="{:.1%}", greater_is_better=False)
    close(small)
    close(big)
    assert big.get_figwidth() > small.get_figwidth() and big.get_figheight() > small.get_figheight()
    table = ax.tables[0]
    assert table[1, 1].get_text().get_text().split(" ")[0].endswith("%")
    assert table[0, 10].get_text().get_text() == "method 10" and table[14, 0].get_text().get_text() == "data set 14"
    assert all(cell.get_fontsize() >= 8 for cell in table.get_celld().values())


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: critical_difference_diagram(_ONES, ["a", "b"]), "names"),
        (lambda: critical_difference_diagram(np.ones((1, 3))), "scores"),
        (lambda: critical_difference_diagram(_ONES, alpha=1.5), "alpha"),
        (lambda: critical_difference_diagram(_ONES, test="dunnett"), "test"),
        (lambda: critical_difference_diagram(_ONES, control=1), "control"),
        (lambda: critical_difference_diagram(_ONES, list("abc"), test="bonferroni-dunn", control="z"), "control 'z'"),
        (lambda: critical_difference_diagram(_ONES, test="bonferroni-dunn", control=3), "control"),
        (lambda: critical_difference_diagram([[1.0, np.nan], [1.0, 2.0]]), "scores"),
        (lambda: score_table_figure(np.ones((2, 3)), dataset_names=["x"]), "dataset_names"),
        (lambda: score_table_figure(np.ones((2, 3)), names=["x"]), "names"),
        (lambda: score_table_figure(np.ones((2, 3)), fmt="{:d}"), "fmt"),
        (lambda: score_table_figure(np.ones(3)), "scores"),
    ],
)
def test_errors_name_the_argument(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
