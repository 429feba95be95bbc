"""``gpuknn compare``: methods × data sets × repeated stratified CV, Demšar's statistics and a
report (:func:`gpuknn.studies.compare.run_compare`)."""

from __future__ import annotations

import argparse
import sys

from ..errors import InvalidInputError
from ._args import out_dir, positive_int, seed
from .dask_cluster import add_cluster_arguments, cluster_facts, open_client

DEFAULT_OUT = "results/compare"
DEFAULT_METHODS = "knn,smote,tree"
#: Every file a comparison writes into --out besides the journal; those of an earlier run
#: that this run does not rewrite are moved into ``old-<time>/``.
OUTPUT_NAMES = ("results.json", "report.html", "cd_nemenyi.png", "cd_control.png", "score_table.png")
#: Exit code when results.json was written but some figure or the report was not.
EXIT_FIGURES = 4
#: Settings that do not change any result: not compared on --resume.
IGNORED_ON_RESUME = ("quiet",)


def _list(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return items


def _methods(text: str) -> list[str]:
    from ..studies.compare_presets import preset_key  # noqa: PLC0415

    items = _list(text)
    try:
        return [preset_key(t) for t in items]
    except InvalidInputError as exc:  # an unknown preset: an argparse error (exit code 2)
        raise argparse.ArgumentTypeError(str(exc)) from None


def _scoring(text: str) -> list[str]:
    from ..studies.compare import SCORINGS  # noqa: PLC0415

    items = _list(text)
    bad = [s for s in items if s not in SCORINGS]
    if bad:
        raise argparse.ArgumentTypeError(f"expected scores among {', '.join(SCORINGS)}, got {text!r}")
    return list(dict.fromkeys(items))


def _folds(text: str) -> int:
    v = positive_int(text)
    if v < 2:
        raise argparse.ArgumentTypeError(f"cross-validation needs at least 2 folds, got {text!r}")
    return v


def _alpha(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"alpha must be in (0, 1), got {text!r}")
    return v


def _short_name(spec: str, specs: list[str]) -> str:
    """A file's name without its folders (the whole spec where two files share a name)."""
    from pathlib import Path  # noqa: PLC0415

    name = Path(spec).name
    if not Path(spec).is_file() or sum(Path(s).name == name for s in specs) > 1:
        return spec
    return name


def add_parser(sub) -> None:
    from ..studies.compare import METHOD_PRESETS, SCORINGS  # noqa: PLC0415

    p = sub.add_parser(
        "compare",
        help="compare methods over many data sets: repeated stratified CV, Friedman, Nemenyi, "
        "Bonferroni-Dunn, Wilcoxon, Nadeau-Bengio, and an HTML report",
        description="Cross-validates every method on every data set with the same seeded repeated "
        "stratified folds, then tests the differences (Demšar 2006). Each data set is a binary "
        "problem whose positive class is its minority class (more than two classes: the smallest "
        "against the rest). Writes results.json, report.html (self-contained), cd_nemenyi.png, "
        "cd_control.png, score_table.png and journal.jsonl into --out; --out is locked while the "
        "run lasts, and --resume continues a killed run with identical results.",
        allow_abbrev=False,
    )
    p.add_argument(
        "--data",
        action="append",
        type=_list,
        required=True,
        metavar="SPEC[,SPEC...]",
        help="data sets (repeatable, or comma-separated): a named set (iris, wine, breast_cancer, "
        "digits), a CSV/TSV/.npz/KEEL file, or any source gpuknn.datasets.load_table reads",
    )
    p.add_argument(
        "--methods",
        type=_methods,
        default=_methods(DEFAULT_METHODS),
        metavar="PRESET[,PRESET...]",
        help=f"methods to compare (default {DEFAULT_METHODS}); presets: {', '.join(METHOD_PRESETS)} "
        "(original = knn; each sampler is followed by kNN; tree is the C4.5 stand-in)",
    )
    p.add_argument(
        "--scoring",
        type=_scoring,
        default=["roc_auc", "accuracy", "balanced_accuracy", "f1"],
        metavar="SCORE[,SCORE...]",
        help=f"scores (first = the figures'; among {', '.join(SCORINGS)}; "
        "default roc_auc,accuracy,balanced_accuracy,f1)",
    )
    p.add_argument("--folds", type=_folds, default=10, help="CV folds, at least 2 (default 10)")
    p.add_argument("--repeats", type=positive_int, default=1, help="repetitions of the CV (default 1)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the folds and samplers (default 0)")
    p.add_argument("--k", type=positive_int, default=5, help="neighbours of the kNN methods (default 5)")
    p.add_argument("--control", default=None, help="control method (a preset of --methods; default the first)")
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--out", type=out_dir, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--resume", action="store_true", help="reuse the finished folds of DIR/journal.jsonl")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_cluster_arguments(p)
    p.set_defaults(func=run)


