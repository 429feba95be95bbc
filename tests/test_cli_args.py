"""gpuknn.cli._args: argument types shared by the sub-commands."""

import argparse

import pytest

from gpuknn.cli._args import positive_int


def test_positive_int():
    assert positive_int("5") == 5
    for bad in ["0", "-3", "2.5", "x", ""]:
        with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
            positive_int(bad)
