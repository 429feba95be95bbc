"""``gpuknn cluster-study``: cluster-validity indices for k-means with K = 1..10.

Writes ``DIR/cluster_study.json``, ``DIR/cluster_study.md`` (the report docs/clustering.md
shows), ``DIR/cluster_study.csv`` and ``DIR/cluster_*.png``; prints the chosen K per index
unless ``--quiet``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._args import out_dir, seed


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "cluster-study",
        help="cluster-validity indices of k-means on 5 Gaussian groups in 3-D",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--out", type=out_dir, default="cluster_study_out", help="output directory (default: %(default)s)")
    p.add_argument("--seed", type=seed, default=0, help="seed for data, k-means and Monte Carlo (0 to 2**32-1)")
    p.add_argument("--k-max", type=int, default=10, help="largest K (default: %(default)s)")
    p.add_argument("--n-per-group", type=int, default=60, help="points per group (default: %(default)s)")
    p.add_argument("--b-gap", type=int, default=10, help="reference sets for the gap statistic")
    p.add_argument("--b-null", type=int, default=99, help="null data sets per null model for the structure test")
    p.add_argument(
        "--null",
        default="uniform",
        choices=["uniform", "normal", "both"],
        help="structure test's null: uniform in the bounding box, normal with the data's mean and "
        "covariance, or both (default: %(default)s)",
    )
    p.add_argument(
        "--gap-rule",
        default="1se",
        choices=["1se", "max"],
        help="gap statistic's K: one-standard-error rule or maximum (default: %(default)s; both are in the JSON)",
    )
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    p.add_argument("--quiet", action="store_true", help="no progress or summary output")
    p.set_defaults(func=run)
    return p


def write_outputs(result: dict, out: Path) -> list[Path]:
    """Write JSON, markdown, CSV and PNG files of ``result`` into ``out``; return the paths."""
    from ..plots.cluster import plot_external_indices, plot_gap, plot_groups, plot_relative_indices  # noqa: PLC0415
    from ..studies.cluster_study import format_report, format_table  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "cluster_study.json", out / "cluster_study.md", out / "cluster_study.csv"]
    paths[0].write_text(json.dumps(result, indent=1))
    paths[1].write_text(format_report(result) + "\n")
    paths[2].write_text(format_table(result, fmt="csv"))
    figures = {
        "cluster_external.png": plot_external_indices(result),
        "cluster_relative.png": plot_relative_indices(result),
        "cluster_gap.png": plot_gap(result),
        "cluster_data.png": plot_groups(result["X"], result["labels"]),
    }
    import matplotlib.pyplot as plt  # noqa: PLC0415

    for name, fig in figures.items():
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        paths.append(out / name)
    return paths


def run(args: argparse.Namespace) -> int:
    from .._backend import resolve_device  # noqa: PLC0415
    from ..studies.cluster_study import run_cluster_study  # noqa: PLC0415

    xp = resolve_device(args.device)
    progress = None if args.quiet else (lambda msg: print(f"[cluster-study] {msg}", file=sys.stderr))
    result = run_cluster_study(
        seed=args.seed,
        k_max=args.k_max,
        n_per_group=args.n_per_group,
        B_gap=args.b_gap,
        B_null=args.b_null,
        null=["uniform", "normal"] if args.null == "both" else args.null,
        gap_rule=args.gap_rule,
        xp=xp,
        progress=progress,
    )
    paths = write_outputs(result, Path(args.out))
    if not args.quiet:
        print("chosen K per index:")
        for name, k in result["chosen_k"].items():
            print(f"  {name:24s} {k}")
        g = result["gap"]["chosen_by_rule"]
        print(f"gap statistic: K = {g['1se']} (1-SE rule), K = {g['max']} (maximum)")
        t = result["structure_test"]
        print(f"structure test (B={t['B']} null sets per null):")
        for row in t["tests"]:
            print(
                f"  {row['null']:7s} K={row['k']:<3d} p(within-SS) = {row['p_within_ss']:.3g}, "
                f"p(Gamma) = {row['p_gamma']:.3g}"
            )
        print(f"wrote {len(paths)} files to {args.out}")
    return 0
