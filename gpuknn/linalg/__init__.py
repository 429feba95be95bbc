"""Linear algebra for PCA: covariance, power method with deflation, block and direct eigen-solvers."""

from __future__ import annotations

from .block import block_eigh
from .covariance import covariance, covariance_spectrum
from .deflation import deflated_power_method
from .eigh import EigenResult, eigh
from .moments import (
    Moments,
    centred_moments,
    covariance_from_centred,
    covariance_from_moments,
    merge_moments,
    moments,
)
from .power import PowerResult, power_method

__all__ = [
    "EigenResult",
    "Moments",
    "PowerResult",
    "block_eigh",
    "centred_moments",
    "covariance",
    "covariance_from_centred",
    "covariance_from_moments",
    "covariance_spectrum",
    "deflated_power_method",
    "eigh",
    "merge_moments",
    "moments",
    "power_method",
]
