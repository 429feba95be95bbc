"""``gpuknn power-study``: power-method convergence vs eigenvalue gap, to JSON, CSV and PNG.

Writes ``DIR/power_study.json`` (raw arrays, summary, parameters, timing),
``DIR/power_study.csv`` (one row per gap and eigenpair) and the log-log figures
``DIR/power_error.png`` and ``DIR/power_iterations.png``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from ._args import out_dir, seed

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "power-study",
        help="power-method convergence study (5x5 matrices, gap eps between the top eigenvalues)",
        description=(
            "Matrices with eigenvalues 10, 10-eps, 5, 2, 1 (random Householder rotations); "
            "power method + Hotelling deflation for all five eigenpairs; iterations and "
            "errors against eps."
        ),
    )
    p.add_argument(
        "--out", type=out_dir, default="results/power_study", help="output directory (default: results/power_study)"
    )
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="array backend: auto (GPU when available), cpu, gpu",
    )
    p.add_argument("--n-eps", type=int, default=50, help="number of gaps (default 50)")
    p.add_argument("--eps-min", type=float, default=1e-4, help="smallest gap (default 1e-4)")
    p.add_argument("--eps-max", type=float, default=1.0, help="largest gap (default 1)")
    p.add_argument("--draws", type=int, default=20, help="matrices per gap (default 20)")
    p.add_argument("--max-iter", type=int, default=500_000, help="iteration limit per eigenpair (default 500000)")
    p.add_argument("--tol", type=float, default=1e-7, help="stopping tolerance (default 1e-7)")
    p.add_argument("--seed", type=seed, default=0, help="random seed, 0 to 2**32-1 (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def _progress(total: int, quiet: bool):
    """A tqdm bar over (eigenpair, iteration) and the callback that advances it."""
    if quiet:
        return None, None
    from tqdm import tqdm  # noqa: PLC0415 - only the CLI shows progress

    bar = tqdm(total=total, file=sys.stderr, unit="it", unit_scale=True, desc="power study")
    state = {"done": 0}

    def callback(info: dict) -> None:
        pos = info["component"] * state["per"] + info["iteration"]
        if info["n_active"] == 0:
            pos = (info["component"] + 1) * state["per"]
        bar.update(max(0, pos - state["done"]))
        state["done"] = max(state["done"], pos)
        bar.set_postfix(pair=info["component"] + 1, active=info["n_active"], refresh=False)

    return bar, (state, callback)


def _write_csv(path: Path, result) -> None:
    s = result.summary()
    cols = list(s)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["eps", "eigenpair", "true_eigenvalue", *cols])
        for i, e in enumerate(result.eps):
            for j in range(result.true_eigenvalues.shape[1]):
                w.writerow(
                    [
                        repr(float(e)),
                        j + 1,
                        repr(float(result.true_eigenvalues[i, j])),
                        *[repr(float(s[c][i, j])) for c in cols],
                    ]
                )


def run(args: argparse.Namespace) -> int:
    from .._backend import resolve_device  # noqa: PLC0415 - keep `gpuknn --help` fast
    from ..plots.pca import plot_power_study  # noqa: PLC0415
    from ..studies.power_study import power_study  # noqa: PLC0415

    xp = resolve_device(args.device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bar, cb = _progress(5 * args.max_iter, args.quiet)
    callback = None
    if cb is not None:
        state, callback = cb
        state["per"] = args.max_iter
    t0 = time.perf_counter()
    try:
        result = power_study(
            n_eps=args.n_eps,
            eps_min=args.eps_min,
            eps_max=args.eps_max,
            n_draws=args.draws,
            max_iter=args.max_iter,
            tol=args.tol,
            random_state=args.seed,
            xp=xp,
            callback=callback,
        )
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - t0
    payload = result.to_dict()
    payload["seconds"] = seconds
    payload["backend"] = getattr(xp, "__name__", str(xp))
    (out / "power_study.json").write_text(json.dumps(payload))
    _write_csv(out / "power_study.csv", result)
    summary = result.summary()
    for quantity, name in (("residual", "power_error.png"), ("iterations", "power_iterations.png")):
        fig = plot_power_study(result.eps, summary, quantity=quantity)
        fig.savefig(out / name, dpi=120)
    if not args.quiet:
        conv = summary["converged_fraction"]
        print(
            f"power study: {result.eps.size} gaps x {args.draws} draws in {seconds:.1f} s "
            f"on {payload['backend']}; converged {conv.mean():.1%} of eigenpairs "
            f"(top pair at smallest gap: {conv[0, 0]:.0%})",
            file=sys.stderr,
        )
        print(f"wrote {out}/power_study.json, power_study.csv, power_error.png, power_iterations.png", file=sys.stderr)
    return 0
