#!/usr/bin/env python
"""Refresh docs/clustering.md and docs/img/cluster_*.png from ``gpuknn cluster-study``.

Usage: python scripts/cluster_study.py [--seed 0] [--device cpu] [--null both] [--gap-rule 1se]
Runs the command (the study lives in ``gpuknn.studies.cluster_study``, its outputs in
``gpuknn cluster-study``), then puts its figures in docs/img and its report between the
``<!-- cluster-study:begin -->`` / ``<!-- cluster-study:end -->`` markers of
docs/clustering.md; the rest of the page is left alone.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- cluster-study:begin -->", "<!-- cluster-study:end -->"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--null", default="both", choices=["uniform", "normal", "both"])
    ap.add_argument("--gap-rule", default="1se", choices=["1se", "max"])
    args = ap.parse_args()
    page, img = ROOT / "docs" / "clustering.md", ROOT / "docs" / "img"
    text = page.read_text()
    if BEGIN not in text or END not in text:
        print(f"{page} lacks the {BEGIN} / {END} markers", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "gpuknn", "cluster-study", "--out", tmp, "--quiet"]
        cmd += ["--seed", str(args.seed), "--device", args.device, "--null", args.null, "--gap-rule", args.gap_rule]
        subprocess.run(cmd, check=True)
        for png in Path(tmp).glob("cluster_*.png"):
            png.replace(img / png.name)
        report = (Path(tmp) / "cluster_study.md").read_text().strip()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{BEGIN}\n{report}\n{END}{tail}")
    print(f"updated {page} and {img}/cluster_*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
