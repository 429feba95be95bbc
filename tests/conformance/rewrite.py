"""Rewrite a peer's test module so that the names gpuknn provides come from gpuknn.

Only the imports of the copied test file change (an :mod:`ast` rewrite): nothing is patched
globally, so imbalanced-learn keeps using the real scikit-learn internally, and a name gpuknn
lacks still comes from the peer.
"""

from __future__ import annotations

import ast
import importlib
import types
from functools import cache

# A peer's public module -> gpuknn's modules consulted in order for a name it also exports.
# gpuknn has no ``metrics.cluster``: its cluster metrics live in ``gpuknn.metrics``. The top
# level comes last (``pairwise_distances`` is there, not in ``gpuknn.metrics``).
PEER_MODULES: dict[str, tuple[str, ...]] = {
    "sklearn": ("gpuknn",),
    "sklearn.neighbors": ("gpuknn.neighbors", "gpuknn"),
    "sklearn.metrics": ("gpuknn.metrics", "gpuknn"),
    "sklearn.metrics.cluster": ("gpuknn.metrics", "gpuknn"),
    "sklearn.cluster": ("gpuknn.cluster", "gpuknn"),
    "sklearn.decomposition": ("gpuknn.decomposition", "gpuknn"),
    "imblearn": ("gpuknn",),
    "imblearn.over_sampling": ("gpuknn.resampling",),
    "imblearn.under_sampling": ("gpuknn.resampling",),
    "imblearn.combine": ("gpuknn.resampling",),
    "imblearn.metrics": ("gpuknn.metrics",),
}

# Names that stay the peer's even where gpuknn exports one: modules (a peer submodule imported
# by name becomes a shim instead, see ``shim``) and exception/warning classes, which a drop-in
# must raise as (subclasses of) the peer's, so the tests keep catching the peer's.
_KEEP_PEER = frozenset({"__version__"})


