"""
One answer everywhere: exact, reproducible neighbour lists
==========================================================

Fast kNN engines compute distances in float32 tiles with the GEMM identity
``|q|^2 + |r|^2 - 2 q.r``, whose rounding can swap two references at nearly the same
distance, and they break exact ties however the selection happens to run. Then the lists
change with the tile size, the thread count or the device. :func:`gpuknn.kneighbors` lets
the tiles only nominate candidates and orders them by exact distance, equal distances going
to the lower reference index. This example checks that promise on float32 data full of
exact duplicates and near ties, against a float64 brute-force oracle.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.spatial.distance import cdist
from sklearn.datasets import load_digits

import gpuknn

# %%
# Data built to be awkward
# ------------------------
# Digits have integer pixels, so many distances are exactly equal. We append exact copies
# of 200 rows and near copies (one pixel moved by 1e-3) of 200 others, and add 300 to every
# value: a common offset changes no distance, but it makes the squared norms in the GEMM
# identity large, so their float32 rounding swamps small differences between distances.
rng = np.random.default_rng(0)
X = load_digits().data.astype(np.float32)
dup = rng.choice(len(X), 200, replace=False)
near = X[rng.choice(len(X), 200, replace=False)].copy()
near[np.arange(200), rng.integers(0, 64, 200)] += np.float32(1e-3)
R = np.concatenate([X, X[dup], near]) + np.float32(300)
Q = R[:500]
k = 10

# %%
# The oracle: float64 distances of the same float32 values, computed directly as sums of
# squared differences, and a stable sort, which keeps the lower index first on ties.
D64 = cdist(Q.astype(np.float64), R.astype(np.float64), "sqeuclidean")
oracle = np.argsort(D64, axis=1, kind="stable")[:, :k]

# A plain float32 GEMM-form search, for contrast, without and with the offset (removing
# it is exact in float32, so both searches have the same true answer).
for offset in [0, 300]:
    Qo, Ro = Q - np.float32(300 - offset), R - np.float32(300 - offset)
    D32 = (Qo * Qo).sum(1)[:, None] + (Ro * Ro).sum(1)[None, :] - 2 * Qo @ Ro.T
    naive = np.argsort(D32, axis=1, kind="stable")[:, :k]
    print(
        f"plain float32 GEMM + sort, offset {offset:3d}: "
        f"{np.any(naive != oracle, axis=1).sum()} of {len(Q)} lists differ from the oracle"
    )

# %%
# gpuknn with different memory budgets
# ------------------------------------
# ``working_memory`` (MiB, as in scikit-learn) changes the tiling (a small budget cuts
# queries and references into many tiles); the lists must not change, and the offset must
# not matter.
for wm in [0.25, 1, 16, None]:
    d, i = gpuknn.kneighbors(Q, R, k, working_memory=wm)
    label = "default" if wm is None else f"{wm:g} MiB"
    print(f"working_memory {label:>9s}: lists equal to the oracle: {np.array_equal(i, oracle)}")

# %%
# The same call on another array library gives the same lists; ``array_api_strict`` is
# the array-API reference implementation (CuPy arrays and torch tensors work the same way).
try:
    import array_api_strict as xps
except ImportError:
    print("array_api_strict is not installed; skipping")
else:
    _, i_strict = gpuknn.kneighbors(xps.asarray(Q), xps.asarray(R), k)
    print("array_api_strict lists equal to the oracle:", np.array_equal(np.asarray(i_strict), oracle))

# %%
# How close are the calls?
# ------------------------
# The gaps between consecutive distances in each list show what had to be decided: exact
# ties (gap 0, settled by the index rule) and near ties smaller than the rounding of a
# float32 GEMM at these magnitudes, besides the ordinary, well-separated neighbours.
gaps = np.diff(np.asarray(d, dtype=np.float64), axis=1).ravel()
print(
    f"{int((gaps == 0).sum())} of {gaps.size} consecutive pairs are exact ties, "
    f"{int(((gaps > 0) & (gaps < 1e-2)).sum())} are closer than 1e-2"
)
fig, ax = plt.subplots()
ax.hist(np.log10(gaps[gaps > 0]), bins=40, color="steelblue")
ax.set_xlabel("log10 of the distance gap between consecutive neighbours")
ax.set_ylabel("number of neighbour pairs")
ax.set_title(f"{k} nearest neighbours of {len(Q)} float32 digits (exact ties left out)")
