#!/usr/bin/env python
"""Run the cluster-validity study and refresh docs/clustering.md and docs/img/cluster_*.png.

Usage: python scripts/cluster_study.py [--seed 0] [--device cpu] [--null both] [--gap-rule 1se]
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
    gap = result["gap"]
    lines = [
        format_table(result, fmt="markdown"),
        "",
        "| index | meaning | best K by | chosen K |",
        "|---|---|---|---:|",
    ]
    for name, (desc, rule) in INDEX_INFO.items():
        if name == "gap":
            rule = {"1se": "1-SE", "max": "max"}[gap["rule"]]
        lines.append(f"| {name} | {desc} | {rule} | {result['chosen_k'].get(name, '–')} |")
    other = "max" if gap["rule"] == "1se" else "1se"
    lines.append(
        f"| gap ({other}) | the same gap table, the other rule | {'max' if other == 'max' else '1-SE'} | "
        f"{gap['chosen_by_rule'][other]} |"
    )
    B = t["B"]
    lines += [
        "",
        "CPCC (cophenetic correlation): " + ", ".join(f"{m} {v:.4f}" for m, v in result["cpcc"].items()) + ".",
        "",
        f"Structure test, B = {B} null data sets per null model (smallest possible p = 1/(B+1) = {1 / (B + 1):.3g}):",
        "",
        "| null | K | within-SS | null mean (min) | p(within-SS) | Γ | null mean (max) | p(Γ) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in t["tests"]:
        lines.append(
            f"| {r['null']} | {r['k']} | {r['within_ss_observed']:.1f} | "
            f"{r['within_ss_null_mean']:.1f} ({r['within_ss_null_min']:.1f}) | {r['p_within_ss']:.3g} | "
            f"{r['gamma_observed']:.3f} | {r['gamma_null_mean']:.3f} ({r['gamma_null_max']:.3f}) | {r['p_gamma']:.3g} |"
        )
    lines += ["", f"Configuration: {result['config']}."]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--null", default="both", choices=["uniform", "normal", "both"])
    ap.add_argument("--gap-rule", default="1se", choices=["1se", "max"])
    args = ap.parse_args()
    result = run_cluster_study(
        seed=args.seed,
        null=["uniform", "normal"] if args.null == "both" else args.null,
        gap_rule=args.gap_rule,
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
