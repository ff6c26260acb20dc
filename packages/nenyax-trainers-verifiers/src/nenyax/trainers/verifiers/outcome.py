"""What a Nenyax episode leaves on a verifiers trace, and how verifiers' scoring reads it back.

The episode (a step session played turn by turn, or a native loop or harness run in-process) writes one
summary into ``trace.info["nenyax"]`` before the trace is scored; the task's ``@vf.reward`` and
``@vf.metric`` turn it into verifiers' reward and metrics. A failure that is not the policy's (the
environment, its verifier, the infrastructure, a deadline) is never a reward of 0: the reward raises
`NenyaxEpisodeFailed`, which verifiers records as the trace's error (the reward stays ``None``,
``trace.ok`` and ``episode.ok`` are False), what its runners and prime-rl leave out of training.
"""

from __future__ import annotations

from typing import Any

from nenyax.core import Status, Trajectory

INFO_KEY = "nenyax"
"""The key of ``trace.info`` the episode's summary is under."""
CALLS_KEY = "nenyax_token_ids"
"""The key of ``trace.info`` holding each model call's token ids and logprobs, as the server returned them."""


class NenyaxEpisodeFailed(RuntimeError):
    """The Nenyax episode failed for a reason that is not the policy's: there is no reward."""


def summary(trajectory: Trajectory) -> dict[str, Any]:
    """The JSON-able summary of a finished episode that verifiers' scoring reads."""
    judgment = trajectory.judgment
    return {
        "trajectory_id": trajectory.id,
        "task_id": trajectory.task_id,
        "status": trajectory.status.value,
        "error": trajectory.error,
        "score": None if judgment is None else judgment.score,
        "passed": None if judgment is None else judgment.passed,
        "components": {} if judgment is None else dict(judgment.components),
        "feedback": None if judgment is None else judgment.feedback,
        "steps": len(trajectory.steps),
        "model_calls": len(trajectory.model_calls),
    }


def score(info: dict[str, Any]) -> float:
    """The reward: the judged score, or `NenyaxEpisodeFailed` when the episode has none."""
    done = info.get(INFO_KEY)
    if done is None:
        raise NenyaxEpisodeFailed("The Nenyax episode did not finish: nothing recorded its outcome.")
    status = Status(done["status"])
    if not status.trainable or done["score"] is None:
        why = f": {done['error']}" if done.get("error") else ""
        raise NenyaxEpisodeFailed(f"The Nenyax episode ended {status.value}{why}.")
    return float(done["score"])


def metrics(info: dict[str, Any]) -> dict[str, float]:
    """The judgment's components (numbers only), ``passed`` and the step count; none for a failed episode."""
    done = info.get(INFO_KEY)
    if done is None or done["score"] is None:
        return {}
    found = {
        f"nenyax/{name}": float(value)
        for name, value in done["components"].items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    if done["passed"] is not None:
        found["nenyax/passed"] = float(done["passed"])
    found["nenyax/steps"] = float(done["steps"])
    return found


def token_ids(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ids and logprobs a vLLM-shaped chat completion returned (``return_token_ids``), else None."""
    if not raw:
        return None
    choices = raw.get("choices") or [{}]
    choice = choices[0]
    completion = choice.get("token_ids")
    if raw.get("prompt_token_ids") is None or completion is None:
        return None
    scored = (choice.get("logprobs") or {}).get("content") or []
    return {
        "prompt_ids": list(raw["prompt_token_ids"]),
        "completion_ids": list(completion),
        "logprobs": [float(item["logprob"]) for item in scored] or None,
    }


def recorded_token_ids(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The ids and logprobs of each model call a Nenyax episode recorded (where the server returned them)."""
    return [
        {
            "prompt_ids": list(call.prompt_token_ids),
            "completion_ids": list(call.completion_token_ids),
            "logprobs": None if call.logprobs is None else list(call.logprobs),
        }
        for call in trajectory.model_calls
        if call.prompt_token_ids is not None and call.completion_token_ids is not None
    ]
