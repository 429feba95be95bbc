"""GPU check (issue 17): the device's floors, gpuknn against them and torch, the full study.

Measures, on CuPy when a CUDA device is there (NumPy otherwise, said so in the report):

* floors: device-to-device copy rate, fp32 GEMM (the array namespace), TF32 and bf16 GEMM
  (torch: CuPy reads its TF32 switch only at import);
* ``gpuknn.kneighbors`` on 10 000 x 60 000 x 784 float32 rows (Fashion-MNIST test against
  training images when found, random rows of that shape otherwise), k = 10, correlation,
  against a bare fp32 GEMM of the same shape and torch ``mm`` + ``topk`` on the same prepared
  (centred, normalised) rows;
* the full ``gpuknn sweep`` study (``run_sweep`` with the CLI's defaults; data load excluded);
* kneighbors with k = 1000 on the same rows, and against a 10 M x 128 random reference.

Writes ``DIR/gpu_report.json`` and ``DIR/gpu_report.md`` after every part, so a run stopped
from outside keeps what it measured (parts not reached stay "pending"). Each part runs in its
own ``try``: a failure is recorded with its error and the others still run.

    python scripts/bench_gpu.py [--out DIR] [--dry-run] [--device auto|cpu|gpu] [--budget S]

``--dry-run`` runs every part at tiny sizes on NumPy (torch parts only where torch has CUDA)
in a few seconds: a check of the script itself, not a measurement.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _timing import best_of, timed_sweep

if importlib.util.find_spec("gpuknn") is None:
    # Run from a checkout that is not installed: use the repository's own package.
    sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

# Parts in the order they run: the floors, the searches, then the study (the longest part,
# last: a budget that runs out skips it alone).
PARTS = {
    "copy": "device-to-device copy rate (floor)",
    "gemm_fp32": "fp32 GEMM (floor)",
    "gemm_tf32": "TF32 GEMM through torch (floor)",
    "gemm_bf16": "bf16 GEMM through torch (floor)",
    "kneighbors": "gpuknn.kneighbors, k = 10, against its fp32 GEMM floor",
    "torch_topk": "torch mm + topk on the same prepared rows",
    "kneighbors_k1000": "gpuknn.kneighbors with a large k",
    "kneighbors_large_ref": "gpuknn.kneighbors against a large random reference",
    "sweep": "the full gpuknn sweep study",
}

# Targets (issues 17 and 29): (part, figure, comparison, bound, wording). gpuknn and torch's
# mm + topk run the same FP32 GEMM, so no exact search can be much faster than that pair;
# the honest figure is what exactness costs on top of it (torch's lists are not exact).
TARGETS = [
    ("kneighbors", "gpuknn / fp32 GEMM floor", "<=", 1.5, "kneighbors <= 1.5 x its fp32 GEMM floor"),
    ("torch_topk", "gpuknn / torch", "<=", 1.25, "kneighbors <= 1.25 x torch mm + topk (not exact)"),
    ("sweep", "study", "<=", 10.0, "full sweep study <= 10 s (data load excluded)"),
]

FEATURES = 784  # Fashion-MNIST's 28 x 28 pixels


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one mode (full measurement or dry run)."""

    copy_mib: int
    gemm_n: int
    floor_repeat: int
    knn_queries: int
    knn_refs: int
    k: int
    k_large: int
    large_refs: int
    large_queries: int
    large_dim: int
    repeat: int
    sweep_full: bool  # the CLI's default study, or a tiny grid


FULL = Sizes(
    copy_mib=1024,
    gemm_n=8192,
    floor_repeat=10,
    knn_queries=10_000,
    knn_refs=60_000,
    k=10,
    k_large=1000,
    large_refs=10_000_000,
    large_queries=1000,
    large_dim=128,
    repeat=3,
    sweep_full=True,
)
DRY = Sizes(
    copy_mib=8,
    gemm_n=256,
    floor_repeat=3,
    knn_queries=200,
    knn_refs=2000,
    k=10,
    k_large=50,
    large_refs=20_000,
    large_queries=100,
    large_dim=128,
    repeat=2,
    sweep_full=False,
)


