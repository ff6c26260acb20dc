"""How a karotte run ended, read from its transcript: the judgment karotte gave, or why it gave none.

karotte scores each step with the step's judge and stops at the first step whose scoring says not to go
on; the run's score is the last step's (karotte's `RunState`), and it passed when every step went on. Its
failures are told apart here, never read as a score:

- its executable judge turns a scoring script that crashed, could not be found or wrote no JSON into a
  score of 0 with the error in the metadata (`JUDGE_FAILURES`): that is the verifier failing;
- an `error` event: raised while a step was being scored (the judge or the pre-scoring hook) is the
  verifier's failure; karotte's own limits (turns, empty turns, context window) are the policy's, its step
  time limit a timeout; anything else is the environment's;
- no transcript at all: karotte never started the task (the image build, the container), infrastructure.

A model call that failed is classified by Nenyax's proxy, which wins over all of this.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from nenyax.core import Judgment, NativeResult, Status

JUDGE_FAILURES = ("CalledProcessError", "FileNotFoundError", "json_read_error", "tempdir_error")
"""Metadata keys karotte's `ExecutableJudge` scores 0 with when its script failed rather than graded."""

POLICY_LIMITS = ("TurnLimitReachedError", "EmptyTurnLimitReachedError", "StepContextWindowLimitReachedError")
"""karotte's limits on the agent: reaching one is the policy's failure (judged, scored 0)."""

TIME_LIMITS = ("StepTimeLimitReachedError",)

_SCORING_FRAMES = ("in score\n", "in evaluate\n", "in pre_scoring_hook\n", "judges/")


def _one_line(text: str, limit: int = 400) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else "..." + words[-limit:]


def read_events(transcript: Path) -> list[dict[str, Any]] | None:
    """The transcript's events, or None when karotte wrote none (or not as JSON)."""
    try:
        data = json.loads(transcript.read_text())
    except (OSError, ValueError):
        return None
    events = data.get("events") if isinstance(data, dict) else None
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else None


def messages(events: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The run's chat messages, as karotte's transcript keeps them (tool results folded in as tool messages)."""
    found: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == "message_added" and isinstance(event.get("message"), dict):
            message = event["message"]
            found.append({k: v for k, v in message.items() if v is not None})
        elif event.get("type") == "tool_call_completed":
            result = event.get("result") or {}
            parts = result.get("content") if isinstance(result, dict) else None
            text = "\n".join(str(p.get("text", "")) for p in parts or () if isinstance(p, dict))
            found.append({"role": "tool", "tool_call_id": event.get("tool_call_id"), "content": text})
    return tuple(found)


def _error_status(error: dict[str, Any]) -> tuple[Status, str]:
    kind = str(error.get("exception_type") or "Exception")
    said = _one_line(f"{kind}: {error.get('message') or ''}")
    trace = str(error.get("traceback") or "")
    if kind in POLICY_LIMITS:
        return Status.POLICY_ERROR, f"The agent reached one of karotte's limits: {said}"
    if kind in TIME_LIMITS:
        return Status.TIMEOUT, f"A step ran out of karotte's time limit: {said}"
    if any(frame in trace for frame in _SCORING_FRAMES):  # raised under `Step.score`: the judge or its hook
        return Status.VERIFIER_ERROR, f"karotte's judge failed while scoring: {said}"
    return Status.ENV_ERROR, f"The karotte run failed: {said}"


def _numbers(metadata: Any) -> dict[str, float]:
    found = {}
    for name, value in (metadata or {}).items() if isinstance(metadata, dict) else ():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number) and not isinstance(value, bool):
            found[str(name)] = number
    return found


def result(transcript: Path, log_tail: str, exit_code: int | None) -> NativeResult:
    """The judgment of a finished karotte run, or the status of what failed (`log_tail`: the end of its output)."""
    events = read_events(transcript)
    if events is None:
        why = _one_line(log_tail) or f"it exited with {exit_code}"
        return NativeResult(
            judgment=None, status=Status.INFRA_ERROR, error=f"karotte did not start the task: {why}", info={}
        )
    said = messages(events)
    scorings = [e.get("scoring") or {} for e in events if e.get("type") == "scoring"]
    completed = [e.get("status") for e in events if e.get("type") == "task_completed"]
    started = next((e for e in events if e.get("type") == "task_started"), {})
    status = completed[-1] if completed else None
    info: dict[str, Any] = {
        "run_status": status,
        "steps": int(started.get("n_steps") or 0),
        "scorings": [{"score": s.get("score"), "metadata": s.get("metadata")} for s in scorings],
        "exit_code": exit_code,
    }
    for scoring in scorings:
        failed = [key for key in JUDGE_FAILURES if key in (scoring.get("metadata") or {})]
        if failed:
            detail = _one_line(str(scoring["metadata"][failed[0]]))
            error = f"karotte's executable judge failed rather than graded ({failed[0]}): {detail}"
            return NativeResult(judgment=None, status=Status.VERIFIER_ERROR, error=error, messages=said, info=info)
    errors = [e for e in events if e.get("type") == "error"]
    if errors:
        status_, error = _error_status(errors[-1])
        return NativeResult(judgment=None, status=status_, error=error, messages=said, info=info)
    if status not in ("passed", "failed") or not scorings:
        error = f"The karotte run ended without a score (status {status!r}): {_one_line(log_tail)}"
        return NativeResult(judgment=None, status=Status.ENV_ERROR, error=error, messages=said, info=info)
    score = float(scorings[-1].get("score") or 0.0)
    components = {f"step{i}": float(s.get("score") or 0.0) for i, s in enumerate(scorings)}
    for i, scoring in enumerate(scorings):
        components.update({f"step{i}:{k}": v for k, v in _numbers(scoring.get("metadata")).items()})
    passed_steps = sum(1 for s in scorings if s.get("continue_task"))
    scores = list(components.values())[: len(scorings)]
    bounded = all(0.0 <= value <= 1.0 for value in scores)
    verdict = Judgment(
        score=score,
        # karotte "passes" a run whose every step let it go on, which a judge may allow at a score of 0 (an
        # executable judge's threshold is 0 by default): passed here means full marks on every step as well.
        passed=status == "passed" and min(scores) >= 1.0 if bounded else status == "passed",
        components=components,
        feedback=f"karotte: {status}, {passed_steps}/{info['steps']} steps went on, final score {score:g}",
        judge="karotte:steps",
    )
    return NativeResult(judgment=verdict, messages=said, info=info)
