import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from gpuknn.errors import InvalidInputError
from gpuknn.plots.pca import plot_cumulative_variance
from gpuknn.plots.sweep import plot_accuracy_vs_k, plot_confusion_matrix, plot_heatmap, study_figures


def _raw(folds=3):
    acc = np.linspace(0.7, 0.8, 4 * folds).reshape(folds, 4)
    per = {
        "mean": acc.mean(0).tolist(),
        "std": acc.std(0).tolist(),
        "min": acc.min(0).tolist(),
        "max": acc.max(0).tolist(),
        "folds": acc.tolist(),
    }
    return {"ks": [1, 2, 3, 4], "uniform": per, "distance": per}


def test_accuracy_plot_names_the_fold_count():
    fig = plot_accuracy_vs_k(_raw(3))
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_title() == "Accuracy vs k (3-fold CV, raw features)"
    assert len(fig.axes[0].get_lines()) == 4  # two curves and their best points


def test_heatmap_marks_the_best_cell():
    heat = {"ps": [1, 5], "ks": [1, 2, 3], "mean": {"uniform": [[0.1, 0.2, 0.3], [0.5, 0.9, 0.4]]}}
    fig = plot_heatmap(heat, "uniform")
    assert "best 0.9000 at p=5, k=2" in fig.axes[0].get_title()
    x, y = fig.axes[0].get_lines()[0].get_data()
    assert (x[0], y[0]) == (1, 1)


def test_confusion_matrix_writes_counts(tmp_path):
    fig = plot_confusion_matrix([[5, 1], [0, 3]], ["a", "b"], title="t")
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    assert texts == ["0", "1", "3", "5"]
    fig.savefig(tmp_path / "cm.png")
    assert (tmp_path / "cm.png").stat().st_size > 0


# ---- the (k, p) heatmap, coloured relative to the best cell (issue 32) ----

_STUDY = Path(__file__).resolve().parents[1] / "docs" / "data" / "fashion_sweep_results.json"
_PS = [*range(1, 16), 20, 25, 30, 40, 50, 60, 70, 80, 100, 115, 215, 315, 415, 515, 615, 715]
_KS = list(range(1, 31))


def _study_heat(seed=0):
    """A (p, k) table shaped like the Fashion-MNIST study's: 31 irregular p rows x 30 k, chance
    level at p = 1, a plateau within a point of the best for p >= 50 and small k, a slow fall
    with k and a little fold noise."""
    rng = np.random.default_rng(seed)
    p = np.asarray(_PS, dtype=np.float64)[:, None]
    k = np.asarray(_KS, dtype=np.float64)[None, :]
    acc = 0.87 - 0.77 * np.exp(-(p - 1) / 3.0) - 0.03 * np.exp(-p / 20) - 0.0004 * np.abs(k - 6)
    acc -= 0.004 * np.log(p / 115) ** 2 / 10 + rng.normal(0, 0.0005, acc.shape)
    acc[0] = 0.1
    mean = {"uniform": acc.tolist(), "distance": (acc + 0.002).tolist()}
    return {"ps": _PS, "ks": _KS, "weights": ["uniform", "distance"], "mean": mean}


def _check_readable(fig, acc, ps, ks, near=1.0, floor=10.0):
    """The issue's criteria, read back from the figure's artists."""
    ax = fig.axes[0]
    (im,) = ax.get_images()
    acc = np.asarray(acc, dtype=np.float64)
    i, j = np.unravel_index(int(np.argmax(acc)), acc.shape)
    below = 100 * (acc - acc[i, j])
    # the image is the score minus the best, in points, and the best cell is the top colour
    np.testing.assert_allclose(np.asarray(im.get_array()), below)
    norm = im.norm
    assert norm.vmax == 0 and float(norm(0.0)) == pytest.approx(1.0)
    # done-when: the cells within one point of the best span >= 80 % of the colour range
    within = below[below >= -near]
    colours = np.asarray(norm(within), dtype=np.float64)
    assert colours.max() - colours.min() >= 0.8
    assert colours.min() >= 0.0
    # the cells far below are clipped (under the range) and hatched, the colour bar says so
    low = min(floor, -below.min())
    clipped = below < -low
    assert np.array_equal(np.asarray(norm(below)) < 0, clipped)
    hatched = [c for c in ax.collections if c.get_gid() == "clipped"]
    if clipped.any():
        (coll,) = hatched
        assert coll.get_hatch() == "///" and len(coll.get_paths()) == clipped.sum()
        assert fig.axes[1].figure is fig  # the colour bar
        texts = [t.get_text() for t in fig.axes[1].texts]
        assert f"≤ best − {low:g}" in texts
    else:
        assert hatched == []
    # the best cell is marked: a star on it, a box around it, its value in the title
    x, y = ax.get_lines()[0].get_data()
    assert (x[0], y[0]) == (j, i)
    box = ax.patches[0]
    assert box.get_xy() == (j - 0.5, i - 0.5) and (box.get_width(), box.get_height()) == (1, 1)
    assert f"best {acc[i, j]:.4f} at p={ps[i]}, k={ks[j]}" in ax.get_title()
    return ax


