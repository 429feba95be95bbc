"""Benchmark: kernel launches and host syncs of the engine's three hot paths, counted on torch CPU.

On a GPU every kernel launch costs ~5-15 µs of host time and every host sync stalls the queue;
both are counted here on torch CPU (the test suite's counters, ``tests/helpers.py``: every aten
op but views is a launch; ``.item()``-style reads, data-dependent sizes and transfers to NumPy
are syncs) at a GPU-sized ``working_memory`` (37 193 MiB, half an H100). Issue 31's setting:

* ``kneighbors`` 1 000 (and 500) x 60 000 x 784, k = 10, correlation, raw reference;
* ``cross_validate_k`` on one 80/20 split of 6 000 and 12 000 rows, k = 1..300, both weights;
* ``cross_validate_kp`` on the same splits, k = 1..30, the study's 31 PCA sizes, both weights.

Fashion-MNIST when its package is installed (``--synthetic`` for rows of its shape made here,
as the budget tests use). Counts, not timings: the wall times printed are torch CPU's, with
the counting mode's overhead, and say nothing of a GPU. To compare with another checkout, run
it with ``PYTHONPATH=<checkout>``.

    python scripts/bench_launches.py [--synthetic] [--only kneighbors,cv_k,cv_kp]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the counters
from helpers import HostSyncs, Launches  # noqa: E402

WM = 37193  # MiB
PS = [*range(1, 16), 20, 25, 30, 40, 50, 60, 70, 80, 100, 115, 215, 315, 415, 515, 615, 715]


def fashion_like(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of Fashion-MNIST's shape: ten class templates in 0..255 plus noise, rounded."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 255, size=(10, 784))
    y = rng.integers(0, 10, n)
    X = np.clip(centres[y] + rng.normal(0, 60, size=(n, 784)), 0, 255).round().astype(np.float32)
    return X, y


def data(synthetic: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Training rows and labels, 1 000 query rows, and the data's name."""
    if not synthetic:
        try:
            from gpuknn.datasets import load_fashion_mnist

            X, y, Xq, _ = load_fashion_mnist()
            return np.asarray(X, np.float32), np.asarray(y), np.asarray(Xq[:1_000], np.float32), "Fashion-MNIST"
        except Exception as exc:  # noqa: BLE001 - any missing data: say so and use synthetic rows
            print(f"Fashion-MNIST not available ({type(exc).__name__}): synthetic rows", flush=True)
    X, y = fashion_like(60_000, 1)
    return X, y, fashion_like(1_000, 2)[0], "synthetic (Fashion-MNIST's shape)"


def counted(fn) -> tuple[int, int, float]:
    with HostSyncs() as syncs, Launches() as launches:
        t0 = time.perf_counter()
        fn()
        wall = time.perf_counter() - t0
    return launches.count, syncs.count, wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--only", default="kneighbors,cv_k,cv_kp")
    args = ap.parse_args(argv)
    import torch

    import gpuknn
    from gpuknn.model_selection import StratifiedKFold, cross_validate_k, cross_validate_kp

    X, y, Xq, name = data(args.synthetic)
    only = set(args.only.split(","))
    print(f"gpuknn {gpuknn.__version__} from {Path(gpuknn.__file__).parent}; torch {torch.__version__} (CPU)")
    print(f"data: {name}; working_memory {WM} MiB\n")
    print(f"{'path':44s} {'launches':>9s} {'syncs':>6s} {'torch CPU s':>12s}")
    if "kneighbors" in only:
        R, Q = torch.from_numpy(X), torch.from_numpy(Xq)
        for n in (500, 1_000):
            row = counted(lambda n=n: gpuknn.kneighbors(Q[:n], R, 10, metric="correlation", working_memory=WM))
            print(f"{f'kneighbors {n} x {R.shape[0]} x 784, k=10':44s} {row[0]:9d} {row[1]:6d} {row[2]:12.1f}")
    both = ("uniform", "distance")
    for rows in (6_000, 12_000):
        Xr, yr = torch.from_numpy(X[:rows]), torch.from_numpy(y[:rows])
        fold = [next(StratifiedKFold(5, shuffle=True, random_state=0).split(X[:rows], y[:rows]))]
        k_sweep = dict(cv=fold, weights=both, metric="correlation", working_memory=WM)
        kp_sweep = dict(cv=fold, weights=both, working_memory=WM)
        if "cv_k" in only:
            row = counted(lambda a=(Xr, yr), o=k_sweep: cross_validate_k(*a, range(1, 301), **o))
            print(f"{f'cross_validate_k {rows} rows, k=1..300':44s} {row[0]:9d} {row[1]:6d} {row[2]:12.1f}")
        if "cv_kp" in only:
            row = counted(lambda a=(Xr, yr), o=kp_sweep: cross_validate_kp(*a, range(1, 31), PS, **o))
            print(f"{f'cross_validate_kp {rows} rows, k=1..30, 31 p':44s} {row[0]:9d} {row[1]:6d} {row[2]:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
