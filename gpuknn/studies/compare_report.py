"""Figures and the self-contained HTML report of a comparison (``gpuknn compare``).

:func:`compare_figures` gives the figures of the primary score (the first of ``scoring``):
the critical-difference diagrams (Nemenyi; Bonferroni–Dunn against the control) and the
score table, as functions drawing them (:meth:`gpuknn.cli.rundir.RunDirectory.save_figures`
takes them). :func:`render_report` writes one HTML page from ``CompareResult.to_json()``
and the PNG bytes of those figures, inlined as base64 so the page stands alone: tables of
mean ± sd and ranks, and each test with its statistic, its p-value and what it means.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["FIGURE_NAMES", "compare_figures", "render_report"]

#: The figure files of a comparison, in the order of the report.
FIGURE_NAMES = ("cd_nemenyi.png", "cd_control.png", "score_table.png")

_SCORE_NAMES = {
    "roc_auc": "ROC AUC",
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced accuracy",
    "f1": "F1 (positive class)",
    "precision": "precision (positive class)",
    "recall": "recall (positive class)",
}


def compare_figures(res: Mapping[str, Any]) -> dict[str, Callable[[], Any]]:
    """``{file name: function drawing the figure}`` for the primary score of ``res`` (the
    dict of ``CompareResult.to_json()``); empty where there are fewer than two data sets or
    methods, or a mean score is undefined (the rank tests need them)."""
    from ..plots import critical_difference_diagram, score_table_figure  # noqa: PLC0415

    table = np.asarray(res["mean"], dtype=np.float64)[:, :, 0] if res["mean"] else np.zeros((0, 0))
    if table.ndim != 2 or min(table.shape) < 2 or not np.isfinite(table).all():
        return {}
    names, rows = list(res["methods"]), list(res["datasets"])
    control = names.index(res["control"])
    return {
        "cd_nemenyi.png": lambda: critical_difference_diagram(table, names, alpha=res["settings"]["alpha"])[0],
        "cd_control.png": lambda: critical_difference_diagram(
            table, names, alpha=res["settings"]["alpha"], test="bonferroni-dunn", control=control
        )[0],
        "score_table.png": lambda: score_table_figure(table, names, rows)[0],
    }


def _p(p: Any) -> str:
    if p is None:
        return "n/a"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def _num(x: Any, fmt: str = "{:.4f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def _e(s: Any) -> str:
    return html.escape(str(s))


def _verdict(p: Any, alpha: float) -> str:
    if p is None:
        return "undefined (all scores equal)"
    return f"significant at α = {alpha:g}" if p < alpha else f"not significant at α = {alpha:g}"


def _score_table(res: Mapping[str, Any], s: int) -> str:
    mean = np.asarray(res["mean"], dtype=np.float64)[:, :, s]
    std = np.asarray(res["std"], dtype=np.float64)[:, :, s]
    ranks = res["stats"][res["scoring"][s]].get("average_ranks", {})
    head = "".join(f"<th>{_e(m)}</th>" for m in res["methods"])
    rows = []
    for d, name in enumerate(res["datasets"]):
        best = np.nanmax(mean[d]) if np.isfinite(mean[d]).any() else np.nan
        cells = []
        for m in range(mean.shape[1]):
            text = f"{_num(mean[d, m], '{:.3f}')} ± {_num(std[d, m], '{:.3f}')}"
            cells.append(f"<td><b>{text}</b></td>" if mean[d, m] == best else f"<td>{text}</td>")
        rows.append(f"<tr><th>{_e(name)}</th>{''.join(cells)}</tr>")
    avg = "".join(f"<td>{_num(ranks.get(m), '{:.2f}')}</td>" for m in res["methods"])
    rows.append(f'<tr class="ranks"><th>average rank</th>{avg}</tr>')
    return f"<table><tr><th>data set</th>{head}</tr>{''.join(rows)}</table>"


def _significant_pairs(st: Mapping[str, Any], ne: Mapping[str, Any]) -> str:
    names = list(st.get("average_ranks", {}))
    sig = ne["significant"]
    pairs = [
        f"{_e(names[i])} – {_e(names[j])} (p = {_p(ne['pvalue'][i][j])})"
        for i in range(len(sig))
        for j in range(i + 1, len(sig))
        if sig[i][j]
    ]
    if len(names) != len(sig):
        return ""
    return "Significantly different pairs: " + ("; ".join(pairs) if pairs else "none") + "."


def _tests(st: Mapping[str, Any], alpha: float) -> str:
    out = []
    fr = st.get("friedman", {})
    if "skipped" in fr:
        out.append(f"<p>Friedman test not run: {_e(fr['skipped'])}</p>")
    else:
        out.append(
            f"<p><b>Friedman test</b> (H₀: all methods perform alike, so their average ranks are equal): "
            f"χ²_F = {_num(fr['statistic'], '{:.3f}')}, p = {_p(fr['pvalue'])}; "
            f"<b>Iman–Davenport</b> F = {_num(fr['iman_davenport'], '{:.3f}')}, p = {_p(fr['iman_davenport_pvalue'])} "
            f"— {_verdict(fr['iman_davenport_pvalue'], alpha)}. "
            + (
                "The methods do not all perform alike: the post-hoc tests below say which differ."
                if fr["significant"]
                else "The data do not show that the methods differ; the post-hoc tests are given for reference."
            )
            + "</p>"
        )
    ne = st.get("nemenyi", {})
    if "skipped" not in ne and ne:
        out.append(
            f"<p><b>Nemenyi test</b> (every pair): two methods differ significantly when their average "
            f"ranks differ by more than the critical difference CD = {_num(ne['critical_difference'], '{:.3f}')} "
            f"(q_α = {_num(ne['critical_value'], '{:.3f}')}). " + _significant_pairs(st, ne) + "</p>"
        )
    bd = st.get("bonferroni_dunn", {})
    vs = st.get("versus_control", {})
    if "skipped" not in bd and bd:
        out.append(
            f"<p><b>Bonferroni–Dunn test</b> against the control <b>{_e(bd['control'])}</b>: a method differs "
            f"from it when their average ranks differ by more than "
            f"CD = {_num(bd['critical_difference'], '{:.3f}')}.</p>"
        )
    rows = []
    for m, entry in vs.items():
        b = bd.get("methods", {}).get(m, {}) if "skipped" not in bd else {}
        w = entry.get("wilcoxon", {})
        nb = entry.get("nadeau_bengio", [])
        nb_sig = sum(1 for t in nb if t.get("pvalue") is not None and t["pvalue"] < alpha)
        rows.append(
            f"<tr><th>{_e(m)}</th><td>{_num(entry['mean_difference'], '{:+.4f}')}</td>"
            f"<td>{_p(b.get('pvalue'))}{' *' if b.get('significant') else ''}</td>"
            f"<td>{_p(w.get('pvalue'))}{' *' if w.get('pvalue') is not None and w['pvalue'] < alpha else ''}</td>"
            f"<td>{nb_sig} of {len(nb)}</td></tr>"
        )
    if rows:
        out.append(
            "<table><tr><th>method vs control</th><th>mean difference</th><th>Bonferroni–Dunn p</th>"
            "<th>Wilcoxon p</th><th>data sets where Nadeau–Bengio p &lt; α</th></tr>" + "".join(rows) + "</table>"
        )
        out.append(
            "<p class='note'>* significant at α. Wilcoxon's signed-rank test compares a method with the control "
            "over the data sets' mean scores (paired); the Nadeau–Bengio corrected resampled t-test compares "
            "them on each data set over its CV folds, its variance inflated by n_test/n_train for the "
            "overlap of the training folds. Differences are method − control (positive: better than "
            "the control).</p>"
        )
    return "\n".join(out)


def render_report(res: Mapping[str, Any], figures: Mapping[str, bytes] | None = None, *, title: str = "") -> str:
    """The report as one HTML page (str).

    Parameters
    ----------
    res : dict
        ``CompareResult.to_json()`` (or the ``results.json`` of ``gpuknn compare``).
    figures : dict of str to bytes, optional
        PNG bytes by file name (:data:`FIGURE_NAMES`); missing ones are left out.
    title : str, optional
    """
    figures = dict(figures or {})
    st = res["settings"]
    alpha = float(st["alpha"])
    title = title or f"gpuknn compare: {len(res['methods'])} methods × {len(res['datasets'])} data sets"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>",
        "body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:right}"
        "th{background:#eef}tr.ranks td{background:#f4f4f4}.note{color:#555;font-size:90%}img{max-width:100%}",
        "</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Stratified {st['n_splits']}-fold cross-validation repeated {st['n_repeats']} time(s), seed "
        f"{st['random_state']}; the same folds for every method (paired). Scaling: {_e(st['scale'] or 'none')}, "
        f"fitted on each training fold. Control method: <b>{_e(res['control'])}</b>; α = {alpha:g}. "
        "Each data set is a binary problem whose positive class is its minority class (a data set with more "
        "than two classes is binarised: its smallest class against the rest).</p>",
        "<h2>Data sets</h2><table><tr><th>data set</th><th>rows</th><th>features</th><th>classes</th>"
        "<th>positive class</th><th>positives</th></tr>",
    ]
    for i in res["dataset_info"]:
        parts.append(
            f"<tr><th>{_e(i['name'])}</th><td>{i['n_samples']}</td><td>{i['n_features']}</td>"
            f"<td>{i['n_classes']}{' (binarised)' if i['binarized'] else ''}</td>"
            f"<td>{_e(i['positive_label'])}</td><td>{i['n_positive']}</td></tr>"
        )
    parts.append("</table>")
    captions = {
        "cd_nemenyi.png": "Critical-difference diagram (Nemenyi): average ranks, 1 = best, on the left; "
        "methods joined by a thick bar are not significantly different.",
        "cd_control.png": "Critical-difference diagram (Bonferroni–Dunn): methods outside the bar around the "
        "control's rank differ significantly from the control.",
        "score_table.png": "Mean scores per data set with their ranks (best in bold); last row: average ranks.",
    }
    primary = res["scoring"][0]
    shown = [n for n in FIGURE_NAMES if n in figures]
    if shown:
        parts.append(f"<h2>Figures ({_e(_SCORE_NAMES.get(primary, primary))})</h2>")
        for name in shown:
            data = base64.b64encode(figures[name]).decode("ascii")
            parts.append(
                f"<figure><img alt='{_e(name)}' src='data:image/png;base64,{data}'>"
                f"<figcaption>{_e(captions[name])}</figcaption></figure>"
            )
    for s, sname in enumerate(res["scoring"]):
        parts.append(f"<h2>{_e(_SCORE_NAMES.get(sname, sname))}</h2>")
        parts.append("<p>Mean ± standard deviation over the folds; best of each data set in bold.</p>")
        parts.append(_score_table(res, s))
        parts.append(_tests(res["stats"][sname], alpha))
    parts.append("</body></html>\n")
    return "\n".join(parts)
