"""The documentation's reference covers the public API, and the version is set in one place."""

import importlib
import re
from pathlib import Path

import pytest

import gpuknn

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [
    "gpuknn",
    "gpuknn.metrics",
    "gpuknn.neighbors",
    "gpuknn.cluster",
    "gpuknn.model_selection",
    "gpuknn.distributed",
    "gpuknn.linalg",
    "gpuknn.resampling",
    "gpuknn.datasets",
    "gpuknn.stats",
    "gpuknn.plots",
    "gpuknn.rules",
]


def _listed():
    """``{(module, name)}`` of docs/api.rst's autosummary entries."""
    listed, module = set(), None
    for line in (ROOT / "docs" / "api.rst").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
        elif re.match(r"   [A-Za-z_]\w*$", line):
            listed.add((module, line.strip()))
    return listed


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_reference_page(package):
    """Each name of each ``__all__`` is listed in api.rst, under its package or, for a name a
    subpackage shares with the top level, as the same object under ``gpuknn``."""
    listed = _listed()
    assert listed, "docs/api.rst lists nothing"
    documented = {id(getattr(importlib.import_module(m), n)) for m, n in listed}
    mod = importlib.import_module(package)
    missing = []
    for name in mod.__all__:
        obj = getattr(mod, name)
        if name.startswith("__") or type(obj) is type(importlib):  # __version__, subpackages
            continue
        if (package, name) not in listed and not (callable(obj) and id(obj) in documented):
            missing.append(name)
    assert not missing, f"{package}: not in docs/api.rst: {missing}"


def test_version_is_set_once():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'attr = "gpuknn.__version__"' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, flags=re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+", gpuknn.__version__)
    assert f"## {gpuknn.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_readme_names_the_docs_command_and_the_install_matrix():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/docs.sh" in readme
    for extra in ("[cuda12]", "[cuda13]"):
        assert extra in readme
