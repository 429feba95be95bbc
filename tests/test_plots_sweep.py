import numpy as np
from matplotlib.figure import Figure

from gpuknn.plots.sweep import plot_accuracy_vs_k, plot_confusion_matrix, plot_heatmap


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
