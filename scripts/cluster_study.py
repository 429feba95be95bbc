#!/usr/bin/env python
"""Run the cluster-validity study and refresh docs/clustering.md and docs/img/cluster_*.png.

Usage: python scripts/cluster_study.py [--seed 0] [--device cpu]
The table between the ``<!-- cluster-study:begin -->`` / ``<!-- cluster-study:end -->``
markers of docs/clustering.md is regenerated; the rest of the page is left alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuknn._backend import resolve_device  # noqa: E402
from gpuknn.cli.cluster_study import write_outputs  # noqa: E402
from gpuknn.studies.cluster_study import INDEX_INFO, format_table, run_cluster_study  # noqa: E402

BEGIN, END = "<!-- cluster-study:begin -->", "<!-- cluster-study:end -->"


def summary(result: dict) -> str:
    t = result["structure_test"]
    lines = [
        format_table(result, fmt="markdown"),
        "",
        "| index | meaning | best K by | chosen K |",
        "|---|---|---|---:|",
    ]
    for name, (desc, rule) in INDEX_INFO.items():
        lines.append(f"| {name} | {desc} | {rule} | {result['chosen_k'].get(name, '–')} |")
    lines += [
        "",
        "CPCC (cophenetic correlation): " + ", ".join(f"{m} {v:.4f}" for m, v in result["cpcc"].items()) + ".",
        "",
        f"Structure test at K = {t['k']} against B = {t['B']} uniform data sets in the bounding box: "
        f"within-SS {t['within_ss_observed']:.1f} vs null mean {t['within_ss_null_mean']:.1f} "
        f"(min {t['within_ss_null_min']:.1f}), p = {t['p_within_ss']:.3g}; "
        f"normalised Γ {t['gamma_observed']:.3f} vs null mean {t['gamma_null_mean']:.3f} "
        f"(max {t['gamma_null_max']:.3f}), p = {t['p_gamma']:.3g}"
        + (
            " (both the smallest possible, 1/(B+1))."
            if max(t["p_within_ss"], t["p_gamma"]) <= 1 / (t["B"] + 1)
            else "."
        ),
        "",
        f"Configuration: {result['config']}.",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "gpu"])
    args = ap.parse_args()
    result = run_cluster_study(
        seed=args.seed,
        xp=resolve_device(args.device),
        progress=lambda m: print(f"[cluster-study] {m}", file=sys.stderr),
    )
    img = ROOT / "docs" / "img"
    tmp = ROOT / "docs" / "img" / ".cluster_tmp"
    for p in write_outputs(result, tmp):
        if p.suffix == ".png":
            p.replace(img / p.name)
        else:
            p.unlink()
    tmp.rmdir()
    page = ROOT / "docs" / "clustering.md"
    text = page.read_text()
    if BEGIN not in text or END not in text:
        print(f"{page} lacks the {BEGIN} / {END} markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{BEGIN}\n{summary(result)}\n{END}{tail}")
    print(f"updated {page} and {img}/cluster_*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
