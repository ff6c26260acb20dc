"""`nenyax_group_rollout`: a group played by Nenyax's own loop, in any mode, as the cookbook's `TrajectoryGroup`.

Rollout- and task-mode environments run their own loop (a verifiers loop, a harbor agent) against an
OpenAI-compatible URL: Nenyax's recording proxy, answered here by `SamplerPolicy`, which renders each request's
chat with the cookbook's renderer and samples the ids on the tinker `SamplingClient`. A step environment plays
the same way (Nenyax's own step loop). Each recorded call becomes one `Transition`: ``ob`` the prompt ids the
client was given, ``ac`` the tokens and logprobs it sampled (`nenyax.core.step_samples`), so the cookbook trains
on exactly what was sampled. The judgment's score is the group reward (`TrajectoryGroup.final_rewards_G`).

An episode that failed for infrastructure (``infra_error``, ``env_error``, ``verifier_error``, ``timeout``,
``interrupted``) is never a reward: it is left out of the group and recorded as a `RolloutError`
(``error_type`` ``nenyax_<status>``), as the cookbook's error-tolerant strategies record a failed trajectory;
a group with no episode left raises the cookbook's `AllTrajectoriesFailedError`, which its pipeline skips.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tinker_cookbook.completers import TokensWithLogprobs
from tinker_cookbook.exceptions import AllTrajectoriesFailedError
from tinker_cookbook.renderers import Renderer, get_text_content
from tinker_cookbook.rl.types import Metrics, RolloutError, Trajectory, TrajectoryGroup, Transition

import tinker
from nenyax.core import ChatRequest, ModelCall, PolicyInfo, new_id, step_samples
from nenyax.core import Trajectory as NenyaxTrajectory
from nenyax.core.errors import InfraFailure
from nenyax.trainers.tinker.builder import NenyaxEnvGroupBuilder, environment, renderer
from nenyax.trainers.tinker.envs import _message

TAKEN = ("max_tokens", "temperature", "top_p", "top_k", "seed")
"""What a native loop's request may set for its own call; the policy's own settings win."""


class SamplerPolicy:
    """A Nenyax text policy sampling from a tinker `SamplingClient`, each chat rendered by the cookbook's renderer."""

    speaks_text = True

    def __init__(self, sampling_client: Any, renderer: Renderer, *, name: str = "tinker", **params: Any) -> None:
        """`params` are the sampling settings (``max_tokens``, ``temperature``, ``top_p``, ``top_k``, ``seed``)."""
        self.sampling_client, self.renderer, self.params = sampling_client, renderer, params
        self.info = PolicyInfo(kind="tinker", name=f"tinker:{name}", provider="tinker", model=name)

    async def send(self, request: ChatRequest) -> ModelCall:
        """Render `request`'s chat, sample one reply on the client, and record the ids it sampled."""
        asked = dict(request.params)
        sent = {**{k: v for k, v in asked.items() if k in TAKEN and v is not None}, **self.params}
        prompt = self.renderer.build_generation_prompt([_message(m) for m in request.messages])
        fields = {k: v for k, v in sent.items() if k in TAKEN}
        try:
            response = await self.sampling_client.sample(  # tinker's awaitable APIFuture
                prompt=prompt,
                num_samples=1,
                sampling_params=tinker.SamplingParams(stop=self.renderer.get_stop_sequences(), **fields),
            )
        except Exception as exc:  # the service, the network: never the policy's fault
            msg = f"The sampling client did not sample a reply ({type(exc).__name__}: {exc})."
            raise InfraFailure(msg) from exc
        sequence = response.sequences[0]
        tokens = [int(t) for t in sequence.tokens]
        message, _termination = self.renderer.parse_response(tokens)
        ids = prompt.to_ints()
        return ModelCall(
            messages=tuple(request.messages),
            response={"role": "assistant", "content": get_text_content(message)},
            provider="tinker",
            model=self.info.model or "",
            params=sent,
            tools=tuple(request.tools),
            prompt_token_ids=tuple(ids),
            completion_token_ids=tuple(tokens),
            logprobs=None if sequence.logprobs is None else tuple(float(x) for x in sequence.logprobs),
            requested_params=asked,
            finish_reason=str(sequence.stop_reason),
            usage={"prompt_tokens": len(ids), "completion_tokens": len(tokens), "total_tokens": len(ids) + len(tokens)},
        )

    async def act(self, turn: Any) -> str:
        """Reply to the step transcript, or to the native loop's whole request (recorded by the turn's recorder)."""
        request: ChatRequest = turn.request or ChatRequest(model=self.info.model or "", messages=tuple(turn.messages))
        call = await turn.recorder.model_call(request, self.send)
        content = call.response.get("content")
        return content if isinstance(content, str) else ""


