"""Where the fold tasks of a sweep run: here (one after another, or on threads), or on a
Dask cluster.

A sweep is a list of independent tasks -- one per (fold, chunk of settings) -- over a few
large arrays every task reads (the data, the fold indices). A runner takes the arrays once
(:meth:`LocalRunner.share`) and the tasks, and yields ``(key, result)`` as each task
finishes, so the caller can journal every result the moment it exists: an interruption
loses only the tasks still running. :func:`get_runner` picks the runner from the
``client`` and ``n_jobs`` arguments of the sweeps; the Dask one lives in
:mod:`gpuknn.distributed.runner` and is imported only when a client is given.

Threads (``n_jobs`` > 1) serve host (NumPy) arrays: NumPy's elementwise work, sorts and
selections run on one core each and release the GIL, so folds on several threads keep the
cores busy that BLAS alone would leave idle between its GEMMs. A GPU is one device, whose
queue one thread keeps full; tasks on its arrays run one after another whatever
``n_jobs`` says. The tasks share the process's ``working_memory``: each gets its share
(:func:`task_working_memory`).
"""

from __future__ import annotations

import numbers
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._delegation import one_blas_thread
from ..errors import InvalidInputError

__all__ = ["LocalRunner", "check_n_jobs", "get_runner", "task_working_memory"]

Job = tuple[Any, dict]  # (key, keyword arguments of this task)


class LocalRunner:
    """Runs the tasks in this process: in the order given, or on ``n_jobs`` threads.

    Parameters
    ----------
    n_jobs : int, default 1
        Tasks running at once, each on a thread of its own (daemon threads, started by
        :meth:`run` and gone when it returns). With one, the tasks run in the calling
        thread, in order.

    Notes
    -----
    Threads are started from the main thread only (elsewhere the tasks run one at a time,
    in order): it alone sets the tasks' one BLAS thread
    (:func:`gpuknn._delegation.precision.one_blas_thread`). On threads, results come in
    completion order. A task that raises stops the run: no further task starts, the ones
    running are waited for (at most ``n_jobs - 1`` tasks' time), those that finished are
    yielded, and then the exception is raised here. A caller that stops early -- an interrupt
    (Ctrl-C), a ``break``, a closed generator -- returns at once: no further task starts,
    the running ones end in the background (on the process's own BLAS thread count again)
    and their results are dropped.

    Examples
    --------
    >>> r = LocalRunner()
    >>> shared = r.share(a=10)
    >>> list(r.run(lambda a, b: a + b, [("x", {"b": 1}), ("y", {"b": 2})], shared))
    [('x', 11), ('y', 12)]
    >>> sorted(LocalRunner(n_jobs=2).run(lambda a, b: a + b, [("x", {"b": 1}), ("y", {"b": 2})], shared))
    [('x', 11), ('y', 12)]
    """

    distributed = False

    def __init__(self, n_jobs: int = 1):
        self.n_jobs = n_jobs

    def share(self, **arrays: Any) -> dict:
        """The arrays as the tasks will receive them (here: themselves)."""
        return arrays

    def run(self, fn: Callable[..., Any], jobs: Sequence[Job], shared: dict) -> Iterator[tuple[Any, Any]]:
        """``fn(**shared, **kwargs)`` for every job, yielded as ``(key, result)``: in order
        with one job at a time, in completion order on threads."""
        # Off the main thread the tasks could not share one BLAS thread (get_runner).
        if self.n_jobs <= 1 or len(jobs) <= 1 or threading.current_thread() is not threading.main_thread():
            for key, kwargs in jobs:
                yield key, fn(**shared, **kwargs)
            return
        yield from _on_threads(fn, list(jobs), shared, min(self.n_jobs, len(jobs)))


