"""How an AgentEnv episode ended: the scores its verifiers recorded as the judgment, or why there are none.

AgentEnv records each verifier's score and its criteria's results in the run's `verifications`; the run
passed when every score is 1 (its own `Outcome.PASSED`). A step that failed is recorded in
`failed_steps` with its type, and the run raises: a verifier step's failure is the verifier's, a deploy's
is infrastructure, anything else the environment's. Never a score of 0 for any of them.
"""

from __future__ import annotations

import math
from typing import Any

from nenyax.core import Judgment, NativeResult, Status

DEPLOYS = ("deploy_env", "deploy_agent", "deploy_sandbox", "install_agent", "load_artifact")


def _one_line(text: object, limit: int = 400) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[:limit] + "..."


def failure(metadata: dict[str, Any], error: BaseException) -> tuple[Status, str]:
    """The status of a run that raised `error`, from the step AgentEnv recorded as failed."""
    failed = [f for f in metadata.get("failed_steps") or [] if isinstance(f, dict)]
    step = failed[-1] if failed else {}
    kind, said = str(step.get("step_type") or ""), _one_line(step.get("error") or error)
    where = f"step {step.get('step_id')!r} ({kind})" if step else "the run"
    if kind.endswith("verifier") or kind == "aggregate_verifiers":
        return Status.VERIFIER_ERROR, f"AgentEnv's verifier failed in {where}: {said}"
    if kind in DEPLOYS:
        return Status.INFRA_ERROR, f"AgentEnv could not deploy in {where}: {said}"
    return Status.ENV_ERROR, f"The AgentEnv task failed in {where}: {said}"


def result(scores: dict[str, float], metadata: dict[str, Any], messages: tuple[dict[str, Any], ...]) -> NativeResult:
    """The judgment of a finished run: its verifiers' scores (their mean when several), criteria as components."""
    verifications = metadata.get("verifications") or {}
    info: dict[str, Any] = {"scores": dict(scores), "verifications": _plain(verifications)}
    finite = {k: float(v) for k, v in scores.items() if math.isfinite(float(v))}
    if not finite:
        return NativeResult(
            judgment=None,
            status=Status.VERIFIER_ERROR,
            error="AgentEnv's run recorded no score.",
            messages=messages,
            info=info,
        )
    components = {f"verifier:{k}": v for k, v in finite.items()}
    feedback = []
    for name, verification in verifications.items() if isinstance(verifications, dict) else ():
        for i, row in enumerate(verification.get("results") or ()):
            if isinstance(row, dict) and isinstance(row.get("score"), int | float):
                components[f"{name}:{row.get('criterion') or row.get('id') or i}"] = float(row["score"])
                if row.get("justification"):
                    feedback.append(f"{name}: {row['justification']}")
    score = sum(finite.values()) / len(finite)
    verdict = Judgment(
        score=score,
        passed=all(v >= 1.0 for v in finite.values()),  # AgentEnv's own PASSED: every score at 1
        components=components,
        feedback="; ".join(feedback) or "AgentEnv verifiers",
        judge="agentenv:verifiers",
    )
    return NativeResult(judgment=verdict, messages=messages, info=info)


def _plain(value: Any) -> Any:
    """`value` as JSON-able data (the verifications hold only plain values, but a plugin may add others)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)
