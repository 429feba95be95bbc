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
        with client:
            yield client
        return
    saved = dict(os.environ)
    cluster = distributed.LocalCluster(
        n_workers=args.workers,
        threads_per_worker=max(1, (os.cpu_count() or 1) // args.workers),
        processes=True,  # processes=False with a host fails to start
        host="127.0.0.1",
        # a free port: the default 8787 clashes with any other Dask cluster on this machine
        dashboard_address=":0",
    )
    # Starting a LocalCluster sets OMP/MKL/OPENBLAS_NUM_THREADS=1 in this process: undo it
    os.environ.clear()
    os.environ.update(saved)
    with cluster, distributed.Client(cluster) as client:
        yield client


def cluster_facts(client: Any) -> dict | None:
    """What results.json records of the cluster: its scheduler and worker count (None: none)."""
    if client is None:
        return None
    return {"scheduler": client.scheduler.address, "workers": len(client.scheduler_info()["workers"])}
