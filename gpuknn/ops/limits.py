"""What a search can take: the working-memory budget and the magnitude of the input.

* :func:`check_working_memory` turns the public ``working_memory`` argument (MiB, as in
  scikit-learn; None: the namespace's default) into the byte budget the engine plans with,
  once, at the public boundary; :func:`to_mib` turns such a budget back into the argument
  (exactly). :func:`raise_to_minimum` lifts a budget below one row of tiles to
  that row (with a :class:`~gpuknn.errors.WorkingMemoryWarning`), and :func:`warn_many_tiles`
  says when a budget splits a search into so many tiles that their overhead dominates.
* :func:`check_values` is the one value check of a search's input: NaN or infinity, and
  values whose squared norms overflow the dtype (every metric forms ``x.x`` or ``q.r``), in
  one reduction and one transfer, naming the user's argument; it returns the magnitude the
  engine needs, so that nothing below the public boundary scans the input again.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from .._backend import check_finite_rows, to_numpy
from .._delegation import max_abs
from .._memory import default_working_memory
from ..errors import InvalidInputError, WorkingMemoryWarning
from .search import TilePlan, _scratch_per_element

__all__ = [
    "check_working_memory",
    "minimum_working_memory",
    "raise_to_minimum",
    "warn_many_tiles",
    "check_values",
    "check_magnitude",
    "underflow_scale",
]

MIB = 1 << 20  # bytes in one MiB, the unit of every public ``working_memory``


def check_working_memory(working_memory: Any, xp: Any, device: Any = None) -> int:
    """The byte budget of a public ``working_memory`` argument, given in MiB.

    Parameters
    ----------
    working_memory : float or None
        MiB, a positive int or float (fractions of a MiB are fine: ``0.5`` is 512 KiB).
        None: :func:`gpuknn._memory.default_working_memory` of ``xp``.
    xp : array namespace
        Whose default None stands for (unused otherwise).
    device : optional
        The arrays' device: a torch CUDA device gets half its free memory by default.

    Returns
    -------
    int
        Bytes, at least 1 (``working_memory * 2**20``, rounded down).

    Raises
    ------
    InvalidInputError
        Not a positive, finite real number (bools refused).

    Examples
    --------
    >>> check_working_memory(256, None), check_working_memory(0.5, None)
    (268435456, 524288)
    """
    if working_memory is None:
        return default_working_memory(xp, device)
    if (
        isinstance(working_memory, bool)
        or not isinstance(working_memory, numbers.Real)  # Python and NumPy ints and floats
        or not (math.isfinite(working_memory) and working_memory > 0)
    ):
        raise InvalidInputError(f"working_memory must be a positive number of MiB, got {working_memory!r}")
    return max(1, int(float(working_memory) * MIB))


def to_mib(budget: int) -> float:
    """The ``working_memory`` argument (MiB) of a byte budget: exact, so that
    ``check_working_memory(to_mib(b), xp) == b`` for every budget below 2**53 bytes."""
    return budget / MIB


def _mib(budget: int) -> str:
    """A byte budget as a message shows it: MiB, with the bytes when under one MiB."""
    return f"{budget / MIB:.4g} MiB" + (f" ({budget} bytes)" if budget < MIB else "")


def minimum_working_memory(n_queries: int, kk: int, row_width: int) -> int:
    """Smallest budget, in bytes, holding one row of tiles: one prepared query row and
    reference row and one score element, float64, with its selection scratch
    (:func:`plan_tiles` gives a quarter of its budget to the prepared rows and half to the
    tile; the search gives it three quarters of its own). Blocks may be narrower than
    ``kk`` (the candidates are merged across blocks)."""
    row_bytes = max(1, row_width) * 8
    per = 8 + _scratch_per_element(8)
    plan_budget = max(4 * row_bytes, 2 * per)
    return -(-4 * plan_budget // 3)


def raise_to_minimum(budget: int, n_queries: int, kk: int, row_width: int) -> int:
    """``budget`` (bytes, from :func:`check_working_memory`), raised with a warning (in MiB,
    the unit of ``working_memory``) to :func:`minimum_working_memory` when below it."""
    low = minimum_working_memory(n_queries, kk, row_width)
    if budget < low:
        warnings.warn(
            f"working_memory={_mib(budget)} is too small for one row of tiles "
            f"({n_queries} queries, {kk} candidates, rows of width {row_width}); using the "
            f"minimum, {_mib(low)}",
            WorkingMemoryWarning,
            stacklevel=4,
        )
        return low
    return budget


# Tiles beyond which a search is dominated by per-tile overhead (a 10 KiB budget made a
# 2000 x 30000 search take 89 s instead of 0.15 s, issue 18): it says so.
_MANY_TILES = 20_000


def warn_many_tiles(plan: TilePlan, n_q: int, n_ref: int, budget: int) -> None:
    """Warn when ``plan`` (made for ``budget`` bytes) has more than ``_MANY_TILES`` tiles."""
    n_tiles = -(-n_q // plan.rows) * -(-n_ref // plan.cols)
    if n_tiles > _MANY_TILES:
        warnings.warn(
            f"working_memory={_mib(budget)} splits this {n_q} x {n_ref} search into "
            f"{n_tiles} tiles of {plan.rows} x {plan.cols} scores: expect it to be slow (the "
            f"default, None, is {_CPU_HINT})",
            WorkingMemoryWarning,
            stacklevel=4,
        )


_CPU_HINT = "256 MiB on the CPU and half the free memory on a GPU"


def check_values(X: Any, xp: Any, *, name: str, magnitude: float | None = None) -> float:
    """The one value check of a search's input: finite values whose squares stay in range.

    One host transfer (``max |X|``, :func:`gpuknn._delegation.max_abs`; or ``magnitude`` when the
    caller has it) and one host transfer give both: NaN or infinity raise naming the rows,
    and values beyond ``sqrt(max / (4 (d + 1)))`` raise too -- every metric forms ``x.x``
    (norms, the euclidean augmentation) or ``q.r`` in the input's dtype, and past that they
    overflow and the neighbours are meaningless. Returns ``max |X|``, which the engine needs
    (its tile dtype and bounds): validated once, handed on.
    """
    top = check_finite_rows(X, xp, name=name, magnitude=max_abs(X, xp) if magnitude is None else magnitude)
    limit = (float(xp.finfo(X.dtype).max) / (4 * (X.shape[1] + 1))) ** 0.5
    if top > limit:
        raise InvalidInputError(
            f"{name} holds values up to {top:.3g}; {X.dtype} squared norms of "
            f"{X.shape[1]} features overflow beyond {limit:.3g}: rescale the data"
        )
    return top


def check_magnitude(Q: Any, R: Any, xp: Any, *, names: tuple[str, str] = ("Q", "R")) -> float:
    """:func:`check_values` of Q and of R (either may be None): the larger magnitude.

    Both reductions come to the host in one transfer (one sync for the pair).
    """
    pairs = [(n, a) for n, a in zip(names, (Q, R)) if a is not None and math.prod(a.shape)]
    if not pairs:
        return 0.0
    if len(pairs) == 1:
        tops = [None]
    else:
        # Both inputs' maxima and minima in one transfer; no copy of either (no abs temp).
        ext = to_numpy(xp.stack([xp.astype(f(a), xp.float64) for _, a in pairs for f in (xp.max, xp.min)])).tolist()
        tops = [max(ext[2 * i], -ext[2 * i + 1]) if ext[2 * i] == ext[2 * i] else math.nan for i in range(len(pairs))]
    return max(check_values(a, xp, name=n, magnitude=t) for (n, a), t in zip(pairs, tops))


def underflow_scale(top: float, dtype: Any, xp: Any) -> float:
    """The power of two to multiply data of magnitude ``top`` by so that its squares do not
    underflow, or 1.0 when they do not.

    Every metric forms squares and products of the input (``x.x``, ``q.r``); values below
    ``sqrt(tiny) * 2**nmant`` (about 1e-138 in float64, 2e-12 in float32) lose relative
    precision in them and, further down, vanish (cosine of rows of 1e-300 treated every row
    as zero). A power of two is exact to apply and to undo (unless the result itself
    underflows), and the metrics are scale invariant or scale by that power, so callers
    rescale instead of refusing: ``top * scale`` lies in ``[0.5, 1)``.

    Parameters
    ----------
    top : float
        ``max |X|`` (:func:`check_values`); 0 (all zeros) needs no scaling.
    dtype : dtype of ``xp``
        The dtype the data are computed in.
    xp : array namespace

    Returns
    -------
    float
        ``2**e`` with ``e >= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> underflow_scale(1.0, np.float64, np), underflow_scale(1e-300, np.float64, np) * 1e-300
    (1.0, 0.6696928794914171)
    """
    info = xp.finfo(dtype)
    nmant = {4: 24, 8: 53}.get(int(info.bits) // 8, 24)
    limit = math.sqrt(float(info.smallest_normal)) * 2.0**nmant
    if not (0.0 < top < limit):
        return 1.0
    return math.ldexp(1.0, -math.frexp(top)[1])
