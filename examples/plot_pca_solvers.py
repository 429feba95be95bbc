"""
PCA solvers and the power method
================================

:class:`gpuknn.PCA` diagonalises the covariance matrix with one of three solvers: a dense
``"eigh"`` (the reference), ``"block"`` subspace iteration (GEMMs only, the GPU-friendly
choice when p is well below the number of features) and ``"deflation"`` (the power method
plus Hotelling deflation, one component at a time). This example checks that the three
agree on digits, then shows with :func:`gpuknn.linalg.power_method` why deflation can be
slow: the power method needs about ``1 / (1 - lambda_2 / lambda_1)`` iterations, so it
crawls when the top two eigenvalues are close.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

import gpuknn
from gpuknn.linalg import power_method

X, _ = load_digits(return_X_y=True)

# %%
# Three solvers, one spectrum
# ---------------------------
# The iterative solvers are seeded (``random_state``) so that their start vectors, and
# hence their iteration counts, are reproducible.
ratios = {}
for solver in ["eigh", "block", "deflation"]:
    t0 = time.perf_counter()
    pca = gpuknn.PCA(10, solver=solver, random_state=0).fit(X)
    elapsed = time.perf_counter() - t0
    ratios[solver] = np.asarray(pca.explained_variance_ratio_)
    # n_iter_ is per component: zeros for eigh, the block's count repeated for block
    iters = {"eigh": 0, "block": int(pca.n_iter_[0]), "deflation": int(pca.n_iter_.sum())}[solver]
    print(
        f"{solver:9s}: fit {1e3 * elapsed:6.1f} ms, {iters:4d} iterations, "
        f"converged={pca.converged_}, variance kept {ratios[solver].sum():.4f}"
    )
for solver in ["block", "deflation"]:
    print(f"largest |ratio - eigh ratio| for {solver}: {np.abs(ratios[solver] - ratios['eigh']).max():.2e}")

fig, ax = plt.subplots()
comp = np.arange(1, 11)
ax.bar(comp, ratios["eigh"], color="lightgray", label="eigh")
ax.plot(comp, ratios["block"], "o", label="block")
ax.plot(comp, ratios["deflation"], "x", color="k", label="deflation")
ax.set_xticks(comp)
ax.set_xlabel("principal component")
ax.set_ylabel("explained variance ratio")
ax.set_title("Digits: the leading 10 components by three solvers")
ax.legend()

# %%
# Power-method iterations against the eigen-gap
# ---------------------------------------------
# Matrices ``Q diag(10, 10 - eps, 5, 2, 1) Q^T`` with a random reflection ``Q`` have a
# dominant eigenvalue 10 separated from the next by ``eps``. ``power_method`` takes a
# whole stack of matrices and iterates them together; the per-step contraction of the
# error is ``(10 - eps) / 10``, so the iteration count should grow like ``1 / eps``.
rng = np.random.default_rng(0)
gaps = np.logspace(-2.5, 0, 11)
stack = []
for eps in gaps:
    u = rng.standard_normal(5)
    Q = np.eye(5) - 2 * np.outer(u, u) / (u @ u)  # Householder reflection: orthogonal
    stack.append(Q @ np.diag([10, 10 - eps, 5, 2, 1]) @ Q.T)
res = power_method(np.stack(stack), tol=1e-7, max_iter=200_000, random_state=0)
print("all converged:", bool(np.all(res.converged)))
for eps, it in zip(gaps, res.n_iter):
    print(f"eps = {eps:.4f}: {int(it):6d} iterations")
print("eigenvalue errors below", f"{np.abs(np.asarray(res.eigenvalue) - 10).max():.1e}")

fig, ax = plt.subplots()
ax.loglog(gaps, res.n_iter, "o-", label="power method")
ax.loglog(gaps, 10 / gaps, "--", color="gray", label="reference slope: 10 / eps")
ax.set_xlabel("eigen-gap eps = lambda_1 - lambda_2")
ax.set_ylabel("iterations to tol = 1e-7")
ax.set_title("Power method on 5 x 5 matrices: iterations grow like 1 / gap")
ax.legend()
