"""``gpuknn sweep``: the kNN/PCA study end to end (CV over k and p, then the test set), on
Fashion-MNIST or any data (:mod:`gpuknn.cli.sweep_data`)."""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from ..errors import InvalidInputError
from ._args import out_dir, positive_int, seed
from .dask_cluster import add_cluster_arguments, cluster_facts, open_client
from .sweep_data import FASHION, add_data_arguments
from .sweep_data import identity as _identity
from .sweep_data import load as _load

DEFAULT_OUT = "results/sweep"
#: Every file a sweep writes into --out besides the journal (figures: see ``_figures``).
#: Those of an earlier run that a run does not rewrite are moved into ``old-<time>/``.
OUTPUT_NAMES = (
    "results.json",
    "accuracy_vs_k.png",
    "variance_cumulative.png",
    "variance_components.png",
    "heatmap_uniform.png",
    "heatmap_distance.png",
    "confusion_matrix.png",
)
#: Exit code when results.json was written but some figure was not (see ``gpuknn --help``).
EXIT_FIGURES = 4


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


def _folds(text: str) -> int:
    v = positive_int(text)
    if v < 2:
        raise argparse.ArgumentTypeError(f"cross-validation needs at least 2 folds, got {text!r}")
    return v


def _n_jobs(text: str) -> int:
    """``--n-jobs``: a positive int, or a negative one as scikit-learn's ``n_jobs`` (-1: every core)."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v == 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer or -1 (every core), got {text!r}")
    return v


_METRICS = ("correlation", "cosine", "euclidean", "sqeuclidean")


def parse_metrics(text: str) -> list[str]:
    """``"correlation,euclidean"`` -> the metrics to search (CV chooses among them)."""
    ms = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in ms if m not in _METRICS]
    if not ms or bad:
        raise argparse.ArgumentTypeError(f"expected metrics among {', '.join(_METRICS)}, comma-separated, got {text!r}")
    return list(dict.fromkeys(ms))


def add_parser(sub) -> None:
    from ..resampling import __all__ as samplers
    from ..studies.knn_sweep import SCALES, SCORINGS

    p = sub.add_parser(
        "sweep",
        help="the kNN/PCA study on Fashion-MNIST or your data: CV over k and PCA size, then the test set",
        description="Stratified CV over k (raw features) and over (k, p) with the scaling, the "
        "resampling and the PCA fitted inside each fold, choice of (metric*, k*, p*, weights*) "
        "by CV, one evaluation on the test set. "
        "Writes results.json, journal.jsonl and PNG figures into --out. Every option and "
        "the data are checked before --out is touched; --out is locked while the run lasts. "
        "Without --resume, an earlier run's results.json and figures in --out are moved into "
        "--out/old-<time>/ (its journal is kept as journal.jsonl.N).",
        allow_abbrev=False,
    )
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument(
        "--metric",
        type=parse_metrics,
        default=["correlation"],
        help=f"metric, or comma-separated metrics for CV to choose among ({', '.join(_METRICS)}; default correlation)",
    )
    p.add_argument(
        "--scoring",
        choices=SCORINGS,
        default="accuracy",
        help="CV score that chooses the configuration (default accuracy)",
    )
    p.add_argument(
        "--scale", choices=SCALES, default="none", help="feature scaling fitted on each training fold (default none)"
    )
    p.add_argument(
        "--resample",
        default=None,
        metavar="SAMPLER",
        choices=[n for n in samplers if n[0].isupper() and n not in ("KNNScorer", "ResampledCVResult")],
        help="a gpuknn.resampling sampler applied to the training folds (imbalanced data), "
        "e.g. SMOTE, RandomUnderSampler, EditedNearestNeighbours",
    )
    p.add_argument("--weights", choices=["both", "uniform", "distance"], default="both")
    p.add_argument(
        "--k",
        type=parse_int_list,
        default=None,
        help="k values of the (k, p) heatmap (default 1-30, at most the fold size)",
    )
    p.add_argument(
        "--k-raw",
        type=parse_int_list,
        default=None,
        help="k values of the raw-feature sweep (Fashion-MNIST: 1-300; else 1-100)",
    )
    p.add_argument(
        "--p",
        type=parse_int_list,
        default=None,
        help="PCA sizes (Fashion-MNIST: 1-15,20,25,30,40,50,60,70,80,100,115-715:100; "
        "else 1-15 then about 20 values up to the number of features)",
    )
    p.add_argument("--folds", type=_folds, default=5, help="CV folds, at least 2 (default 5)")
    p.add_argument(
        "--seed", type=seed, default=0, help="seed of the splits, folds and --synthetic data, 0 to 2**32-1 (default 0)"
    )
    add_data_arguments(p)
    p.add_argument("--skip-raw", action="store_true", help="skip the raw-feature k sweep")
    p.add_argument(
        "--working-memory",
        type=positive_int,
        default=None,
        metavar="MIB",
        help="tile budget in MiB (default: 256 MiB on CPU, half the free GPU memory)",
    )
    p.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        metavar="N",
        help="CV tasks (folds) run at once on CPU threads, sharing --working-memory (default: one "
        "per core, at most the tasks; -1 every core; 1 the least memory). A GPU run takes one at a time",
    )
    p.add_argument("--out", type=out_dir, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument(
        "--resume",
        action="store_true",
        help="reuse finished parts of DIR/journal.jsonl (refused for other data or "
        "settings); without it an existing journal is kept as journal.jsonl.N",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


# Settings recorded in the journal that do not change any result: not compared on --resume.
IGNORED_ON_RESUME = ("working_memory", "device", "quiet", "n_jobs")


def _grids(args, Xtr) -> dict:
    """The k and p grids: as given, else Fashion-MNIST's (for its images) or fitted to the
    data's shape (:func:`gpuknn.studies.knn_sweep.default_grids`)."""
    from ..studies.knn_sweep import FASHION_PS, default_grids

    if args.synthetic or args.data.lower().replace("_", "-") == FASHION:
        auto = {"ks": list(range(1, 31)), "ks_raw": list(range(1, 301)), "ps": list(FASHION_PS)}
    else:
        auto = default_grids(int(Xtr.shape[0]), int(Xtr.shape[1]), folds=args.folds)
    given = {"ks": args.k, "ks_raw": args.k_raw, "ps": args.p}
    return {name: auto[name] if given[name] is None else given[name] for name in auto}


