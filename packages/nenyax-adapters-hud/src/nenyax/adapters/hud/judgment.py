"""How a hud `Run` ended, as a Nenyax `NativeResult`: its grade as the judgment, or why there is none.

hud isolates every failure inside its rollout and records it on the run's trace as a system step
``[<phase>] <error>``, then grades what it can; a phase that failed is never scored here. The phases:
``provisioning`` (the runtime did not start: infra), ``starting task`` (the template raised before its
prompt: the environment's failure, unless no connection came up: infra), ``grading`` (the template
raised after the answer: the verifier's failure). A model call that failed is classified by Nenyax's
proxy, which wins over all of this.
"""

from __future__ import annotations

import math
from typing import Any

from nenyax.core import Judgment, NativeResult, Status

PASS_AT = 1.0
"""A reward in [0, 1] counts as passed at full marks: hud has no pass threshold of its own."""


def _errors(run: Any) -> list[str]:
    """The failures hud recorded as system steps (an error grade is a task step, read from the grade)."""
    steps = run.trace.steps
    return [" ".join(str(s.error).split()) for s in steps if s.source == "system" and getattr(s, "error", None)]


def _status(errors: list[str]) -> tuple[Status, str] | None:
    for error in errors:
        if error.startswith("[provisioning]"):
            return Status.INFRA_ERROR, f"The hud runtime did not start: {error}"
        if error.startswith("[starting task]"):
            if "HudProtocolError" in error:  # the environment answered: its template raised
                return Status.ENV_ERROR, f"The hud task failed before its prompt: {error}"
            return Status.INFRA_ERROR, f"The hud runtime did not serve the task: {error}"
        if error.startswith(("[grading]", "[verifying]")):
            return Status.VERIFIER_ERROR, f"The hud task's grader failed: {error}"
        if "timed out" in error:  # hud's own deadlines (an agent_config timeout_seconds) expired
            return Status.TIMEOUT, f"A hud deadline expired: {error}"
        if error.startswith("["):
            return Status.ENV_ERROR, f"The hud rollout failed: {error}"
    if errors:  # the agent's own loop recorded an error the proxy did not see (a reply it could not use)
        return Status.ENV_ERROR, f"hud's agent failed: {errors[0]}"
    return None


def _numbers(values: Any) -> dict[str, float]:
    found = {}
    for name, value in (values or {}).items() if isinstance(values, dict) else ():
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            found[str(name)] = float(value)
    return found


def transcript(run: Any) -> tuple[dict[str, Any], ...]:
    """The prompt hud's agent was given and the answer it graded, as chat messages."""
    found: list[dict[str, Any]] = []
    if run.prompt is not None:
        found.append({"role": "user", "content": run.prompt_text})
    content = run.trace.content
    if content is not None:
        found.append({"role": "assistant", "content": content if isinstance(content, str) else str(content)})
    return tuple(found)


def result(run: Any) -> NativeResult:
    """The judgment of a finished hud run (its grade), or the status of the phase that failed."""
    errors = _errors(run)
    messages = transcript(run)
    info: dict[str, Any] = {
        "trace_status": run.trace.status,
        "stop_reason": getattr(run.trace, "stop_reason", None),
        "errors": errors,
        "grade": {k: v for k, v in run.grade.raw.items() if isinstance(v, str | int | float | bool | type(None))},
    }
    failed = _status(errors)
    if failed is not None:
        status, error = failed
        return NativeResult(judgment=None, status=status, error=error, messages=messages, info=info)
    grade = run.grade
    if grade.is_error:
        why = grade.content or "the task returned an error grade"
        error = f"The hud task's grader failed: {' '.join(why.split())}"
        return NativeResult(judgment=None, status=Status.VERIFIER_ERROR, error=error, messages=messages, info=info)
    score = float(grade.reward)
    components = {"reward": score, **_numbers(grade.info)}
    for sub in grade.evaluation.get("subscores") or ():
        if isinstance(sub, dict) and isinstance(sub.get("name"), str):
            components.update({f"subscore:{sub['name']}": v for v in _numbers({"v": sub.get("value")}).values()})
    bounded = 0.0 <= score <= 1.0
    verdict = Judgment(
        score=score,
        passed=score >= PASS_AT if bounded else None,
        components=components,
        feedback=grade.content or (f"hud reward; passed means reward >= {PASS_AT:g}" if bounded else "hud reward"),
        judge="hud:template-grade",
    )
    return NativeResult(judgment=verdict, messages=messages, info=info)
