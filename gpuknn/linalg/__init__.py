"""Linear algebra for PCA: covariance, power method with deflation, block and direct eigen-solvers."""

from __future__ import annotations

from .block import block_eigh
from .covariance import covariance, covariance_spectrum
from .deflation import deflated_power_method
from .eigh import EigenResult, eigh
from .power import PowerResult, power_method

__all__ = [
    "EigenResult",
    "PowerResult",
    "block_eigh",
    "covariance",
    "covariance_spectrum",
    "deflated_power_method",
    "eigh",
    "power_method",
]
