"""`nenyax check`: run an environment and record the highest tier it actually reaches.

A check that cannot run is *skipped*, and a skipped or failed check blocks its tier and every tier above it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from nenyax.core.contract.checking import Crash, Fail, Skip, Verdict, arun_check
from nenyax.core.contract.events import observers_of
from nenyax.core.engine.judging import Judging, judge_uses
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.checks import CHECKS, DEFAULT_MARGIN, MODEL_CHECKS, Context
from nenyax.core.tiers.report import (
    TierCheck,
    TierOutcome,
    TierReport,
    TierResult,
    reached_tier,
)


def _sentence(text: str) -> str:
    """Evidence reads as a sentence: one line, ending in a full stop (an exception's message may not)."""
    text = " ".join(str(text).split()) or "The check gave no evidence."
    return text if text.endswith((".", "?", "!", ")")) else text + "."


DEFAULT_SAMPLES = 20
"""Tasks sampled by default: enough that a constant answer's mean is not luck (reported as N of M)."""

__all__ = [
    "CHECKS",
    "Fail",
    "Skip",
    "TierCheck",
    "TierOutcome",
    "TierReport",
    "TierResult",
    "acheck",
    "check",
    "check_judging",
]


async def acheck(
    uri: str,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
    registry: Registry | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    observers: Iterable[Any] | None = None,
    model: Any = None,
    judges: Sequence[str] | Judging = (),
    score: str | None = None,
) -> TierReport:
    """Run every check on `uri`; user mistakes (bad URI, unknown format) raise `UsageError`.

    `samples` tasks are drawn (with `seed`) for the audit; `margin` is how far the reference's mean
    score must be above the floor, the best of the null, random and constant policies. `progress`
    is called as ``progress(check_id, done, total)`` before each check runs and once at the end
    (``check_id`` empty, ``done == total``). `observers` get the events of every episode the checks
    play here (``nenyax check --save`` streams them into a run directory with a `JsonlSink`). With a
    `model` (an `Endpoint`), the model checks run too (`MODEL_CHECKS`: token fidelity), beside the tier.
    With `judges` (each ``NAME[?options]``, as ``--judge``), every episode is scored under them and the tier
    is the one reached so: the score is the one judge's verdict unless `score` composes it otherwise
    (`check_judging`; judges it built are passed as they are and left open).
    """
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < math.inf:
        msg = f"--margin must be a non-negative number, got {margin!r}."
        raise UsageError(msg)
    if samples < 1:
        msg = f"--samples must be at least 1, got {samples}."
        raise UsageError(msg)
    # An unknown judge or option: one sentence, before any episode.
    owned = not isinstance(judges, Judging)
    judging = check_judging(judges, score) if not isinstance(judges, Judging) else judges
    watchers = observers_of(observers)
    ctx = Context(
        uri=uri,
        samples=samples,
        seed=seed,
        registry=registry,
        margin=float(margin),
        observers=watchers,
        model=model,
        judging=judging,
    )
    results, model_results = [], []
    total = len(CHECKS) + (len(MODEL_CHECKS) if model is not None else 0)
    try:
        for index, tier_check in enumerate(CHECKS):
            if progress is not None:
                progress(tier_check.id, index, total)
            results.append(await _run_check(ctx, tier_check))
        for index, model_check in enumerate(MODEL_CHECKS if model is not None else ()):
            if progress is not None:
                progress(model_check.id, len(CHECKS) + index, total)
            model_results.append(await _run_check(ctx, model_check))
    finally:
        if judging is not None and owned:
            await judging.aclose()
        if ctx.env is not None:
            ctx.env.close()
    if progress is not None:
        progress("", total, total)
    done = tuple(results)
    return TierReport(
        uri=uri,
        tier=reached_tier(done),
        results=done,
        manifest=ctx.env.manifest if ctx.env else None,
        # What was sampled, not what was asked: an environment with fewer tasks caps it, visibly.
        samples=len(ctx.tasks) if ctx.tasks else samples,
        seed=seed,
        floor=ctx.floor,
        model_results=tuple(model_results),
        model=_model_name(model),
        judges=judging.texts if judging else (),
        score=judging.score if judging else None,
    )


def check_judging(judges: Sequence[str], score: str | None) -> Judging | None:
    """The judges a check scores under. Asked for, a judge is what the tier is measured by: its verdict is the
    score unless `score` composes it otherwise (several judges need `score`, to say how). Judges are the
    installed ones, as for `evaluate`, whatever registry the environment was loaded with."""
    if judges and score is None:
        labels = [use.label for use in judge_uses(judges)]
        if len(labels) > 1:
            example = f"sum?{labels[0]}=1&{labels[1]}=1, or gate?on=native&then={labels[0]}"
            msg = (
                f"check measures the tier under its judges; with {len(labels)} ({', '.join(labels)}), say how the "
                f"score is composed with --score (e.g. {example})."
            )
            raise UsageError(msg)
        score = labels[0]
    return Judging.build(judges, score)


def _model_name(model: Any) -> str | None:
    if model is None:
        return None
    info = getattr(model, "info", None)
    return str(getattr(info, "name", None) or model)


def _crash(check: TierCheck) -> Crash:
    """A tier check's crash is the environment's failure (with its reason), not the check's error."""

    def crashed(exc: Exception) -> tuple[Verdict, str]:
        if isinstance(exc, UsageError):
            if check.id == "connectable/loads":
                raise exc  # the user's mistake (a bad URI, an unknown format): no report, one sentence
            # The environment refused its own task ids or a policy it claims: the adapter's bug.
            return Verdict.FAILED, f"The environment refused what it advertises: {exc}"
        detail = str(exc).strip() or "(no message)"
        return Verdict.FAILED, f"The check raised {type(exc).__name__}: {detail}"

    return crashed


async def _run_check(ctx: Context, check: TierCheck) -> TierResult:
    """Run one check on the shared context: its result and evidence, as a sentence (a crash fails it)."""
    result = await arun_check(check, ctx, crash=_crash(check))
    return TierResult.of(check, attrs.evolve(result, evidence=_sentence(result.evidence)))


def check(
    uri: str,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    margin: float = DEFAULT_MARGIN,
    registry: Registry | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    observers: Iterable[Any] | None = None,
    model: Any = None,
    judges: Sequence[str] | Judging = (),
    score: str | None = None,
) -> TierReport:
    """Synchronous `acheck`."""
    return run_sync(
        acheck(
            uri,
            samples=samples,
            seed=seed,
            margin=margin,
            registry=registry,
            progress=progress,
            observers=observers,
            model=model,
            judges=judges,
            score=score,
        )
    )
