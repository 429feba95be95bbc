"""Named methods of ``gpuknn compare``: the samplers of the thesis, each followed by kNN, and a
decision tree as the C4.5 stand-in (:func:`method_presets`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInputError

__all__ = ["METHOD_PRESETS", "method_presets", "preset_key"]

#: Preset key -> (display name, gpuknn.resampling sampler class name or None, estimator kind).
#: "original" is an alias of "knn": no resampling.
METHOD_PRESETS: dict[str, tuple[str, str | None, str]] = {
    "knn": ("kNN", None, "knn"),
    "knn-cv": ("kNN-CV", None, "knn-cv"),
    "ros": ("ROS+kNN", "RandomOverSampler", "knn"),
    "rus": ("RUS+kNN", "RandomUnderSampler", "knn"),
    "smote": ("SMOTE+kNN", "SMOTE", "knn"),
    "smote-tomek": ("SMOTE+Tomek+kNN", "SMOTETomek", "knn"),
    "smote-enn": ("SMOTE+ENN+kNN", "SMOTEENN", "knn"),
    "tomek": ("Tomek+kNN", "TomekLinks", "knn"),
    "cnn": ("CNN+kNN", "CondensedNearestNeighbour", "knn"),
    "cnn-tomek": ("CNN+Tomek+kNN", "CNNTomek", "knn"),
    "oss": ("OSS+kNN", "OneSidedSelection", "knn"),
    "ncl": ("NCL+kNN", "NeighbourhoodCleaningRule", "knn"),
    "enn": ("ENN+kNN", "EditedNearestNeighbours", "knn"),
    "tree": ("C4.5 (tree)", None, "tree"),
}
_ALIASES = {
    "original": "knn",
    "random-over": "ros",
    "random-under": "rus",
    "smote+tomek": "smote-tomek",
    "smote+enn": "smote-enn",
    "cnn+tomek": "cnn-tomek",
    "decision-tree": "tree",
    "c4.5": "tree",
}
# samplers whose result depends on a seed
_SEEDED = {"RandomOverSampler", "RandomUnderSampler", "SMOTE", "SMOTETomek", "SMOTEENN"}
_SEEDED |= {"CondensedNearestNeighbour", "CNNTomek", "OneSidedSelection"}


def preset_key(name: str) -> str:
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key not in METHOD_PRESETS:
        known = ", ".join([*METHOD_PRESETS, *_ALIASES])
        raise InvalidInputError(f"unknown method preset {name!r}; known: {known}")
    return key


def method_presets(names: Sequence[str], *, n_neighbors: int = 5, random_state: int = 0) -> dict[str, Any]:
    """``{display name: estimator or (sampler, estimator)}`` for preset names.

    ``knn`` (alias ``original``) is :class:`gpuknn.KNeighborsClassifier` (``n_neighbors``);
    ``knn-cv`` is :class:`gpuknn.KNeighborsClassifierCV`, which chooses k among 1..``2·n_neighbors+1``
    by an inner CV from one neighbour search per inner fold (the one-pass k sweep); ``ros``,
    ``rus``, ``smote``, ``smote-tomek``, ``smote-enn``, ``tomek``, ``cnn``, ``cnn-tomek``,
    ``oss``, ``ncl``, ``enn`` are that :mod:`gpuknn.resampling` sampler before the kNN;
    ``tree`` is scikit-learn's entropy decision tree (the C4.5 stand-in). Seeded samplers
    and the tree get ``random_state``.

    Examples
    --------
    >>> sorted(method_presets(["knn", "SMOTE", "tree"]))
    ['C4.5 (tree)', 'SMOTE+kNN', 'kNN']
    """
    from .. import resampling  # noqa: PLC0415
    from ..model_selection import KNeighborsClassifierCV  # noqa: PLC0415
    from ..neighbors import KNeighborsClassifier  # noqa: PLC0415

    if isinstance(names, str):
        names = [names]
    out: dict[str, Any] = {}
    for name in names:
        display, sampler_name, kind = METHOD_PRESETS[preset_key(name)]
        if kind == "tree":
            from sklearn.tree import DecisionTreeClassifier  # noqa: PLC0415

            est: Any = DecisionTreeClassifier(criterion="entropy", random_state=random_state)
        elif kind == "knn-cv":
            est = KNeighborsClassifierCV(list(range(1, 2 * n_neighbors + 2)), cv=3, random_state=random_state)
        else:
            est = KNeighborsClassifier(n_neighbors=n_neighbors)
        if sampler_name is None:
            out[display] = est
            continue
        cls = getattr(resampling, sampler_name)
        sampler = cls(random_state=random_state) if sampler_name in _SEEDED else cls()
        out[display] = (sampler, est)
    return out
