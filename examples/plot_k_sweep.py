"""
One pass over every k against GridSearchCV
==========================================

Choosing k for a k-nearest-neighbour classifier by cross-validation usually means refitting
and re-searching once per candidate k. :func:`gpuknn.model_selection.cross_validate_k`
searches each fold once for the largest k and derives the votes of every smaller k, for
both weightings, from that single neighbour list. This example runs the sweep over
k = 1..30 on scikit-learn's digits, plots the cross-validated accuracy against k and times
it against scikit-learn's ``GridSearchCV`` on exactly the same folds.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier

from gpuknn.model_selection import StratifiedKFold, cross_validate_k

X, y = load_digits(return_X_y=True)
ks = list(range(1, 31))
weights = ["uniform", "distance"]

# %%
# The sweep
# ---------
# The splitter draws its folds on the host, so we can hand the very same (train, test)
# index pairs to scikit-learn below. The result is a tidy table: one row per
# (fold, weighting, k); ``summary()`` averages over the folds.
cv = StratifiedKFold(5, shuffle=True, random_state=0)
folds = list(cv.split(X, y))

t0 = time.perf_counter()
table = cross_validate_k(X, y, ks, cv=cv, weights=weights)
t_gpuknn = time.perf_counter() - t0
summary = table.summary()  # mean and std over folds for every (weights, k)
best_uniform = max((r for r in summary if r["weights"] == "uniform"), key=lambda r: r["accuracy_mean"])
best = table.best("accuracy")
print(f"gpuknn, 30 k x 2 weightings: {t_gpuknn:.2f} s")
print(f"  best uniform k = {best_uniform['k']}, CV accuracy {best_uniform['accuracy_mean']:.4f}")
print(f"  best overall: k = {best['k']} ({best['weights']}), CV accuracy {best['accuracy_mean']:.4f}")

# %%
# The same grid with GridSearchCV
# -------------------------------
# ``algorithm="brute"`` makes scikit-learn do an exact search too, and ``cv=folds`` reuses
# the folds above, so both tools average the same five accuracies per k. GridSearchCV
# refits and searches once per (k, fold), so we only give it the uniform weighting: half
# the settings gpuknn scored above.
grid = GridSearchCV(KNeighborsClassifier(algorithm="brute"), {"n_neighbors": ks}, cv=folds, scoring="accuracy")
t0 = time.perf_counter()
grid.fit(X, y)
t_sklearn = time.perf_counter() - t0
print(f"GridSearchCV, 30 k x 1 weighting: {t_sklearn:.2f} s")
print(f"  best k = {grid.best_params_['n_neighbors']}, CV accuracy {grid.best_score_:.4f}")
print(f"time ratio GridSearchCV / gpuknn: {t_sklearn / t_gpuknn:.0f} x (gpuknn scored twice the settings)")
ours = np.array([r["accuracy_mean"] for r in summary if r["weights"] == "uniform"])
print(f"largest difference in mean CV accuracy over k: {np.abs(ours - grid.cv_results_['mean_test_score']).max():.4f}")

# %%
# Accuracy against k
# ------------------
# Digits are easy for kNN, so accuracy peaks at a small k and declines slowly; distance
# weighting softens the decline because far neighbours count less. The crosses should sit
# on the uniform curve; digits have integer pixels, so equal distances are common, and
# gpuknn always breaks them towards the lower training index while scikit-learn's brute
# force does not promise an order, which can move a fold's accuracy by a sample or two.
fig, ax = plt.subplots()
for w, marker in zip(weights, ["o", "s"]):
    rows = [r for r in summary if r["weights"] == w]
    mean = np.array([r["accuracy_mean"] for r in rows])
    std = np.array([r["accuracy_std"] for r in rows])
    ax.plot(ks, mean, marker=marker, markersize=3, label=f"gpuknn, {w}")
    ax.fill_between(ks, mean - std, mean + std, alpha=0.15)
ax.plot(
    ks,
    grid.cv_results_["mean_test_score"],
    linestyle="none",
    marker="x",
    color="k",
    markersize=4,
    label="GridSearchCV, uniform",
)
ax.set_xlabel("k (number of neighbours)")
ax.set_ylabel("5-fold CV accuracy")
ax.set_title("Digits: cross-validated accuracy for every k")
ax.legend()

# %%
# The same call runs on a CuPy array or a torch tensor (on the GPU when the data are
# there); the folds and the table stay on the host.
