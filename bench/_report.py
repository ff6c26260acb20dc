"""One measured figure, as each benchmark reports it to `bench/run.py` (which writes bench/README.md's table).

A benchmark prints its figures for a reader as before and, when `NENYAX_BENCH_REPORT` names a file,
also appends one JSON line per figure there. Met or not is decided here, from the goal, so no script
words its own verdict.
"""

from __future__ import annotations

import json
import os
from typing import Literal


def figure(
    figure_id: str,
    value: float,
    *,
    goal: float | None,
    better: Literal["lower", "higher"] = "lower",
    unit: str = "",
    detail: str = "",
) -> None:
    """Report `value` for `figure_id` (e.g. ``"P2.cpu"``); `goal` None: reported, no goal to meet."""
    path = os.environ.get("NENYAX_BENCH_REPORT")
    if not path:
        return
    met = None if goal is None else (value <= goal if better == "lower" else value >= goal)
    row = {"id": figure_id, "value": value, "goal": goal, "better": better, "unit": unit, "met": met, "detail": detail}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")