def _validate(config, Xtr, ytr) -> None:
    """Every check of :func:`run_sweep` on the settings, done before --out is touched."""
    from ..model_selection.splitters import StratifiedKFold
    from ..studies.knn_sweep import check_config

    check_config(config)  # the study's own option checks
    n_features = Xtr.shape[1]
    if max(config.ps) > n_features:
        raise InvalidInputError(f"--p values must be at most the {n_features} features, got {max(config.ps)}")
    _, y = np.unique(ytr, return_inverse=True)
    folds = list(StratifiedKFold(config.folds, shuffle=True, random_state=config.seed).split(y, y))
    min_train = min(tr.size for tr, _ in folds)
    grids = [("--k", config.ks, min_train), ("--p", config.ps, min(n_features, min_train))]
    if not config.skip_raw:
        grids.insert(0, ("--k-raw", config.ks_raw, min_train))
    for option, values, upper in grids:
        if max(values) > upper:
            raise InvalidInputError(
                f"{option} values must be at most {upper} (the smallest training part of "
                f"{config.folds} folds of {Xtr.shape[0]} rows"
                + (f", and the {n_features} features" if option == "--p" else "")
                + f"), got {max(values)}"
            )


# what the progress bar says of the cross-validation task that finished last
_TASK_NAMES = {"kp": "(k, p) fold {fold} done", "raw": "raw fold {fold} done", "variance": "explained variance done"}


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
            self.bar = tqdm(
                total=info["total"],
                desc=info["name"],
                file=sys.stderr,
                unit="fold" if info["total"] > 1 else "step",
                leave=True,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}",
            )
        elif event == "step" and self.bar is not None:
            self.bar.n = info["done"]
            if "task" in info:  # the cross-validation's tasks finish in any order on threads
                self.bar.set_postfix_str(_TASK_NAMES[info["task"]].format(fold=info["fold"]), refresh=False)
            self.bar.refresh()
        elif event == "tile" and self.bar is not None:
            self.bar.set_postfix_str(f"query tile {info['done']}/{info['total']}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run(args) -> int:
    from .. import __version__
    from .._backend import from_numpy, resolve_device
    from ..studies.knn_sweep import SweepConfig, config_dict, run_sweep
    from .rundir import RunDirectory, describe_failures

    t_start = time.perf_counter()
    # 1. everything is checked before --out is touched: the directory, the options, the data
    rundir = RunDirectory(args.out, resume=args.resume)
    rundir.check()
    xp = resolve_device(args.device)
    device = "gpu (cupy)" if "cupy" in xp.__name__ else "cpu (numpy)"
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte, names, source = _load(args)
    identity = _identity(source, {"X_train": Xtr, "y_train": ytr, "X_test": Xte, "y_test": yte})
    t_load = time.perf_counter() - t0
    weights = ["uniform", "distance"] if args.weights == "both" else [args.weights]
    grids = _grids(args, Xtr)
    config = SweepConfig(
        metric=args.metric if len(args.metric) > 1 else args.metric[0],
        ks_raw=grids["ks_raw"],
        ks=grids["ks"],
        ps=grids["ps"],
        weights=weights,
        folds=args.folds,
        seed=args.seed,
        working_memory=args.working_memory,  # MiB, as the engine takes it
        skip_raw=args.skip_raw,
        scoring=args.scoring,
        scale=args.scale,
        resample=args.resample,
    )
    _validate(config, Xtr, ytr)
    settings = {
        **config_dict(config),
        "dtype": args.dtype,
        "device": args.device,
        "n_train": int(Xtr.shape[0]),
        "n_test": int(Xte.shape[0]),
        # the CLI's default: a thread per core for the CPU's folds (a GPU runs one at a time)
        "n_jobs": -1 if args.n_jobs is None else args.n_jobs,
    }
    Xtr, Xte = from_numpy(Xtr, xp), from_numpy(Xte, xp)

    # the cluster (--scheduler/--workers) is reached before --out is touched too
    with open_client(args) as client:
        # 2. the run: DIR created and locked, journal opened (an old one moved aside), study
        out = rundir.path
        with rundir:
            journal = rundir.open_journal(settings, identity, ignore=IGNORED_ON_RESUME)
            # A fresh run sets the earlier run's results and figures aside before it starts,
            # so that neither a crash nor a figure this run does not draw (--skip-raw,
            # --weights) leaves them passing for this run's.
            set_aside = [] if args.resume else [rundir.set_aside(OUTPUT_NAMES)]
            progress = _Progress(args.quiet)
            t0 = time.perf_counter()
            try:
                res = run_sweep(
                    Xtr,
                    ytr,
                    Xte,
                    yte,
                    config,
                    journal=journal,
                    callback=progress,
                    n_jobs=settings["n_jobs"],
                    client=client,
                )
            finally:
                progress.close()
            t_study = time.perf_counter() - t0
            res["class_names"] = names
            res["settings"] = settings
            res["data"] = identity
            res["device"] = device
            res["cluster"] = cluster_facts(client)
            res["versions"] = _versions(__version__)
            res["seconds_load"] = t_load
            res["seconds_study"] = t_study
            res["seconds_total"] = time.perf_counter() - t_start
            # 3. results first (atomically), then the figures: a figure failure loses no result
            rundir.write_json_atomic("results.json", res)
            figures = _figures(res)
            unknown = set(figures) - set(OUTPUT_NAMES)
            if unknown:  # an output not in OUTPUT_NAMES would escape the setting aside
                raise RuntimeError(f"figures missing from OUTPUT_NAMES: {sorted(unknown)}")
            failed = rundir.save_figures(figures)
            # a resumed run: what it did not rewrite is not its own either
            written = {"results.json"} | (set(figures) - set(failed))
            set_aside.append(rundir.set_aside(n for n in OUTPUT_NAMES if n not in written))

    for folder, moved in set_aside:
        if moved:
            print(f"files of an earlier run in {out} moved to {folder}: {', '.join(moved)}")
    if journal.moved_to is not None:
        print(f"previous journal kept as {journal.moved_to}")
    score = args.scoring.replace("_", " ")
    print(f"data: {source}; device: {device}; metric: {','.join(args.metric)}")
    if "raw" in res:
        for w in weights:
            m = np.asarray(res["raw"][w]["mean"])
            print(
                f"raw features ({res['metric_best']}), {w:8s} votes: best CV {score} {m.max():.4f} "
                f"at k={res['raw']['ks'][int(m.argmax())]}"
            )
    print(
        f"chosen by CV: metric*={res['metric_best']}, k*={res['k_best']}, p*={res['p_best']}, "
        f"weights*={res['weights_best']} (CV {score} {res['cv_score_best']:.4f})"
    )
    print(
        f"test set: accuracy {res['test_accuracy']:.4f}, macro-F1 {res['test_macro_f1']:.4f}, "
        f"balanced accuracy {res['test_balanced_accuracy']:.4f}"
    )
    print(f"time: {res['seconds_total']:.1f} s total ({t_load:.1f} s loading data); results in {out}/")
    if failed:
        print(
            f"gpuknn sweep: error: {len(failed)} figure(s) not written: {describe_failures(failed)}; "
            f"the results are in {out / 'results.json'}",
            file=sys.stderr,
        )
        return EXIT_FIGURES
    return 0


def _versions(own: str) -> dict:
    import matplotlib
    import scipy

    v = {
        "gpuknn": own,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "matplotlib": matplotlib.__version__,
        "python": platform.python_version(),
    }
    try:
        import cupy

        v["cupy"] = cupy.__version__
    except Exception:
        pass
    return v


def _figures(res: dict) -> dict:
    """File name -> function drawing that figure (drawn one by one by ``save_figures``):
    :func:`gpuknn.plots.sweep.study_figures`, the same list the docs are drawn from."""
    from ..plots import sweep as sweep_plots

    return sweep_plots.study_figures(res)
