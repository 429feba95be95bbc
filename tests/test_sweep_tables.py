"""gpuknn.studies.sweep_tables: fold scores to tables, and the tie rule of the choice."""

import pytest

from gpuknn.studies.sweep_tables import MemoryJournal, aggregate, choose


def _heat(mean_u, mean_d, scoring="accuracy"):
    return {
        "ps": [2, 5],
        "ks": [1, 3],
        "weights": ["uniform", "distance"],
        "scoring": scoring,
        "mean": {"uniform": mean_u, "distance": mean_d},
        "std": {"uniform": [[0.0, 0.0], [0.0, 0.0]], "distance": [[0.0, 0.0], [0.0, 0.0]]},
    }


def test_ties_go_to_the_first_metric_then_uniform_then_smaller_p_and_k():
    tie = [[0.9, 0.9], [0.9, 0.9]]
    best = choose({"cosine": _heat(tie, tie), "euclidean": _heat(tie, tie)})
    assert (best["metric"], best["weights"], best["p"], best["k"]) == ("cosine", "uniform", 2, 1)
    assert best["cv_accuracy"] == best["cv_score"] == 0.9
    best = choose({"cosine": _heat([[0.1, 0.2], [0.3, 0.4]], tie, "macro_f1")})
    assert (best["weights"], best["p"], best["k"]) == ("distance", 2, 1) and "cv_accuracy" not in best


def test_aggregate_and_memory_journal():
    folds = [{"uniform": {"accuracy": [0.5, 1.0]}}, {"uniform": {"accuracy": [1.0, 1.0]}}]
    table = aggregate(folds, [1, 3], "accuracy")
    assert table["uniform"]["mean"] == [0.75, 1.0] and table["uniform"]["min"] == [0.5, 1.0]
    jr = MemoryJournal()
    assert jr.get("a") is None
    assert jr.append("a", {"x": (1, 2)}) == {"key": "a", "x": [1, 2]}  # stored as JSON would be
    with pytest.raises(TypeError):
        jr.append("b", {"x": object()})
