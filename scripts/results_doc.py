"""Write docs/results.md and its figures (docs/img/sweep_*.png) from a `gpuknn sweep` output.

    gpuknn sweep --out results/full
    python scripts/results_doc.py results/full [docs] ["a note placed under the table"]
    python scripts/results_doc.py docs/data/fashion_sweep_results.json docs "..."   # a stored results.json

The figures are drawn from results.json by `gpuknn.plots.sweep.study_figures`, the functions
`gpuknn sweep` draws its PNGs with, so a stored results.json is enough to redraw them. The page
states only what results.json holds: settings, device, timings, CV choice, test scores.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import numpy as np

from gpuknn.plots.sweep import plot_heatmap, study_figures

# Everything from this line on in docs/results.md is kept as it is (the thesis' experiments).
KEPT = "<!-- results_doc.py keeps what follows -->"
DPI = 110  # as `gpuknn sweep` saves them (RunDirectory.save_figures)
# the heatmaps' colour scale (plot_heatmap's defaults, as study_figures draws them)
NEAR, SHARE, FLOOR = (inspect.signature(plot_heatmap).parameters[n].default for n in ("near", "share", "floor"))


def draw_figures(res: dict, img: Path) -> list[Path]:
    """Draw the study's figures into ``img/sweep_<name>.png``; return the paths written."""
    img.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in study_figures(res).items():
        path = img / f"sweep_{name}"
        draw().savefig(path, dpi=DPI)
        written.append(path)
    return written


def _near_best(heat: dict) -> str:
    """Where the cells within NEAR points of each weighting's best lie (p and k ranges)."""
    parts = []
    for w in heat["weights"]:
        m = np.asarray(heat["mean"][w])
        rows, cols = np.nonzero(m >= m.max() - NEAR / 100)
        ps, ks = np.asarray(heat["ps"])[rows], np.asarray(heat["ks"])[cols]
        parts.append(f"{w} votes: {rows.size} cells, p = {ps.min()}…{ps.max()}, k = {ks.min()}…{ks.max()}")
    return "; ".join(parts)


def _clipped_ps(heat: dict) -> list[int]:
    """The smallest p values (a leading run of the grid) whose whole row lies more than FLOOR
    points below the best, in every weighting."""
    out = []
    for pi, p in enumerate(heat["ps"]):
        if not all(max(heat["mean"][w][pi]) < max(map(max, heat["mean"][w])) - FLOOR / 100 for w in heat["weights"]):
            break
        out.append(p)
    return out


