"""The episode's judgment: lm-eval's own metrics for the one document the episode evaluated."""

from __future__ import annotations

import math
from typing import Any

from nenyax.adapters.lm_eval.tasks import LoadedTask
from nenyax.core import Judgment, VerifierFailure

BINARY = frozenset({"acc", "acc_norm", "acc_mutual_info", "acc_bytes", "exact_match", "em"})
"""Metrics that are 0 or 1 per document: for them `passed` is score == 1 (for others it is None)."""


def metric_names(loaded: LoadedTask) -> list[str]:
    """The task's metrics in its ``metric_list`` order (the first is the primary one)."""
    listed = getattr(loaded.task.config, "metric_list", None) or []
    names = [m["metric"] if isinstance(m["metric"], str) else m["metric"].__name__ for m in listed]
    return names or [str(name) for name in getattr(loaded.task, "_metric_fn_list", {})]


def filter_names(loaded: LoadedTask) -> list[str]:
    """The task's filter pipelines in order (``none`` when it has none): the first one is scored."""
    return [str(f.name) for f in getattr(loaded.task, "_filters", [])] or ["none"]


def _values(row: dict[str, Any]) -> dict[str, float]:
    """``metric,filter`` -> value from lm-eval's results row (standard errors and labels left out)."""
    found = {}
    for key, value in row.items():
        metric, _, _filter = key.partition(",")
        if not _filter or metric.endswith("_stderr") or isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            found[key] = float(value)
    return found


def judge(loaded: LoadedTask, results: dict[str, Any]) -> Judgment:
    """Score: the primary metric under the first filter; components: every metric (and filter) lm-eval gave."""
    row = results.get("results", {}).get(loaded.name)
    values = _values(row) if isinstance(row, dict) else {}
    if not values:
        raise VerifierFailure(f"lm-eval reported no metric for the task {loaded.name!r}.")
    filters = filter_names(loaded)
    names = metric_names(loaded)
    primary = next((f"{m},{filters[0]}" for m in names if f"{m},{filters[0]}" in values), next(iter(values)))
    score = values[primary]
    if not math.isfinite(score):
        raise VerifierFailure(f"lm-eval's {primary} for this document is {score}, not a finite score.")
    single = len({key.partition(",")[2] for key in values}) == 1
    components = {(key.partition(",")[0] if single else key): value for key, value in values.items()}
    metric = primary.partition(",")[0]
    passed = score == 1.0 if metric in BINARY else None
    return Judgment(
        score=score,
        passed=passed,
        components=components,
        feedback=f"lm-eval's {metric} (filter {primary.partition(',')[2]}) for this document",
        judge=f"lm_eval:{loaded.name}",
    )


def no_choice(loaded: LoadedTask, why: str) -> Judgment:
    """A multiple-choice reply that named no choice: every metric 0, as a wrong pick would get."""
    names = metric_names(loaded)
    return Judgment(
        score=0.0,
        passed=False if (names and names[0] in BINARY) else None,
        components=dict.fromkeys(names, 0.0),
        feedback=why,
        judge=f"lm_eval:{loaded.name}",
    )
