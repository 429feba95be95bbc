"""Benchmark: gpuknn.distributed on a distributed.LocalCluster against single-process gpuknn.

Parts, chosen by ``--part`` (a comma list, default ``knn,big``; each is one function and one
entry of ``PARTS``):

* ``knn`` - overhead on Fashion-MNIST: single-process ``gpuknn.kneighbors(test 10 000 x 784,
  train 60 000 x 784, float32, k=10)`` with the BLAS on ``--threads`` (2) threads
  (threadpoolctl), against ``gpuknn.distributed.kneighbors`` on a 2-process LocalCluster of
  1 thread each. The distributed time is end to end (query scatter + graph build + compute +
  gather) with the training set **already scattered** to the workers in ``--ref-shards``
  shards; the time including that scatter is reported beside it. Sides alternate, one
  warm-up each, ``--repeat`` measurements (min and median); the neighbour indices must equal
  single-process ones (asserted).
* ``big`` - a reference larger than a worker's memory limit: ``--big-rows`` x 64 float32
  (default 20 000 000 rows, 5.1 GB) generated lazily by ``dask.array`` random chunks on
  2 workers of ``--big-memory-limit`` (2 GB) each, 10 000 scattered queries, k=10. Samples
  every worker's RSS (and its spill counters) each ``--sample-every`` seconds during the run,
  reports the peaks against the limit, and checks ~20 queries against a NumPy brute force
  that streams the reference chunks through the client process one at a time.

* ``sweep`` - the Fashion-MNIST study (``gpuknn sweep``'s defaults on a stratified
  ``--sweep-subset`` of the training set, 20 000 by default) single-process with ``--threads``
  BLAS threads against ``run_sweep(..., client=...)`` on ``--sweep-workers`` workers of one
  thread; the tables and the choice must be equal (asserted; the float32 explained variances
  are left out of the comparison).

Prints a report; ``--json PATH`` writes the machine facts, every timing and the ratios.

    python scripts/bench_distributed.py [--part knn,big] [--repeat 3] [--json out.json]
        [--synthetic] [--big-rows 2000000] ...
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

# ----------------------------------------------------------------------------- helpers


def machine_facts() -> dict[str, Any]:
    """CPU model, cores, memory and the versions that matter for the timings."""
    import dask
    import distributed
    import psutil
    from threadpoolctl import threadpool_info

    import gpuknn

    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as fh:
            model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), model)
    blas = [
        {k: p.get(k) for k in ("internal_api", "version", "num_threads", "threading_layer", "architecture")}
        for p in threadpool_info()
        if p.get("user_api") == "blas"
    ]
    return {
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_total_bytes": psutil.virtual_memory().total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas,
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "gpuknn": gpuknn.__version__,
    }


_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def local_cluster(**kwargs: Any) -> Iterator[Any]:
    """A ``distributed.Client`` on a new LocalCluster (processes, loopback, no dashboard).

    Starting a LocalCluster sets OMP/MKL/OPENBLAS_NUM_THREADS=1 in this process's own
    environment: it is saved before and restored after the start, and again at the end.
    The workers keep 1 thread each for their BLAS (the variables are inherited by them).
    """
    import distributed

    saved = dict(os.environ)
    opts = {"processes": True, "dashboard_address": None, "host": "127.0.0.1"} | kwargs
    # Without a dashboard the scheduler still serves its HTTP routes, on port 8787 by default:
    # with another cluster on this machine that warns "Port 8787 is already in use" and leaks
    # the socket of the failed bind. A free loopback port instead (dashboard still off).
    opts.setdefault("scheduler_kwargs", {"dashboard": False, "dashboard_address": "127.0.0.1:0"})
    cluster = distributed.LocalCluster(**opts)

    def restore() -> None:
        for k in set(os.environ) - set(saved):
            del os.environ[k]
        os.environ.update(saved)

    restore()
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        restore()


def summary(times: list[float]) -> dict[str, float]:
    return {"min": min(times), "median": statistics.median(times), "max": max(times)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def scatter_rows(client: Any, X: np.ndarray, n_chunks: int, *, hash: bool = True) -> tuple[Any, list]:
    """``X`` scattered to the workers in ``n_chunks`` row chunks (round robin), as one dask
    array of futures (no data in the graph), and the futures (keep them alive)."""
    import dask.array as da

    n = X.shape[0]
    n_chunks = max(1, min(n_chunks, n))
    cuts = np.linspace(0, n, n_chunks + 1).astype(int)
    futures = client.scatter([X[a:b] for a, b in zip(cuts[:-1], cuts[1:])], hash=hash)
    blocks = [
        da.from_delayed(f, shape=(b - a, X.shape[1]), dtype=X.dtype, meta=X[:0])
        for f, a, b in zip(futures, cuts[:-1], cuts[1:])
    ]
    return (blocks[0] if len(blocks) == 1 else da.concatenate(blocks, axis=0)), futures


def fmt_bytes(n: float) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


# ----------------------------------------------------------------------------- part knn


def knn_args(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("part knn")
    g.add_argument("--queries", type=int, default=10_000, help="test images used as queries (first N)")
    g.add_argument("--train", type=int, default=60_000, help="training images used as references (first N)")
    g.add_argument("--k", type=int, default=10)
    g.add_argument("--metric", default="euclidean")
    g.add_argument("--threads", type=int, default=2, help="BLAS threads of the single-process run")
    g.add_argument("--workers", type=int, default=2, help="LocalCluster workers (1 thread each)")
    g.add_argument("--ref-shards", type=int, default=2, help="row chunks of the scattered training set")
    g.add_argument("--query-chunks", type=int, default=2, help="row chunks of the queries")
    g.add_argument("--goal", type=float, default=1.3, help="target ratio distributed / single")
    g.add_argument(
        "--synthetic", action="store_true", help="Gaussian data (--queries x --train x 64) instead of Fashion-MNIST"
    )


def knn_data(args: argparse.Namespace) -> tuple[str, np.ndarray, np.ndarray]:
    if args.synthetic:
        rng = np.random.default_rng(0)
        R = rng.standard_normal((args.train, 64), dtype=np.float32)
        Q = rng.standard_normal((args.queries, 64), dtype=np.float32)
        return "synthetic Gaussian", Q, R
    import gpuknn

    Xtr, _, Xte, _ = gpuknn.load_fashion_mnist(dtype="float32")
    return "Fashion-MNIST", np.ascontiguousarray(Xte[: args.queries]), np.ascontiguousarray(Xtr[: args.train])


def run_knn(args: argparse.Namespace) -> dict[str, Any]:
    import dask
    from threadpoolctl import threadpool_limits

    import gpuknn
    import gpuknn.distributed as gd
    from gpuknn._memory import default_working_memory

    data, Q, R = knn_data(args)
    k, metric = args.k, args.metric
    wm = default_working_memory(np) / 2**20  # MiB: the same tile budget for both sides
    print(
        f"data: {data}, {Q.shape[0]} queries x {R.shape[0]} references x {R.shape[1]} features, "
        f"{R.dtype}, k={k}, metric={metric}, working_memory {wm:g} MiB",
        flush=True,
    )

    def single() -> tuple[np.ndarray, np.ndarray]:
        with threadpool_limits(limits=args.threads, user_api="blas"):
            return gpuknn.kneighbors(Q, R, k, metric=metric, working_memory=wm)

    with local_cluster(n_workers=args.workers, threads_per_worker=1) as client:
        client.wait_for_workers(args.workers)  # before the scatter: round robin over all workers
        Rd, r_futures = scatter_rows(client, R, args.ref_shards)  # persistent: scattered once
        placement = {str(key): list(ws) for key, ws in client.who_has(r_futures).items()}

        def distributed_call(Rd: Any) -> tuple[np.ndarray, np.ndarray]:
            Qd, q_futures = scatter_rows(client, Q, args.query_chunks, hash=False)
            out = dask.compute(*gd.kneighbors(Qd, Rd, k, metric=metric, working_memory=wm))
            del q_futures
            return out

        def distributed_with_scatter() -> tuple[np.ndarray, np.ndarray]:
            Rd2, futs = scatter_rows(client, R, args.ref_shards, hash=False)
            out = distributed_call(Rd2)
            client.cancel(futs)
            return out

        def scatter_only() -> None:
            _, futs = scatter_rows(client, R, args.ref_shards, hash=False)
            client.cancel(futs)

        sides = {
            "single": single,
            "distributed": lambda: distributed_call(Rd),
            "distributed_with_scatter": distributed_with_scatter,
        }
        # one warm-up each (imports on the workers, BLAS thread start), then alternate
        results = {name: fn() for name, fn in sides.items()}
        times: dict[str, list[float]] = {name: [] for name in sides}
        times["scatter_train_only"] = []
        for _ in range(max(1, args.repeat)):
            for name, fn in sides.items():
                t, results[name] = timed(fn)
                times[name].append(t)
            times["scatter_train_only"].append(timed(scatter_only)[0])
        workers = client.nthreads()

    D0, I0 = results["single"]
    checks = {}
    for name in ("distributed", "distributed_with_scatter"):
        D, ind = results[name]
        assert ind.shape == I0.shape and np.array_equal(ind, I0), f"{name}: indices differ from single-process"
        checks[name] = {
            "indices_equal": True,
            "max_abs_distance_diff": float(np.max(np.abs(D.astype(np.float64) - D0))),
        }
    summ = {name: summary(ts) for name, ts in times.items()}
    ratios = {
        f"{name}/single_{stat}": summ[name][stat] / summ["single"][stat]
        for name in ("distributed", "distributed_with_scatter")
        for stat in ("min", "median")
    }
    meets = ratios["distributed/single_min"] <= args.goal

    print(
        f"cluster: LocalCluster({len(workers)} worker processes x 1 thread, loopback); training set "
        f"scattered once in {args.ref_shards} shards (placement {sorted(len(v) for v in placement.values())} "
        f"copies; workers {sorted(set(sum(placement.values(), [])))}); queries scattered in "
        f"{args.query_chunks} chunks inside every timed call"
    )
    print(f"single process: BLAS limited to {args.threads} threads (threadpoolctl)")
    print(f"repeat {args.repeat} (alternating sides, one warm-up each)\n")
    print(f"  {'side':52s} {'min s':>8s} {'median s':>9s} {'/ single (min)':>15s}")
    labels = {
        "single": "single process gpuknn.kneighbors",
        "distributed": "gd.kneighbors, train pre-scattered (end to end)",
        "distributed_with_scatter": "gd.kneighbors incl. scattering the train set",
        "scatter_train_only": "scatter of the train set alone",
    }
    for name, label in labels.items():
        s = summ[name]
        print(f"  {label:52s} {s['min']:8.3f} {s['median']:9.3f} {s['min'] / summ['single']['min']:15.2f}")
    print(
        f"\n  ratio distributed / single: {ratios['distributed/single_min']:.2f} (min), "
        f"{ratios['distributed/single_median']:.2f} (median); goal <= {args.goal}: "
        f"{'met' if meets else 'NOT met'}"
    )
    print(
        "  indices identical to single-process: yes (asserted); max |distance difference| "
        f"{max(c['max_abs_distance_diff'] for c in checks.values()):.2e}"
    )
    return {
        "data": data,
        "n_queries": Q.shape[0],
        "n_ref": R.shape[0],
        "d": R.shape[1],
        "dtype": str(R.dtype),
        "k": k,
        "metric": metric,
        "working_memory_mib": wm,
        "single_blas_threads": args.threads,
        "cluster": {"n_workers": len(workers), "threads_per_worker": 1, "processes": True},
        "ref_shards": args.ref_shards,
        "query_chunks": args.query_chunks,
        "train_placement": placement,
        "repeat": args.repeat,
        "timing_notes": {
            "single": "gpuknn.kneighbors with threadpool_limits(blas=threads)",
            "distributed": "train pre-scattered; query scatter + graph build + compute + gather",
            "distributed_with_scatter": "as distributed, plus scattering the train set (hash=False)",
            "scatter_train_only": "client.scatter of the train shards alone",
        },
        "times_s": times,
        "summary_s": summ,
        "ratios": ratios,
        "goal_ratio": args.goal,
        "meets_goal": meets,
        "checks": checks,
    }


# ----------------------------------------------------------------------------- part big


def big_args(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("part big")
    g.add_argument("--big-rows", type=int, default=20_000_000, help="reference rows (64 float32 columns)")
    g.add_argument("--big-dim", type=int, default=64)
    g.add_argument("--big-chunk", type=int, default=250_000, help="reference rows per dask chunk")
    g.add_argument("--big-queries", type=int, default=10_000)
    g.add_argument("--big-query-chunks", type=int, default=1, help="row chunks of the scattered queries")
    g.add_argument("--big-memory-limit", default="2GB", help="memory_limit of each of the 2 workers")
    g.add_argument("--big-working-memory", type=float, default=256, help="MiB per task for the search tiles")
    g.add_argument("--big-sample", type=int, default=20, help="queries checked against a NumPy brute force")
    g.add_argument("--sample-every", type=float, default=1.0, help="seconds between worker memory samples")
    g.add_argument("--seed", type=int, default=0)


def _import_gpuknn() -> None:
    import gpuknn.distributed  # noqa: F401


def _worker_memory(dask_worker: Any = None) -> dict[str, float]:
    """Run on a worker: its RSS, managed bytes and spill counters."""
    import psutil

    out = {"rss": float(psutil.Process().memory_info().rss)}
    if dask_worker is not None:
        out["managed"] = float(dask_worker.state.nbytes)
        data = dask_worker.data
        spilled = getattr(data, "spilled_total", None)
        out["spilled_now"] = float(spilled.disk) if spilled is not None else 0.0
        cm = getattr(data, "cumulative_metrics", {})
        out["spilled_total_bytes"] = float(cm.get(("disk-write", "bytes"), 0.0))
        out["spill_count"] = float(cm.get(("disk-write", "count"), 0.0))
    return out


class MemorySampler:
    """A background thread sampling every worker's memory through ``client.run``."""

    def __init__(self, client: Any, every: float) -> None:
        import psutil

        self.client, self.every = client, every
        self.samples: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._me = psutil.Process()
        self._t0 = time.perf_counter()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> None:
        try:
            per_worker = self.client.run(_worker_memory, on_error="return")
        except Exception as exc:  # a worker restarting; keep sampling
            self.errors.append(repr(exc))
            return
        per_worker = {w: v for w, v in per_worker.items() if isinstance(v, dict)}
        rss_client = float(self._me.memory_info().rss)
        self.samples.append({"t": time.perf_counter() - self._t0, "workers": per_worker, "client_rss": rss_client})

    def __enter__(self) -> MemorySampler:
        self._t0 = time.perf_counter()
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def peaks(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for s in self.samples:
            for w, v in s["workers"].items():
                p = out.setdefault(w, {})
                for key, val in v.items():
                    p[key] = max(p.get(key, 0.0), val)
        return out


def brute_force_sample(R: Any, Qs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact k nearest (euclidean) of the rows ``Qs`` in the dask array ``R``, streaming its
    chunks through this process one at a time (``scheduler="synchronous"``: the same random
    chunks as on the workers). Candidates by float64 GEMM, final ranking by exact float64
    differences (ties: lower index)."""
    q64 = Qs.astype(np.float64)
    qn = np.sum(q64 * q64, axis=1)
    keep = min(k + 16, R.shape[0])
    best_d = np.full((len(Qs), 0), np.inf)
    best_i = np.zeros((len(Qs), 0), np.int64)
    cand_rows: dict[int, np.ndarray] = {}
    t0 = time.perf_counter()
    offset = 0
    for b in range(R.numblocks[0]):
        block = np.asarray(R.blocks[b].compute(scheduler="synchronous"), dtype=np.float64)
        d2 = qn[:, None] - 2.0 * (q64 @ block.T) + np.sum(block * block, axis=1)[None, :]
        m = min(keep, block.shape[0])
        part = np.argpartition(d2, m - 1, axis=1)[:, :m]
        best_d = np.concatenate([best_d, np.take_along_axis(d2, part, axis=1)], axis=1)
        best_i = np.concatenate([best_i, part + offset], axis=1)
        for gi in np.unique(part):
            cand_rows[int(gi + offset)] = block[gi].copy()
        sel = np.argsort(best_d, axis=1, kind="stable")[:, :keep]
        best_d, best_i = np.take_along_axis(best_d, sel, axis=1), np.take_along_axis(best_i, sel, axis=1)
        live = set(best_i.ravel().tolist())
        cand_rows = {g: r for g, r in cand_rows.items() if g in live}
        offset += block.shape[0]
    D = np.empty((len(Qs), k))
    ind = np.empty((len(Qs), k), np.int64)
    for i, q in enumerate(q64):
        cands = np.unique(best_i[i])
        exact = np.sqrt(np.sum((np.stack([cand_rows[int(g)] for g in cands]) - q) ** 2, axis=1))
        order = np.lexsort((cands, exact))[:k]
        D[i], ind[i] = exact[order], cands[order]
    return D, ind, time.perf_counter() - t0


def run_big(args: argparse.Namespace) -> dict[str, Any]:
    import dask
    import dask.array as da
    from dask.utils import parse_bytes

    import gpuknn.distributed as gd

    n, d, k = args.big_rows, args.big_dim, 10
    limit = parse_bytes(args.big_memory_limit)
    R = da.random.default_rng(args.seed).standard_normal(size=(n, d), chunks=(args.big_chunk, d), dtype=np.float32)
    Q = np.random.default_rng(args.seed + 1).standard_normal((args.big_queries, d), dtype=np.float32)
    flop = 2.0 * Q.shape[0] * n * d
    print(
        f"reference: {n} x {d} float32 = {fmt_bytes(R.nbytes)} in {R.numblocks[0]} lazy random chunks of "
        f"{args.big_chunk} rows ({fmt_bytes(args.big_chunk * d * 4)}); queries {Q.shape[0]} (scattered); k={k}; "
        f"working_memory {args.big_working_memory:g} MiB; GEMM work {flop / 1e12:.2f} TFLOP",
        flush=True,
    )
    with local_cluster(n_workers=2, threads_per_worker=1, memory_limit=args.big_memory_limit) as client:
        client.wait_for_workers(2)
        workers_before = sorted(client.nthreads())
        client.run(_import_gpuknn)  # imports not timed
        Qd, q_futures = scatter_rows(client, Q, args.big_query_chunks)
        with MemorySampler(client, args.sample_every) as sampler:
            t0 = time.perf_counter()
            Dl, Il = gd.kneighbors(Qd, R, k, working_memory=args.big_working_memory)
            t_graph = time.perf_counter() - t0
            D, ind = dask.compute(Dl, Il)
            wall = time.perf_counter() - t0
        workers_after = sorted(client.nthreads())
        del q_futures
    peaks = sampler.peaks()
    peak_rss = {w: p["rss"] for w, p in peaks.items()}
    spilled = {w: p.get("spilled_total_bytes", 0.0) for w, p in peaks.items()}
    client_peak = max(s["client_rss"] for s in sampler.samples)

    rng = np.random.default_rng(args.seed + 2)
    sample = np.sort(rng.choice(Q.shape[0], size=min(args.big_sample, Q.shape[0]), replace=False))
    Ds, Is, t_verify = brute_force_sample(R, Q[sample], k)
    assert np.array_equal(ind[sample], Is), "big: sampled indices differ from the NumPy brute force"
    d_err = float(np.max(np.abs(D[sample].astype(np.float64) - Ds) / np.maximum(Ds, 1e-30)))

    print(
        f"cluster: LocalCluster(2 worker processes x 1 thread, memory_limit {args.big_memory_limit} each); "
        f"reference = {R.nbytes / limit:.1f} x one worker's limit"
    )
    print(f"wall time {wall:.1f} s (graph build {t_graph:.2f} s) = {flop / wall / 1e9:.1f} GFLOP/s of GEMM work")
    print(f"memory sampled {len(sampler.samples)} times (every {args.sample_every} s), peaks:")
    for w in sorted(peak_rss):
        p = peaks[w]
        print(
            f"  {w}: RSS {fmt_bytes(p['rss'])} = {p['rss'] / limit:.0%} of the limit; managed "
            f"{fmt_bytes(p.get('managed', 0))}; spilled to disk {fmt_bytes(spilled[w])} "
            f"({int(p.get('spill_count', 0))} writes)"
        )
    print(f"  client process RSS peak {fmt_bytes(client_peak)}")
    if workers_before != workers_after or sampler.errors:
        print(f"  WARNING: workers changed ({workers_before} -> {workers_after}); sampler errors {sampler.errors[:3]}")
    print(
        f"sample verified: indices equal ({len(sample)} queries against a NumPy brute force streaming "
        f"{R.numblocks[0]} chunks in the client, {t_verify:.1f} s; max relative distance difference {d_err:.1e})"
    )
    return {
        "n_ref": n,
        "d": d,
        "dtype": "float32",
        "chunk_rows": args.big_chunk,
        "n_chunks": R.numblocks[0],
        "reference_bytes": R.nbytes,
        "n_queries": Q.shape[0],
        "query_chunks": args.big_query_chunks,
        "k": k,
        "metric": "euclidean",
        "working_memory_mib": args.big_working_memory,
        "seed": args.seed,
        "cluster": {"n_workers": 2, "threads_per_worker": 1, "processes": True, "memory_limit": args.big_memory_limit},
        "memory_limit_bytes": limit,
        "reference_over_limit": R.nbytes / limit,
        "gemm_tflop": flop / 1e12,
        "graph_build_s": t_graph,
        "wall_s": wall,
        "gflops": flop / wall / 1e9,
        "sample_every_s": args.sample_every,
        "n_memory_samples": len(sampler.samples),
        "peak_rss_bytes": peak_rss,
        "peak_rss_over_limit": {w: v / limit for w, v in peak_rss.items()},
        "peak_managed_bytes": {w: p.get("managed", 0.0) for w, p in peaks.items()},
        "spilled_bytes": spilled,
        "spill_count": {w: p.get("spill_count", 0.0) for w, p in peaks.items()},
        "client_peak_rss_bytes": client_peak,
        "workers_unchanged": workers_before == workers_after,
        "sampler_errors": sampler.errors,
        "memory_samples": sampler.samples,
        "check": {
            "sample_size": len(sample),
            "sample_rows": sample.tolist(),
            "indices_equal": True,
            "max_rel_distance_diff": d_err,
            "verify_s": t_verify,
        },
    }


# ----------------------------------------------------------------------------- driver


# ----------------------------------------------------------------------------- part sweep


def sweep_args(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("part sweep")
    g.add_argument(
        "--sweep-subset", type=int, default=20_000, help="stratified training subset of the study (0: all 60 000)"
    )
    g.add_argument("--sweep-repeat", type=int, default=1, help="measurements of each side of the study")
    g.add_argument("--sweep-workers", type=int, default=2, help="LocalCluster workers (1 thread each)")


def run_sweep_part(args: argparse.Namespace) -> dict[str, Any]:
    """The Fashion-MNIST study (``gpuknn sweep``'s defaults: correlation, k 1-300 raw, k 1-30 x
    31 PCA sizes, both weights, 5 folds) single-process against ``client=`` on a LocalCluster."""
    import json as _json

    from threadpoolctl import threadpool_limits

    import gpuknn
    from gpuknn.model_selection import train_test_split
    from gpuknn.studies.knn_sweep import SweepConfig, run_sweep

    if args.synthetic:
        X, y = gpuknn.datasets.make_fashion_mnist_like(3000, 600, random_state=0)[:2]
        Xtr, Xte, ytr, yte = train_test_split(np.asarray(X), np.asarray(y), test_size=0.2, random_state=0, stratify=y)
        data = "synthetic Fashion-MNIST-like 2400 + 600"
    else:
        Xtr, ytr, Xte, yte = gpuknn.load_fashion_mnist(dtype="float32")
        data = "Fashion-MNIST"
        if args.sweep_subset and args.sweep_subset < Xtr.shape[0]:
            Xtr, _, ytr, _ = train_test_split(Xtr, ytr, train_size=args.sweep_subset, random_state=0, stratify=ytr)
            data += f", stratified training subset of {args.sweep_subset}"
    config = SweepConfig()
    if args.synthetic:
        config = SweepConfig(ks_raw=list(range(1, 31)), ps=[1, 2, 5, 10, 20, 40], folds=3)
    print(
        f"data: {data}: {Xtr.shape[0]} train, {Xte.shape[0]} test; study settings: gpuknn sweep's defaults", flush=True
    )

    def strip(res: dict) -> dict:  # the results without timings and the float32 variances
        res = _json.loads(_json.dumps(res, default=_jsonable))
        for key in ("seconds_compute", "variance"):
            res.pop(key, None)
        res["test"].pop("seconds", None)
        return res

    times: dict[str, list[float]] = {"single": [], "distributed": []}
    results: dict[str, Any] = {}
    with local_cluster(n_workers=args.sweep_workers, threads_per_worker=1) as client:
        client.wait_for_workers(args.sweep_workers)
        for i in range(args.sweep_repeat):  # alternating sides
            with threadpool_limits(limits=args.threads, user_api="blas"):
                t, results["single"] = timed(lambda: run_sweep(Xtr, ytr, Xte, yte, config))
            times["single"].append(t)
            print(f"  round {i + 1}: single-process {t:.1f} s", flush=True)
            t, results["distributed"] = timed(lambda: run_sweep(Xtr, ytr, Xte, yte, config, client=client))
            times["distributed"].append(t)
            print(f"  round {i + 1}: distributed    {t:.1f} s", flush=True)
    a, b = strip(results["single"]), strip(results["distributed"])
    same = a == b
    diff = _heatmap_differences(a, b)
    # the raw-feature k sweep searches the same float32 rows on both sides: exact kNN makes it
    # identical. The (k, p) sweep searches PCA projections, float32 GEMMs whose last bits
    # depend on the BLAS's thread partition (2 threads here, 1 per worker there).
    raw_same = all(a["per_metric"][m].get("raw") == b["per_metric"][m].get("raw") for m in a["per_metric"])
    assert raw_same, "the raw-feature k sweep differs from single-process"
    choice_same = all(a[k] == b[k] for k in ("k_best", "p_best", "weights_best", "metric_best", "test_accuracy"))
    best = results["single"]
    ratio = min(times["distributed"]) / min(times["single"])
    print(
        f"single-process ({args.threads} BLAS threads): {summary(times['single'])['min']:.1f} s; "
        f"LocalCluster {args.sweep_workers} x 1 thread: {summary(times['distributed'])['min']:.1f} s; "
        f"ratio {ratio:.2f} (goal <= {args.goal})",
        flush=True,
    )
    print(
        f"tables: {'identical' if same else 'raw k sweep identical; (k, p) heatmap cells differing: '}"
        f"{'' if same else f'{diff[0]} of {diff[1]} (largest difference of a mean score {diff[2]:.2e})'}; "
        f"choice {'identical' if choice_same else 'DIFFERENT'}: k*={best['k_best']}, p*={best['p_best']}, "
        f"{best['weights_best']}, CV {best['cv_score_best']:.4f}, test {best['test_accuracy']:.4f}",
        flush=True,
    )
    return {
        "data": data,
        "n_train": int(Xtr.shape[0]),
        "n_test": int(Xte.shape[0]),
        "workers": args.sweep_workers,
        "threads_single": args.threads,
        "times_s": times,
        "summary_s": {k: summary(v) for k, v in times.items()},
        "ratio_min": ratio,
        "goal_ratio": args.goal,
        "meets_goal": ratio <= args.goal,
        "same_tables": same,
        "raw_tables_identical": raw_same,
        "heatmap_cells_differing": diff[0],
        "heatmap_cells": diff[1],
        "heatmap_max_mean_difference": diff[2],
        "same_choice_and_test": choice_same,
        "choice": {k: best[k] for k in ("k_best", "p_best", "weights_best", "metric_best", "cv_score_best")},
        "test_accuracy": best["test_accuracy"],
    }


def _heatmap_differences(a: dict, b: dict) -> tuple[int, int, float]:
    """(cells whose mean score differs, cells, largest difference) over every (k, p) heatmap."""
    n_diff = n = 0
    worst = 0.0
    for m, per in a["per_metric"].items():
        for w, rows in per["heatmap"]["mean"].items():
            x, y = np.asarray(rows), np.asarray(b["per_metric"][m]["heatmap"]["mean"][w])
            n += x.size
            n_diff += int(np.count_nonzero(x != y))
            worst = max(worst, float(np.max(np.abs(x - y))))
    return n_diff, n, worst


class Part(NamedTuple):
    run: Callable[[argparse.Namespace], dict[str, Any]]
    add_args: Callable[[argparse.ArgumentParser], None]
    title: str


# A part is one function returning its JSON section (it prints its own report) and an entry here.
PARTS: dict[str, Part] = {
    "knn": Part(run_knn, knn_args, "overhead on Fashion-MNIST: distributed against single-process"),
    "big": Part(run_big, big_args, "a reference larger than a worker's memory limit"),
    "sweep": Part(run_sweep_part, sweep_args, "the Fashion-MNIST study: distributed against single-process"),
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="knn,big", help=f"comma list of parts: {', '.join(PARTS)}")
    ap.add_argument("--repeat", type=int, default=3, help="measurements of each side (min and median reported)")
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    for part in PARTS.values():
        part.add_args(ap)
    args = ap.parse_args(argv)
    args.parts = [p.strip() for p in args.part.split(",") if p.strip()]
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown or not args.parts:
        ap.error(f"unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    return args


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x)}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    facts = machine_facts()
    blas = ", ".join(f"{b['internal_api']} {b['version']}" for b in facts["blas"]) or "none found"
    print(
        f"machine: {facts['cpu_model']}, {facts['cpu_count']} cores, {fmt_bytes(facts['memory_total_bytes'])}; "
        f"numpy {facts['numpy']} ({blas}); dask {facts['dask']}, distributed {facts['distributed']}; "
        f"gpuknn {facts['gpuknn']}",
        flush=True,
    )
    out: dict[str, Any] = {
        "script": "scripts/bench_distributed.py",
        "argv": sys.argv[1:] if argv is None else list(argv),
        "args": {k: v for k, v in vars(args).items()},
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": facts,
        "parts": {},
    }
    for name in args.parts:
        print(f"\n== part {name}: {PARTS[name].title}", flush=True)
        t0 = time.perf_counter()
        out["parts"][name] = PARTS[name].run(args)
        out["parts"][name]["part_s"] = time.perf_counter() - t0
        if args.json:  # written after every part: a long later part never loses an earlier one
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=2, default=_jsonable)
    if args.json:
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
