"""Splitters, cross-validation and the one-pass k and (k, p) sweeps."""

from .splitters import KFold, RepeatedStratifiedKFold, StratifiedKFold, train_test_split

__all__ = ["KFold", "RepeatedStratifiedKFold", "StratifiedKFold", "train_test_split"]