def main(run_dir: str, docs: str = "docs", note: str = "") -> None:
    run, docs_dir = Path(run_dir), Path(docs)
    res = json.loads((run if run.is_file() else run / "results.json").read_text())
    draw_figures(res, docs_dir / "img")
    s, b, t = res["settings"], res["best"], res["test"]
    ratio = np.cumsum(res["variance"]["explained_variance_ratio"])
    heat = res["heatmap"]
    lines = [
        "# Fashion-MNIST study: results",
        "",
        f"Produced by `gpuknn sweep` ({s['data']}; {s['n_train']} training and {s['n_test']} test images; "
        f"device {res['device']}; gpuknn {res['versions']['gpuknn']}, numpy {res['versions']['numpy']}) and "
        "written into this page by `scripts/results_doc.py` from its `results.json`.",
        "",
        f"Settings: metric **{s['metric']}**, {s['folds']}-fold stratified CV (seed {s['seed']}), "
        f"raw-pixel k = {min(s['ks_raw'])}…{max(s['ks_raw'])}, heatmap k = {min(s['ks'])}…{max(s['ks'])} over "
        f"p ∈ {{{', '.join(map(str, s['ps']))}}}, weights {', '.join(s['weights'])}, dtype {s['dtype']}. "
        "PCA is fitted on the training part of each fold only; the test set is used once, at the end.",
        "",
        "## Chosen by cross-validation, then tested once",
        "",
        "| | value |",
        "| --- | --- |",
        f"| k* | {b['k']} |",
        f"| p* (PCA components) | {b['p']} |",
        f"| weights* | {b['weights']} |",
        f"| CV accuracy (mean ± std over folds) | {b['cv_accuracy']:.4f} ± {b['cv_std']:.4f} |",
        f"| **test accuracy** | **{t['accuracy']:.4f}** |",
        f"| test macro-F1 | {t['macro_f1']:.4f} |",
        f"| time, whole study | {res['seconds_total']:.0f} s ({res['seconds_load']:.1f} s of it loading data) |",
        "",
        "The seed study reported 0.85 at k* = 10, p* = 100; the public Fashion-MNIST benchmark's best kNN is 0.860.",
        "",
    ] + ([note, ""] if note else [])
    if "raw" in res:
        lines += ["## Accuracy vs k on raw pixels", "", "![accuracy vs k](img/sweep_accuracy_vs_k.png)", ""]
        for w in s["weights"]:
            m = np.asarray(res["raw"][w]["mean"])
            i = int(m.argmax())
            lines.append(
                f"* {w} votes: best mean CV accuracy {m[i]:.4f} at k = {res['raw']['ks'][i]}; "
                f"k = 1: {m[0]:.4f}; k = {res['raw']['ks'][-1]}: {m[-1]:.4f}."
            )
        lines.append("")
    marks = [p for p in (10, 50, 100, 187, 300) if p <= len(ratio)]
    lines += [
        "## Explained variance of the training set",
        "",
        "![cumulative explained variance](img/sweep_variance_cumulative.png)",
        "![per-component variance](img/sweep_variance_components.png)",
        "",
        "Cumulative explained variance: " + ", ".join(f"p = {p}: {ratio[p - 1]:.3f}" for p in marks) + ". "
        f"The dashed line marks the p chosen by cross-validation, p* = {b['p']} "
        f"({100 * ratio[b['p'] - 1]:.1f} % of the variance); the lower panel is each component's "
        "share of the variance, in per cent, for the first components (linear axes; the second "
        "figure has the variance per component on a log scale).",
        "",
    ]
    clipped = _clipped_ps(heat)
    lines += [
        "## (k, p) heatmaps",
        "",
        "![uniform](img/sweep_heatmap_uniform.png)",
        "![distance](img/sweep_heatmap_distance.png)",
        "",
        f"Colour: mean CV accuracy minus the best cell's (the red box and star; its value in the title), "
        f"in points (hundredths). The top {NEAR:g} point below the best takes {100 * SHARE:.0f} % of the "
        f"colour scale (above the white line on the colour bar), the rest down to {FLOOR:g} points below "
        f"takes {100 * (1 - SHARE):.0f} %, and the cells more than {FLOOR:g} points below the best are grey "
        "and hatched"
        + (f" (all of p ≤ {max(clipped)} here)" if clipped else "")
        + ". Each row is one p tried, evenly spaced whatever the step between the p values. Cells within "
        f"{NEAR:g} point of the best: " + _near_best(heat) + ".",
        "",
        "Best mean CV accuracy per p (over k):",
        "",
        "| p | " + " | ".join(heat["weights"]) + " |",
        "| --- | " + " | ".join("---" for _ in heat["weights"]) + " |",
    ]
    for pi, p in enumerate(heat["ps"]):
        cells = []
        for w in heat["weights"]:
            row = np.asarray(heat["mean"][w][pi])
            cells.append(f"{row.max():.4f} (k={heat['ks'][int(row.argmax())]})")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Test set",
        "",
        "![confusion matrix](img/sweep_confusion_matrix.png)",
        "",
        "Per-class F1: " + ", ".join(f"{n} {f:.3f}" for n, f in zip(res["class_names"], t["per_class_f1"])) + ".",
        "",
    ]
    page = docs_dir / "results.md"
    kept = ""
    if page.exists():  # the thesis' experiments are written by their own scripts: keep them
        old = page.read_text(encoding="utf-8")
        if KEPT in old:
            kept = "\n" + old[old.index(KEPT) :]
    page.write_text("\n".join(lines) + kept, encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
