"""``gpuknn sweep``: the Fashion-MNIST study end to end (CV over k and p, then the test set)."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError

DEFAULT_OUT = "results/sweep"


def parse_int_list(text: str) -> list[int]:
    """``"1-15,20,115-715:100"`` -> sorted unique ints (``a-b`` inclusive, ``:step``)."""
    out: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            step = 1
            if ":" in part:
                part, s = part.split(":")
                step = int(s)
            if "-" in part:
                a, b = (int(v) for v in part.split("-"))
                if step < 1 or b < a:
                    raise ValueError
                out.update(range(a, b + 1, step))
            else:
                out.add(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers and ranges like '1-15,20,115-715:100', got {text!r}"
        ) from None
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"values must be positive integers, got {text!r}")
    return sorted(out)


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def add_parser(sub) -> None:
    from ..studies.fashion_sweep import DEFAULT_PS

    p = sub.add_parser(
        "sweep",
        help="Fashion-MNIST study: CV over k and PCA size, then the test set",
        description="5-fold stratified CV over k (raw pixels) and over (k, p) with PCA fitted "
        "per fold, choice of (k*, p*, weights*) by CV, one evaluation on the test set. "
        "Writes results.json, journal.jsonl and PNG figures into --out.",
    )
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--metric", choices=["correlation", "cosine", "euclidean", "sqeuclidean"],
                   default="correlation")
    p.add_argument("--weights", choices=["both", "uniform", "distance"], default="both")
    p.add_argument("--k", type=parse_int_list, default=list(range(1, 31)),
                   help="k values of the (k, p) heatmap (default 1-30)")
    p.add_argument("--k-raw", type=parse_int_list, default=list(range(1, 301)),
                   help="k values of the raw-pixel sweep (default 1-300)")
    p.add_argument("--p", type=parse_int_list, default=list(DEFAULT_PS),
                   help="PCA sizes (default 1-15,20,25,30,40,50,60,70,80,100,115-715:100)")
    p.add_argument("--folds", type=_positive, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--subset", type=_positive, default=None,
                   help="use a stratified subset of N training images (quick run)")
    p.add_argument("--synthetic", type=_positive, default=None, metavar="N",
                   help="use N synthetic Fashion-MNIST-like images instead of the real data")
    p.add_argument("--data-dir", default=None, help="directory with the Fashion-MNIST IDX files")
    p.add_argument("--skip-raw", action="store_true", help="skip the raw-pixel k sweep")
    p.add_argument("--working-memory", type=_positive, default=None, metavar="MIB",
                   help="tile budget in MiB (default: 256 MiB on CPU, half the free GPU memory)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--resume", action="store_true", help="reuse finished parts of DIR/journal.jsonl")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def _load(args, xp):
    from .. import datasets
    from .._backend import from_numpy, to_numpy
    from ..model_selection.splitters import train_test_split

    if args.synthetic:
        n_test = max(10, args.synthetic // 7)
        Xtr, ytr, Xte, yte = datasets.make_fashion_mnist_like(
            args.synthetic - n_test, n_test, random_state=args.seed, dtype=args.dtype)
        names = [f"class {c}" for c in range(10)]
        source = f"synthetic ({args.synthetic} images)"
    else:
        Xtr, ytr, Xte, yte = datasets.load_fashion_mnist(data_dir=args.data_dir, dtype=args.dtype)
        names = list(datasets.FASHION_MNIST_CLASSES)
        source = "Fashion-MNIST"
    if args.subset and args.subset < Xtr.shape[0]:
        Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=args.subset, random_state=args.seed,
                                          stratify=ytr)
        source += f", training subset of {args.subset}"
    Xtr, Xte = (np.asarray(to_numpy(a), dtype=args.dtype) for a in (Xtr, Xte))
    return from_numpy(Xtr, xp), ytr, from_numpy(Xte, xp), yte, names, source


class _Progress:
    """tqdm bars on stderr driven by the study's callback."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bar = None
        self.start = time.perf_counter()

    def __call__(self, event: str, info: dict) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        if event == "stage":
            self.close()
            self.bar = tqdm(total=info["total"], desc=info["name"], file=sys.stderr,
                            unit="fold" if info["total"] > 1 else "step", leave=True,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}")
        elif event == "step" and self.bar is not None:
            self.bar.n = info["done"]
            self.bar.refresh()
        elif event == "tile" and self.bar is not None:
            self.bar.set_postfix_str(f"query tile {info['done']}/{info['total']}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run(args) -> int:
    from .. import __version__
    from .._backend import resolve_device
    from ..model_selection.journal import Journal
    from ..studies.fashion_sweep import SweepConfig, config_dict, run_sweep

    t_start = time.perf_counter()
    xp = resolve_device(args.device)
    device = "gpu (cupy)" if "cupy" in xp.__name__ else "cpu (numpy)"
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte, names, source = _load(args, xp)
    t_load = time.perf_counter() - t0
    weights = ["uniform", "distance"] if args.weights == "both" else [args.weights]
    if max(args.p) > Xtr.shape[1]:
        raise InvalidInputError(f"--p values must be at most the {Xtr.shape[1]} features, got {max(args.p)}")
    config = SweepConfig(metric=args.metric, ks_raw=args.k_raw, ks=args.k, ps=args.p,
                         weights=weights, folds=args.folds, seed=args.seed,
                         working_memory=None if args.working_memory is None else args.working_memory << 20,
                         skip_raw=args.skip_raw)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {**config_dict(config), "data": source, "dtype": args.dtype,
                "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0])}
    journal = Journal(out / "journal.jsonl", settings, resume=args.resume)
    progress = _Progress(args.quiet)
    t0 = time.perf_counter()
    try:
        res = run_sweep(Xtr, ytr, Xte, yte, config, journal=journal, callback=progress)
    finally:
        progress.close()
    t_study = time.perf_counter() - t0
    res["class_names"] = names
    res["settings"] = settings
    res["device"] = device
    res["versions"] = _versions(__version__)
    res["seconds_load"] = t_load
    res["seconds_study"] = t_study
    res["seconds_total"] = time.perf_counter() - t_start
    _figures(res, out)
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(f"data: {source}; device: {device}; metric: {args.metric}")
    if "raw" in res:
        for w in weights:
            m = np.asarray(res["raw"][w]["mean"])
            print(f"raw pixels, {w:8s} votes: best CV accuracy {m.max():.4f} at k={res['raw']['ks'][int(m.argmax())]}")
    print(f"chosen by CV: k*={res['k_best']}, p*={res['p_best']}, weights*={res['weights_best']} "
          f"(CV accuracy {res['cv_accuracy_best']:.4f})")
    print(f"test set: accuracy {res['test_accuracy']:.4f}, macro-F1 {res['test_macro_f1']:.4f}")
    print(f"time: {res['seconds_total']:.1f} s total ({t_load:.1f} s loading data); results in {out}/")
    return 0


def _versions(own: str) -> dict:
    import matplotlib
    import scipy

    v = {"gpuknn": own, "numpy": np.__version__, "scipy": scipy.__version__,
         "matplotlib": matplotlib.__version__, "python": platform.python_version()}
    try:
        import cupy

        v["cupy"] = cupy.__version__
    except Exception:
        pass
    return v


def _figures(res: dict, out: Path) -> None:
    from ..plots import pca as pca_plots
    from ..plots import sweep as sweep_plots

    figs = {}
    if "raw" in res:
        figs["accuracy_vs_k.png"] = sweep_plots.plot_accuracy_vs_k(res["raw"])
    ratio = np.asarray(res["variance"]["explained_variance_ratio"])
    figs["variance_cumulative.png"] = pca_plots.plot_cumulative_variance(ratio)
    figs["variance_components.png"] = pca_plots.plot_component_variance(
        np.asarray(res["variance"]["explained_variance"]))
    for w in res["heatmap"]["weights"]:
        figs[f"heatmap_{w}.png"] = sweep_plots.plot_heatmap(res["heatmap"], w)
    b = res["best"]
    figs["confusion_matrix.png"] = sweep_plots.plot_confusion_matrix(
        res["test"]["confusion_matrix"], res["class_names"],
        title=f"Test set, k={b['k']}, p={b['p']}, {b['weights']} (accuracy {res['test_accuracy']:.4f})")
    for name, fig in figs.items():
        fig.savefig(out / name, dpi=110)
