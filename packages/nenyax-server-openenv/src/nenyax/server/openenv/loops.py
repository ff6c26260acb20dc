"""Rollout- and task-mode environments served the loop-owning way (OpenEnv's harness RFCs).

Such an environment runs its own loop (verifiers' rollout, a harbor task's agent), so there is no
action for a client to send per turn. As in OpenEnv's `LoopOwningSession`, the episode's loop runs
server-side against a policy the client names: a reset carries the policy's OpenAI-compatible
``base_url`` (and model), starts ``env.arollout`` against it, and a step waits for completion
(``wait_for_completion``) and answers the final observation with the recorded model calls as
OpenEnv's ``TraceEntry`` dicts (``fetch_proxy_trace``): token ids and logprobs as the policy's
server returned them, never re-tokenized. Failure statuses follow the step episodes' rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from typing import Any

from nenyax.core import Endpoint, Judgment, ModelCall, Status, Trajectory, UsageError
from nenyax.server.openenv import schemas
from nenyax.server.openenv.episodes import Episode, _describe, _judgment, _reset_args, no_episode
from nenyax.server.openenv.served import ServedEnvironment
from nenyax.server.openenv.wire import EXECUTION_ERROR, VALIDATION_ERROR, WireError, check_keys, error_item, invalid

POLICY_KEYS = frozenset({"base_url", "model", "sampling", "api_key_env"})
RESET_KEYS = ("seed", "episode_id", "task_id", "split", "index", "policy")
_STEP_KEYS = frozenset({"timeout_s", "metadata"})
_TRAINABLE = (Status.OK, Status.POLICY_ERROR)


class ServedLoop:
    """A rollout- or task-mode environment: what the routes need of a served environment, without a probe."""

    reference = False
    renders = False
    _pool = None

    def __init__(self, env: Any) -> None:
        """Wrap `env` (its loop runs in `LoopEpisode`s); builds the schemas a client reads."""
        self.env = env
        manifest = self.manifest = env.manifest
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", manifest.name) or manifest.format
        title = re.sub(r"[^A-Za-z0-9]", "", manifest.name.title()) or "Nenyax"
        observation = schemas.observation_schema(manifest.observation, title)
        observation["properties"]["trace"] = {
            "description": "The episode's model calls as OpenEnv TraceEntry dicts (on the final observation)",
            "items": {"type": "object"},
            "title": "Trace",
            "type": "array",
        }
        self.schema = {
            "action": {
                "additionalProperties": False,
                "properties": {
                    "metadata": {"additionalProperties": True, "title": "Metadata", "type": "object"},
                    "timeout_s": {
                        "description": "Seconds to wait for the episode (default: until it ends)",
                        "exclusiveMinimum": 0,
                        "title": "Timeout S",
                        "type": "number",
                    },
                },
                "title": f"{title}WaitAction",
                "type": "object",
            },
            "observation": observation,
            "state": schemas.state_schema(title),
        }
        self.schema["reset_observation"] = observation

    def metadata(self) -> dict[str, Any]:
        """``/metadata``: OpenEnv's fields, plus ``loop_owning`` (a reset names the policy)."""
        manifest = self.manifest
        return {
            "name": manifest.name,
            "description": manifest.description or f"{manifest.name} ({manifest.format}), served by Nenyax.",
            "readme_content": None,
            "version": manifest.format_version,
            "author": None,
            "documentation_url": None,
            "loop_owning": True,
        }

    async def run(self, fn: Any, *args: Any) -> Any:
        """Task listing calls (`tasks.py`), run inline as a step environment's fast calls are."""
        return fn(*args)

    def close(self) -> None:
        """Close the environment."""
        self.env.close()


def new_episode(served: ServedEnvironment | ServedLoop) -> Episode | LoopEpisode:
    """The episode slot for one session of `served`: turn by turn, or loop-owning."""
    return LoopEpisode(served) if isinstance(served, ServedLoop) else Episode(served)


