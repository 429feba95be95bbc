"""The tables of the kNN/PCA study: fold scores aggregated per setting, the choice of the
best setting, and an in-memory journal for runs without a file (helpers of
:mod:`gpuknn.studies.knn_sweep`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._backend import to_numpy

__all__ = ["choose", "aggregate", "lists", "host_labels", "MemoryJournal"]


def choose(heats: dict[str, dict]) -> dict:
    best = None
    for mi, (m, heat) in enumerate(heats.items()):  # the metric listed first wins exact ties
        for wi, w in enumerate(heat["weights"]):  # then uniform, listed first
            for pi, p in enumerate(heat["ps"]):
                for ki, k in enumerate(heat["ks"]):
                    score = heat["mean"][w][pi][ki]
                    key = (-score, mi, wi, p, k)
                    if best is None or key < best[0]:
                        best = (
                            key,
                            {
                                "metric": m,
                                "k": k,
                                "p": p,
                                "weights": w,
                                "cv_score": score,
                                "cv_std": heat["std"][w][pi][ki],
                            },
                        )
    out = best[1]
    if heats[out["metric"]].get("scoring", "accuracy") == "accuracy":
        out["cv_accuracy"] = out["cv_score"]
    return out


def aggregate(fold_scores: list[dict], ks: list[int], scoring: str) -> dict:
    out = {"ks": ks}
    for w in fold_scores[0]:
        acc = np.asarray([fs[w][scoring] for fs in fold_scores])  # (folds, len(ks))
        out[w] = {
            "mean": acc.mean(0).tolist(),
            "std": acc.std(0).tolist(),
            "min": acc.min(0).tolist(),
            "max": acc.max(0).tolist(),
            "folds": acc.tolist(),
        }
    return out


def lists(scores: dict) -> dict:
    return {w: {m: np.asarray(v).tolist() for m, v in d.items()} for w, d in scores.items()}


def host_labels(y: Any) -> np.ndarray:
    return to_numpy(y) if hasattr(y, "shape") and not hasattr(y, "iloc") else np.asarray(y)


class MemoryJournal:
    """Journal stand-in when no file is wanted."""

    def __init__(self) -> None:
        self.records: dict[str, dict] = {}

    def get(self, key: str) -> dict | None:
        return self.records.get(key)

    def append(self, key: str, record: dict) -> dict:
        self.records[key] = json.loads(json.dumps({"key": key, **record}))
        return self.records[key]
