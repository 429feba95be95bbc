"""The conformance step: scikit-learn's and imbalanced-learn's own tests run on gpuknn.

The unit tests check the import rewrite, the selection and the failure classes; the slow test
runs the whole step (tests/conformance, docs/conformance.md) and holds it to
tests/conformance/thresholds.toml.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

from conformance import harness
from conformance.deselect import KINDS, load_deselections, load_toml, match_deselection, peer_nodeid
from conformance.plugin import _is_gpuknn, _touches
from conformance.rewrite import Shim, broken, name_map, rewrite_source

import gpuknn
import gpuknn.cluster
import gpuknn.decomposition
import gpuknn.metrics
import gpuknn.neighbors
import gpuknn.resampling

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS = ROOT / "tests" / "conformance" / "thresholds.toml"
DOC = ROOT / "docs" / "conformance.md"


def _exec(source: str, module: str = "sklearn.neighbors.tests.test_fake") -> tuple[dict, list[str]]:
    new, rewritten = rewrite_source(source, module)
    namespace = {"__name__": "conformance_fake"}
    exec(compile(new, "<rewritten>", "exec"), namespace)
    return namespace, rewritten


def test_from_import_split_between_gpuknn_and_the_peer():
    import sklearn.neighbors

    ns, rewritten = _exec("from sklearn.neighbors import KNeighborsClassifier, KDTree as T\n")
    assert ns["KNeighborsClassifier"] is gpuknn.neighbors.KNeighborsClassifier
    assert ns["T"] is sklearn.neighbors.KDTree
    assert rewritten == ["sklearn.neighbors.KNeighborsClassifier"]


def test_metrics_cluster_and_resampling_names_come_from_gpuknn():
    import imblearn.over_sampling
    import sklearn.metrics

    ns, _ = _exec(
        "from sklearn.metrics import roc_auc_score, make_scorer\n"
        "from sklearn.metrics.cluster import v_measure_score\n"
        "from imblearn.over_sampling import SMOTE, SVMSMOTE\n"
        "from sklearn.cluster import KMeans, MiniBatchKMeans\n"
        "from sklearn.decomposition import PCA\n"
    )
    assert ns["roc_auc_score"] is gpuknn.metrics.roc_auc_score
    assert ns["make_scorer"] is sklearn.metrics.make_scorer
    assert ns["v_measure_score"] is gpuknn.metrics.v_measure_score
    assert ns["SMOTE"] is gpuknn.resampling.SMOTE
    assert ns["SVMSMOTE"] is imblearn.over_sampling.SVMSMOTE
    assert ns["KMeans"] is gpuknn.cluster.KMeans
    assert ns["MiniBatchKMeans"].__module__.startswith("sklearn.")
    assert ns["PCA"] is gpuknn.decomposition.PCA


def test_module_attributes_go_through_a_shim():
    import sklearn.datasets
    import sklearn.neighbors

    ns, rewritten = _exec("from sklearn import neighbors, datasets\nimport sklearn.metrics as m\n")
    assert isinstance(ns["neighbors"], Shim) and isinstance(ns["m"], Shim)
    assert ns["neighbors"].KNeighborsClassifier is gpuknn.neighbors.KNeighborsClassifier
    assert ns["neighbors"].KDTree is sklearn.neighbors.KDTree
    assert ns["m"].f1_score is gpuknn.metrics.f1_score
    assert ns["datasets"] is sklearn.datasets
    assert set(rewritten) == {"sklearn.neighbors", "sklearn.metrics"}
    with pytest.raises(AttributeError):
        ns["neighbors"].NoSuchName  # noqa: B018


def test_no_global_patching():
    # imbalanced-learn uses scikit-learn internally: the rewrite must leave the peers as they are.
    import imblearn.over_sampling
    import sklearn.neighbors

    _exec("from sklearn.neighbors import NearestNeighbors\nfrom imblearn.over_sampling import SMOTE\n")
    assert sklearn.neighbors.NearestNeighbors.__module__.startswith("sklearn.")
    assert imblearn.over_sampling.SMOTE.__module__.startswith("imblearn.")


def test_imports_inside_functions_and_relative_imports():
    source = (
        "from .common import generate_clustered_data\n"
        "def f():\n"
        "    from sklearn.metrics import f1_score\n"
        "    return f1_score\n"
    )
    new, _ = rewrite_source(source, "sklearn.cluster.tests.test_fake")
    assert "from sklearn.cluster.tests.common import generate_clustered_data" in new
    ns, _ = _exec(source, "sklearn.cluster.tests.test_fake")
    assert ns["f"]() is gpuknn.metrics.f1_score


def test_future_import_stays_first():
    new, _ = rewrite_source('"""Doc."""\nfrom __future__ import annotations\nimport numpy\n', "sklearn.tests.t")
    lines = new.splitlines()
    assert lines[1] == "from __future__ import annotations" and "conformance.rewrite" in lines[2]


def test_a_decorator_gpuknn_rejects_fails_its_test_not_the_module():
    ns, _ = _exec(
        "import pytest\n"
        "from sklearn.neighbors import KNeighborsClassifier\n"
        "@pytest.mark.parametrize('est', [KNeighborsClassifier(no_such_option=1)])\n"
        "def test_a(est):\n    pass\n"
        "def test_b():\n    pass\n"
    )
    assert ns["test_a"].gpuknn_conformance_broken
    with pytest.raises(TypeError, match="no_such_option"):
        ns["test_a"]()
    assert ns["test_b"]() is None and not hasattr(ns["test_b"], "gpuknn_conformance_broken")
    assert broken(ValueError("x"), "t").__name__ == "t"


def test_name_map_skips_modules_and_exceptions():
    mapping = name_map("sklearn.metrics")
    assert mapping["roc_auc_score"] == "gpuknn.metrics"
    assert mapping["pairwise_distances"] == "gpuknn"  # from the top level
    assert "UndefinedMetricWarning" not in mapping and "cluster" not in mapping
    for peer in ("sklearn.neighbors", "sklearn.metrics", "imblearn.under_sampling"):
        module = importlib.import_module(peer)
        for name, ours in name_map(peer).items():
            assert hasattr(module, name) and hasattr(importlib.import_module(ours), name)


def test_selection_follows_helpers_shims_and_parameters():
    module = types.ModuleType("fake_peer_tests")
    exec(
        "import numpy as np\n"
        "from gpuknn.metrics import f1_score\n"
        "from conformance.rewrite import shim\n"
        "neighbors = shim('sklearn.neighbors')\n"
        "def helper():\n    return f1_score\n"
        "def test_via_helper():\n    helper()\n"
        "def test_via_shim():\n    neighbors.KNeighborsClassifier()\n"
        "def test_peer_only():\n    neighbors.KDTree(np.zeros((2, 2)))\n"
        "def test_numpy():\n    np.zeros(3)\n",
        module.__dict__,
    )
    touches = {name: _touches(getattr(module, name), "fake_peer_tests", set()) for name in dir(module)}
    assert touches["test_via_helper"] and touches["test_via_shim"]
    assert not touches["test_peer_only"] and not touches["test_numpy"]
    assert _is_gpuknn([1, (gpuknn.metrics.f1_score,)]) and _is_gpuknn(gpuknn.neighbors.KNeighborsClassifier())
    assert not _is_gpuknn([1, "f1_score", len])


@pytest.mark.parametrize(
    "message, cause",
    [
        ("gpuknn.errors.InvalidInputError: unknown metric 'manhattan'; expected one of (...)", "missing metric"),
        ("TypeError: NearestNeighbors.__init__() got an unexpected keyword argument 'p'", "unknown option/keyword"),
        ("InvalidInputError: algorithm must be one of ('auto', 'brute'), got 'ball_tree'", "unknown option/keyword"),
        ("AttributeError: 'PCA' object has no attribute 'noise_variance_'", "missing attribute"),
        ("AssertionError: \nArrays are not almost equal to 6 decimals", "wrong answer"),
        ("assert 0.5 == 0.25", "wrong answer"),
        ("Failed: DID NOT RAISE <class 'ValueError'>", "error type/message mismatch"),
        ("AssertionError: Regex pattern did not match.", "error type/message mismatch"),
        ("gpuknn.errors.InvalidInputError: X must be 2-D, got shape ()", "error type/message mismatch"),
        ("RuntimeError: something else", "other"),
    ],
)
def test_classify(message, cause):
    assert harness.classify(message) == cause
    assert harness.cause_key(message).startswith(cause + " | ")


def test_cause_key_blanks_numbers_and_addresses():
    a = harness.cause_key("InvalidInputError: unknown metric <foo object at 0x7f12>; k=3")
    b = harness.cause_key("InvalidInputError: unknown metric <foo object at 0x9a00>; k=12")
    assert a == b and "<object>" in a


def test_deselections_have_an_allowed_kind_and_a_reason():
    entries = load_deselections()
    assert entries, "the deselection list is empty or unreadable"
    doc = DOC.read_text()
    for entry in entries:
        # no-counterpart is found by the selection, never listed by hand.
        assert entry["kind"] in KINDS and entry["kind"] != "no-counterpart", entry
        assert entry["reason"].strip(), entry
        assert "::" in entry["pattern"], entry
        if entry["kind"] == "documented-difference":
            test_name = entry["pattern"].split("::", 1)[1].split("[", 1)[0].rstrip("*")
            assert test_name in doc, f"{entry['pattern']} is not documented in docs/conformance.md"


def test_deselection_patterns_match_node_ids_literally():
    entry = {"pattern": "a.py::test_x[*csr_*", "kind": "sparse", "reason": "r"}
    assert match_deselection("a.py::test_x[42-csr_matrix]", [entry]) is entry
    assert match_deselection("a.py::test_x[42-dense]", [entry]) is None
    assert match_deselection("a.py::test_xc", [{"pattern": "a.py::test_x[c]", "kind": "sparse"}]) is None
    assert peer_nodeid("peer/sklearn/a.py::t") == "sklearn/a.py::t"


@pytest.mark.slow
def test_conformance_step(tmp_path):
    problem = harness.version_problem()
    if problem:
        pytest.skip(problem)
    thresholds = load_toml(THRESHOLDS)
    harness.prepare(tmp_path)
    result = harness.run(tmp_path, workers=2, timeout=330)
    summary = harness.summarise(result)
    total = summary["total"]
    assert result["status"], result["log"]
    # Every peer file was collected and its tests that reach gpuknn counted.
    assert set(summary["files"]) == set(harness.peer_files())
    assert total["in_scope"] > 1000, summary["total"]
    ran = total["selected"] - total["skipped"]
    assert total["passed"] + total["failed"] + total["error"] + total["xfailed"] + total["xpassed"] == ran
    assert total["pass_fraction"] >= thresholds["pass_fraction"], harness_report(summary)
    assert total["documented_difference"] <= thresholds["documented_difference_max"] * total["in_scope"]
    assert not summary["deselections_without_kind"]
    # A pattern that deselects nothing is stale (a renamed test, a fixed difference).
    statuses = result["status"]
    for entry in load_deselections():
        assert any(match_deselection(n, [entry]) and s == entry["kind"] for n, s in statuses.items()), entry


def harness_report(summary):
    """The per-file figures and the top causes, for the assertion message."""
    rows = [f"{p}: {r['passed']}/{r['selected'] - r['skipped']}" for p, r in summary["files"].items()]
    return "\n".join([*rows, *(f"{n} {k}" for k, n, _ in summary["top_causes"][:15])])
