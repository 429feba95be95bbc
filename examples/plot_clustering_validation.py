"""
How many clusters? Validity indices for k-means
===============================================

k-means needs the number of clusters K up front. Relative validity indices score each
partition from the data alone and suggest a K: Davies-Bouldin (lower is better), Dunn
(higher is better) and Tibshirani's gap statistic (which compares the within-cluster
dispersion with that of uniform reference data). When the true groups are known, an
external index such as the adjusted Rand index says how well a partition recovers them.
This example runs :class:`gpuknn.KMeans` for K = 2..7 on four Gaussian groups.
"""

import matplotlib.pyplot as plt
import numpy as np

from gpuknn.cluster import KMeans
from gpuknn.metrics import adjusted_rand_score, davies_bouldin_score, dunn_index, gap_statistic

# %%
# Four groups in the plane
# ------------------------
# 75 points around each of four centres with unit standard deviation; the centres are
# far enough apart that the groups barely touch.
rng = np.random.default_rng(0)
centres = np.array([[0.0, 0.0], [7.0, 0.0], [0.0, 7.0], [7.0, 7.0]])
truth = np.repeat(np.arange(4), 75)
X = centres[truth] + rng.standard_normal((truth.size, 2))

# %%
# Score every K
# -------------
# ``n_init=10`` seeded restarts keep the lowest-inertia run, so a bad k-means++ start does
# not decide the comparison.
Ks = list(range(2, 8))
db, dunn, ari, labels = [], [], [], {}
for K in Ks:
    labels[K] = KMeans(K, n_init=10, random_state=0).fit(X).labels_
    db.append(davies_bouldin_score(X, labels[K]))
    dunn.append(dunn_index(X, labels[K]))
    ari.append(adjusted_rand_score(truth, labels[K]))
gap = gap_statistic(X, k_range=range(1, 8), B=10, random_state=0)

print("K chosen by Davies-Bouldin (min):", Ks[int(np.argmin(db))])
print("K chosen by Dunn (max):          ", Ks[int(np.argmax(dunn))])
print("K chosen by the gap statistic:   ", gap.n_clusters)
print("K with the best adjusted Rand:   ", Ks[int(np.argmax(ari))], f"(ARI {max(ari):.3f})")

# %%
# The indices against K
# ---------------------
# The relative indices need no labels; the adjusted Rand index (against the generating
# groups) shows what they are trying to find. The gap statistic picks the smallest K whose
# gap is within one standard error of the next K's.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
ax1.plot(Ks, db, "o-", label="Davies-Bouldin (min)")
ax1.plot(Ks, dunn, "s-", label="Dunn (max)")
ax1.plot(Ks, ari, "^--", color="k", label="adjusted Rand vs truth")
ax1.set_xlabel("K (number of clusters)")
ax1.set_ylabel("index value")
ax1.set_title("Relative and external indices")
ax1.legend()
ax2.errorbar(gap.k, gap.gap, yerr=gap.s_k, marker="o", capsize=3)
ax2.axvline(gap.n_clusters, color="gray", linestyle=":", label=f"chosen K = {gap.n_clusters}")
ax2.set_xlabel("K (number of clusters)")
ax2.set_ylabel("Gap(K)")
ax2.set_title("Gap statistic (B = 10 uniform references)")
ax2.legend()
fig.tight_layout()

# %%
# The partition Davies-Bouldin picks, coloured by cluster:
best_K = Ks[int(np.argmin(db))]
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(X[:, 0], X[:, 1], c=labels[best_K], s=12, cmap="tab10")
ax.set_xlabel("x0")
ax.set_ylabel("x1")
ax.set_title(f"k-means, K = {best_K}")
