"""Argument types shared by the sub-commands (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "seed", "out_dir", "SEED_MAX"]

#: Largest seed: NumPy's legacy generators (and many libraries seeded alike) take 32 bits.
SEED_MAX = 2**32 - 1


def positive_int(text: str) -> int:
    """``"5"`` -> 5; anything but a positive integer is an argparse error (exit code 2)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def seed(text: str) -> int:
    """``"7"`` -> 7; a seed outside ``[0, 2**32-1]`` is an argparse error (exit code 2), not
    NumPy's ``ValueError`` traceback from ``default_rng(-1)`` once the data are loaded."""
    try:
        v = int(text)
    except ValueError:
        v = None
    if v is None or not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"the seed must be an integer in [0, 2**32-1 = {SEED_MAX}], got {text!r}")
    return v


def out_dir(text: str) -> str:
    """An output directory: an empty name is refused (``Path("")`` is the current directory,
    where the outputs would land without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a directory name, got {text!r} (to write into the current directory, say '.')"
        )
    return text