@dataclass
class Context:
    """What every part needs: namespaces, sizes, synchronisation, shared data."""

    xp: Any  # array-API namespace of the measured arrays (compat-wrapped)
    raw: Any  # the array library itself: cupy or numpy
    on_gpu: bool
    dry: bool
    sizes: Sizes
    torch: Any  # torch with CUDA, or None
    torch_note: str
    data: dict
    report: dict

    def sync(self) -> None:
        """Wait for the device (the whole device: torch's work too)."""
        if self.on_gpu:
            self.raw.cuda.Device().synchronize()
        elif self.torch is not None:
            self.torch.cuda.synchronize()

    def release(self) -> None:
        """Hand cached device memory back, so CuPy and torch do not starve each other."""
        if self.on_gpu:
            self.raw.get_default_memory_pool().free_all_blocks()
        if self.torch is not None:
            self.torch.cuda.empty_cache()


class Skip(Exception):
    """A part that cannot run here; the message says why."""


# --------------------------------------------------------------------------- timing


def timed(ctx: Context, fn: Callable[[], Any], repeat: int, warmup: int = 1) -> tuple[float, Any]:
    """Best wall time of ``repeat`` synchronised calls of ``fn`` after ``warmup`` calls.

    The device is synchronised before the clock starts and before it stops, so a figure
    is the work's own time, not the time to queue it.
    """
    for _ in range(warmup):
        fn()

    def call():
        out = fn()
        ctx.sync()
        return out

    ctx.sync()
    return best_of(call, repeat)


def fig(value: float, unit: str) -> dict:
    return {"value": float(value), "unit": unit}


# --------------------------------------------------------------------------- set-up


def torch_with_cuda() -> tuple[Any, str]:
    """torch when it imports and sees a CUDA device; otherwise None and the reason."""
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising at import
        return None, f"torch not importable ({type(exc).__name__}: {exc})"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    return torch, f"torch {torch.__version__} on {torch.cuda.get_device_name()}"


def choose_namespace(device: str) -> tuple[Any, Any, bool, str]:
    """(compat namespace, raw library, on_gpu, note) for ``--device``."""
    from gpuknn._backend import resolve_device

    if device == "auto":
        xp = resolve_device("auto")  # GPUKNN_DEVICE may still pick, as for the CLI
    else:
        # An explicit --device wins: resolve_device lets GPUKNN_DEVICE (even set empty,
        # which reads as "auto") override its argument.
        saved = os.environ.pop("GPUKNN_DEVICE", None)
        try:
            xp = resolve_device(device)
        finally:
            if saved is not None:
                os.environ["GPUKNN_DEVICE"] = saved
    if "cupy" in xp.__name__:
        import cupy

        return xp, cupy, True, "CuPy on the CUDA device"
    note = "NumPy on the CPU"
    if device == "auto":
        note += " -- no usable CuPy/CUDA device found, so these are CPU figures and say nothing about the GPU"
    return xp, np, False, note


def device_info(ctx: Context) -> dict:
    """Device name, driver and memory as nvidia-smi and CuPy report them."""
    info: dict[str, Any] = {"cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count()}
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if out.returncode == 0 and out.stdout.strip():
                name, driver, memory = (s.strip() for s in out.stdout.splitlines()[0].split(","))
                info.update(gpu=name, driver=driver, gpu_memory=memory)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            info["nvidia_smi_error"] = f"{type(exc).__name__}: {exc}"
    if ctx.on_gpu:
        rt = ctx.raw.cuda.runtime
        props = rt.getDeviceProperties(ctx.raw.cuda.Device().id)
        name = props["name"]
        info.setdefault("gpu", name.decode() if isinstance(name, bytes) else str(name))
        info["compute_capability"] = f"{props['major']}.{props['minor']}"
        info["cuda_runtime"] = rt.runtimeGetVersion()
        info["cuda_driver_api"] = rt.driverGetVersion()
        info.setdefault("gpu_memory", f"{props['totalGlobalMem'] / 2**30:.1f} GiB")
    return info


def versions(ctx: Context) -> dict:
    import array_api_compat
    import scipy

    import gpuknn

    v = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "array_api_compat": array_api_compat.__version__,
        "gpuknn": gpuknn.__version__,
        "gpuknn_path": str(Path(gpuknn.__file__).parent),
    }
    for name in ("cupy", "torch"):
        mod = sys.modules.get(name)
        if mod is not None:
            v[name] = mod.__version__
    return v


