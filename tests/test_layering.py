"""The package's layering: no import cycles, no upward imports, the estimators in ``gpuknn.neighbors``.

The import graph is read from the source with :mod:`ast` (nothing is imported to build it), so an
import is seen wherever it is written: at module level, inside functions and methods (the lazy
imports that hide a cycle from the interpreter), and under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import textwrap
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "gpuknn"
PACKAGE_DIR = ROOT / PACKAGE

# The layers, lowest first. A module takes the rank of the longest row that is itself or one of
# its parent packages; a module may import only modules of its own rank or lower. ``gpuknn``
# (the package's ``__init__``) matches itself only, so that a new top-level module is not
# silently ranked with the top-level package: it must be given a row here.
RANKS = {
    "gpuknn.errors": 0,
    "gpuknn._backend": 1,
    "gpuknn._memory": 1,
    "gpuknn._delegation": 2,
    "gpuknn._labels": 2,
    "gpuknn.ops": 3,
    "gpuknn.linalg": 3,
    "gpuknn.stats": 3,
    "gpuknn.distributed": 4,
    "gpuknn.base": 5,
    "gpuknn.neighbors": 6,
    "gpuknn.decomposition": 6,
    "gpuknn.cluster": 6,
    "gpuknn.rules": 6,
    "gpuknn.metrics": 7,
    "gpuknn.model_selection": 8,
    "gpuknn.datasets": 9,
    "gpuknn.resampling": 9,
    "gpuknn.plots": 9,
    "gpuknn.studies": 10,
    "gpuknn": 11,
    "gpuknn.cli": 12,
    "gpuknn.__main__": 13,
}
EXACT_ONLY = {"gpuknn"}

# The engine (array kernels, backends, errors) and the estimators built on it: the engine must
# work, and be testable, without any estimator module being importable.
ENGINE = ("gpuknn.ops", "gpuknn._delegation", "gpuknn._backend", "gpuknn._memory", "gpuknn.linalg", "gpuknn.errors")
ESTIMATORS = (
    "gpuknn.base",
    "gpuknn.neighbors",
    "gpuknn.decomposition",
    "gpuknn.cluster",
    "gpuknn.rules",
    "gpuknn.resampling",
    "gpuknn.model_selection",
    "gpuknn.studies",
    "gpuknn.cli",
)

NEIGHBOR_ESTIMATORS = (
    "KNeighborsClassifier",
    "RadiusNeighborsClassifier",
    "NearestCentroid",
    "CDNNClassifier",
    "ECDNNClassifier",
    "NearestNeighbors",
    "KNeighborsTransformer",
    "KNeighborsRegressor",
    "RadiusNeighborsRegressor",
)


# --- the graph builder --------------------------------------------------------------------


def _within(module, prefix):
    """Whether ``module`` is ``prefix`` or lies under it (dotted-name boundary).

    Parameters
    ----------
    module, prefix : str
        Dotted module names.

    Returns
    -------
    bool
    """
    return module == prefix or module.startswith(prefix + ".")


def discover(package_dir, package=None):
    """Modules of a package directory and their parsed source.

    Parameters
    ----------
    package_dir : Path
        Directory of the top-level package.
    package : str, optional
        Its dotted name (default: the directory's name).

    Returns
    -------
    dict
        ``{module: (tree, is_package)}``; a package's ``__init__.py`` is the package's own name.
    """
    package = package or package_dir.name
    modules = {}
    # Sorted so that every report lists modules in one order, run after run.
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join([package, *parts])
        modules[name] = (ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), is_package)
    return modules


def _resolve_relative(module, is_package, level, target):
    """Absolute name of ``from <level dots><target> import ...`` written in ``module``.

    Parameters
    ----------
    module : str
        The importing module.
    is_package : bool
        Whether ``module`` is a package's ``__init__`` (its own name is then the base of ``.``).
    level : int
        Number of leading dots.
    target : str or None
        The dotted name after the dots (None for ``from . import x``).

    Returns
    -------
    str or None
        The absolute name, or None where the dots climb above the top-level package.
    """
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    # One dot is the base package itself; each further dot climbs one package.
    if level - 1 >= len(base):
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _known(name, modules):
    """The longest prefix of ``name`` that is a module of the tree, or None.

    An import of ``gpuknn.x.func`` style names (or of a name that is not a module) depends on
    the module that holds it.
    """
    parts = name.split(".")
    for stop in range(len(parts), 0, -1):
        candidate = ".".join(parts[:stop])
        if candidate in modules:
            return candidate
    return None


def _statements(tree):
    """Every statement of ``tree``, at any depth (function, method, class, branch, handler bodies).

    An ``import`` is a statement, so descending only into statement lists (and the handlers and
    match cases that hold them) finds every import that :func:`ast.walk` would, in a fraction of
    the time: expressions, the bulk of the tree, cannot contain one.
    """
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                stack.extend(
                    child for child in value if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))
                )


def imports_of(module, tree, is_package, modules, package=PACKAGE):
    """Modules of the tree that ``module`` imports, directly, anywhere in its source.

    Parameters
    ----------
    module : str
        The importing module's dotted name.
    tree : ast.Module
        Its parsed source.
    is_package : bool
        Whether it is a package's ``__init__``.
    modules : collection of str
        Every module of the tree (to tell a submodule from a name defined in a package).
    package : str
        The top-level package: imports outside it are not edges.

    Returns
    -------
    set of str
        Imported modules, ``module`` itself excluded.

    Notes
    -----
    ``from P import y`` is an edge to ``P.y`` where that is a module and to ``P`` otherwise, as
    ``from . import cluster`` in a package's ``__init__`` depends on the submodule, not on itself.
    """
    found = set()
    # The whole tree, not tree.body: function-local and TYPE_CHECKING imports count too.
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                source = _resolve_relative(module, is_package, node.level, node.module)
            else:
                source = node.module
            if source is None:
                continue
            names = []
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                names.append(submodule if alias.name != "*" and submodule in modules else source)
        else:
            continue
        for name in names:
            if not _within(name, package):
                continue
            target = _known(name, modules)
            if target is not None and target != module:
                found.add(target)
    return found


def build_graph(package_dir, package=None, modules=None):
    """The package's import graph.

    Parameters
    ----------
    package_dir : Path
        Directory of the top-level package.
    package : str, optional
        Its dotted name (default: the directory's name).
    modules : dict, optional
        :func:`discover`'s answer, where already at hand (parsing is most of the cost).

    Returns
    -------
    dict
        ``{module: set of imported modules}``, one key per module of the tree.
    """
    package = package or package_dir.name
    if modules is None:
        modules = discover(package_dir, package)
    return {name: imports_of(name, tree, is_package, modules, package) for name, (tree, is_package) in modules.items()}


# --- the checkers -------------------------------------------------------------------------


def _components(graph):
    """Strongly connected components of ``graph`` (iterative Tarjan: no recursion limit)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _shortest_cycle(graph, start, component):
    """Shortest path ``start -> ... -> start`` inside ``component`` (breadth first, sorted)."""
    parent = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.get(node, ())):
            if child not in component:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [start, *reversed(path[:-1]), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return None


def find_cycles(graph):
    """Import cycles of ``graph``.

    Parameters
    ----------
    graph : dict
        ``{module: iterable of imported modules}``.

    Returns
    -------
    list of list of str
        Cycles as ``[a, b, ..., a]``: for every strongly connected component, the shortest cycle
        through each of its modules not yet on a reported cycle, so that every module caught in
        a cycle appears in the report; sorted.
    """
    cycles = []
    for component in _components(graph):
        if len(component) == 1:
            (node,) = component
            if node in graph.get(node, ()):
                cycles.append([node, node])
            continue
        covered = set()
        for node in sorted(component):
            if node in covered:
                continue
            cycle = _shortest_cycle(graph, node, component)
            # Rotate to start at the cycle's smallest module: one spelling per cycle.
            body = cycle[:-1]
            first = body.index(min(body))
            body = body[first:] + body[:first]
            if body + body[:1] not in cycles:
                cycles.append(body + body[:1])
            covered.update(body)
    return sorted(cycles)


def rank_of(module, ranks=RANKS, exact_only=EXACT_ONLY):
    """Rank of ``module``: that of the longest matching row of ``ranks``, or None.

    Parameters
    ----------
    module : str
        Dotted module name.
    ranks : dict
        ``{module prefix: rank}``.
    exact_only : collection of str
        Rows that match themselves only (not their submodules).

    Returns
    -------
    int or None
    """
    best = None
    for prefix in ranks:
        matches = module == prefix if prefix in exact_only else _within(module, prefix)
        if matches and (best is None or len(prefix) > len(best)):
            best = prefix
    return None if best is None else ranks[best]


def check_ranks(graph, ranks=RANKS, exact_only=EXACT_ONLY):
    """Upward imports and unranked modules of ``graph``.

    Parameters
    ----------
    graph : dict
        ``{module: iterable of imported modules}``.
    ranks : dict
        ``{module prefix: rank}``.
    exact_only : collection of str
        Rows that match themselves only.

    Returns
    -------
    upward : list of str
        ``"A -> B (rank a -> rank b)"`` for each edge with rank(B) > rank(A), sorted.
    unranked : list of str
        Modules (importers or imported) that match no row, sorted.
    """
    modules = set(graph) | {target for targets in graph.values() for target in targets}
    unranked = sorted(module for module in modules if rank_of(module, ranks, exact_only) is None)
    upward = []
    for source in sorted(graph):
        for target in sorted(graph[source]):
            a, b = rank_of(source, ranks, exact_only), rank_of(target, ranks, exact_only)
            # An unranked end is reported once, as unranked, not as a bogus edge.
            if a is not None and b is not None and b > a:
                upward.append(f"{source} -> {target} (rank {a} -> rank {b})")
    return upward, unranked


def engine_to_estimator_edges(graph, engine=ENGINE, estimators=ESTIMATORS):
    """Edges from an engine module to an estimator module, as ``"A -> B"``, sorted."""
    return [
        f"{source} -> {target}"
        for source in sorted(graph)
        if any(_within(source, prefix) for prefix in engine)
        for target in sorted(graph[source])
        if any(_within(target, prefix) for prefix in estimators)
    ]


@pytest.fixture(scope="module")
def modules():
    """The source tree's modules, parsed once for all of this file's tests."""
    return discover(PACKAGE_DIR)


@pytest.fixture(scope="module")
def graph(modules):
    """The import graph of the source tree."""
    return build_graph(PACKAGE_DIR, modules=modules)


# --- the rules, on gpuknn -----------------------------------------------------------------


def test_graph_covers_the_tree(graph):
    # A sanity floor: an empty or truncated graph would pass every rule below.
    assert len(graph) == len(list(PACKAGE_DIR.rglob("*.py")))
    assert {"gpuknn", "gpuknn.neighbors", "gpuknn.ops", "gpuknn.__main__"} <= set(graph)
    assert "gpuknn.neighbors" in graph["gpuknn"]


def test_no_import_cycles(graph):
    cycles = find_cycles(graph)
    assert not cycles, "import cycles (each as A -> B -> ... -> A):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def test_every_module_has_a_rank(graph):
    _, unranked = check_ranks(graph)
    assert not unranked, "modules without a layer; add them to RANKS in tests/test_layering.py:\n" + "\n".join(unranked)


def test_nothing_imports_upward(graph):
    upward, _ = check_ranks(graph)
    assert not upward, "upward imports (a module may import only its own rank or lower):\n" + "\n".join(upward)


def test_engine_never_imports_estimators(graph):
    edges = engine_to_estimator_edges(graph)
    assert not edges, (
        "the engine (ops, _delegation, _backend, linalg, errors) imports estimator modules "
        "(base, neighbors, decomposition, cluster, resampling, model_selection, studies, cli):\n" + "\n".join(edges)
    )


def _classes_under(modules, prefix):
    """Names of the classes that a ``class`` statement defines in a module under ``prefix``."""
    return {
        node.name
        for module, (tree, _) in modules.items()
        if _within(module, prefix)
        for node in _statements(tree)
        if isinstance(node, ast.ClassDef)
    }


@pytest.mark.parametrize("name", NEIGHBOR_ESTIMATORS)
def test_neighbor_estimators_live_in_neighbors(name, modules):
    # Imported here, not at the top: the graph tests above must not depend on an importable tree.
    import gpuknn
    import gpuknn.neighbors

    top, home = getattr(gpuknn, name, None), getattr(gpuknn.neighbors, name, None)
    assert home is not None, f"gpuknn.neighbors has no {name}"
    assert top is home, f"gpuknn.{name} is not gpuknn.neighbors.{name}"
    assert home.__module__.startswith("gpuknn.neighbors."), f"{name}.__module__ is {home.__module__}"
    assert name in _classes_under(modules, "gpuknn.neighbors"), f"no `class {name}` in a file under gpuknn/neighbors/"


# --- the checkers can fail ----------------------------------------------------------------


def test_find_cycles_reports_a_three_module_cycle():
    graph = {"p.b": {"p.c"}, "p.c": {"p.a"}, "p.a": {"p.b"}, "p.d": {"p.a"}, "p.e": set()}
    assert find_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]


def test_find_cycles_reports_two_cycles_and_a_self_import():
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"b"}, "d": {"d"}, "e": {"a"}}
    assert find_cycles(graph) == [["a", "b", "a"], ["b", "c", "b"], ["d", "d"]]


