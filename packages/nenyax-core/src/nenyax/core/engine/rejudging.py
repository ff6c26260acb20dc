"""Judging a recorded run again, without playing anything: ``nenyax judge RUN --judge ... --out NEW``.

The new run directory holds the same episodes (ids, steps, model and tool calls unchanged: nothing is
replayed, no environment is loaded) with the new judges' verdicts and the score composed from them
(`nenyax.core.engine.judging`), its `run.toml` the source's settings plus the judges and the scoring, and
its `summary.json`; `nenyax view` and `nenyax export` read it like any run. `agreement` then says how two
verdicts of the same episodes agree.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.judging import NATIVE, Judging
from nenyax.core.engine.rundirs import TRAJECTORIES, create_run, load_run, write_summary
from nenyax.core.engine.sinks import JsonlSink
from nenyax.core.engine.summary import Summary, summarize
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry


@attrs.frozen(kw_only=True)
class Rejudged:
    """A run judged again: where it was written, its episodes and its summary."""

    run_dir: Path
    trajectories: tuple[Trajectory, ...]
    summary: Summary


async def rejudge_run(
    source: str | Path,
    out: str | Path,
    judges: Sequence[str],
    *,
    scoring: str = NATIVE,
    registry: Registry | None = None,
    concurrency: int = 8,
) -> Rejudged:
    """Judge every episode of the run at `source` again with `judges` (each ``NAME[?options]``); write the new
    run at `out`."""
    run = load_run(source)
    if not run.trajectories:
        msg = f"{source} holds no episode to judge."
        raise UsageError(msg)
    judging = Judging.build(judges, scoring, registry)
    if judging is None:
        msg = "Name at least one judge (--judge NAME?option=value)."
        raise UsageError(msg)
    settings = {**run.config.settings, "judges": list(judges), "score": judging.scoring.text}
    recorded = {**run.config.recorded, "judged_from": str(source)}
    create_run(out, settings, None, extra=recorded, if_taken="name a new directory with --out")
    gate = asyncio.Semaphore(concurrency)

    async def judged(trajectory: Trajectory) -> Trajectory:
        async with gate:
            return await judging.apply_each(trajectory)

    try:
        each = list(await asyncio.gather(*(judged(t) for t in run.trajectories)))
        # Then each recorded group (its group id; an episode without one is a group of one) by the group judges.
        groups: dict[str, list[int]] = {}
        for index, trajectory in enumerate(each):
            groups.setdefault(trajectory.group_id or trajectory.id, []).append(index)
        for indices in groups.values():
            for index, done in zip(indices, await judging.apply_group([each[i] for i in indices]), strict=True):
                each[index] = done
        trajectories = tuple(each)
    finally:
        await judging.aclose()
    sink = JsonlSink(Path(out) / TRAJECTORIES)
    try:
        for trajectory in trajectories:  # the source's order
            sink.write(trajectory)
    finally:
        sink.close()
    samples = int(run.config.settings.get("samples", 1))
    threshold = float(run.config.settings.get("pass_threshold", 1.0))
    summary = summarize(trajectories, samples=samples, threshold=threshold)
    write_summary(out, summary)
    return Rejudged(run_dir=Path(out), trajectories=trajectories, summary=summary)


@attrs.frozen(kw_only=True)
class Agreement:
    """How two verdicts of the same episodes agree, each read as passed or not."""

    first: str
    second: str
    episodes: int
    """Episodes both judged."""
    agreed: int
    kappa: float | None
    """Cohen's kappa (None where it is undefined: both said the same of every episode)."""
    confusion: dict[str, int]
    """``"pass/pass"``, ``"pass/fail"``, ``"fail/pass"``, ``"fail/fail"``: `first`'s word, then `second`'s."""
    disagreements: tuple[tuple[str, float, float], ...]
    """The episodes they disagree on most: (trajectory id, first's score, second's score), largest gap first."""

    @property
    def rate(self) -> float:
        """The share of episodes they agree on."""
        return self.agreed / self.episodes if self.episodes else math.nan


def agreement(trajectories: Sequence[Trajectory], first: str, second: str, *, shown: int = 5) -> Agreement:
    """Agreement of the verdicts labelled `first` and `second` over the episodes both judged."""
    pairs = []
    for trajectory in trajectories:
        verdicts = {v.label: v.judgment for v in trajectory.verdicts if v.judgment is not None}
        if first in verdicts and second in verdicts:
            pairs.append((trajectory.id, verdicts[first], verdicts[second]))
    if not pairs:
        labels = sorted({v.label for t in trajectories for v in t.verdicts})
        msg = (
            f"No episode holds verdicts of both {first!r} and {second!r} (its verdicts: {', '.join(labels) or 'none'})."
        )
        raise UsageError(msg)
    confusion: Counter[str] = Counter()
    for _id, a, b in pairs:
        confusion[f"{_word(a)}/{_word(b)}"] += 1
    n = len(pairs)
    agreed = confusion["pass/pass"] + confusion["fail/fail"]
    first_pass = (confusion["pass/pass"] + confusion["pass/fail"]) / n
    second_pass = (confusion["pass/pass"] + confusion["fail/pass"]) / n
    expected = first_pass * second_pass + (1 - first_pass) * (1 - second_pass)
    kappa = None if expected == 1 else (agreed / n - expected) / (1 - expected)
    gaps = sorted(pairs, key=lambda p: abs(p[1].score - p[2].score), reverse=True)
    worst = tuple((i, a.score, b.score) for i, a, b in gaps[:shown] if a.score != b.score)
    words = ("pass/pass", "pass/fail", "fail/pass", "fail/fail")
    return Agreement(
        first=first,
        second=second,
        episodes=n,
        agreed=agreed,
        kappa=kappa,
        confusion={word: confusion[word] for word in words},
        disagreements=worst,
    )


def _word(judgment: Any) -> str:
    passed = judgment.passed if judgment.passed is not None else judgment.score >= 1.0
    return "pass" if passed else "fail"