def random_rows(ctx: Context, shape: tuple[int, int], seed: int) -> Any:
    """Seeded standard-normal float32 rows, generated on the device itself."""
    if ctx.on_gpu:
        return ctx.raw.random.RandomState(seed).standard_normal(shape, dtype=ctx.raw.float32)
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def load_data(ctx: Context, data_dir: str | None) -> dict:
    """Fashion-MNIST in float32 on the device (a subset in a dry run), else random rows.

    ``real`` says which: the study runs on the real data only (a synthetic stand-in in a
    dry run).
    """
    import gpuknn
    from gpuknn.errors import GpuknnError

    s = ctx.sizes
    t0 = time.perf_counter()
    try:
        Xtr, ytr, Xte, yte = gpuknn.load_fashion_mnist(
            data_dir=data_dir, dtype="float32", xp=ctx.xp, subset=None if not ctx.dry else (s.knn_refs, s.knn_queries)
        )
        where = gpuknn.datasets.find_fashion_mnist(data_dir)
        source, real = f"Fashion-MNIST from {where}", True
    except GpuknnError as exc:  # not found (or damaged): the kneighbors parts still run
        Xtr = random_rows(ctx, (s.knn_refs, FEATURES), seed=1)
        Xte = random_rows(ctx, (s.knn_queries, FEATURES), seed=2)
        ytr = yte = None
        first = str(exc).splitlines()[0]
        source, real = f"random normal rows of Fashion-MNIST's shape ({first})", False
    ctx.sync()
    return {
        "Xtr": Xtr,
        "ytr": ytr,
        "Xte": Xte,
        "yte": yte,
        "source": source,
        "real": real,
        "load_seconds": time.perf_counter() - t0,
    }


# --------------------------------------------------------------------------- parts


def part_copy(ctx: Context) -> dict:
    n = (ctx.sizes.copy_mib << 20) // 4
    src = ctx.raw.ones(n, dtype=ctx.raw.float32)
    dst = ctx.raw.empty_like(src)
    t, _ = timed(ctx, lambda: ctx.raw.copyto(dst, src), ctx.sizes.floor_repeat, warmup=3)
    moved = 2 * src.nbytes  # read once, written once
    return {
        "figures": {
            "copy rate": fig(moved / t / 1e9, "GB/s"),
            "bytes moved per copy": fig(moved, "B"),
            "time per copy": fig(t, "s"),
        },
        "notes": [
            f"{src.nbytes >> 20} MiB float32 array copied into another; bytes "
            "counted read + written; best of "
            f"{ctx.sizes.floor_repeat} after 3 warm-ups"
        ],
    }


def gemm_figures(t: float, n: int) -> dict:
    return {"TFLOP/s": fig(2 * n**3 / t / 1e12, "TFLOP/s"), "time per GEMM": fig(t, "s")}


def part_gemm_fp32(ctx: Context) -> dict:
    n = ctx.sizes.gemm_n
    a, b = random_rows(ctx, (n, n), seed=3), random_rows(ctx, (n, n), seed=4)
    t, _ = timed(ctx, lambda: a @ b, ctx.sizes.floor_repeat, warmup=3)
    lib = "CuPy" if ctx.on_gpu else "NumPy"
    tf32 = os.environ.get("CUPY_TF32", "0")
    return {
        "figures": gemm_figures(t, n),
        "notes": [
            f"{lib} float32 {n} x {n} x {n} matmul, best of {ctx.sizes.floor_repeat} "
            f"after 3 warm-ups" + (f"; CUPY_TF32={tf32}" if ctx.on_gpu else "")
        ],
    }


@contextlib.contextmanager
def torch_tf32(torch: Any, on: bool):
    """torch's TF32 matmul switch for the block; restored after (gpuknn reads it too).

    The new per-backend switch where this torch has it: once it is used, the old
    ``allow_tf32`` raises, and setting the old one instead would mix the two APIs.
    """
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        old = matmul.fp32_precision
        matmul.fp32_precision = "tf32" if on else "ieee"
    else:
        old = matmul.allow_tf32
        matmul.allow_tf32 = on
    try:
        yield
    finally:
        if hasattr(matmul, "fp32_precision"):
            matmul.fp32_precision = old
        else:
            matmul.allow_tf32 = old