def test_find_cycles_accepts_a_dag():
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_check_ranks_reports_an_upward_edge():
    ranks = {"p": 2, "p.low": 0, "p.high": 1}
    graph = {"p": {"p.high", "p.low"}, "p.high.x": {"p.low"}, "p.low.y": {"p.high.x"}}
    assert check_ranks(graph, ranks, exact_only={"p"}) == (["p.low.y -> p.high.x (rank 0 -> rank 1)"], [])


def test_check_ranks_reports_a_module_with_no_rank():
    ranks = {"p": 2, "p.low": 0}
    graph = {"p": {"p.low"}, "p.new": {"p.low"}, "p.low": set()}
    # "p" matches itself only, so p.new is not silently given the package's rank.
    assert check_ranks(graph, ranks, exact_only={"p"}) == ([], ["p.new"])
    # Without the exact-only rule it would be (and would hide the missing row).
    assert check_ranks(graph, ranks, exact_only=()) == ([], [])


def test_rank_of_takes_the_longest_prefix():
    assert rank_of("gpuknn.metrics._labels") == 7  # not gpuknn._labels' rank: dotted boundary
    assert rank_of("gpuknn._labels") == 2
    assert rank_of("gpuknn") == 11
    assert rank_of("gpuknn.newthing") is None
    assert rank_of("gpuknn.cli.sweep") == 12


