"""miles' agent-function hook: `run_agent` plays one Nenyax episode, any mode, against the session URL miles
gives it, and `abort` stops this process's episodes when miles aborts an oversampled rollout.

    --custom-generate-function-path miles.rollout.generate_hub.agentic_tool_call.generate
    --custom-agent-function-path    nenyax.trainers.miles.run_agent
    --custom-rm-path                nenyax.trainers.miles.reward
    --dynamic-sampling-filter-path  nenyax.trainers.miles.keep_group
    --use-session-server

miles' session server records every call the episode makes through `base_url` (its TITO tokens: the exact ids
and logprobs its SGLang sampled) and builds the training sample from them; Nenyax plays the episode (a step
environment's chat, a loop of its own, a harness in a sandbox), judges it, and hands back the judgment in the
metadata miles merges into the sample, where `reward` reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nenyax.core import SAMPLING_KEYS, Endpoint, Trajectory
from nenyax.trainers.miles.episodes import named_episode, play, stop_all

METADATA_KEY = "nenyax"
"""The key of the judgment `run_agent` returns (miles merges it into each sample's metadata)."""

SESSION_MODEL = "default"
"""The model name a session URL is asked for (miles' session server routes every name to the policy)."""


async def run_agent(
    base_url: str,
    prompt: Any,
    request_kwargs: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Play the episode `metadata` names (``nenyax_uri``, ``nenyax_task``, ``nenyax_seed``) with the policy at
    `base_url` (a session URL: ``/v1/chat/completions`` is appended), sampling as `request_kwargs` say.

    `prompt` is the row's prompt, which miles hands every agent; the episode builds its own chat (a step
    environment's first chat is the row's prompt; a loop or a harness writes its own). Returns
    ``{"nenyax": {...}}``: the judgment's score, passed and components, the episode's status, whether it may be
    trained on, and its trajectory id."""
    del prompt
    uri, task, seed = named_episode(metadata)
    sampling = {key: value for key, value in (request_kwargs or {}).items() if key in SAMPLING_KEYS}
    endpoint = Endpoint(f"openai:{SESSION_MODEL}", base_url=f"{base_url.rstrip('/')}/v1", **sampling)
    try:
        trajectory = await play(uri, task, seed, endpoint, group_id=_group(metadata))
    finally:
        await endpoint.aclose()
    return {METADATA_KEY: verdict(trajectory)}


def _group(metadata: Mapping[str, Any] | None) -> str | None:
    value = (metadata or {}).get("nenyax_group")
    return value if isinstance(value, str) else None


def verdict(trajectory: Trajectory) -> dict[str, Any]:
    """What a reward model and a filter read of an episode: plain JSON, as miles keeps sample metadata."""
    judgment = trajectory.judgment
    return {
        "status": trajectory.status.value,
        "trainable": trajectory.status.trainable and judgment is not None,
        "score": None if judgment is None else judgment.score,
        "passed": None if judgment is None else judgment.passed,
        "components": {} if judgment is None else dict(judgment.components),
        "error": trajectory.error,
        "trajectory_id": trajectory.id,
        "task_id": trajectory.task_id,
        "model_calls": len(trajectory.model_calls),
    }


async def abort(args: Any = None) -> int:
    """miles' teardown hook: stop every episode this process is playing (each ends ``interrupted``, its
    sandbox torn down and what it recorded kept), so none keeps calling the model after miles aborted its
    generation; how many were stopped."""
    del args
    return await stop_all()
