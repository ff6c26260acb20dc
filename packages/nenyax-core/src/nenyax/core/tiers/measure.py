"""`nenyax check`: run an environment and record the highest tier it actually reaches.

A check that cannot run is *skipped*, and a skipped or failed check blocks its tier and every tier above it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from nenyax.core.contract.events import observers_of
from nenyax.core.contract.trajectory import Tier
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.checks import CHECKS, DEFAULT_MARGIN, MODEL_CHECKS, CheckFn, Context, Fail, Skip
from nenyax.core.tiers.report import (
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
    "TierOutcome",
    "TierReport",
    "TierResult",
    "acheck",
    "check",
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
) -> TierReport:
    """Run every check on `uri`; user mistakes (bad URI, unknown format) raise `UsageError`.

    `samples` tasks are drawn (with `seed`) for the audit; `margin` is how far the reference's mean
    score must be above the floor, the best of the null, random and constant policies. `progress`
    is called as ``progress(check_id, done, total)`` before each check runs and once at the end
    (``check_id`` empty, ``done == total``). `observers` get the events of every episode the checks
    play here (``nenyax check --save`` streams them into a run directory with a `JsonlSink`). With a
    `model` (an `Endpoint`), the model checks run too (`MODEL_CHECKS`: token fidelity), beside the tier.
    """
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < math.inf:
        msg = f"--margin must be a non-negative number, got {margin!r}."
        raise UsageError(msg)
    if samples < 1:
        msg = f"--samples must be at least 1, got {samples}."
        raise UsageError(msg)
    watchers = observers_of(observers)
    ctx = Context(
        uri=uri, samples=samples, seed=seed, registry=registry, margin=float(margin), observers=watchers, model=model
    )
    results, model_results = [], []
    total = len(CHECKS) + (len(MODEL_CHECKS) if model is not None else 0)
    try:
        for index, (check_id, tier, fn, openenv) in enumerate(CHECKS):
            if progress is not None:
                progress(check_id, index, total)
            results.append(await _run_check(ctx, check_id, tier, fn, openenv))
        for index, (check_id, tier, model_fn) in enumerate(MODEL_CHECKS if model is not None else ()):
            if progress is not None:
                progress(check_id, len(CHECKS) + index, total)

            async def with_model(ctx: Context, model_fn: Any = model_fn) -> str:
                return str(await model_fn(ctx, model))

            model_results.append(await _run_check(ctx, check_id, tier, with_model, None))
    finally:
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
    )


def _model_name(model: Any) -> str | None:
    if model is None:
        return None
    info = getattr(model, "info", None)
    return str(getattr(info, "name", None) or model)


async def _run_check(ctx: Context, check_id: str, tier: Tier, fn: CheckFn, openenv: str | None) -> TierResult:
    """Run one check; its outcome and evidence (a crash fails it, with its reason)."""
    started = time.perf_counter()
    try:
        evidence, outcome = await fn(ctx), TierOutcome.PASSED
    except Skip as exc:
        evidence, outcome = str(exc), TierOutcome.SKIPPED
    except Fail as exc:
        evidence, outcome = str(exc), TierOutcome.FAILED
    except UsageError as exc:
        if check_id == "connectable/loads":
            raise
        # The environment refused its own task ids or a policy it claims: the adapter's bug.
        evidence, outcome = f"The environment refused what it advertises: {exc}", TierOutcome.FAILED
    except Exception as exc:  # noqa: BLE001 - a check that crashes fails, with its reason
        detail = str(exc).strip() or "(no message)"
        evidence, outcome = f"The check raised {type(exc).__name__}: {detail}", TierOutcome.FAILED
    return TierResult(
        id=check_id,
        tier=tier,
        outcome=outcome,
        evidence=_sentence(evidence),
        seconds=time.perf_counter() - started,
        openenv=openenv,
    )


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
        )
    )
