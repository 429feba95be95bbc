"""Cluster-validity study: k-means on 5 separated 3-D Gaussian groups, K = 1..k_max.

For every K the study records all external indices against the generating labels, the
internal and relative indices, fuzzy c-means validity (PC, Xie–Beni), the gap statistic,
the CPCC of average linkage, and, for every K >= 2, a Monte-Carlo structure test against a
uniform null in the data's bounding box and/or a normal null with the data's mean and
covariance. It returns plain data (JSON-ready); the CLI and the script print and save.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy
from ..cluster import FuzzyCMeans, KMeans
from ..errors import InvalidInputError
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
from ..metrics.gap import GAP_RULES  # the rules of choose_gap_k

__all__ = ["make_groups", "run_cluster_study", "format_table", "format_report", "INDEX_INFO", "NULLS", "GAP_RULES"]

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
    "gap": ("gap statistic (one-standard-error rule or maximum: `gap_rule`)", "1-SE"),
}

#: Null models of the structure test (see :func:`run_cluster_study`).
NULLS = ("uniform", "normal")
_RULE_LABEL = {"1se": "1-SE", "max": "max"}

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


def _null_sampler(X: Any, null: str, rng: np.random.Generator, xp: Any) -> Callable[[], Any]:
    """Function drawing one null data set of X's shape (host draws from ``rng``, then ``xp``).

    ``"uniform"``: independent uniform coordinates in X's bounding box. ``"normal"``: a
    multivariate normal with X's mean and covariance (``np.cov``, divisor n − 1).
    """
    Xh = to_numpy(X).astype(np.float64)
    shape = tuple(Xh.shape)
    if null == "uniform":
        lo, hi = Xh.min(axis=0), Xh.max(axis=0)
        return lambda: from_numpy(rng.uniform(lo, hi, size=shape), xp)
    mean, cov = Xh.mean(axis=0), np.cov(Xh, rowvar=False)
    return lambda: from_numpy(rng.multivariate_normal(mean, cov, size=shape[0], method="eigh"), xp)


def _null_test(
    X: Any, partitions: list, ks: list[int], B: int, null: str, rng: np.random.Generator, xp: Any, seed: int
) -> list[dict]:
    """Monte-Carlo test of "no cluster structure" at every K of ``ks`` (K >= 2) under ``null``.

    B null data sets are drawn once and each is clustered at every K. Statistics: the
    K-means within-SS (small = structure; data and null sets alike fitted by
    ``KMeans(K, n_init=3)``, the data's with ``random_state=seed`` so that the observed value
    does not depend on the null) and the normalised Hubert Γ of the partition (large =
    structure; the study's partition for the data). p = (1 + #{null at least as extreme}) / (B + 1).
    """
    draw = _null_sampler(X, null, rng, xp)
    sets = [draw() for _ in range(B)]
    rows = []
    for k, lab in zip(ks, partitions):
        if k < 2:
            continue
        w_obs = KMeans(k, n_init=3, random_state=seed).fit(X).inertia_
        g_obs = hubert_gamma(X, lab)
        w_null, g_null = [], []
        for Z in sets:
            km = KMeans(k, n_init=3, random_state=int(rng.integers(2**31 - 1))).fit(Z)
            w_null.append(km.inertia_)
            g_null.append(hubert_gamma(Z, km.labels_))
        w_null, g_null = np.asarray(w_null), np.asarray(g_null)
        rows.append(
            {
                "null": null,
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
        )
    return rows


def run_cluster_study(
    *,
    seed: int = 0,
    k_max: int = 10,
    n_per_group: int = 60,
    n_init: int = 10,
    B_gap: int = 10,
    B_null: int = 99,
    null: str | Sequence[str] = "uniform",
    gap_rule: str = "1se",
    xp: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Run the study and return a JSON-ready dict.

    Keys: ``config``; ``k`` (1..k_max); ``indices`` {name: [value or None per K]} (None
    where the index is undefined, e.g. K = 1 for Dunn); ``chosen_k`` {name: K};
    ``gap`` {gap, s_k, rule, chosen (by ``gap_rule``), chosen_by_rule {"1se": K, "max": K}};
    ``cpcc`` {method: value}; ``structure_test`` {B, nulls, tests: [one row per null and
    K >= 2: null, k, within-SS and Γ observed / null mean / null extreme, p-values]};
    ``labels`` (generating labels) and ``X`` (the data, host lists) for plotting.

    ``null`` names the structure test's null model(s), one of :data:`NULLS` or a sequence
    of them: ``"uniform"`` draws each coordinate uniformly in the data's bounding box,
    ``"normal"`` draws from the multivariate normal with the data's mean and covariance
    (divisor n − 1). Null sets are drawn on the host from
    ``numpy.random.default_rng([seed, 1 + NULLS.index(null)])`` (one stream per null; the
    k-means seeds of the null fits come from it too; the data's own fit uses ``seed``), so
    results are reproducible. K = 1 is not
    tested: a single cluster has no Γ and its within-SS is only the total spread.
    ``gap_rule`` ("1se" or "max") picks the gap statistic's K for ``chosen_k["gap"]``;
    both rules' K are always in ``gap["chosen_by_rule"]``.

    ``progress`` receives one short line per step (the library never prints).
    Complexity: k_max k-means and fuzzy fits, k_max (B_gap + 1) gap fits, and
    len(nulls) · B_null · (k_max − 1) null fits.
    """
    nulls = [null] if isinstance(null, str) else list(null)
    if not nulls or any(n not in NULLS for n in nulls) or len(set(nulls)) != len(nulls):
        raise InvalidInputError(f"null must be one of {NULLS} or a sequence of distinct ones, got {null!r}")
    if gap_rule not in GAP_RULES:
        raise InvalidInputError(f"gap_rule must be one of {GAP_RULES}, got {gap_rule!r}")
    if int(B_null) < 1:
        raise InvalidInputError(f"B_null must be >= 1, got {B_null}")
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
    gap = gap_statistic(X, k_range=ks, B=B_gap, random_state=seed, rule=gap_rule)
    say("cophenetic correlation")
    cpcc = {m: cophenetic_correlation(X, method=m) for m in ("single", "complete", "average", "ward")}
    tests: list[dict] = []
    for name in nulls:
        say(f"structure test against a {name} null, K = 2..{ks[-1]} (B={B_null})")
        rng = np.random.default_rng([seed, 1 + NULLS.index(name)])
        tests += _null_test(X, partitions, ks, int(B_null), name, rng, xp, seed)
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
            "null": nulls,
            "gap_rule": gap_rule,
            "sd_alpha": alpha,
        },
        "k": ks,
        "indices": idx,
        "chosen_k": chosen,
        "gap": {
            "gap": gap.gap.tolist(),
            "s_k": gap.s_k.tolist(),
            "rule": gap_rule,
            "chosen": int(gap.n_clusters),
            "chosen_by_rule": {r: int(gap.choose(r)) for r in GAP_RULES},
        },
        "cpcc": cpcc,
        "structure_test": {"B": int(B_null), "nulls": nulls, "tests": tests},
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