def test_study_shaped_heatmap_is_readable():
    heat = _study_heat()
    for w in heat["weights"]:
        fig = plot_heatmap(heat, w)
        ax = _check_readable(fig, heat["mean"][w], _PS, _KS)
        # categorical rows and columns labelled with the grid's values
        assert [t.get_text() for t in ax.get_yticklabels()] == [str(p) for p in _PS]
        assert list(ax.get_yticks()) == list(range(len(_PS)))
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(k) for k in _KS]
        # p = 1 … 7 (more than 10 points below) are clipped, the plateau (p >= 40) is not
        (im,) = ax.get_images()
        colours = np.asarray(im.norm(im.get_array()))
        assert (colours[:7] < 0).all() and (colours[_PS.index(40) :].max(axis=1) > 0.5).all()


@pytest.mark.skipif(not _STUDY.exists(), reason="stored study results absent")
def test_stored_fashion_mnist_heatmaps_are_readable():
    res = json.loads(_STUDY.read_text())
    heat = res["heatmap"]
    for w in heat["weights"]:
        fig = plot_heatmap(heat, w)
        _check_readable(fig, heat["mean"][w], heat["ps"], heat["ks"])
        hatched = next(c for c in fig.axes[0].collections if c.get_gid() == "clipped")
        assert len(hatched.get_paths()) >= 6 * len(heat["ks"])  # at least p = 1 ... 6 whole


def test_heatmap_close_to_the_best_everywhere_uses_one_linear_scale():
    acc = 0.85 + 0.004 * np.random.default_rng(1).random((4, 5))
    heat = {"ps": [10, 20, 50, 100], "ks": [1, 3, 5, 7, 9], "mean": {"distance": acc.tolist()}}
    fig = plot_heatmap(heat, "distance")
    _check_readable(fig, acc, heat["ps"], heat["ks"])
    norm = fig.axes[0].get_images()[0].norm
    spread = 100 * (acc.max() - acc.min())
    assert norm.vmin == pytest.approx(-spread) and float(norm(-spread / 2)) == pytest.approx(0.5)


def test_heatmap_thins_out_tick_labels_of_a_long_grid():
    ks = list(range(1, 101))
    acc = 0.8 - 0.001 * np.abs(np.arange(100) - 30)[None, :] + np.zeros((3, 1))
    heat = {"ps": [5, 50, 500], "ks": ks, "mean": {"uniform": acc.tolist()}}
    ax = plot_heatmap(heat, "uniform", max_labels=40).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [str(k) for k in ks[::3]] and len(labels) <= 40
    assert list(ax.get_xticks()) == list(range(0, 100, 3))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"near": 0.0}, "near must be > 0"),
        ({"share": 1.0}, "share must be in"),
        ({"floor": 0.5}, "floor must be >= near"),
        ({"weights": "nope"}, "weights 'nope' is not one of"),
    ],
)
def test_heatmap_rejects_bad_settings(kwargs, match):
    heat = {"ps": [1, 5], "ks": [1, 2], "mean": {"uniform": [[0.1, 0.2], [0.5, 0.9]]}}
    weights = kwargs.pop("weights", "uniform")
    with pytest.raises(InvalidInputError, match=match):
        plot_heatmap(heat, weights, **kwargs)


def test_heatmap_rejects_a_table_of_the_wrong_shape():
    heat = {"ps": [1, 5, 9], "ks": [1, 2], "mean": {"uniform": [[0.1, 0.2], [0.5, 0.9]]}}
    with pytest.raises(InvalidInputError, match=r"shape \(2, 2\), not \(len\(ps\), len\(ks\)\) = \(3, 2\)"):
        plot_heatmap(heat, "uniform")