def torch_gemm(ctx: Context, dtype_name: str) -> float:
    torch = ctx.torch
    n = ctx.sizes.gemm_n
    g = torch.Generator(device="cuda").manual_seed(5)
    dtype = getattr(torch, dtype_name)
    a = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    b = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    t, _ = timed(ctx, lambda: torch.mm(a, b), ctx.sizes.floor_repeat, warmup=3)
    return t


def need_torch(ctx: Context) -> None:
    if ctx.torch is None:
        raise Skip(ctx.torch_note)


def part_gemm_tf32(ctx: Context) -> dict:
    need_torch(ctx)
    n = ctx.sizes.gemm_n
    with torch_tf32(ctx.torch, True):
        t_tf32 = torch_gemm(ctx, "float32")
    with torch_tf32(ctx.torch, False):
        t_fp32 = torch_gemm(ctx, "float32")
    out = gemm_figures(t_tf32, n)
    out["torch fp32 (TF32 off) TFLOP/s, for comparison"] = fig(2 * n**3 / t_fp32 / 1e12, "TFLOP/s")
    return {
        "figures": out,
        "notes": [
            f"torch.mm of float32 {n} x {n} with TF32 on (torch.backends.cuda.matmul), "
            f"best of {ctx.sizes.floor_repeat} after 3 warm-ups"
        ],
    }


def part_gemm_bf16(ctx: Context) -> dict:
    need_torch(ctx)
    n = ctx.sizes.gemm_n
    t = torch_gemm(ctx, "bfloat16")
    return {
        "figures": gemm_figures(t, n),
        "notes": [f"torch.mm of bfloat16 {n} x {n}, best of {ctx.sizes.floor_repeat} after 3 warm-ups"],
    }


def knn_problem(ctx: Context) -> tuple[Any, Any]:
    s = ctx.sizes
    return ctx.data["Xte"][: s.knn_queries], ctx.data["Xtr"][: s.knn_refs]


def shape_note(ctx: Context, Q: Any, R: Any, k: int, metric: str) -> str:
    return (
        f"{Q.shape[0]} queries x {R.shape[0]} references x {Q.shape[1]} features, float32, "
        f"k = {k}, metric {metric}; data: {ctx.data['source']}"
    )


def part_kneighbors(ctx: Context) -> dict:
    import gpuknn
    from gpuknn._backend import to_numpy

    Q, R = knn_problem(ctx)
    k, rep = ctx.sizes.k, ctx.sizes.repeat
    t_gemm, _ = timed(ctx, lambda: Q @ R.T, rep)
    t, (_, idx) = timed(ctx, lambda: gpuknn.kneighbors(Q, R, k, metric="correlation"), rep)
    ctx.data["knn_indices"] = to_numpy(idx)
    return {
        "figures": {
            "gpuknn": fig(t, "s"),
            "fp32 GEMM Q @ R.T (floor)": fig(t_gemm, "s"),
            "gpuknn / fp32 GEMM floor": fig(t / t_gemm, "x"),
        },
        "notes": [
            shape_note(ctx, Q, R, k, "correlation"),
            f"best of {rep} after a warm-up; row preparation and validation included; default working_memory",
        ],
    }


def to_torch(ctx: Context, a: Any) -> Any:
    """A CUDA tensor of ``a`` (zero-copy from CuPy through DLPack)."""
    t = ctx.torch.from_dlpack(a)
    return t.to("cuda").contiguous()


