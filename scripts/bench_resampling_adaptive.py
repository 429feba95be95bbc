"""ADASYN and BorderlineSMOTE: gpuknn vs imbalanced-learn on the same seeded data, same run.

Usage: python scripts/bench_resampling_adaptive.py [--rows 100000] [--d 50] [--minority 0.05]
                                                   [--repeat 2] [--seed 0]
Data: ``gpuknn.datasets.make_gaussian_classes`` (float64, NumPy), minority = positives.
Prints wall times (the two libraries alternate, best of --repeat each), the ratio
imblearn / gpuknn, and the rows out of each library (equal counts expected).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuknn._backend import to_numpy
from gpuknn.datasets import make_gaussian_classes
from gpuknn.resampling.adaptive import ADASYN, BorderlineSMOTE


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--minority", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    from imblearn import over_sampling as imb

    X, y = make_gaussian_classes(
        a.rows, n_features=a.d, centers_distance=2.0, positive_fraction=a.minority, random_state=a.seed
    )
    X, y = to_numpy(X).astype(np.float64), to_numpy(y).astype(np.int64)
    print(f"data: {a.rows} x {a.d} float64, {100 * a.minority:g} % minority ({int(y.sum())} rows)")
    for name, ours, ref in [
        ("ADASYN (k=5)", ADASYN(random_state=0), imb.ADASYN(random_state=0)),
        ("BorderlineSMOTE-1 (k=5, m=10)", BorderlineSMOTE(random_state=0), imb.BorderlineSMOTE(random_state=0)),
        (
            "BorderlineSMOTE-2 (k=5, m=10)",
            BorderlineSMOTE(kind="borderline-2", random_state=0),
            imb.BorderlineSMOTE(kind="borderline-2", random_state=0),
        ),
    ]:
        # Alternate, best of --repeat each (scikit-learn's OpenMP threads spin a while after a call).
        t_ref = t_our = float("inf")
        for _ in range(max(1, a.repeat)):
            t, (Xo, yo) = _timed(lambda ours=ours: ours.fit_resample(X, y))
            t_our = min(t_our, t)
            t, (Xr, yr) = _timed(lambda ref=ref: ref.fit_resample(X, y))
            t_ref = min(t_ref, t)
        same = np.array_equal(np.bincount(yr), np.bincount(to_numpy(yo)))
        print(
            f"{name:30s} imblearn {t_ref:8.2f} s   gpuknn {t_our:8.2f} s   ratio {t_ref / t_our:6.2f}x   "
            f"rows out {Xr.shape[0]} / {to_numpy(Xo).shape[0]}   class counts equal: {same}"
        )


if __name__ == "__main__":
    main()
