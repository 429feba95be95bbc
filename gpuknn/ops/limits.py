"""What a search can take: the working-memory budget and the magnitude of the input.

* :func:`check_working_memory` reads the ``working_memory`` argument (bytes; None: the
  namespace's default), :func:`raise_to_minimum` lifts a budget below one row of tiles to
  that row (with a :class:`~gpuknn.errors.WorkingMemoryWarning`), and :func:`warn_many_tiles`
  says when a budget splits a search into so many tiles that their overhead dominates.
* :func:`check_magnitude` refuses input whose squared norms overflow the dtype (every metric
  forms ``x.x`` or ``q.r``), and NaN or infinity, naming the user's argument.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from .._backend import default_working_memory, validate_matrix
from ..errors import InvalidInputError, WorkingMemoryWarning
from .search import TilePlan, _scratch_per_element

__all__ = ["check_working_memory", "minimum_working_memory", "raise_to_minimum", "warn_many_tiles", "check_magnitude"]


def check_working_memory(working_memory: Any, xp: Any) -> int:
    if working_memory is None:
        return default_working_memory(xp)
    if (
        isinstance(working_memory, bool)
        or not isinstance(working_memory, (int, float))
        or not (math.isfinite(working_memory) and working_memory > 0)
    ):
        raise InvalidInputError(f"working_memory must be a positive number of bytes, got {working_memory!r}")
    return int(working_memory)


def minimum_working_memory(n_queries: int, kk: int, row_width: int) -> int:
    """Smallest ``working_memory`` holding one row of tiles: one prepared query row and
    reference row and one score element, float64, with its selection scratch
    (:func:`plan_tiles` gives a quarter of its budget to the prepared rows and half to the
    tile; the search gives it three quarters of its own). Blocks may be narrower than
    ``kk`` (the candidates are merged across blocks)."""
    row_bytes = max(1, row_width) * 8
    per = 8 + _scratch_per_element(8)
    plan_budget = max(4 * row_bytes, 2 * per)
    return -(-4 * plan_budget // 3)


def raise_to_minimum(working_memory: int, n_queries: int, kk: int, row_width: int) -> int:
    low = minimum_working_memory(n_queries, kk, row_width)
    if working_memory < low:
        warnings.warn(
            f"working_memory={working_memory} bytes is too small for one row of tiles "
            f"({n_queries} queries, {kk} candidates, rows of width {row_width}); using the "
            f"minimum, {low} bytes",
            WorkingMemoryWarning,
            stacklevel=4,
        )
        return low
    return working_memory


# Tiles beyond which a search is dominated by per-tile overhead (a 10 KiB budget made a
# 2000 x 30000 search take 89 s instead of 0.15 s, issue 18): it says so.
_MANY_TILES = 20_000


def warn_many_tiles(plan: TilePlan, n_q: int, n_ref: int, working_memory: int) -> None:
    n_tiles = -(-n_q // plan.rows) * -(-n_ref // plan.cols)
    if n_tiles > _MANY_TILES:
        warnings.warn(
            f"working_memory={working_memory} bytes splits this {n_q} x {n_ref} search into "
            f"{n_tiles} tiles of {plan.rows} x {plan.cols} scores: expect it to be slow (the "
            f"default, None, is {_CPU_HINT})",
            WorkingMemoryWarning,
            stacklevel=4,
        )


_CPU_HINT = "256 MiB on the CPU and half the free memory on a GPU"


def check_magnitude(Q: Any, R: Any, xp: Any, *, names: tuple[str, str] = ("Q", "R")) -> float:
    """Largest |value| of Q (and R); raise on NaN/inf or if squared norms would overflow.

    Every metric forms ``x.x`` (norms, the euclidean augmentation) or ``q.r`` in the input's
    dtype: beyond ``sqrt(max / d)`` they overflow and the neighbours are meaningless. The
    same two reductions (max, min) also clear the finite check (NaN propagates through
    them, an infinity is one of them); only a failing input is scanned row by row.
    """
    top = 0.0
    for name, a in zip(names, (Q, R)):
        if a is None:
            continue
        hi, lo = float(xp.max(a)), float(xp.min(a))
        if not (math.isfinite(hi) and math.isfinite(lo)):
            validate_matrix(a, xp, name=name)  # raises, naming the rows
        top_a = max(hi, -lo)
        limit = (float(xp.finfo(a.dtype).max) / (4 * (a.shape[1] + 1))) ** 0.5
        if top_a > limit:
            raise InvalidInputError(
                f"{name} holds values up to {top_a:.3g}; {a.dtype} squared norms of "
                f"{a.shape[1]} features overflow beyond {limit:.3g}: rescale the data"
            )
        top = max(top, top_a)
    return top