def part_torch_topk(ctx: Context) -> dict:
    need_torch(ctx)
    from gpuknn.ops.distance import prepare_rows

    torch = ctx.torch
    Q, R = knn_problem(ctx)
    k, rep = ctx.sizes.k, ctx.sizes.repeat
    # The same task as gpuknn's correlation search once rows are centred and normalised:
    # the largest inner products. Prepared once, outside the clock (bench_kneighbors.py's way).
    Qt = to_torch(ctx, prepare_rows(Q, "correlation", role="query").rows)
    Rt = to_torch(ctx, prepare_rows(R, "correlation", role="reference").rows)
    with torch_tf32(torch, False):  # fp32, as gpuknn's tiles
        t, (_, idx) = timed(ctx, lambda: torch.topk(Qt @ Rt.T, k, dim=1), rep)
    figures = {"torch mm + topk": fig(t, "s")}
    notes = [
        f"{Qt.shape[0]} x {Rt.shape[0]} x {Qt.shape[1]} fp32 torch.mm then torch.topk, "
        f"best of {rep} after a warm-up; row preparation not timed"
    ]
    t_g = ctx.report["parts"]["kneighbors"].get("figures", {}).get("gpuknn")
    if t_g is not None:
        figures["gpuknn / torch"] = fig(t_g["value"] / t, "x")
    else:
        notes.append("no gpuknn time to compare with (the kneighbors part did not finish)")
    mine = ctx.data.get("knn_indices")
    if mine is not None:
        same = float(np.mean(idx.cpu().numpy() == mine))
        figures["neighbours equal to gpuknn's"] = fig(same, "fraction of entries")
    if not ctx.on_gpu:
        notes.append("gpuknn ran on NumPy here: the ratio compares a CPU with a GPU")
    return {"figures": figures, "notes": notes}


def sweep_data(ctx: Context) -> tuple[Any, Any, Any, Any, str]:
    """The study's data: the loaded Fashion-MNIST, or (dry run only) a synthetic stand-in."""
    d = ctx.data
    if d["real"] and ctx.dry:  # a few hundred images are enough to run every stage
        return d["Xtr"][:600], d["ytr"][:600], d["Xte"][:100], d["yte"][:100], d["source"]
    if d["real"]:
        return d["Xtr"], d["ytr"], d["Xte"], d["yte"], d["source"]
    if not ctx.dry:
        raise Skip("Fashion-MNIST not found (the study needs the real data): " + d["source"])
    from gpuknn.datasets import make_fashion_mnist_like

    Xtr, ytr, Xte, yte = make_fashion_mnist_like(600, 100, random_state=0, xp=ctx.xp)
    return Xtr, ytr, Xte, yte, "synthetic Fashion-MNIST-like images (600 / 100)"


def tiny_config():
    from gpuknn.studies.fashion_sweep import SweepConfig

    return SweepConfig(ks_raw=list(range(1, 11)), ks=list(range(1, 6)), ps=[2, 5, 10, 20], folds=2)


def part_sweep(ctx: Context) -> dict:
    from gpuknn.studies.fashion_sweep import SweepConfig

    Xtr, ytr, Xte, yte, source = sweep_data(ctx)
    notes = [
        f"run_sweep (what `gpuknn sweep` calls) on {Xtr.shape[0]} training / "
        f"{Xte.shape[0]} test images already on the device; data load excluded; "
        f"data: {source}"
    ]
    if ctx.sizes.sweep_full:
        config = SweepConfig()  # the CLI's defaults
        notes.append(
            "the CLI's default study: 5 folds, raw k 1..300, (k, p) k 1..30 over "
            f"{len(config.ps)} PCA sizes, both weightings, final test"
        )
        # A warm-up study with the same grids (every k, every PCA size, both weightings) on
        # a subset first compiles every kernel the timed study reaches -- CuPy compiles on
        # first use and caches on disk, a second per kernel on a fresh machine -- so the
        # timed run measures the study, not the compiler (a tiny grid left some cold).
        n_warm = min(3000, Xtr.shape[0])
        timed_sweep(Xtr[:n_warm], ytr[:n_warm], Xte[:500], yte[:500], config)
        notes.append(f"after a warm-up study with the same grids on {n_warm} / 500 images (not timed)")
    else:
        config = tiny_config()
        notes.append("dry run: a tiny grid (2 folds, raw k 1..10, k 1..5, p in 2, 5, 10, 20)")
    ctx.sync()
    total, stages, res = timed_sweep(Xtr, ytr, Xte, yte, config)
    figures = {"study": fig(total, "s")}
    figures.update({f"stage: {name}": fig(t, "s") for name, t in stages.items()})
    result = {
        key: res[key]
        for key in ("k_best", "p_best", "weights_best", "cv_accuracy_best", "test_accuracy", "test_macro_f1")
    }
    return {"figures": figures, "notes": notes, "result": result}