def reset_keys(served: ServedEnvironment | ServedLoop) -> tuple[str, ...]:
    """The keys of a reset (HTTP ``/step`` copies them from its body)."""
    return RESET_KEYS if isinstance(served, ServedLoop) else RESET_KEYS[:-1]


def _endpoint(policy: Any) -> Endpoint:
    """The client's policy (``{"base_url", "model", "sampling"}``) as an Endpoint; bad input is a validation error."""
    if not isinstance(policy, dict) or not isinstance(policy.get("base_url"), str):
        msg = "A loop-owning reset needs policy: {base_url: <OpenAI-compatible URL>, model?, sampling?}"
        raise invalid([error_item("missing", ("policy", "base_url"), msg, policy)])
    check_keys(policy, POLICY_KEYS)
    model, sampling = policy.get("model") or "policy", policy.get("sampling") or {}
    if not isinstance(model, str) or not isinstance(sampling, dict):
        raise invalid([error_item("value_error", ("policy",), "model is a string and sampling an object", policy)])
    try:
        return Endpoint(
            f"openai:{model}", base_url=policy["base_url"], api_key_env=policy.get("api_key_env"), **sampling
        )
    except UsageError as exc:
        raise WireError(VALIDATION_ERROR, str(exc)) from exc


def trace_entry(call: ModelCall, trajectory: Trajectory, reward: float) -> dict[str, Any]:
    """One recorded model call as OpenEnv's ``TraceEntry`` (token fields only where the server returned them)."""
    entry: dict[str, Any] = {
        "request": {"messages": list(call.messages), "tools": list(call.tools) or None, **call.params},
        "response": {
            "model": call.model,
            "choices": [{"index": 0, "message": call.response, "finish_reason": call.finish_reason}],
        },
    }
    prompt, completion = call.prompt_token_ids, call.completion_token_ids
    if prompt is not None:
        entry["prompt_token_ids"] = list(prompt)
    if completion is not None:
        entry["completion_token_ids"] = list(completion)
    if call.tokens is not None:
        entry["completion_tokens"] = list(call.tokens)
    if call.logprobs is not None:
        entry["per_token_logps"] = list(call.logprobs)
    if prompt is not None and completion is not None:
        entry["loss_mask"] = [0] * len(prompt) + [1] * len(completion)
    entry["reward"] = reward
    entry["metadata"] = {"task_id": trajectory.task_id, "call_id": call.id, "trajectory_id": trajectory.id}
    return entry


