"""Run scikit-learn's and imbalanced-learn's own test modules on gpuknn and report.

The peers' installed test files are copied with their imports rewritten onto gpuknn
(tests/conformance, docs/conformance.md) and run with pytest in a subprocess. Prints, per peer
file, the tests selected, passed, failed and deselected, then the failures grouped by cause.

Usage::

    python scripts/conformance.py                  # all files, 2 pytest-xdist workers
    python scripts/conformance.py --json out.json  # also write the figures as JSON
    python scripts/conformance.py --file sklearn/decomposition/tests/test_pca.py -n 0
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conformance import harness  # noqa: E402  (tests/ is put on sys.path just above)


def _pct(x) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def report(summary: dict, top: int = 15) -> str:
    """The summary as text: a table per peer file, the causes, the most frequent failures."""
    cols = ("selected", "passed", "failed", "error", "skipped", "sparse", "documented_difference", "no_counterpart")
    heads = ("selected", "passed", "failed", "error", "skipped", "sparse", "doc-diff", "no-cp")
    width = max(len(p) for p in [*summary["files"], "TOTAL"])
    lines = [f"{'file':<{width}} " + " ".join(f"{h:>8}" for h in heads) + "     pass"]
    for path, row in [*summary["files"].items(), ("TOTAL", summary["total"])]:
        cells = " ".join(f"{row[c]:>8}" for c in cols)
        lines.append(f"{path:<{width}} {cells}   {_pct(row['pass_fraction'])}")
    total = summary["total"]
    lines += ["", f"documented differences: {total['documented_difference']} of {total['in_scope']} tests in scope"]
    lines += ["", "failures by cause:"]
    lines += [f"  {n:>5}  {cause}" for cause, n in summary["causes"].items()]
    lines += ["", f"top {top} causes (count, cause, an example):"]
    for key, n, example in summary["top_causes"][:top]:
        lines += [f"  {n:>5}  {key}", f"         e.g. {example}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the summary (and every outcome) here")
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers (0: none)")
    parser.add_argument("--file", action="append", help="a peer test file (path inside site-packages); repeatable")
    parser.add_argument("-k", help="pytest -k expression")
    parser.add_argument("--top", type=int, default=15, help="how many causes to list")
    parser.add_argument("--keep", type=Path, help="prepare and run in this folder (kept) instead of a temporary one")
    args = parser.parse_args(argv)

    problem = harness.version_problem()
    if problem:
        print(f"conformance step not run: {problem}")
        return 2
    extra = ["-k", args.k] if args.k else []
    with tempfile.TemporaryDirectory(prefix="gpuknn-conformance-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        rewritten = harness.prepare(root, args.file)
        result = harness.run(root, workers=args.workers, extra=extra)
        seconds = time.perf_counter() - start
    summary = harness.summarise(result)
    print(report(summary, args.top))
    for path, text in result["collect_errors"].items():
        print(f"\nimport error in {path} (its tests reaching gpuknn count as errors):\n{text[-600:]}")
    print(f"\n{seconds:.0f} s")
    if args.json:
        payload = {"summary": summary, "rewritten": rewritten, "seconds": seconds, **result}
        args.json.write_text(json.dumps(payload, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