def _public_names(module: types.ModuleType) -> set[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return set(names)


@cache
def name_map(peer: str) -> dict[str, str]:
    """Names of peer module ``peer`` that gpuknn provides, each with the gpuknn module to use.

    Parameters
    ----------
    peer : str
        A key of ``PEER_MODULES`` (``"sklearn.neighbors"``, ...).

    Returns
    -------
    dict of str to str
        ``{name: gpuknn_module}`` for every public name of ``peer`` that one of its gpuknn
        counterparts exports too, except modules (shimmed instead) and exception classes.
    """
    peer_mod = importlib.import_module(peer)
    peer_names = _public_names(peer_mod) | {n for n in dir(peer_mod) if not n.startswith("_")}
    out: dict[str, str] = {}
    for ours_name in PEER_MODULES[peer]:
        ours = importlib.import_module(ours_name)
        for name in sorted(_public_names(ours) & peer_names):
            obj = getattr(ours, name)
            if name in out or name in _KEEP_PEER or isinstance(obj, types.ModuleType):
                continue
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            out[name] = ours_name
    return out


class Shim(types.ModuleType):
    """A peer module whose attributes are gpuknn's where gpuknn has the name, else the peer's.

    Stands in for ``neighbors`` after ``from sklearn import neighbors`` so that
    ``neighbors.KNeighborsClassifier`` is gpuknn's and ``neighbors.KDTree`` the peer's.
    """

    def __init__(self, peer: str):
        super().__init__(f"gpuknn_conformance_shim.{peer}")
        self.__dict__["_peer"] = peer
        self.__dict__["_names"] = name_map(peer)

    def __getattr__(self, name: str):
        if name in self._names:
            return getattr(importlib.import_module(self._names[name]), name)
        return getattr(importlib.import_module(self._peer), name)

    def gpuknn_names(self) -> frozenset[str]:
        """The attribute names this shim serves from gpuknn."""
        return frozenset(self._names)


@cache
def shim(peer: str) -> Shim:
    """The shim of peer module ``peer`` (one per peer module and process)."""
    return Shim(peer)


def _is_peer_submodule(name: str) -> bool:
    return name in PEER_MODULES and name not in ("sklearn", "imblearn")


class _Rewriter(ast.NodeTransformer):
    def __init__(self, package: str, to_gpuknn: bool = True):
        self.package = package
        self.to_gpuknn = to_gpuknn
        self.rewritten: set[str] = set()
        self.bound: set[str] = set()  # the module-level names now bound to gpuknn or a shim

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        # The copy lives outside the peer's package: a relative import must name it in full.
        parts = self.package.split(".")
        base = parts[: len(parts) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def visit_ImportFrom(self, node: ast.ImportFrom):
        module = self._absolute(node)
        keep: list[ast.alias] = []
        out: list[ast.stmt] = []
        ours: dict[str, list[ast.alias]] = {}
        mapping = name_map(module) if module in PEER_MODULES and self.to_gpuknn else {}
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            if _is_peer_submodule(sub) and self.to_gpuknn:
                # ``from sklearn import neighbors``: the module becomes a shim.
                out.append(_shim_assign(alias.asname or alias.name, sub))
                self.rewritten.add(sub)
                self.bound.add(alias.asname or alias.name)
            elif alias.name in mapping:
                ours.setdefault(mapping[alias.name], []).append(alias)
                self.bound.add(alias.asname or alias.name)
                self.rewritten.add(f"{module}.{alias.name}")
            else:
                keep.append(alias)
        stmts: list[ast.stmt] = []
        if keep:
            stmts.append(ast.ImportFrom(module=module, names=keep, level=0))
        for ours_module, aliases in ours.items():
            stmts.append(ast.ImportFrom(module=ours_module, names=aliases, level=0))
        stmts.extend(out)
        return [ast.copy_location(s, node) for s in stmts] or ast.copy_location(ast.Pass(), node)

    def visit_Import(self, node: ast.Import):
        stmts: list[ast.stmt] = []
        keep: list[ast.alias] = []
        for alias in node.names:
            if alias.asname and _is_peer_submodule(alias.name) and self.to_gpuknn:
                # ``import sklearn.neighbors as nb``; a bare ``import sklearn.neighbors`` binds
                # ``sklearn`` itself and stays the peer's.
                stmts.append(_shim_assign(alias.asname, alias.name))
                self.rewritten.add(alias.name)
                self.bound.add(alias.asname)
            else:
                keep.append(alias)
        if keep:
            stmts.insert(0, ast.Import(names=keep))
        return [ast.copy_location(s, node) for s in stmts]


_SHIM_FACTORY = "_gpuknn_conformance_shim"
_BROKEN_FACTORY = "_gpuknn_conformance_broken"
_BROKEN_EXC = "_gpuknn_conformance_exc"


def broken(exc: BaseException, name: str):
    """A test that fails with ``exc``: stands for test ``name``, whose decorators (a
    parametrization building a gpuknn estimator, say) raised ``exc`` when the module was
    imported. Without it one such test would fail the whole module's collection."""

    def test():
        raise exc

    test.__name__ = test.__qualname__ = name
    test.gpuknn_conformance_broken = True  # the plugin counts it as a test reaching gpuknn
    return test


def _guard_decorated(tree: ast.Module, bound: set[str]) -> None:
    """Wrap each module-level def whose decorators use a name bound to gpuknn in
    ``try: <def> except Exception as e: name = broken(e, name)``."""
    for i, node in enumerate(tree.body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not node.decorator_list:
            continue
        used = {n.id for d in node.decorator_list for n in ast.walk(d) if isinstance(n, ast.Name)}
        if not used & bound:
            continue
        fallback = ast.Assign(
            targets=[ast.Name(id=node.name, ctx=ast.Store())],
            value=ast.Call(
                func=ast.Name(id=_BROKEN_FACTORY, ctx=ast.Load()),
                args=[ast.Name(id=_BROKEN_EXC, ctx=ast.Load()), ast.Constant(node.name)],
                keywords=[],
            ),
        )
        handler = ast.ExceptHandler(type=ast.Name(id="Exception", ctx=ast.Load()), name=_BROKEN_EXC, body=[fallback])
        tree.body[i] = ast.copy_location(ast.Try(body=[node], handlers=[handler], orelse=[], finalbody=[]), node)


def _shim_assign(target: str, peer: str) -> ast.stmt:
    # ``target = _gpuknn_conformance_shim("sklearn.neighbors")``
    return ast.Assign(
        targets=[ast.Name(id=target, ctx=ast.Store())],
        value=ast.Call(func=ast.Name(id=_SHIM_FACTORY, ctx=ast.Load()), args=[ast.Constant(peer)], keywords=[]),
        lineno=0,
    )


def rewrite_source(source: str, module_name: str, to_gpuknn: bool = True) -> tuple[str, list[str]]:
    """Rewrite the imports of a peer test module.

    Parameters
    ----------
    source : str
        The test module's source.
    module_name : str
        Its dotted name in the peer (``"sklearn.neighbors.tests.test_neighbors"``), to resolve
        relative imports.
    to_gpuknn : bool, default=True
        False only makes relative imports absolute: the copy then runs the peer's own objects
        (to count the tests of a module that gpuknn's objects fail to import).

    Returns
    -------
    source : str
        The rewritten source.
    rewritten : list of str
        The peer names now served by gpuknn (``"sklearn.neighbors.KNeighborsClassifier"``, or a
        shimmed module such as ``"sklearn.neighbors"``), sorted.
    """
    tree = ast.parse(source)
    rewriter = _Rewriter(module_name.rpartition(".")[0], to_gpuknn)
    tree = rewriter.visit(tree)
    _guard_decorated(tree, rewriter.bound)
    # The shim factory is imported after any ``from __future__`` import, which must stay first.
    body = tree.body
    at = 0
    while at < len(body) and (
        (isinstance(body[at], ast.Expr) and isinstance(getattr(body[at], "value", None), ast.Constant))
        or (isinstance(body[at], ast.ImportFrom) and body[at].module == "__future__")
    ):
        at += 1
    factory = ast.ImportFrom(
        module="conformance.rewrite",
        names=[ast.alias(name="shim", asname=_SHIM_FACTORY), ast.alias(name="broken", asname=_BROKEN_FACTORY)],
        level=0,
    )
    body.insert(at, factory)
    tree = ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n", sorted(rewriter.rewritten)