class LoopEpisode:
    """One loop-owning episode: started by a reset, waited on (and read back) by a step."""

    def __init__(self, served: ServedLoop) -> None:
        """An episode slot with nothing started yet: the first message must be a reset."""
        self.served = served
        self.episode_id: str | None = None
        self.task_id: str | None = None
        self.seed: int | None = None
        self.status: str | None = None
        self.done = False
        self.calls = 0
        self.last: dict[str, Any] | None = None
        self._run: asyncio.Task[Trajectory] | None = None
        self._endpoint: Endpoint | None = None

    @property
    def started(self) -> bool:
        """True once a reset opened an episode (finished or not)."""
        return self.episode_id is not None

    async def reset(self, data: Any) -> dict[str, Any]:
        """Close any episode in progress and start `data`'s (task, seed) against `data["policy"]`."""
        if isinstance(data, dict):
            check_keys(data, frozenset(RESET_KEYS))
        args = _reset_args(data)
        endpoint = _endpoint(data.get("policy"))
        await self.aclose()
        env = self.served.env
        task = args["task_id"]
        try:
            if task is None and args["index"] is not None:
                ids = env.task_ids(args["split"], args["index"] + 1)
                if args["index"] >= len(ids):
                    msg = f"Task index {args['index']} is out of range: the split has {len(ids)} tasks."
                    raise WireError(VALIDATION_ERROR, msg)
                task = ids[args["index"]]
        except UsageError as exc:
            raise WireError(VALIDATION_ERROR, str(exc)) from exc
        self.episode_id = args["episode_id"] or uuid.uuid4().hex
        self.task_id, self.seed, self.status, self.done, self.calls = task, args["seed"], "running", False, 0
        self._endpoint = endpoint
        self._run = asyncio.get_running_loop().create_task(env.arollout(endpoint, task=task, seed=self.seed))
        metadata = {"task_id": task, "seed": self.seed, "status": "running"}
        obs = {"observation": None, "task_id": task, "step": 0, "metadata": metadata}
        self.last = {"observation": obs, "reward": None, "done": False, "metadata": metadata}
        return self.last

    async def step(self, data: Any) -> dict[str, Any]:
        """Wait for the episode (at most ``timeout_s``); the final observation carries the judgment and trace."""
        run = self._run
        if run is None or self.done:
            raise no_episode(self.status if self.done else None, "a reset (with a policy)")
        if not isinstance(data, dict):
            raise invalid([error_item("dict_type", ("data",), "Input should be a valid dictionary", data)])
        check_keys(data, _STEP_KEYS)
        timeout = data.get("timeout_s")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
            raise invalid([error_item("greater_than", ("timeout_s",), "Input should be greater than 0", timeout)])
        finished, _ = await asyncio.wait({run}, timeout=timeout)
        if not finished:  # still running: the same observation as the reset's, so a client polls again
            return self.last  # type: ignore[return-value]
        try:
            trajectory = run.result()
        except UsageError as exc:  # an unknown task id: the client's mistake
            await self._end("env_error")
            raise WireError(VALIDATION_ERROR, str(exc)) from exc
        except Exception as exc:  # arollout returns failures; one it raised is the environment's
            await self._end("env_error")
            raise WireError(EXECUTION_ERROR, _describe(exc), status="env_error") from exc
        return await self._finish(trajectory)

    async def _finish(self, trajectory: Trajectory) -> dict[str, Any]:
        status = trajectory.status
        self.task_id = trajectory.task_id
        self.calls = len(trajectory.model_calls)
        await self._end(status.value)
        if status not in _TRAINABLE:  # env, verifier, infra failure or timeout: an error frame, never a reward
            message = trajectory.error or f"The episode ended with status {status.value}."
            raise WireError(EXECUTION_ERROR, message, status=status.value)
        judgment = trajectory.judgment or Judgment(
            score=0.0, passed=False, feedback=trajectory.error or "", judge="nenyax:policy_error"
        )
        score = judgment.score if status is Status.OK else 0.0
        metadata: dict[str, Any] = {
            "task_id": self.task_id,
            "seed": trajectory.seed,
            "status": status.value,
            "judgment": _judgment(judgment),
            "trajectory_id": trajectory.id,
            "step": self.calls,
        }
        if trajectory.error:
            metadata["error"] = trajectory.error
        obs = {
            "observation": trajectory.final_observation,
            "messages": list(trajectory.messages),
            "task_id": self.task_id,
            "step": self.calls,
            "trace": [trace_entry(call, trajectory, score) for call in trajectory.model_calls],
            "metadata": metadata,
        }
        self.last = {"observation": obs, "reward": score, "done": True, "metadata": metadata}
        return self.last

    async def _end(self, status: str) -> None:
        self.status, self.done = status, True
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            with contextlib.suppress(Exception):
                await endpoint.aclose()

    def state(self) -> dict[str, Any]:
        """OpenEnv's State fields plus the task, seed and status (``running`` until the loop ends)."""
        return {
            "episode_id": self.episode_id,
            "step_count": self.calls,
            "task_id": self.task_id,
            "seed": self.seed,
            "done": self.done,
            "status": self.status,
        }

    async def aclose(self) -> None:
        """Stop the episode in progress, if any (it is left unjudged)."""
        run, self._run = self._run, None
        if run is not None and not run.done():
            run.cancel()
            await asyncio.wait({run})  # its outcome is dropped; a cancel of this call still propagates
        if self._endpoint is not None:
            await self._end(self.status or "interrupted")
