"""Benchmark: gpuknn's tiled silhouette_score against scikit-learn's, on Fashion-MNIST.

The 60 000 training images x 784 features (float32) with their 10 class labels, euclidean
metric. Prints, measured in this one run: gpuknn ``silhouette_score`` with
``working_memory=256 MiB``; scikit-learn ``silhouette_score`` with its default chunking
(``sklearn.get_config()["working_memory"]``); both values and their difference, the time
ratio, and the peak extra host memory of gpuknn's call (tracemalloc, one untimed run)
against its working memory.

Both compute all n² distances: at full size this is minutes of CPU per call, so
``--rows N`` keeps the first N images (the files are in random class order) for a quick run.

    python scripts/bench_metrics.py [--rows N] [--repeat R] [--data DIR] [--no-sklearn]
"""

from __future__ import annotations

import argparse
import os
import platform
import tracemalloc

import numpy as np
from _timing import best_of

WORKING_MEMORY = 256  # MiB, as scikit-learn's working_memory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="use the first N training images")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many calls (default 3)")
    ap.add_argument("--data", default=None, help="directory of the IDX files (default: search path)")
    ap.add_argument("--no-sklearn", action="store_true", help="time gpuknn only")
    args = ap.parse_args()

    import gpuknn
    from gpuknn.metrics.silhouette import silhouette_score

    X, y, _, _ = gpuknn.load_fashion_mnist(data_dir=args.data, dtype="float32")
    if args.rows is not None:
        X, y = X[: args.rows], y[: args.rows]
    X, y = np.ascontiguousarray(X), np.asarray(y)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; numpy {np.__version__}")
    print(
        f"problem: silhouette_score of {X.shape[0]} x {X.shape[1]} {X.dtype} images, "
        f"{np.unique(y).size} labels, euclidean; best of {args.repeat}"
    )

    def ours() -> float:
        return silhouette_score(X, y, working_memory=WORKING_MEMORY)

    tracemalloc.start()
    ours()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t_gk, s_gk = best_of(ours, args.repeat)
    print(
        f"gpuknn       silhouette_score  {t_gk:9.3f} s   value {s_gk:.10f}   "
        f"(working_memory {WORKING_MEMORY} MiB, peak extra memory {peak / 2**20:.1f} MiB; "
        f"X is {X.nbytes / 2**20:.1f} MiB)"
    )
    if args.no_sklearn:
        return
    import sklearn
    from sklearn.metrics import silhouette_score as sk_silhouette_score

    t_sk, s_sk = best_of(lambda: sk_silhouette_score(X, y), args.repeat)
    print(
        f"scikit-learn silhouette_score  {t_sk:9.3f} s   value {s_sk:.10f}   "
        f"(sklearn {sklearn.__version__}, working_memory {sklearn.get_config()['working_memory']} MiB)"
    )
    print(f"difference of the values {abs(s_gk - s_sk):.3e}; speed-up of gpuknn over scikit-learn {t_sk / t_gk:.2f}x")


if __name__ == "__main__":
    main()
