"""Prepare, run and summarise the conformance step.

:func:`prepare` copies the installed peers' test modules (:data:`PEER_FILES`) into a folder with
their imports rewritten; :func:`run` runs them with pytest in a subprocess; :func:`summarise`
counts, per peer file, the tests selected, passed, failed and deselected, and groups the
failures by cause (:func:`classify`).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from conformance.deselect import COPY_PREFIX, KINDS, load_deselections
from conformance.rewrite import rewrite_source

# The peers' versions whose suites the deselection list and the threshold were measured on.
PINNED = {"scikit-learn": "1.9.1", "imbalanced-learn": "0.14.2"}
_PACKAGE = {"scikit-learn": "sklearn", "imbalanced-learn": "imblearn"}

# Test modules run, as paths inside the installed peers (globs for imbalanced-learn's trees).
# scikit-learn's other neighbors test files test trees, KDE, LOF, NCA and the t-SNE quad tree:
# estimators gpuknn does not have (test_graph and test_neighbors_pipeline test the
# transformers and regressors gpuknn has, and so are run).
PEER_FILES = {
    "scikit-learn": [
        "sklearn/neighbors/tests/test_neighbors.py",
        "sklearn/neighbors/tests/test_nearest_centroid.py",
        "sklearn/neighbors/tests/test_graph.py",
        "sklearn/neighbors/tests/test_neighbors_pipeline.py",
        "sklearn/metrics/tests/test_classification.py",
        "sklearn/metrics/tests/test_ranking.py",
        "sklearn/metrics/cluster/tests/test_supervised.py",
        "sklearn/metrics/cluster/tests/test_unsupervised.py",
        "sklearn/cluster/tests/test_k_means.py",
        "sklearn/decomposition/tests/test_pca.py",
    ],
    "imbalanced-learn": [
        "imblearn/over_sampling/**/tests/test_*.py",
        "imblearn/under_sampling/**/tests/test_*.py",
        "imblearn/combine/tests/test_*.py",
        "imblearn/metrics/tests/test_*.py",
    ],
}

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
CAUSES = (
    "missing metric",
    "unknown option/keyword",
    "missing attribute",
    "wrong answer",
    "error type/message mismatch",
    "other",
)


def version_problem() -> str | None:
    """Why the step cannot run here (a peer missing or not at its pinned version), or None."""
    for dist, pinned in PINNED.items():
        try:
            have = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return f"{dist} is not installed (the conformance step runs its test suite, pinned {pinned})"
        if have != pinned:
            return (
                f"{dist} {have} is installed; the conformance step is pinned to {pinned} (its "
                "deselection list and threshold were measured on that suite)"
            )
    return None


def _site(dist: str) -> Path:
    module = importlib.import_module(_PACKAGE[dist])
    return Path(module.__file__).parent.parent


def peer_files() -> list[str]:
    """The peer test files of the step, as paths relative to site-packages."""
    out = []
    for dist, patterns in PEER_FILES.items():
        site = _site(dist)
        for pattern in patterns:
            found = sorted(p.relative_to(site).as_posix() for p in site.glob(pattern))
            if not found:
                raise FileNotFoundError(f"{dist}: no test file matches {pattern!r} under {site}")
            out.extend(found)
    return out


def prepare(root: Path, files: list[str] | None = None, to_gpuknn: bool = True) -> dict[str, list[str]]:
    """Copy the peers' test files under ``root/peer/`` with their imports rewritten.

    Parameters
    ----------
    root : Path
        An empty folder: the subprocess's root.
    files : list of str, optional
        Paths relative to site-packages (default: :func:`peer_files`).
    to_gpuknn : bool, default=True
        False copies the files with only their relative imports made absolute.

    Returns
    -------
    dict of str to list of str
        For each file, the peer names its copy now takes from gpuknn.
    """
    files = peer_files() if files is None else files
    rewritten = {}
    for rel in files:
        dist = next(d for d, p in _PACKAGE.items() if rel.startswith(p + "/"))
        source = (_site(dist) / rel).read_text(encoding="utf-8")
        new, names = rewrite_source(source, rel[: -len(".py")].replace("/", "."), to_gpuknn)
        target = root / COPY_PREFIX / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(new, encoding="utf-8")
        rewritten[rel] = names
    # The peers' pytest settings, not gpuknn's: neither scikit-learn (unless its CI's
    # SKLEARN_WARNINGS_AS_ERRORS) nor imbalanced-learn turns warnings into errors, and both import
    # test files by path (--import-mode=importlib). An own ini also keeps gpuknn's
    # pyproject.toml (filterwarnings = error, --doctest-modules) out of the subprocess.
    (root / "pytest.ini").write_text("[pytest]\naddopts = --import-mode=importlib\n")
    return rewritten


def _env(out: Path, targets: str = "gpuknn") -> dict[str, str]:
    repo = Path(__file__).resolve().parents[2]
    env = {
        k: v
        for k, v in os.environ.items()
        # The outer pytest's (xdist worker, coverage, current test) and the peers' switches stay
        # out: the step runs as the peers' defaults do, whoever starts it.
        if not k.startswith(("PYTEST_", "COV_CORE_", "SKLEARN_", "SCIPY_ARRAY_API"))
    }
    paths = [str(repo / "tests"), str(repo)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["GPUKNN_CONFORMANCE_OUT"] = str(out)
    env["GPUKNN_CONFORMANCE_TARGETS"] = targets
    return env


def _pytest(root: Path, out: Path, args: list[str], targets: str = "gpuknn", timeout=None):
    out.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rN", "--disable-warnings", "--tb=line"]
    cmd += ["-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:cov", "-c", str(root / "pytest.ini")]
    cmd += ["--rootdir", str(root), "-p", "sklearn.conftest", "-p", "conformance.plugin", *args]
    proc = subprocess.run(cmd, cwd=root, env=_env(out, targets), capture_output=True, text=True, timeout=timeout)
    collections = sorted(out.glob("collection-*.json"))
    status = json.loads(collections[0].read_text()) if collections else {}
    recorded = json.loads((out / "outcomes.json").read_text()) if (out / "outcomes.json").exists() else {}
    return proc, status, recorded


def run(root: Path, workers: int = 2, timeout: float | None = None, extra: list[str] | None = None) -> dict:
    """Run the prepared copies with pytest in a subprocess and read back what it recorded.

    A copy that fails to import (gpuknn rejects an estimator built in a decorator, say) is
    collected once more unrewritten, and each of its tests that reaches an object gpuknn
    replaces counts as an error with the import's message: the failure weighs what it hides.

    Parameters
    ----------
    root : Path
        The folder :func:`prepare` filled.
    workers : int, default=2
        pytest-xdist workers (0 runs in the subprocess itself).
    timeout : float, optional
        Seconds before each subprocess is stopped (``subprocess.TimeoutExpired``).
    extra : list of str, optional
        More pytest arguments (``-k``, a node id, ...).

    Returns
    -------
    dict
        ``status`` (node id -> selected / no-counterpart / a deselection kind), ``outcomes``
        (node id -> {outcome, message}), ``collect_errors``, ``returncode`` and ``log`` (the
        tail of pytest's output).
    """
    args = (["-n", str(workers)] if workers else []) + (extra or []) + [COPY_PREFIX.rstrip("/")]
    proc, status, recorded = _pytest(root, root / "_out", args, timeout=timeout)
    outcomes = recorded.get("outcomes", {})
    collect_errors = recorded.get("collect_errors", {})
    broken = {path: text for path, text in collect_errors.items() if path.endswith(".py")}
    if broken:
        again = root / "_unrewritten"
        prepare(again, list(broken), to_gpuknn=False)
        _, status2, _ = _pytest(again, again / "_out", ["--collect-only", COPY_PREFIX.rstrip("/")], "peer", timeout)
        for nodeid, state in status2.items():
            status[nodeid] = state
            if state == "selected":
                path = nodeid.split("::", 1)[0]
                lines = [ln for ln in broken[path].splitlines() if ln.startswith("E   ")]
                message = lines[-1][4:].strip() if lines else broken[path].strip().splitlines()[-1]
                outcomes[nodeid] = {"outcome": "error", "message": f"(module import) {message}"}
    return {
        "status": status,
        "outcomes": outcomes,
        "collect_errors": collect_errors,
        "returncode": proc.returncode,
        "log": (proc.stdout + proc.stderr)[-6000:],
    }


_UNKNOWN_METRIC = re.compile(
    r"(unknown|unsupported|not supported|invalid|not a valid)\W{0,3}(distance )?metric|"
    r"metric\b.{0,60}(not supported|unknown|not implemented)",
    re.I | re.S,
)
_UNKNOWN_OPTION = re.compile(
    r"unexpected keyword argument|not a valid (option|parameter)|unknown (option|parameter)|expected one of|"
    r"must be (one of|'[^']*' or)|not implemented|invalid parameter|has no parameter|"
    r"missing \d+ required|positional argument",
    re.I,
)
_MISMATCH = re.compile(r"DID NOT (RAISE|WARN)|Regex pattern did not match|No warnings of type|Expected warning", re.I)
_IMPORT = "(module import) "


def classify(message: str) -> str:
    """The cause of a failure, from its exception line (``"ValueError: unknown metric ..."``).

    Parameters
    ----------
    message : str
        pytest's crash message: the exception's type and message.

    Returns
    -------
    str
        One of :data:`CAUSES`: ``pytest.raises``/``warns`` unmet -> error type/message
        mismatch; ``AttributeError`` -> missing attribute; an unknown metric -> missing metric;
        an assertion on values -> wrong answer; an unexpected keyword or option value ->
        unknown option/keyword; another error gpuknn raised on an input the peer takes ->
        error type/message mismatch.
    """
    message = message.removeprefix(_IMPORT)
    head = message.split(":", 1)[0].strip()
    if _MISMATCH.search(message):
        return "error type/message mismatch"
    if head == "AttributeError":
        return "missing attribute"
    if _UNKNOWN_METRIC.search(message):
        return "missing metric"
    if head == "AssertionError" or message.startswith("assert "):
        return "wrong answer"
    if _UNKNOWN_OPTION.search(message):
        return "unknown option/keyword"
    if head.endswith(("InvalidInputError", "InvalidInputTypeError", "TypeError", "ValueError")):
        return "error type/message mismatch"
    return "other"


def cause_key(message: str) -> str:
    """A failure's class and first line, numbers and object addresses blanked, quoted words
    kept (``unknown metric 'manhattan'``): the failures of one cause share it."""
    text = message.removeprefix(_IMPORT).strip()
    line = text.splitlines()[0] if text else "(no message)"
    line = re.sub(r"<[^<>]* at 0x[0-9a-f]+>", "<object>", line)
    line = re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", line)
    return f"{classify(message)} | {line[:150]}"


def summarise(result: dict) -> dict:
    """Counts per peer file and overall, and the failures grouped by cause.

    Parameters
    ----------
    result : dict
        What :func:`run` returned.

    Returns
    -------
    dict
        ``files``: per peer file, ``collected`` (all tests), ``no_counterpart``, ``in_scope``
        (tests that touch gpuknn and are not sparse), the deselections by kind, ``selected``
        (run), the outcomes and ``pass_fraction``; ``total`` the same over all files;
        ``causes``: per cause class a count; ``top_causes``: [(cause key, count, example node id)]
        most frequent first; ``deselections_without_kind``: listed entries whose kind is not allowed.
    """
    files: dict[str, Counter] = defaultdict(Counter)
    for nodeid, status in result["status"].items():
        counts = files[nodeid.split("::", 1)[0]]
        counts["collected"] += 1
        counts[status.replace("-", "_")] += 1
    for nodeid, rec in result["outcomes"].items():
        files[nodeid.split("::", 1)[0]][rec["outcome"]] += 1
    for path in result.get("collect_errors", {}):
        files[path.split("::", 1)[0]]["collect_error"] += 1
    total: Counter = Counter()
    for counts in files.values():
        total.update(counts)
    rows = {}
    for path, counts in sorted([*files.items(), ("TOTAL", total)]):
        row = {k: counts.get(k, 0) for k in ("collected", "no_counterpart", "sparse", "documented_difference")}
        row["selected"] = counts.get("selected", 0)
        row["in_scope"] = row["selected"] + row["documented_difference"]
        row.update({k: counts.get(k, 0) for k in OUTCOMES})
        row["collect_error"] = counts.get("collect_error", 0)
        ran = sum(row[k] for k in OUTCOMES if k != "skipped")
        row["pass_fraction"] = (row["passed"] + row["xfailed"] + row["xpassed"]) / ran if ran else None
        rows[path] = row
    causes: Counter = Counter()
    keys: Counter = Counter()
    example: dict[str, str] = {}
    for nodeid, rec in sorted(result["outcomes"].items()):
        if rec["outcome"] in ("failed", "error"):
            causes[classify(rec["message"])] += 1
            key = cause_key(rec["message"])
            keys[key] += 1
            example.setdefault(key, nodeid)
    return {
        "files": {k: v for k, v in rows.items() if k != "TOTAL"},
        "total": rows["TOTAL"],
        "causes": dict(causes.most_common()),
        "top_causes": [(k, n, example[k]) for k, n in keys.most_common()],
        "deselections_without_kind": [
            e for e in load_deselections() if e.get("kind") not in KINDS[::2] or not e.get("reason")
        ],
    }
