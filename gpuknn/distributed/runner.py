"""The sweeps' tasks on a ``distributed`` cluster: data scattered once to every worker, one
future per task, results yielded as they complete (see :mod:`gpuknn.model_selection.runner`).

A worker that dies mid-task (killed, out of memory) is not an error here: the scheduler
reruns its tasks elsewhere (``distributed.scheduler.allowed-failures`` times, 3 by default)
and the broadcast data still has copies on the other workers. A task that *raises* is
not retried: its exception is re-raised here and the tasks still pending are cancelled.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import InvalidInputError

__all__ = ["DaskRunner", "check_client"]


def check_client(client: Any) -> Any:
    """``client`` if it is a running ``distributed.Client``, else :class:`InvalidInputError`."""
    if not (hasattr(client, "submit") and hasattr(client, "scatter") and hasattr(client, "scheduler_info")):
        raise InvalidInputError(
            f"client must be a dask.distributed Client (or None to run here), got {type(client).__name__}"
        )
    if getattr(client, "status", "running") != "running":
        raise InvalidInputError(f"client is not connected (status {client.status!r}); start it or pass client=None")
    if not client.scheduler_info().get("workers"):
        raise InvalidInputError(f"the Dask cluster at {client.scheduler.address} has no workers")
    return client


class DaskRunner:
    """Runs tasks as futures of a ``distributed.Client``; see the module docstring.

    Parameters
    ----------
    client : distributed.Client
        Its workers need gpuknn (and the data's array library) installed.
    """

    distributed = True

    def __init__(self, client: Any):
        self.client = check_client(client)
        self._run = uuid.uuid4().hex[:8]  # task keys of two sweeps never collide
        self._count = itertools.count()  # nor those of two stages of one sweep

    def share(self, **arrays: Any) -> dict:
        """Every array scattered **once**, to every worker (``broadcast=True``): a task then
        finds its inputs where it runs, and a dead worker's copies are not the only ones."""
        names = list(arrays)
        futures = self.client.scatter([arrays[n] for n in names], broadcast=True, hash=False)
        return dict(zip(names, futures))

    def run(self, fn: Callable[..., Any], jobs: Sequence[tuple[Any, dict]], shared: dict) -> Iterator[tuple[Any, Any]]:
        """Submit every job, yield ``(key, result)`` in completion order."""
        from distributed import as_completed  # noqa: PLC0415

        keys = {}
        for key, kwargs in jobs:
            # explicit unique keys: a rerun after a failure computes again, not finds a cached key
            fut = self.client.submit(fn, **shared, **kwargs, pure=False, key=f"gpuknn-{self._run}-{next(self._count)}")
            keys[fut] = key
        pending = set(keys)
        try:
            for fut, result in as_completed(list(keys), with_results=True):
                pending.discard(fut)
                yield keys[fut], result
        finally:  # an error, an interrupt or a caller that stops early: free the cluster
            if pending:
                self.client.cancel(list(pending))
