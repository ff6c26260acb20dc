"""A Nenyax trajectory as NeMo Gym's verify response (and a failed one as the HTTP error NeMo RL retries).

Each model call becomes one assistant output message carrying the ids the policy server returned:
`prompt_token_ids` (the whole prompt of that call), `generation_token_ids` and `generation_log_probs`, the names
of nemo-gym's `TokenIDLogProbMixin`. NeMo RL walks those messages in order and takes each call's prompt beyond
the tokens it has seen as the (untrained) environment turn, so the environment's observations need no items of
their own. A call whose server returned no ids is a plain output message (evaluation, not training).
"""

from __future__ import annotations

import time
from typing import Any

from nenyax.core import ModelCall, Trajectory


def output_message(index: int, call: ModelCall) -> dict[str, Any]:
    """One model call as a Responses API output message, with its token ids where the server gave them."""
    content = call.response.get("content")
    message: dict[str, Any] = {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "status": "incomplete" if call.finish_reason == "length" else "completed",
        "content": [{"type": "output_text", "text": content if isinstance(content, str) else "", "annotations": []}],
    }
    ids = call.prompt_token_ids, call.completion_token_ids, call.logprobs
    if all(part is not None for part in ids):
        message["prompt_token_ids"] = list(call.prompt_token_ids or ())
        message["generation_token_ids"] = list(call.completion_token_ids or ())
        message["generation_log_probs"] = list(call.logprobs or ())
    return message


def verify_response(row: dict[str, Any], trajectory: Trajectory, model: str) -> dict[str, Any]:
    """The `/run` answer for a trainable episode: the row, `response`, `reward` (the judgment's score), `nenyax_*`."""
    judgment = trajectory.judgment
    assert judgment is not None  # a trainable episode is judged
    response = {
        "id": f"resp_{trajectory.id}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "output": [output_message(i, call) for i, call in enumerate(trajectory.model_calls)],
        "parallel_tool_calls": False,
        "tool_choice": "none",
        "tools": [],
        "usage": None,
    }
    return row | {
        "response": response,
        "reward": judgment.score,
        "nenyax_status": trajectory.status.value,
        "nenyax_passed": judgment.passed,
        "nenyax_components": dict(judgment.components),
        "nenyax_trajectory_id": trajectory.id,
    }


def failure_body(trajectory: Trajectory) -> dict[str, Any]:
    """What a failed episode's 503 says: its status and error (never a reward)."""
    return {
        "detail": f"Nenyax episode ended {trajectory.status.value}: {trajectory.error or 'no judgment'}",
        "nenyax_status": trajectory.status.value,
        "nenyax_trajectory_id": trajectory.id,
    }
