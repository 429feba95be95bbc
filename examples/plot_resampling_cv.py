"""
Resampling imbalanced data inside cross-validation
==================================================

With few positives, kNN's neighbourhoods are dominated by the majority class, and
resampling the training data (oversampling positives, cleaning or undersampling
negatives) is the usual remedy. It must happen *inside* each training fold: resampling
before splitting lets synthetic or cleaned points carry information from the validation
rows. :func:`gpuknn.resampling.cross_validate_resampled` splits first, resamples only the
training part and scores the untouched validation rows by ROC AUC with kNN scorers (the
share of positive neighbours) from one neighbour search per fold.
"""

import matplotlib.pyplot as plt
import numpy as np

from gpuknn.datasets import make_gaussian_classes
from gpuknn.model_selection import StratifiedKFold
from gpuknn.resampling import (
    SMOTE,
    EditedNearestNeighbours,
    KNNScorer,
    RandomUnderSampler,
    TomekLinks,
    cross_validate_resampled,
)

# %%
# Overlapping, imbalanced classes
# -------------------------------
# Two Gaussian classes in 5 dimensions whose means are 2 standard deviations apart, with
# 5 % positives: imbalance hurts kNN most when the classes overlap.
X, y = make_gaussian_classes(2000, n_features=5, centers_distance=2.0, positive_fraction=0.05, random_state=0)
print(f"{X.shape[0]} rows, {int(y.sum())} positives")

samplers = {
    "none": None,
    "random under": RandomUnderSampler(random_state=0),
    "Tomek links": TomekLinks(),
    "ENN": EditedNearestNeighbours(),
    "SMOTE": SMOTE(random_state=0),
}
scorers = [KNNScorer(5, "uniform"), KNNScorer(15, "distance")]
cv = StratifiedKFold(10, shuffle=True, random_state=0)  # the same folds for every sampler

# %%
# One cross-validation per sampler
# --------------------------------
# The result holds the AUC of every fold and scorer, plus ``BordaRank``: the Borda
# combination of the scorers' rankings. ``train_counts`` records the class sizes each
# fold trained on after resampling.
results = {name: cross_validate_resampled(X, y, sampler=s, scorers=scorers, cv=cv) for name, s in samplers.items()}
for name, r in results.items():
    neg, pos = r.train_counts.mean(axis=0)
    aucs = ", ".join(f"{n} {m:.3f}" for n, m in r.mean_auc.items())
    print(f"{name:13s} trains on {neg:6.0f} neg / {pos:5.0f} pos; AUC: {aucs}")

# %%
# Mean AUC per sampler
# --------------------
# Bars are the mean over the 10 folds, whiskers one standard deviation. Undersampling and
# cleaning change which negatives vote; SMOTE adds synthetic positives between existing
# ones. The folds are shared, so every sampler is judged on the same validation rows and
# the differences between bars are not differences between splits.
names = results["none"].names
width = 0.8 / len(names)
x = np.arange(len(samplers))
fig, ax = plt.subplots(figsize=(7, 4))
for j, scorer in enumerate(names):
    means = [results[s].mean_auc[scorer] for s in samplers]
    stds = [results[s].std_auc[scorer] for s in samplers]
    ax.bar(x + (j - (len(names) - 1) / 2) * width, means, width, yerr=stds, capsize=2, label=scorer)
ax.set_xticks(x, labels=list(samplers))
ax.set_ylim(0.5, 1.0)
ax.set_xlabel("sampler applied to each training fold")
ax.set_ylabel("ROC AUC, 10-fold CV")
ax.set_title("5 % positives, overlapping classes")
ax.legend(loc="lower right")
