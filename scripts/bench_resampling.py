"""ENN and SMOTE: gpuknn vs imbalanced-learn on the same seeded data, same run.

Usage: python scripts/bench_resampling.py [--n 100000] [--d 50] [--minority 0.1] [--float32]
                                         [--repeat 2]
Prints wall times (the two libraries alternate, best of --repeat each), the ratio
imblearn / gpuknn and whether ENN's kept indices agree.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuknn._backend import to_numpy
from gpuknn.resampling import SMOTE, EditedNearestNeighbours


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--minority", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--float32", action="store_true", help="run gpuknn on float32 (imblearn stays float64)")
    a = ap.parse_args()
    from imblearn.over_sampling import SMOTE as ImbSMOTE
    from imblearn.under_sampling import EditedNearestNeighbours as ImbENN

    rng = np.random.default_rng(a.seed)
    n_pos = int(a.minority * a.n)
    X = np.concatenate([rng.standard_normal((a.n - n_pos, a.d)), rng.standard_normal((n_pos, a.d)) + 0.3])
    y = np.r_[np.zeros(a.n - n_pos, dtype=np.int64), np.ones(n_pos, dtype=np.int64)]
    p = rng.permutation(a.n)
    X, y = X[p], y[p]
    Xg = X.astype(np.float32) if a.float32 else X
    print(f"data: {a.n} x {a.d}, {100 * a.minority:g} % minority, gpuknn dtype {Xg.dtype}, imblearn float64")
    for name, ours, ref in [
        ("ENN (k=3, kind_sel='all')", EditedNearestNeighbours(), ImbENN()),
        ("SMOTE (k=5)", SMOTE(random_state=0), ImbSMOTE(random_state=0)),
    ]:
        # Alternate, best of --repeat each: scikit-learn's OpenMP threads keep spinning for a
        # while after a call, which slows whatever runs right after it.
        t_ref = t_our = float("inf")
        for _ in range(max(1, a.repeat)):
            t, (Xo, yo) = _timed(lambda ours=ours: ours.fit_resample(Xg, y))
            t_our = min(t_our, t)
            t, (Xr, yr) = _timed(lambda ref=ref: ref.fit_resample(X, y))
            t_ref = min(t_ref, t)
        print(
            f"{name:28s} imblearn {t_ref:8.2f} s   gpuknn {t_our:8.2f} s   ratio {t_ref / t_our:5.2f}x   "
            f"rows out {Xr.shape[0]} / {to_numpy(Xo).shape[0]}"
        )
        if hasattr(ref, "sample_indices_"):
            same = np.array_equal(ref.sample_indices_, ours.sample_indices_)
            print(f"{'':28s} sample_indices_ identical to imblearn's: {same}")


if __name__ == "__main__":
    main()