def _on_threads(fn: Callable[..., Any], jobs: list[Job], shared: dict, n: int) -> Iterator[tuple[Any, Any]]:
    """:meth:`LocalRunner.run` on ``n`` threads (see its Notes)."""
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                key, kwargs = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((key, fn(**shared, **kwargs), None))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                done.put((key, None, exc))
                return

    threads = [threading.Thread(target=work, name=f"gpuknn-task-{i}", daemon=True) for i in range(n)]
    # One BLAS thread for every task, set here in the main thread (the only one that can):
    # a BLAS call made while another thread's holds the BLAS threads may run on fewer of
    # them and round differently (gpuknn._delegation.precision). A sweep's projections run
    # on one thread when its folds go one at a time too (cv.fit_project): the same tables.
    with one_blas_thread():
        try:
            for t in threads:
                t.start()
            for _ in jobs:
                # A timed wait: the caller's thread stays responsive to Ctrl-C on every platform.
                while True:
                    try:
                        key, result, exc = done.get(timeout=0.2)
                        break
                    except queue.Empty:
                        continue
                if exc is not None:
                    stop.set()
                    for t in threads:  # the running tasks end before the error is raised
                        t.join()
                    # the tasks that finished meanwhile are the caller's to keep (journal)
                    while not done.empty():
                        other_key, other, other_exc = done.get_nowait()
                        if other_exc is None:
                            yield other_key, other
                    raise exc
                yield key, result
        finally:
            stop.set()


def check_n_jobs(n_jobs: Any) -> int:
    """Tasks at once for ``n_jobs`` as scikit-learn reads it: None -> 1, a positive int as
    given, -1 -> every core, -2 -> all but one, ...; 0 or a non-integer is an error.

    Examples
    --------
    >>> check_n_jobs(None), check_n_jobs(3)
    (1, 3)
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise InvalidInputError(
            f"n_jobs must be None, a positive int or a negative one (-1: every core), got {n_jobs!r}"
        )
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


def get_runner(client: Any, *, n_jobs: Any = None, xp: Any = None, tasks: int | None = None) -> Any:
    """:class:`LocalRunner` for ``client=None`` -- on :func:`check_n_jobs` threads, at most
    ``tasks`` (the most tasks the caller will run at once), when the arrays (namespace
    ``xp``) are NumPy's, else one task at a time -- or a
    :class:`gpuknn.distributed.runner.DaskRunner` on the ``distributed.Client`` (which
    schedules its own workers; ``n_jobs`` is checked and not used)."""
    jobs = check_n_jobs(n_jobs)
    if client is None:
        from array_api_compat import is_numpy_namespace  # noqa: PLC0415

        # Threads need the main thread: it alone sets the tasks' one BLAS thread
        # (gpuknn._delegation.precision); called from another thread, one task at a time.
        main = threading.current_thread() is threading.main_thread()
        if tasks is not None:
            jobs = max(1, min(jobs, tasks))  # no idle threads, no budget shares for them
        return LocalRunner(n_jobs=jobs if main and xp is not None and is_numpy_namespace(xp) else 1)
    from ..distributed.runner import DaskRunner  # noqa: PLC0415 - Dask only when asked for

    return DaskRunner(client)


def task_working_memory(runner: Any, working_memory: Any) -> Any:
    """The ``working_memory`` (MiB) each task gets. One task at a time here: as given. On
    threads: the argument, else ``$GPUKNN_WORKING_MEMORY``, else 256 MiB, shared evenly by
    the tasks that run at once (the process keeps to its budget). On a cluster, resolved
    now, on the client -- the argument, else ``$GPUKNN_WORKING_MEMORY``, else 256 MiB -- as
    :func:`gpuknn.distributed.kneighbors` does. A worker never picks its own default: "half
    the free GPU memory" is wrong on a worker that also holds the scattered data and a
    memory pool."""
    threads = getattr(runner, "n_jobs", 1)
    if not runner.distributed and threads <= 1:
        return working_memory
    import numpy as np  # noqa: PLC0415

    from ..ops.limits import check_working_memory, to_mib  # noqa: PLC0415

    if runner.distributed:
        return working_memory if working_memory is not None else to_mib(check_working_memory(None, np))
    # checked here (a bad value is the user's argument, not a share of it), then shared
    return to_mib(max(1, check_working_memory(working_memory, np) // threads))
