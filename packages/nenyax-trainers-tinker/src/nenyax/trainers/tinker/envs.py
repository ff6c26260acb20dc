"""One Nenyax step-mode episode as tinker-cookbook's `MessageEnv`, and the token-level `Env` over it.

The cookbook's rollout loop drives the episode: it samples a reply to the rendered chat, `EnvFromMessageEnv`
parses the tokens into an assistant message, and `NenyaxMessageEnv.step` plays that reply's text on the Nenyax
session (``parse_action`` then ``aact``) and shows the next observation (``render``). Every step's reward is 0:
the episode's reward is its judgment's score, given once it is over (`NenyaxEnvGroupBuilder.compute_group_rewards`),
as Nenyax's own loop scores it.

A reply the model could not parse into an action (`PolicyFailure`) is the policy's fault and scores 0, as in
Nenyax's loop (status ``policy_error``). An episode that failed for infrastructure (the environment, the
verifier, a transport: ``env_error``, ``verifier_error``, ``infra_error``) is never a reward: `EpisodeFailed`
is raised, which the cookbook's rollout strategies handle as a failed trajectory (`FailFast` fails the group;
`RetryOnFailure` and `MinViableGroup` drop it and count it in ``TrajectoryGroup.rollout_errors``).
"""

from __future__ import annotations

from typing import Any

from tinker_cookbook.renderers import Renderer, get_text_content
from tinker_cookbook.renderers.base import Message
from tinker_cookbook.rl import types
from tinker_cookbook.rl.message_env import EnvFromMessageEnv, MessageEnv, MessageStepResult

import tinker
from nenyax.core import Judgment, Session, Status, Step, StepEnvironment
from nenyax.core.errors import InfraFailure, PolicyFailure, UsageError, VerifierFailure


class EpisodeFailed(RuntimeError):
    """A Nenyax episode that failed for infrastructure: never a reward, a failed trajectory to the cookbook."""

    def __init__(self, status: Status, reason: str) -> None:
        super().__init__(f"nenyax {status.value}: {reason}")
        self.status = status


def _failure(exc: BaseException) -> EpisodeFailed:
    """The status Nenyax's loop gives `exc` (anything unnamed is the environment's failure)."""
    if isinstance(exc, VerifierFailure):
        status = Status.VERIFIER_ERROR
    elif isinstance(exc, InfraFailure):
        status = Status.INFRA_ERROR
    else:
        status = Status.ENV_ERROR
    return EpisodeFailed(status, f"{type(exc).__name__}: {exc}")


def _message(entry: dict[str, Any]) -> Message:
    """A Nenyax chat message as the renderer's `Message` (text content)."""
    content = entry.get("content")
    return {"role": entry["role"], "content": content if isinstance(content, str) else str(content or "")}


class NenyaxMessageEnv(MessageEnv):
    """One episode of `task` (from `seed`) of a loaded step environment, as the cookbook's message-level env."""

    def __init__(self, env: StepEnvironment, task: str | None, seed: int | None) -> None:
        self.env, self.task, self.seed = env, task, seed
        self.example_id = task
        """Read by `EnvFromMessageEnv` for the cookbook's trajectory storage."""
        self.session: Session | None = None
        self.steps: list[Step] = []
        self.transcript: list[Message] = []
        self.judgment: Judgment | None = None
        """The episode's judgment once it is over (a policy error's is Nenyax's: score 0)."""

    async def initial_observation(self) -> list[Message]:
        try:
            self.session = await self.env.asession(task=self.task, seed=self.seed)
        except Exception as exc:
            raise _failure(exc) from exc
        if self.session.trajectory_judge is not None:
            msg = (
                f"{self.env.uri} judges whole trajectories ({type(self.session.trajectory_judge).__name__}), "
                "which the message-level env cannot build; play it with nenyax_group_rollout instead."
            )
            raise UsageError(msg)
        self.transcript = [_message(m) for m in self.session.render()]
        return list(self.transcript)

    async def step(self, message: Message) -> MessageStepResult:
        session = self.session
        if session is None:
            msg = "step() was called before initial_observation()."
            raise UsageError(msg)
        text = get_text_content(message)
        self.transcript.append({"role": "assistant", "content": text})
        try:
            self.steps.append(await session.aact(session.parse_action(text)))
        except PolicyFailure as exc:  # a reply that is no action: the policy's fault, scored 0 as Nenyax scores it
            return self._end(Judgment(score=0.0, passed=False, feedback=str(exc), judge="nenyax:policy_error"))
        except Exception as exc:  # the environment's, the verifier's or a transport's: never a score
            raise _failure(exc) from exc
        if not session.done:
            try:
                self.transcript += [_message(m) for m in session.render()]
            except Exception as exc:
                raise _failure(exc) from exc
            return MessageStepResult(reward=0.0, episode_done=False, next_messages=list(self.transcript))
        try:
            judgment = session.judge(tuple(self.steps))
        except Exception as exc:  # whatever the judge raises is the verifier's failure, never a score
            raise EpisodeFailed(Status.VERIFIER_ERROR, f"{type(exc).__name__}: {exc}") from exc
        return self._end(judgment)

    def _end(self, judgment: Judgment) -> MessageStepResult:
        self.judgment = judgment
        metrics = {"nenyax/passed": float(bool(judgment.passed)), "nenyax/steps": float(len(self.steps))}
        return MessageStepResult(reward=0.0, episode_done=True, next_messages=list(self.transcript), metrics=metrics)

    async def close(self) -> None:
        """Release the session (the builder's ``cleanup``)."""
        if self.session is not None:
            session, self.session = self.session, None
            await session.aclose()


class NenyaxEnv(EnvFromMessageEnv):
    """`EnvFromMessageEnv` over a `NenyaxMessageEnv`, where a reply cut at ``max_tokens`` is still a reply.

    The cookbook ends an episode whose reply hit the length limit with its own ``context_overflow_reward``,
    unjudged; Nenyax plays the cut reply as it is and judges it (what ``nenyax run`` does with a reply cut at
    ``max_tokens``), so the reward is always the judgment's score.
    """

    message_env: NenyaxMessageEnv

    def __init__(self, renderer: Renderer, message_env: NenyaxMessageEnv, **options: Any) -> None:
        super().__init__(renderer, message_env, **options)

    async def _render_in_thread(self, messages: list[Message], **kwargs: Any) -> tinker.ModelInput:
        """Rendered on the event loop's thread, not a worker thread as the cookbook does: the group's envs share
        one Hugging Face fast tokenizer, and transformers 5.5 encoding from two threads at once fails with
        ``RuntimeError: Already borrowed`` (seen here with two members of one group)."""
        return self.renderer.build_generation_prompt(messages, **kwargs)

    async def step(self, action: types.Action, *, extra: types.ActionExtra | None = None) -> types.StepResult:
        if (extra or {}).get("stop_reason") != "length":
            return await super().step(action, extra=extra)
        message, _termination = self.renderer.parse_response(action)  # no stop token: parsed leniently
        result = await self.message_env.step(message)
        observation = (
            tinker.ModelInput.empty() if result.episode_done else await self._render_in_thread(result.next_messages)
        )
        return types.StepResult(
            reward=result.reward,
            episode_done=result.episode_done,
            next_observation=observation,
            next_stop_condition=self.renderer.get_stop_sequences(),
            metrics={**result.metrics, "nenyax/cut_at_max_tokens": 1.0},
            logs=result.logs,
        )
