"""The doctests of gpuknn.distributed need Dask: skip collecting them where it is absent."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("dask") else ["*.py"]
