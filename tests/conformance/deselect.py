"""The deselection list (``deselected.toml``): node-id patterns with a kind and a reason."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

DESELECTED = Path(__file__).with_name("deselected.toml")

# ``sparse``: sparse input, out of gpuknn's scope. ``documented-difference``: gpuknn differs
# on purpose, as docs/conformance.md documents. ``no-counterpart`` is found, not listed: a test
# that reaches no gpuknn object after the rewrite is not selected.
KINDS = ("sparse", "no-counterpart", "documented-difference")

# Where the copies of the peers' files lie under the subprocess's root folder.
COPY_PREFIX = "peer/"


def peer_nodeid(nodeid: str) -> str:
    """The node id as it reads in the peer (``sklearn/neighbors/tests/...::test_x[...]``)."""
    return nodeid[len(COPY_PREFIX) :] if nodeid.startswith(COPY_PREFIX) else nodeid


@cache
def _compile(pattern: str) -> re.Pattern:
    # Only ``*`` is a wildcard: node ids hold brackets, which fnmatch would read as sets.
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")) + r"\Z")


def load_toml(path: Path) -> dict:
    """A TOML file's content (``tomllib``, or ``tomli`` on Python 3.10)."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)


@cache
def load_deselections(path: Path = DESELECTED) -> tuple[dict, ...]:
    """The entries of the deselection list, each ``{"pattern", "kind", "reason"}``."""
    return tuple(load_toml(path).get("deselect", []))


def match_deselection(nodeid: str, entries) -> dict | None:
    """The first entry whose pattern matches ``nodeid`` (a peer node id), or None."""
    for entry in entries:
        if _compile(entry["pattern"]).match(nodeid):
            return entry
    return None