class _Progress:
    """One tqdm bar on stderr over the folds."""

    def __init__(self, quiet: bool):
        self.quiet, self.bar = quiet, None

    def __call__(self, event: str, info: dict) -> None:
        if self.quiet:
            return
        from tqdm import tqdm  # noqa: PLC0415

        if self.bar is None:
            self.bar = tqdm(total=info["total"], desc="compare", unit="fold", file=sys.stderr)
        self.bar.n = info["done"]
        self.bar.set_postfix_str(f"{info['dataset']} / {info['method']}")
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run(args) -> int:
    from .. import __version__  # noqa: PLC0415
    from ..datasets import dataset_sha256  # noqa: PLC0415
    from ..studies.compare import METHOD_PRESETS, load_compare_dataset, method_presets, run_compare  # noqa: PLC0415
    from ..studies.compare_report import compare_figures, render_report  # noqa: PLC0415
    from .rundir import RunDirectory, describe_failures  # noqa: PLC0415

    # 1. everything is checked before --out is touched: the directory, the options, the data
    rundir = RunDirectory(args.out, resume=args.resume)
    rundir.check()
    specs = list(dict.fromkeys(s for group in args.data for s in group))
    methods = method_presets(args.methods, n_neighbors=args.k, random_state=args.seed)
    names = {key: METHOD_PRESETS[key][0] for key in args.methods}
    control = None
    if args.control is not None:
        from ..studies.compare_presets import preset_key  # noqa: PLC0415

        key = preset_key(args.control) if args.control not in methods else None
        control = args.control if key is None else names.get(key)
        if control not in methods:
            raise InvalidInputError(f"--control {args.control!r} is not among --methods {', '.join(args.methods)}")
    datasets = {_short_name(spec, specs): load_compare_dataset(spec) for spec in specs}
    identity = {name: dataset_sha256(X, y) for name, (X, y) in datasets.items()}
    settings = {
        "data": specs,
        "methods": list(args.methods),
        "scoring": args.scoring,
        "folds": args.folds,
        "repeats": args.repeats,
        "seed": args.seed,
        "k": args.k,
        "control": control or next(iter(methods)),
        "alpha": args.alpha,
        "quiet": args.quiet,
    }
    with open_client(args) as client:
        out = rundir.path
        with rundir:
            journal = rundir.open_journal(settings, identity, ignore=IGNORED_ON_RESUME)
            set_aside = [] if args.resume else [rundir.set_aside(OUTPUT_NAMES)]
            progress = _Progress(args.quiet)
            try:
                res = run_compare(
                    methods,
                    datasets,
                    scoring=args.scoring,
                    n_splits=args.folds,
                    n_repeats=args.repeats,
                    random_state=args.seed,
                    control=control,
                    alpha=args.alpha,
                    journal=journal,
                    callback=progress,
                    client=client,
                )
            finally:
                progress.close()
            doc = res.to_json()
            doc["command"] = {k: v for k, v in settings.items() if k not in IGNORED_ON_RESUME}
            doc["data_sha256"] = identity
            doc["gpuknn_version"] = __version__
            # results first (atomically), then the figures and the report that shows them
            rundir.write_json_atomic("results.json", doc)
            failed = rundir.save_figures(compare_figures(doc))
            pngs = {}
            for name in compare_figures(doc):
                if name not in failed:
                    pngs[name] = (out / name).read_bytes()
            try:
                rundir.write_bytes_atomic("report.html", render_report(doc, pngs).encode("utf-8"))
            except Exception as exc:  # noqa: BLE001 - the results are written; say what is missing
                failed["report.html"] = exc
            written = {"results.json", "report.html", *pngs} - set(failed)
            set_aside.append(rundir.set_aside(n for n in OUTPUT_NAMES if n not in written))
            facts = cluster_facts(client)
    _summary(doc, out, set_aside, journal, facts, args.quiet)
    if failed:
        print(
            f"gpuknn compare: error: {len(failed)} file(s) not written: {describe_failures(failed)}; "
            f"the results are in {out / 'results.json'}",
            file=sys.stderr,
        )
        return EXIT_FIGURES
    return 0


def _summary(doc: dict, out, set_aside, journal, facts, quiet: bool) -> None:
    """The mean primary score per data set and method, the average ranks and the tests."""
    for folder, moved in set_aside:
        if moved and not quiet:
            print(f"files of an earlier run in {out} moved to {folder}: {', '.join(moved)}")
    if journal.moved_to is not None and not quiet:
        print(f"previous journal kept as {journal.moved_to}")
    score = doc["scoring"][0]
    st = doc["stats"][score]
    width = max(len(m) for m in doc["methods"]) + 2
    first = max(20, *(len(name) + 1 for name in doc["datasets"]))  # whole names: keel:imbalanced/...
    print(f"mean {score} ({doc['settings']['n_splits']}-fold CV x {doc['settings']['n_repeats']}):")
    print(" " * first + "".join(f"{m:>{width}}" for m in doc["methods"]))
    for d, name in enumerate(doc["datasets"]):
        row = "".join(f"{'n/a' if v is None else f'{v:.4f}':>{width}}" for v in (r[0] for r in doc["mean"][d]))
        print(f"{name:<{first}}{row}")
    ranks = st.get("average_ranks", {})
    if "skipped" not in ranks:
        print(
            f"{'average rank':<{first}}"
            + "".join(f"{ranks[m] if ranks[m] is not None else 0:>{width}.2f}" for m in doc["methods"])
        )
    fr = st.get("friedman", {})
    if "skipped" in fr:
        print(f"Friedman: not run ({fr['skipped']})")
    elif fr.get("iman_davenport_pvalue") is not None:
        print(
            f"Friedman chi2 = {fr['statistic']:.3f} (p = {fr['pvalue']:.3g}); Iman-Davenport F = "
            f"{fr['iman_davenport']:.3f} (p = {fr['iman_davenport_pvalue']:.3g}); "
            f"Nemenyi CD = {st['nemenyi']['critical_difference']:.3f}"
        )
    if facts is not None:
        print(f"cluster: {facts['scheduler']} ({facts['workers']} workers)")
    print(f"results in {out}/ (report.html, results.json)")
