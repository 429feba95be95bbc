"""Cluster-validity study: k-means on 5 separated 3-D Gaussian groups, K = 1..k_max.

For every K the study records all external indices against the generating labels, the
internal and relative indices, fuzzy c-means validity (PC, Xie–Beni), the gap statistic,
the CPCC of average linkage, and a Monte-Carlo structure test against a uniform null in
the data's bounding box. It returns plain data (JSON-ready); the CLI and the script
print and save.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy
from ..cluster import FuzzyCMeans, KMeans
from ..metrics import (
    adjusted_rand_score,
    cophenetic_correlation,
    davies_bouldin_score,
    dunn_index,
    fowlkes_mallows_score,
    gap_statistic,
    hubert_gamma,
    pair_jaccard_score,
    partition_coefficient,
    rand_score,
    sd_scat_dis,
    xie_beni_index,
)

__all__ = ["make_groups", "run_cluster_study", "format_table", "INDEX_INFO"]

# index name -> (short description, how the best K is chosen)
INDEX_INFO: dict[str, tuple[str, str]] = {
    "rand": ("Rand index vs generating labels", "max"),
    "adjusted_rand": ("adjusted Rand index", "max"),
    "pair_jaccard": ("pair-counting Jaccard", "max"),
    "fowlkes_mallows": ("Fowlkes–Mallows", "max"),
    "hubert_gamma_external": ("normalised Γ between partitions", "max"),
    "hubert_gamma_internal": ("normalised Γ, distances vs partition", "max"),
    "within_ss": ("within-cluster sum of squares (k-means inertia)", "none"),
    "dunn": ("Dunn index", "max"),
    "davies_bouldin": ("Davies–Bouldin", "min"),
    "sd": ("Halkidi SD, α = Dis(k_max)", "min"),
    "partition_coefficient": ("fuzzy c-means partition coefficient", "max"),
    "xie_beni": ("fuzzy c-means Xie–Beni", "min"),
    "gap": ("gap statistic (one-standard-error rule)", "1-SE"),
}

CENTRES = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0], [10.0, 10.0, 10.0]])


def make_groups(*, n_per_group: int = 60, spread: float = 1.0, seed: int = 0, xp: Any = None) -> tuple[Any, np.ndarray]:
    """Five spherical Gaussian groups (sd ``spread``) around well-separated 3-D centres.

    Returns ``X`` (5 n_per_group, 3) in ``xp`` (NumPy by default) and the host int labels.
    """
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(c, spread, (n_per_group, 3)) for c in CENTRES])
    labels = np.repeat(np.arange(len(CENTRES)), n_per_group)
    return (X if xp is None else from_numpy(X, xp)), labels


def _best(values: list, rule: str, ks: list[int]) -> int | None:
    pairs = [(v, k) for v, k in zip(values, ks) if v is not None and math.isfinite(v)]
    if not pairs or rule not in ("max", "min"):
        return None
    v_best = max(v for v, _ in pairs) if rule == "max" else min(v for v, _ in pairs)
    return min(k for v, k in pairs if v == v_best)  # ties -> smaller K


def _null_test(X: Any, labels_obs: Any, k: int, B: int, rng: np.random.Generator, xp: Any) -> dict:
    """Monte-Carlo test of "no cluster structure": uniform data in X's bounding box.

    Statistics: the K-means within-SS (small = structure) and the normalised Hubert Γ of
    the K-means partition (large = structure). p = (1 + #{null at least as extreme}) / (B + 1).
    """
    lo, hi = to_numpy(xp.min(X, axis=0)), to_numpy(xp.max(X, axis=0))
    seed = int(rng.integers(2**31 - 1))
    w_obs = KMeans(k, n_init=3, random_state=seed).fit(X).inertia_
    g_obs = hubert_gamma(X, labels_obs)
    w_null, g_null = [], []
    for _ in range(B):
        Z = from_numpy(rng.uniform(lo, hi, size=tuple(X.shape)), xp)
        km = KMeans(k, n_init=3, random_state=int(rng.integers(2**31 - 1))).fit(Z)
        w_null.append(km.inertia_)
        g_null.append(hubert_gamma(Z, km.labels_))
    w_null, g_null = np.asarray(w_null), np.asarray(g_null)
    return {
        "k": k,
        "B": B,
        "within_ss_observed": w_obs,
        "within_ss_null_mean": float(w_null.mean()),
        "within_ss_null_min": float(w_null.min()),
        "p_within_ss": float((1 + np.sum(w_null <= w_obs)) / (B + 1)),
        "gamma_observed": g_obs,
        "gamma_null_mean": float(g_null.mean()),
        "gamma_null_max": float(g_null.max()),
        "p_gamma": float((1 + np.sum(g_null >= g_obs)) / (B + 1)),
    }


def run_cluster_study(
    *,
    seed: int = 0,
    k_max: int = 10,
    n_per_group: int = 60,
    n_init: int = 10,
    B_gap: int = 10,
    B_null: int = 99,
    xp: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Run the study and return a JSON-ready dict.

    Keys: ``config``; ``k`` (1..k_max); ``indices`` {name: [value or None per K]} (None
    where the index is undefined, e.g. K = 1 for Dunn); ``chosen_k`` {name: K};
    ``gap`` {gap, s_k, chosen}; ``cpcc`` {method: value}; ``structure_test``; ``labels``
    (generating labels) and ``X`` (the data, host lists) for plotting.

    ``progress`` receives one short line per step (the library never prints).
    Complexity: k_max k-means and fuzzy fits, k_max (B_gap + 1) gap fits, B_null null fits.
    """
    say = progress or (lambda _msg: None)
    X, truth = make_groups(n_per_group=n_per_group, seed=seed, xp=xp)
    xp = array_namespace(X)
    ks = list(range(1, int(k_max) + 1))
    idx: dict[str, list] = {name: [] for name in INDEX_INFO if name != "gap"}
    partitions = []
    for k in ks:
        say(f"k-means K={k}")
        km = KMeans(k, n_init=n_init, random_state=seed).fit(X)
        lab = to_numpy(km.labels_)
        partitions.append(lab)
        idx["rand"].append(rand_score(truth, lab))
        idx["adjusted_rand"].append(adjusted_rand_score(truth, lab))
        idx["pair_jaccard"].append(pair_jaccard_score(truth, lab))
        idx["fowlkes_mallows"].append(fowlkes_mallows_score(truth, lab))
        idx["hubert_gamma_external"].append(hubert_gamma(truth, lab))
        idx["hubert_gamma_internal"].append(hubert_gamma(X, km.labels_))
        idx["within_ss"].append(km.inertia_)
        multi = k >= 2
        idx["dunn"].append(dunn_index(X, km.labels_) if multi else None)
        idx["davies_bouldin"].append(davies_bouldin_score(X, km.labels_) if multi else None)
        if multi:
            fcm = FuzzyCMeans(k, random_state=seed, max_iter=1000, tol=1e-6).fit(X)
            idx["partition_coefficient"].append(partition_coefficient(fcm.u_))
            idx["xie_beni"].append(xie_beni_index(X, fcm.u_, fcm.cluster_centers_))
        else:
            idx["partition_coefficient"].append(None)
            idx["xie_beni"].append(None)
    say("SD index")
    alpha = sd_scat_dis(X, partitions[-1])[1]  # α = Dis(k_max)
    idx["sd"] = [None] + [alpha * s + d for s, d in (sd_scat_dis(X, p) for p in partitions[1:])]
    say(f"gap statistic (B={B_gap})")
    gap = gap_statistic(X, k_range=ks, B=B_gap, random_state=seed)
    say("cophenetic correlation")
    cpcc = {m: cophenetic_correlation(X, method=m) for m in ("single", "complete", "average", "ward")}
    say(f"structure test against a uniform null (B={B_null})")
    test = _null_test(
        X, partitions[min(4, len(ks) - 1)], min(5, ks[-1]), int(B_null), np.random.default_rng(seed + 1), xp
    )
    chosen = {name: _best(vals, INDEX_INFO[name][1], ks) for name, vals in idx.items()}
    chosen = {k: v for k, v in chosen.items() if v is not None}
    chosen["gap"] = int(gap.n_clusters)
    return {
        "config": {
            "seed": seed,
            "k_max": k_max,
            "n_per_group": n_per_group,
            "n_groups": len(CENTRES),
            "n_init": n_init,
            "B_gap": B_gap,
            "B_null": B_null,
            "sd_alpha": alpha,
        },
        "k": ks,
        "indices": idx,
        "chosen_k": chosen,
        "gap": {"gap": gap.gap.tolist(), "s_k": gap.s_k.tolist(), "chosen": int(gap.n_clusters)},
        "cpcc": cpcc,
        "structure_test": test,
        "labels": truth.tolist(),
        "X": to_numpy(X).tolist(),
    }


def format_table(result: dict, *, fmt: str = "markdown") -> str:
    """All indices per K as a markdown or CSV table, plus the chosen-K row."""
    names = list(result["indices"]) + ["gap"]
    cols = {**result["indices"], "gap": result["gap"]["gap"]}
    rows = [[str(k)] + [_fmt(cols[n][i]) for n in names] for i, k in enumerate(result["k"])]
    chosen = ["best K"] + [str(result["chosen_k"].get(n, "–")) for n in names]
    header = ["K"] + names
    if fmt == "csv":
        return "\n".join(",".join(r) for r in [header] + rows + [chosen]) + "\n"
    if fmt != "markdown":
        raise ValueError(f"fmt must be 'markdown' or 'csv', got {fmt!r}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows + [[f"**{c}**" for c in chosen]]]
    return "\n".join(lines) + "\n"


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.4e}"
    return str(v)