def part_kneighbors_k1000(ctx: Context) -> dict:
    import gpuknn

    Q, R = knn_problem(ctx)
    k = min(ctx.sizes.k_large, R.shape[0])
    # A warm-up on a few queries compiles the large-k selection kernels; one timed run
    # (a large k costs several times the k = 10 search).
    gpuknn.kneighbors(Q[:100], R, k, metric="correlation")
    t, _ = timed(ctx, lambda: gpuknn.kneighbors(Q, R, k, metric="correlation"), 1, warmup=0)
    figures = {"gpuknn": fig(t, "s")}
    t_10 = ctx.report["parts"]["kneighbors"].get("figures", {}).get("gpuknn")
    if t_10 is not None:
        figures[f"time / time at k = {ctx.sizes.k}"] = fig(t / t_10["value"], "x")
    return {
        "figures": figures,
        "notes": [shape_note(ctx, Q, R, k, "correlation"), "one run after a warm-up on 100 queries"],
    }


def large_ref_rows(ctx: Context) -> tuple[int, list[str]]:
    """Reference rows that fit: the planned count, or fewer when device memory is short."""
    from gpuknn._memory import free_device_memory

    s = ctx.sizes
    n, notes = s.large_refs, []
    free = free_device_memory(ctx.xp)
    # The reference plus kneighbors' default working memory (half of what is free then)
    # must fit; a reference of 40 % of the free memory leaves room for both.
    if free is not None and n * s.large_dim * 4 > 0.4 * free:
        n = int(0.4 * free) // (s.large_dim * 4) // 100_000 * 100_000
        notes.append(
            f"scaled down from {s.large_refs} to {n} reference rows: {free / 2**30:.1f} GiB free on the device"
        )
    if n < s.k:
        raise Skip(f"only {free} bytes free on the device")
    return n, notes


def part_kneighbors_large_ref(ctx: Context) -> dict:
    import gpuknn

    s = ctx.sizes
    n, notes = large_ref_rows(ctx)
    R = random_rows(ctx, (n, s.large_dim), seed=6)
    Q = random_rows(ctx, (s.large_queries, s.large_dim), seed=7)
    ctx.sync()
    gpuknn.kneighbors(Q[:10], R[: min(n, 100_000)], s.k, metric="euclidean")  # warm-up
    t, _ = timed(ctx, lambda: gpuknn.kneighbors(Q, R, s.k, metric="euclidean"), 1, warmup=0)
    flops = 2.0 * s.large_queries * n * s.large_dim
    notes = [
        f"{s.large_queries} queries x {n} references x {s.large_dim} features, float32, "
        f"k = {s.k}, metric euclidean; seeded random normal rows generated on the device",
        "one run after a warm-up on 10 queries",
    ] + notes
    return {
        "figures": {
            "gpuknn": fig(t, "s"),
            "query-reference pairs per second": fig(s.large_queries * n / t, "pairs/s"),
            "GEMM-equivalent rate": fig(flops / t / 1e12, "TFLOP/s"),
        },
        "notes": notes,
    }


RUNNERS: dict[str, Callable[[Context], dict]] = {
    "copy": part_copy,
    "gemm_fp32": part_gemm_fp32,
    "gemm_tf32": part_gemm_tf32,
    "gemm_bf16": part_gemm_bf16,
    "kneighbors": part_kneighbors,
    "torch_topk": part_torch_topk,
    "sweep": part_sweep,
    "kneighbors_k1000": part_kneighbors_k1000,
    "kneighbors_large_ref": part_kneighbors_large_ref,
}


# --------------------------------------------------------------------------- report


def targets(report: dict) -> list[dict]:
    """The issue's targets beside what this run measured (met only for a GPU run)."""
    judged = report["meta"]["on_gpu"] and not report["meta"]["dry_run"]
    rows = []
    for part, name, op, bound, text in TARGETS:
        value = report["parts"][part].get("figures", {}).get(name, {}).get("value")
        met = None
        if judged and value is not None:
            met = value <= bound if op == "<=" else value >= bound
        rows.append({"target": text, "part": part, "figure": name, "bound": bound, "measured": value, "met": met})
    return rows


def fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.4e}"


