"""A harbor `TrialResult` as a Nenyax `NativeResult`: the verifier's rewards judged, failures classified.

Harbor records what went wrong in ``exception_info`` rather than raising it. Which of Nenyax's statuses
that is decides whether the episode may be trained on, so it is decided here, once: a sandbox that did
not start is ``infra_error``, a verifier that wrote no reward ``verifier_error``, never a reward of 0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from nenyax.adapters.harbor.backend import FACTS_FILE
from nenyax.core import Judgment, NativeResult, Status

PASS_AT = 1.0
"""A trial counts as passed at this reward: harbor's own pass@k counts a reward of 1 as solved."""

MAX_LOG_CHARS = 4000
"""How much of test.sh's output the trajectory keeps (its tail: where a failing test says why)."""

_VERIFIER_ERRORS = frozenset(
    {
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "VerifierTimeoutError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
    }
)
_INFRA_ERRORS = frozenset(
    {
        "InfraFailure",
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "PluginLoadError",
        "SandboxLikelyOutOfMemoryError",
        "MemoryLimitExceededError",
    }
)
_TIMEOUTS = frozenset({"AgentTimeoutError"})


def _tail(path: Path) -> str | None:
    if not path.is_file():
        return None
    text = path.read_text(errors="replace")
    return text[-MAX_LOG_CHARS:]


def _facts(trial_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((trial_dir / FACTS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _status_of(kind: str, facts: dict[str, Any]) -> Status:
    if "start_error" in facts or kind in _INFRA_ERRORS:
        return Status.INFRA_ERROR
    if kind in _VERIFIER_ERRORS:
        return Status.VERIFIER_ERROR
    if kind in _TIMEOUTS:
        return Status.TIMEOUT
    return Status.ENV_ERROR


def judge(result: Any, trial_dir: Path, agent: str) -> NativeResult:
    """The trial's judgment (``reward`` is the score, every other key a component), or why there is none."""
    facts = _facts(trial_dir)
    exception = result.exception_info
    info: dict[str, Any] = {
        "harbor_agent": agent,
        "trial_name": result.trial_name,
        "task_name": result.task_name,
        "task_checksum": result.task_checksum,
        "sandbox": facts,
        "test_stdout": _tail(trial_dir / "verifier" / "test-stdout.txt"),
    }
    if exception is not None:
        info["exception"] = {"type": exception.exception_type, "message": exception.exception_message[:2000]}
    rewards = dict(result.verifier_result.rewards or {}) if result.verifier_result is not None else {}
    if "start_error" in facts:  # graded or not, a sandbox that never started tells nothing about the agent
        why = str(facts["start_error"]).removeprefix("InfraFailure: ")  # Nenyax's own sentences say it all
        error = f"The {facts.get('sandbox', '')} sandbox did not start: {why}"
        return NativeResult(judgment=None, status=Status.INFRA_ERROR, error=error, info=info)
    if not rewards:
        if exception is not None:
            status = _status_of(exception.exception_type, facts)
            error = f"harbor's trial failed ({exception.exception_type}): {exception.exception_message.strip()[:500]}"
        else:
            status, error = Status.VERIFIER_ERROR, "harbor's verifier wrote no reward (reward.json or reward.txt)."
        return NativeResult(judgment=None, status=status, error=error, info=info)
    values = {name: float(value) for name, value in rewards.items()}
    if "reward" not in values or not all(math.isfinite(v) for v in values.values()):
        why = "has no 'reward' key" if "reward" not in values else "holds a value that is not finite"
        error = f"harbor's verifier result {why}: {sorted(values)}."
        return NativeResult(judgment=None, status=Status.VERIFIER_ERROR, error=error, info=info)
    score = values.pop("reward")
    feedback = f"harbor verifier reward {score:g}" + (
        f" ({exception.exception_type} during the trial)" if exception else ""
    )
    verdict = Judgment(
        score=score,
        passed=score >= PASS_AT,
        components=values,
        feedback=feedback,
        judge="harbor:verifier",
    )
    return NativeResult(judgment=verdict, info=info)