# ---- explained variance on linear axes, the chosen p marked ----


def _ratio(n=200):
    v = 1.0 / np.arange(1, n + 1) ** 1.5
    return v / v.sum()


def test_variance_plot_is_linear_and_marks_the_chosen_p():
    r = _ratio(200)
    fig = plot_cumulative_variance(r, p=40, zoom=30)
    ax_cum, ax_one = fig.axes
    for ax in (ax_cum, ax_one):
        assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"
    x, cum = ax_cum.get_lines()[0].get_data()
    np.testing.assert_array_equal(x, np.arange(1, 201))
    np.testing.assert_allclose(cum, np.cumsum(r))
    # the lower panel: per cent per component, at least 1.3 p components shown
    x1, share = ax_one.get_lines()[0].get_data()
    assert len(x1) == 52
    np.testing.assert_allclose(share, 100 * r[:52])
    for ax in (ax_cum, ax_one):
        (vline,) = [ln for ln in ax.get_lines() if ln.get_gid() == "chosen-p"]
        assert list(vline.get_xdata()) == [40, 40]
    (label,) = [t for t in ax_cum.texts if t.get_gid() == "chosen-p"]
    assert label.get_text() == f"chosen p = 40: {np.cumsum(r)[39]:.1%} of the variance"
    # the levels: the first component count reaching each
    marks = sorted(t.get_text() for t in ax_cum.texts if t.get_gid() != "chosen-p")
    expected = [f"{lv:.0%} at {int(np.searchsorted(np.cumsum(r), lv)) + 1}" for lv in (0.8, 0.9, 0.95, 0.99)]
    assert marks == sorted(e for e in expected if int(e.split(" at ")[1]) <= 200)


def test_variance_plot_without_p_marks_nothing():
    fig = plot_cumulative_variance(_ratio(50))
    for ax in fig.axes:
        assert not [a for a in (*ax.get_lines(), *ax.texts) if a.get_gid() == "chosen-p"]
    assert len(fig.axes[1].get_lines()[0].get_xdata()) == 50  # zoom 150 > 50 components: all


@pytest.mark.parametrize("p", [0, 51])
def test_variance_plot_rejects_p_outside_the_components(p):
    with pytest.raises(InvalidInputError, match=r"p must be in 1 … 50"):
        plot_cumulative_variance(_ratio(50), p=p)


@pytest.mark.skipif(not _STUDY.exists(), reason="stored study results absent")
def test_study_figures_draw_the_stored_study():
    res = json.loads(_STUDY.read_text())
    figs = study_figures(res)
    assert sorted(figs) == sorted(
        [
            "accuracy_vs_k.png",
            "variance_cumulative.png",
            "variance_components.png",
            "heatmap_uniform.png",
            "heatmap_distance.png",
            "confusion_matrix.png",
        ]
    )
    var = figs["variance_cumulative.png"]()
    (vline,) = [ln for ln in var.axes[0].get_lines() if ln.get_gid() == "chosen-p"]
    assert list(vline.get_xdata()) == [res["best"]["p"]] * 2 == [115, 115]
    title = figs["heatmap_distance.png"]().axes[0].get_title()
    assert "best 0.8724 at p=115, k=6" in title


def test_results_doc_keeps_the_thesis_sections(tmp_path):
    """scripts/results_doc.py rewrites the study's part of results.md and keeps what follows
    its marker (the thesis' experiments, written by their own scripts) word for word."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("results_doc", root / "scripts" / "results_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tail = mod.KEPT + "\n\n# The thesis' experiments\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    (tmp_path / "results.md").write_text("# old study text\n\nstale line\n\n" + tail, encoding="utf-8")
    mod.main(str(root / "docs" / "data" / "fashion_sweep_results.json"), str(tmp_path))
    page = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert page.startswith("# Fashion-MNIST study: results") and "stale line" not in page
    assert page.endswith(tail) and page.count(mod.KEPT) == 1
    mod.main(str(root / "docs" / "data" / "fashion_sweep_results.json"), str(tmp_path))  # idempotent
    assert (tmp_path / "results.md").read_text(encoding="utf-8") == page