def format_report(result: dict) -> str:
    """The study's markdown report: the index table, each index's meaning, rule and chosen K,
    the CPCC, and the structure test per null model and K (what ``gpuknn cluster-study``
    writes to ``cluster_study.md``, and docs/clustering.md shows)."""
    t = result["structure_test"]
    gap = result["gap"]
    lines = [
        format_table(result, fmt="markdown"),
        "",
        "| index | meaning | best K by | chosen K |",
        "|---|---|---|---:|",
    ]
    for name, (desc, rule) in INDEX_INFO.items():
        if name == "gap":
            rule = {"1se": "1-SE", "max": "max"}[gap["rule"]]
        lines.append(f"| {name} | {desc} | {rule} | {result['chosen_k'].get(name, '–')} |")
    other = "max" if gap["rule"] == "1se" else "1se"
    lines.append(
        f"| gap ({other}) | the same gap table, the other rule | {'max' if other == 'max' else '1-SE'} | "
        f"{gap['chosen_by_rule'][other]} |"
    )
    B = t["B"]
    lines += [
        "",
        "CPCC (cophenetic correlation): " + ", ".join(f"{m} {v:.4f}" for m, v in result["cpcc"].items()) + ".",
        "",
        f"Structure test, B = {B} null data sets per null model (smallest possible p = 1/(B+1) = {1 / (B + 1):.3g}):",
        "",
        "| null | K | within-SS | null mean (min) | p(within-SS) | Γ | null mean (max) | p(Γ) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in t["tests"]:
        lines.append(
            f"| {r['null']} | {r['k']} | {r['within_ss_observed']:.1f} | "
            f"{r['within_ss_null_mean']:.1f} ({r['within_ss_null_min']:.1f}) | {r['p_within_ss']:.3g} | "
            f"{r['gamma_observed']:.3f} | {r['gamma_null_mean']:.3f} ({r['gamma_null_max']:.3f}) | {r['p_gamma']:.3g} |"
        )
    lines += ["", f"Configuration: {result['config']}."]
    return "\n".join(lines)
