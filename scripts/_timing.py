"""Timing helper shared by the benchmark scripts (run as ``python scripts/bench_*.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls of ``fn`` and the last result."""
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def timed_sweep(X_train: Any, y_train: Any, X_test: Any, y_test: Any, config: Any) -> tuple[float, dict, dict]:
    """Run ``run_sweep`` once: ``(total seconds, {stage: seconds}, result)``, the stages
    timed from the study's own "stage" events (the data are loaded already: not timed)."""
    from gpuknn.studies.fashion_sweep import run_sweep

    stages: dict[str, float] = {}
    state: dict[str, Any] = {"name": None, "t": 0.0}

    def on_event(event: str, info: dict) -> None:
        if event == "stage":
            now = time.perf_counter()
            if state["name"]:
                stages[state["name"]] = now - state["t"]
            state.update(name=info["name"], t=now)

    t0 = time.perf_counter()
    res = run_sweep(X_train, y_train, X_test, y_test, config, callback=on_event)
    end = time.perf_counter()
    if state["name"]:
        stages[state["name"]] = end - state["t"]
    return end - t0, stages, res