def md_header(m: dict) -> list[str]:
    """Title, mode and the table of device, driver, versions and data."""
    dev = m["device"]
    title = dev.get("gpu") or f"{dev['cpu']} ({dev['cpu_count']} cores, no GPU)"
    mode = (
        "dry run: tiny sizes, a check of the script -- the figures say nothing about speed"
        if m["dry_run"]
        else "full sizes"
    )
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if k != "gpuknn_path")
    return [
        f"# GPU check: gpuknn on {title}",
        "",
        f"Measured by `scripts/bench_gpu.py` at {m['started_utc']} ({mode}).",
        "",
        "| item | value |",
        "| --- | --- |",
        f"| arrays | {m['namespace']} |",
        f"| device | {title}; memory {dev.get('gpu_memory', '-')}; compute capability "
        f"{dev.get('compute_capability', '-')} |",
        f"| driver | {dev.get('driver', '-')} (CUDA runtime {dev.get('cuda_runtime', '-')}, "
        f"driver API {dev.get('cuda_driver_api', '-')}) |",
        f"| host | {dev['cpu']}, {dev['cpu_count']} cores |",
        f"| versions | {versions} |",
        f"| gpuknn imported from | {m['versions'].get('gpuknn_path', '-')} |",
        f"| torch | {m['torch']} |",
        f"| data | {m.get('data', '-')} |",
        f"| data load (excluded from every figure) | {fmt(m.get('data_load_seconds', float('nan')))} s |",
    ]


def md_targets(report: dict) -> list[str]:
    lines = ["", "## Targets (issues 17, 29)", "", "| target | measured | met |", "| --- | ---: | --- |"]
    for t in report["targets"]:
        unit = report["parts"][t["part"]].get("figures", {}).get(t["figure"], {}).get("unit", "")
        measured = "-" if t["measured"] is None else f"{fmt(t['measured'])} {unit}"
        met = {True: "yes", False: "**no**", None: "- (judged on a full GPU run only)"}[t["met"]]
        lines.append(f"| {t['target']} | {measured} | {met} |")
    return lines


def md_part(name: str, part: dict) -> list[str]:
    lines = ["", f"## {name}: {PARTS[name]}", "", f"status: **{part['status']}**"]
    if part.get("error"):
        lines += ["", "```", part["error"], "```"]
    if part.get("notes"):
        lines += [""] + [f"* {note}" for note in part["notes"]]
    if part.get("figures"):
        lines += ["", "| figure | value | unit |", "| --- | ---: | --- |"]
        lines += [f"| {k} | {fmt(f['value'])} | {f['unit']} |" for k, f in part["figures"].items()]
    if part.get("result"):
        lines += [
            "",
            "result: " + ", ".join(f"{k} = {fmt(v) if isinstance(v, float) else v}" for k, v in part["result"].items()),
        ]
    return lines


def markdown(report: dict) -> str:
    lines = md_header(report["meta"]) + md_targets(report)
    for name, part in report["parts"].items():
        lines += md_part(name, part)
    lines += ["", "Status `pending`: the run stopped (time limit, crash) before reaching the part.", ""]
    return "\n".join(lines)


