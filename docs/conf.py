"""Sphinx configuration of gpuknn's documentation (built by ``bash scripts/docs.sh``).

The user guide is the markdown pages of this folder (MyST), the API reference is generated from
the numpydoc docstrings of every public name (``api.rst``, autosummary), and the example gallery
is executed from ``examples/`` (sphinx-gallery) at every build.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document the checkout, not some installed copy
os.environ.setdefault("MPLBACKEND", "Agg")

import gpuknn  # noqa: E402

project = "gpuknn"
author = "the gpuknn developers"
copyright = "2026, the gpuknn developers"
release = gpuknn.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# data/ holds the study's JSON, img/ the figures the pages embed; _build is the output.
exclude_patterns = ["_build", "data", "img", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# API reference: one generated page per public name (api.rst lists them all; a test checks
# that it lists every name of gpuknn.__all__ and the subpackages' __all__).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False  # methods are documented on the class page itself
numpydoc_class_members_toctree = False

# User guide pages link each other and their sections by file name and heading anchor.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
}

html_theme = "alabaster"
html_title = f"gpuknn {release}"
html_static_path: list[str] = []
html_theme_options = {"description": "Exact kNN, PCA and model evaluation on NumPy, CuPy and torch",
                      "page_width": "1100px", "sidebar_width": "240px"}

# The examples run the library under the docs build's -W: a warning they raise is an error
# there too, as in the test suite (filterwarnings = error).
warnings.filterwarnings("error", module="gpuknn")
