"""Splitters, cross-validation and the one-pass k and (k, p) sweeps."""

from .cv import SweepTable, cross_validate_k, cross_validate_kp
from .search_cv import KNeighborsClassifierCV, PCAKNeighborsClassifierCV
from .splitters import KFold, RepeatedStratifiedKFold, StratifiedKFold, train_test_split

__all__ = [
    "KFold",
    "KNeighborsClassifierCV",
    "PCAKNeighborsClassifierCV",
    "RepeatedStratifiedKFold",
    "StratifiedKFold",
    "SweepTable",
    "cross_validate_k",
    "cross_validate_kp",
    "train_test_split",
]
