"""``--scheduler ADDRESS`` / ``--workers N``: run a command's tasks on a Dask cluster.

The command owns the cluster it starts (``--workers``: a ``LocalCluster`` of N worker
processes on loopback, closed when the command ends) and only connects to one it is given
(``--scheduler``: left running). Dask is imported only when one of the options is used.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInputError
from ._args import positive_int

__all__ = ["add_cluster_arguments", "open_client", "cluster_facts"]

_CONNECT_TIMEOUT_S = 30


def add_cluster_arguments(p) -> None:
    """The two mutually exclusive options on parser ``p``."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run the folds as tasks on the Dask cluster of this scheduler (e.g. tcp://10.0.0.5:8786); "
        "its workers need gpuknn installed; pip install 'gpuknn[dask]'",
    )
    g.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="run the folds as tasks on a local Dask cluster of N worker processes (the cores shared among them)",
    )


@contextlib.contextmanager
def open_client(args: Any) -> Iterator[Any]:
    """A ``distributed.Client`` for ``--scheduler``/``--workers``, or None without them.

    Raises
    ------
    InvalidInputError
        Dask not installed, or the scheduler cannot be reached (exit code 2, one line).
    """
    if args.scheduler is None and args.workers is None:
        yield None
        return
    try:
        import distributed  # noqa: PLC0415
    except ImportError:
        raise InvalidInputError(
            "--scheduler/--workers need Dask: pip install 'gpuknn[dask]' (dask[array] and distributed)"
        ) from None
    if args.scheduler is not None:
        try:
            client = distributed.Client(args.scheduler, timeout=_CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidInputError(f"--scheduler {args.scheduler}: cannot connect ({exc})") from None
        with _dask_logs(quiet=bool(getattr(args, "quiet", False))), client:
            yield client
        return
    with _dask_logs(quiet=bool(getattr(args, "quiet", False))):
        saved = dict(os.environ)
        if getattr(args, "quiet", False):
            # the worker processes inherit it: their own Dask logging starts at "error"
            os.environ["DASK_LOGGING__DISTRIBUTED"] = "error"
        try:
            cluster = _local_cluster(distributed, args.workers)
        finally:
            # Starting a LocalCluster sets OMP/MKL/OPENBLAS_NUM_THREADS=1 in this process: undo it
            os.environ.clear()
            os.environ.update(saved)
        with cluster, distributed.Client(cluster) as client:
            yield client


@contextlib.contextmanager
def _dask_logs(*, quiet: bool) -> Iterator[None]:
    """Under ``--quiet``, Dask's own log lines (``distributed.nanny - WARNING - Worker process
    still alive after 4 seconds, killing`` as the cluster closes, ...) are dropped below
    ERROR for as long as the cluster lives; the levels are restored afterwards.

    They come from Dask's loggers in this process (the nannies of a ``LocalCluster`` run
    here), which Dask gives a stderr handler of their own: ``--quiet`` promised no output
    but the results.
    """
    if not quiet:
        yield
        return
    import logging  # noqa: PLC0415

    names = ["distributed"] + [n for n in logging.Logger.manager.loggerDict if n.startswith("distributed.")]
    saved = {n: logging.getLogger(n).level for n in names}
    for n, level in saved.items():
        if n == "distributed" or level != logging.NOTSET:  # the others inherit "distributed"'s
            logging.getLogger(n).setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)


def _local_cluster(distributed: Any, workers: int) -> Any:
    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=max(1, (os.cpu_count() or 1) // workers),
        processes=True,  # processes=False with a host fails to start
        host="127.0.0.1",
        # a free port: the default 8787 clashes with any other Dask cluster on this machine
        dashboard_address=":0",
    )


def cluster_facts(client: Any) -> dict | None:
    """What results.json records of the cluster: its scheduler and worker count (None: none)."""
    if client is None:
        return None
    return {"scheduler": client.scheduler.address, "workers": len(client.scheduler_info()["workers"])}
