"""The Fashion-MNIST study: :func:`gpuknn.studies.knn_sweep.run_sweep` with its defaults.

The study is no longer specific to Fashion-MNIST (:mod:`gpuknn.studies.knn_sweep` runs it
on any data); this module keeps the names scripts and older code import, and the
Fashion-MNIST p grid as ``DEFAULT_PS``.
"""

from __future__ import annotations

from .knn_sweep import FASHION_PS as DEFAULT_PS
from .knn_sweep import SweepConfig, config_dict, run_sweep

__all__ = ["SweepConfig", "run_sweep", "config_dict", "DEFAULT_PS"]
