"""Matplotlib figures from study results (NumPy in, ``Figure`` out; callers save PNGs).

The study modules (``gpuknn.plots.sweep``, ``pca``, ``cdnn``, ``cluster``, ``imbalanced``) are
imported by name; the figures for comparing methods over many data sets are exported here.
"""

from .stats import critical_difference_diagram, score_table_figure

__all__ = ["critical_difference_diagram", "score_table_figure"]