def test_engine_checker_reports_an_edge():
    graph = {"gpuknn.ops.x": {"gpuknn.neighbors._base", "gpuknn._backend"}, "gpuknn.metrics": {"gpuknn.base"}}
    assert engine_to_estimator_edges(graph) == ["gpuknn.ops.x -> gpuknn.neighbors._base"]


def _fake_package(root, files):
    """Write ``{relative path: source}`` under ``root``; return the package directory."""
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return root / "fake"


def test_graph_builder_sees_local_relative_and_submodule_imports(tmp_path):
    package_dir = _fake_package(
        tmp_path,
        {
            "fake/__init__.py": """
                from . import cluster
                from .ops import helper
                import fake.ops.kdtree as kd
                import numpy
            """,
            "fake/cluster.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from fake.ops import kdtree

                def fit():
                    from .ops.kdtree import build
                    return build

                class Model:
                    def predict(self):
                        from . import errors
                        return errors
            """,
            "fake/errors.py": "",
            "fake/ops/__init__.py": "helper = 1\n",
            "fake/ops/kdtree.py": """
                def build():
                    from .. import errors
                    from ..errors import *
                    from ... import outside
                    return errors
            """,
        },
    )
    assert build_graph(package_dir) == {
        # `from . import cluster` is an edge to the submodule (not to the package itself);
        # `from .ops import helper` (helper is no module) an edge to the package fake.ops.
        "fake": {"fake.cluster", "fake.ops", "fake.ops.kdtree"},
        # The TYPE_CHECKING import, the function-local one and the method-local one all count.
        "fake.cluster": {"fake.ops.kdtree", "fake.errors"},
        "fake.errors": set(),
        "fake.ops": set(),
        # `from ... import outside` climbs above the package: no edge.
        "fake.ops.kdtree": {"fake.errors"},
    }


def test_graph_builder_finds_a_cycle_through_a_local_import(tmp_path):
    # The interpreter tolerates a cycle closed inside a function; the layering does not.
    package_dir = _fake_package(
        tmp_path,
        {
            "fake/__init__.py": "",
            "fake/a.py": "from .b import g\n",
            "fake/b.py": "def g():\n    from .a import f\n    return f\n",
        },
    )
    assert find_cycles(build_graph(package_dir)) == [["fake.a", "fake.b", "fake.a"]]
