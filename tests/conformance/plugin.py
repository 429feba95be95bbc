"""pytest plugin of the conformance subprocess (``-p conformance.plugin``).

At collection it keeps the tests that touch gpuknn (a test whose code, helpers, fixtures and
parameters reach no gpuknn object exercises nothing gpuknn provides: ``no-counterpart``) and
drops those matching ``deselected.toml``; it records every collected test's status and every
outcome as JSON under ``$GPUKNN_CONFORMANCE_OUT``. It runs only in that subprocess.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import types
from pathlib import Path

import pytest

from conformance.deselect import load_deselections, match_deselection, peer_nodeid
from conformance.rewrite import PEER_MODULES, Shim, name_map

_CONTAINERS = (list, tuple, set, frozenset)


@functools.cache
def _peer_targets() -> frozenset[int]:
    """ids of the peer objects that gpuknn replaces (the rewrite's targets)."""
    import importlib

    out = set()
    for peer in PEER_MODULES:
        module = importlib.import_module(peer)
        out.update(id(getattr(module, name)) for name in name_map(peer) if hasattr(module, name))
    return frozenset(out)


def _targets_mode() -> bool:
    # Set for the collection of unrewritten copies (a module whose rewritten copy failed to
    # import): the tests that reach the peer objects gpuknn would replace are the ones counted.
    return os.environ.get("GPUKNN_CONFORMANCE_TARGETS") == "peer"


def _is_gpuknn(obj, depth: int = 0) -> bool:
    """Whether ``obj`` is (or holds, in a container or partial) a gpuknn class, function or instance."""
    if _targets_mode():
        try:
            if id(obj) in _peer_targets():
                return True
        except TypeError:
            pass
    if isinstance(obj, functools.partial):
        return _is_gpuknn(obj.func, depth + 1) or any(_is_gpuknn(a, depth + 1) for a in obj.args)
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return str(getattr(obj, "__module__", "") or "").startswith("gpuknn")
    if isinstance(obj, (types.ModuleType,)):
        return False
    if depth < 3 and isinstance(obj, _CONTAINERS):
        return any(_is_gpuknn(v, depth + 1) for v in list(obj)[:2000])
    if depth < 3 and isinstance(obj, dict):
        return any(_is_gpuknn(v, depth + 1) for v in list(obj.values())[:2000])
    return type(obj).__module__.startswith("gpuknn")


def _all_code(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_code(const)


def _touches(func, module_name: str, seen: set) -> bool:
    """Whether function ``func`` (from the test module) reaches gpuknn, through the module's
    globals, its helper functions and classes, or an import inside it."""
    func = inspect.unwrap(getattr(func, "__func__", func))
    code = getattr(func, "__code__", None)
    if code is None or func in seen:
        return False
    seen.add(func)
    glb = getattr(func, "__globals__", {})
    names: set[str] = set()
    for c in _all_code(code):
        names.update(c.co_names)
    if any(n.startswith("gpuknn") for n in names):  # an import rewritten inside the function
        return True
    for closure in getattr(func, "__closure__", None) or ():
        try:
            if _is_gpuknn(closure.cell_contents):
                return True
        except ValueError:  # an empty cell
            pass
    for name in names:
        if name not in glb:
            continue
        value = glb[name]
        if isinstance(value, Shim):
            if names & value.gpuknn_names():
                return True
        elif isinstance(value, types.ModuleType):
            if _targets_mode() and value.__name__ in PEER_MODULES and names & set(name_map(value.__name__)):
                return True
        elif _is_gpuknn(value):
            return True
        elif isinstance(value, types.FunctionType) and value.__module__ == module_name:
            if _touches(value, module_name, seen):
                return True
        elif isinstance(value, type) and value.__module__ == module_name:
            for attr in vars(value).values():
                if isinstance(attr, (types.FunctionType, staticmethod, classmethod)):
                    if _touches(getattr(attr, "__func__", attr), module_name, seen):
                        return True
    return False


def item_touches_gpuknn(item) -> bool:
    """Whether a collected test exercises something gpuknn provides."""
    module = getattr(item, "module", None)
    if module is None:
        return False
    if getattr(item.obj, "gpuknn_conformance_broken", False):
        return True
    seen: set = set()
    callspec = getattr(item, "callspec", None)
    if callspec is not None and any(_is_gpuknn(v) for v in callspec.params.values()):
        return True
    if _touches(item.obj, module.__name__, seen):
        return True
    if getattr(item, "cls", None) is not None:
        for attr in vars(item.cls).values():
            if isinstance(attr, types.FunctionType) and _touches(attr, module.__name__, seen):
                return True
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    for defs in fixtureinfo.name2fixturedefs.values() if fixtureinfo else ():
        for fixturedef in defs:
            func = getattr(fixturedef, "func", None)
            if func is not None and getattr(func, "__module__", None) == module.__name__:
                if _touches(func, module.__name__, seen):
                    return True
    return False


def _out() -> Path:
    return Path(os.environ["GPUKNN_CONFORMANCE_OUT"])


def _worker(config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "main"


def pytest_collection_modifyitems(session, config, items):
    deselections = load_deselections()
    keep, dropped, status = [], [], {}
    for item in items:
        nodeid = peer_nodeid(item.nodeid)
        entry = match_deselection(nodeid, deselections)
        if not item_touches_gpuknn(item):
            status[nodeid] = "no-counterpart"
            dropped.append(item)
        elif entry is not None:
            status[nodeid] = entry["kind"]
            dropped.append(item)
        else:
            status[nodeid] = "selected"
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
    path = _out() / f"collection-{_worker(config)}.json"
    path.write_text(json.dumps(status))


class _Recorder:
    def __init__(self):
        self.outcomes: dict[str, dict] = {}
        self.collect_errors: dict[str, str] = {}

    @pytest.hookimpl
    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors[peer_nodeid(report.nodeid)] = str(report.longrepr)[-3000:]

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        nodeid = peer_nodeid(report.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            elif report.when == "setup" and report.failed:
                outcome = "error"
            else:
                outcome = report.outcome
            crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
            message = crash.message if crash is not None else ""
            if report.skipped and isinstance(report.longrepr, tuple):
                message = str(report.longrepr[2])
            self.outcomes[nodeid] = {"outcome": outcome, "message": message[:2000]}
        elif report.when == "teardown" and report.failed and nodeid in self.outcomes:
            crash = getattr(report.longrepr, "reprcrash", None)
            self.outcomes[nodeid] = {"outcome": "error", "message": crash.message if crash else ""}

    @pytest.hookimpl
    def pytest_sessionfinish(self, session):
        (_out() / "outcomes.json").write_text(
            json.dumps({"outcomes": self.outcomes, "collect_errors": self.collect_errors})
        )


def pytest_configure(config):
    # The outcomes are recorded where the reports arrive: the xdist controller, or the only process.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "gpuknn-conformance-recorder")