def write_reports(out: Path, report: dict) -> None:
    report["targets"] = targets(report)
    (out / "gpu_report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / "gpu_report.md").write_text(markdown(report), encoding="utf-8")


def run_part(ctx: Context, name: str, deadline: float | None) -> None:
    part = ctx.report["parts"][name]
    t0 = time.perf_counter()
    if deadline is not None and t0 > deadline:
        part.update(status="skipped", notes=["the time budget (--budget) was used up"])
        return
    try:
        part.update(status="ok", **RUNNERS[name](ctx))
    except Skip as exc:
        part.update(status="skipped", notes=[str(exc)])
    except Exception as exc:  # noqa: BLE001 - one failing part must not stop the others
        part.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=8))
        print(f"[{name}] {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        part["seconds_in_part"] = time.perf_counter() - t0
        ctx.release()


def print_part(name: str, part: dict) -> None:
    figs = ", ".join(f"{k} {fmt(f['value'])} {f['unit']}" for k, f in part.get("figures", {}).items())
    why = "" if part["status"] == "ok" else (part.get("error") or "; ".join(part.get("notes", [])[:1]))
    print(f"{name:22s} {part['status']:8s} {figs or why}", flush=True)


def host_threads(ctx: Context):
    """One BLAS thread for a dry run on the host, else no limit.

    A dry run checks the script, not speed; a threaded BLAS on a busy machine (CI, another
    process timing) can spin-wait for cores and take many times longer.
    """
    if ctx.dry and not ctx.on_gpu:
        from threadpoolctl import threadpool_limits

        ctx.report["meta"]["blas_threads"] = 1
        return threadpool_limits(1)
    return contextlib.nullcontext()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpu_report", help="directory of the two reports")
    ap.add_argument("--dry-run", action="store_true", help="every part at tiny sizes (CI)")
    ap.add_argument(
        "--device",
        choices=["auto", "cpu", "gpu"],
        default=None,
        help="default: auto (CuPy when usable), cpu with --dry-run",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="S",
        help="start no part after S seconds (the parts still to run are skipped)",
    )
    ap.add_argument("--data-dir", default=None, help="directory with the Fashion-MNIST IDX files")
    ap.add_argument(
        "--parts",
        default=None,
        metavar="P,Q",
        help=f"run only these parts (comma-separated, of: {', '.join(PARTS)}); the others are skipped",
    )
    return ap.parse_args(argv)


def new_context(args: argparse.Namespace) -> Context:
    """Namespace, torch and an empty report (every part pending) for ``args``.

    Raises gpuknn's DeviceUnavailableError for ``--device gpu`` without a usable GPU.
    """
    device = args.device or ("cpu" if args.dry_run else "auto")
    xp, raw, on_gpu, ns_note = choose_namespace(device)
    print(f"arrays: {ns_note}", flush=True)
    torch, torch_note = torch_with_cuda()
    ctx = Context(
        xp=xp,
        raw=raw,
        on_gpu=on_gpu,
        dry=args.dry_run,
        sizes=DRY if args.dry_run else FULL,
        torch=torch,
        torch_note=torch_note,
        data={},
        report={},
    )
    now = datetime.datetime.now(datetime.timezone.utc)
    ctx.report.update(
        meta={
            "started_utc": now.strftime("%Y-%m-%d %H:%M UTC"),
            "dry_run": args.dry_run,
            "on_gpu": on_gpu,
            "namespace": ns_note,
            "torch": torch_note,
            "sizes": asdict(ctx.sizes),
            "env": {k: os.environ.get(k) for k in ("CUPY_TF32", "GPUKNN_DEVICE", "GPUKNN_WORKING_MEMORY")},
        },
        parts={name: {"status": "pending"} for name in PARTS},
    )
    ctx.report["meta"]["device"] = device_info(ctx)
    ctx.report["meta"]["versions"] = versions(ctx)
    return ctx


def main(argv: list[str] | None = None) -> int:
    from gpuknn.errors import GpuknnError

    args = parse_args(argv)
    wanted = list(PARTS) if args.parts is None else [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(wanted) - set(PARTS))
    if unknown or not wanted:
        print(f"bench_gpu.py: --parts: unknown part(s) {unknown}; expected some of {list(PARTS)}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    deadline = None if args.budget is None else start + args.budget
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        ctx = new_context(args)
    except GpuknnError as exc:  # --device gpu without CuPy or a CUDA device
        print(f"bench_gpu.py: {exc}", file=sys.stderr)
        return 2
    write_reports(out, ctx.report)

    ctx.data = load_data(ctx, args.data_dir)
    ctx.report["meta"].update(data=ctx.data["source"], data_load_seconds=ctx.data["load_seconds"])
    print(f"data: {ctx.data['source']} (loaded in {ctx.data['load_seconds']:.1f} s, excluded)", flush=True)
    with host_threads(ctx):
        for name in PARTS:
            if name not in wanted:
                ctx.report["parts"][name].update(status="skipped", notes=["not asked for (--parts)"])
                write_reports(out, ctx.report)
                continue
            run_part(ctx, name, deadline)
            print_part(name, ctx.report["parts"][name])
            write_reports(out, ctx.report)
    for t in ctx.report["targets"]:
        value = "-" if t["measured"] is None else fmt(t["measured"])
        print(f"target: {t['target']}: measured {value}, met: {t['met']}")
    print(f"reports: {out / 'gpu_report.md'}, {out / 'gpu_report.json'} ({time.perf_counter() - start:.1f} s)")
    return 1 if any(p["status"] == "error" for p in ctx.report["parts"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