def cookbook_trajectory(trajectory: NenyaxTrajectory) -> Trajectory | None:
    """One `Transition` per recorded call with ids (step rewards 0); None when no call recorded any."""
    samples = step_samples(trajectory)
    if not samples:
        return None
    transitions = [
        Transition(
            ob=tinker.ModelInput.from_ints(list(sample.prompt_ids)),
            ac=TokensWithLogprobs(
                tokens=list(sample.completion_ids),
                maybe_logprobs=None if sample.logprobs is None else list(sample.logprobs),
                stop_reason="length" if trajectory.model_calls[sample.calls[0]].finish_reason == "length" else "stop",
            ),
            reward=0.0,
            episode_done=index == len(samples) - 1,
        )
        for index, sample in enumerate(samples)
    ]
    return Trajectory(transitions=transitions, final_ob=tinker.ModelInput.empty())


def _metrics(trajectory: NenyaxTrajectory) -> Metrics:
    judgment = trajectory.judgment
    assert judgment is not None
    metrics: Metrics = {"nenyax/score": judgment.score, f"nenyax/status/{trajectory.status.value}": 1.0}
    if judgment.passed is not None:
        metrics["nenyax/passed"] = float(judgment.passed)
    metrics.update({f"nenyax/component/{k}": v for k, v in judgment.components.items()})
    return metrics


async def nenyax_group_rollout(
    builder: NenyaxEnvGroupBuilder,
    sampling_client: Any,
    *,
    max_tokens: int,
    temperature: float = 1.0,
    judges: Sequence[str] = (),
    timeout: float | None = None,
) -> TrajectoryGroup:
    """`builder`'s group played by Nenyax's loop (any mode) with `sampling_client`, as a `TrajectoryGroup`.

    `judges` (``NAME[?options]``) judge each episode beside the environment's own verifier; past `timeout`
    seconds an episode ends ``timeout`` (a failure, left out of the group).
    """
    env = environment(builder.uri)
    policy = SamplerPolicy(
        sampling_client,
        renderer(builder.model_name, builder.renderer_name),
        max_tokens=max_tokens,
        temperature=temperature,
    )
    group_id = new_id()
    played = await asyncio.gather(
        *(
            env.arollout(
                policy, builder.task, builder.seed, group_id=group_id, sample=i, judges=judges, timeout=timeout
            )
            for i in range(builder.group_size)
        )
    )
    trajectories: list[Trajectory] = []
    rewards: list[float] = []
    metrics: list[Metrics] = []
    errors: list[RolloutError] = []
    for nenyax_trajectory in played:
        made = cookbook_trajectory(nenyax_trajectory)
        if not nenyax_trajectory.status.trainable or nenyax_trajectory.judgment is None or made is None:
            reason = nenyax_trajectory.error or "the episode recorded no model call with token ids"
            errors.append(RolloutError(error_type=f"nenyax_{nenyax_trajectory.status.value}", error_message=reason))
            continue
        trajectories.append(made)
        rewards.append(nenyax_trajectory.judgment.score)
        metrics.append(_metrics(nenyax_trajectory))
    if not trajectories:
        msg = f"Every episode of {builder.uri} task {builder.task!r} failed: " + "; ".join(
            f"{e.error_type}: {e.error_message}" for e in errors
        )
        raise AllTrajectoriesFailedError(msg)
    return TrajectoryGroup(trajectories, rewards, metrics, rollout_errors=errors)
