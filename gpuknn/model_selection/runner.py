"""Where the fold tasks of a sweep run: here, one after another, or on a Dask cluster.

A sweep is a list of independent tasks -- one per (fold, chunk of settings) -- over a few
large arrays every task reads (the data, the fold indices). A runner takes the arrays once
(:meth:`LocalRunner.share`) and the tasks, and yields ``(key, result)`` as each task
finishes, so the caller can journal every result the moment it exists: an interruption
loses only the tasks still running. :func:`get_runner` picks the runner from the
``client`` argument of the sweeps; the Dask one lives in :mod:`gpuknn.distributed.runner`
and is imported only when a client is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["LocalRunner", "get_runner", "task_working_memory"]

Job = tuple[Any, dict]  # (key, keyword arguments of this task)


class LocalRunner:
    """Runs the tasks in this process, in the order given (the single-process sweep).

    Examples
    --------
    >>> r = LocalRunner()
    >>> shared = r.share(a=10)
    >>> list(r.run(lambda a, b: a + b, [("x", {"b": 1}), ("y", {"b": 2})], shared))
    [('x', 11), ('y', 12)]
    """

    distributed = False

    def share(self, **arrays: Any) -> dict:
        """The arrays as the tasks will receive them (here: themselves)."""
        return arrays

    def run(self, fn: Callable[..., Any], jobs: Sequence[Job], shared: dict) -> Iterator[tuple[Any, Any]]:
        """``fn(**shared, **kwargs)`` for every job, yielded as ``(key, result)`` in order."""
        for key, kwargs in jobs:
            yield key, fn(**shared, **kwargs)


def get_runner(client: Any) -> Any:
    """:class:`LocalRunner` for ``client=None``, else a
    :class:`gpuknn.distributed.runner.DaskRunner` on the ``distributed.Client``."""
    if client is None:
        return LocalRunner()
    from ..distributed.runner import DaskRunner  # noqa: PLC0415 - Dask only when asked for

    return DaskRunner(client)


def task_working_memory(runner: Any, working_memory: Any) -> Any:
    """The ``working_memory`` (MiB) the tasks get: as given here; on a cluster, resolved
    now, on the client -- the argument, else ``$GPUKNN_WORKING_MEMORY``, else 256 MiB -- as
    :func:`gpuknn.distributed.kneighbors` does. A worker never picks its own default: "half
    the free GPU memory" is wrong on a worker that also holds the scattered data and a
    memory pool."""
    if working_memory is not None or not runner.distributed:
        return working_memory
    import numpy as np  # noqa: PLC0415

    from .._memory import default_working_memory  # noqa: PLC0415
    from ..ops.limits import to_mib  # noqa: PLC0415

    return to_mib(default_working_memory(np))
