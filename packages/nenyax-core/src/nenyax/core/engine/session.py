"""Step-mode sessions: one episode in progress, driven by Nenyax's loop."""

from __future__ import annotations

import abc
import random
from collections.abc import Sequence
from typing import Any

from nenyax.core.contract.trajectory import Judgment, Step
from nenyax.core.errors import PolicyFailure, UnsupportedPolicyError, VerifierFailure


class Session(abc.ABC):
    """One step-mode episode in progress: ``observation`` -> ``act(action)`` until ``done``.

    Subclasses implement `observation`, `done`, `act` and `judge`; the built-in policies need
    `reference_action`, `null_action` and `random_action`; model policies need the text codec
    (`render`, `parse_action`).
    """

    task_id: str | None = None
    """Stable id of the task this session plays."""
    seed: int | None = None
    """Seed the session started from."""
    action_type: type | tuple[type, ...] | None = None
    """The type(s) every action must be, where the format knows it (``str`` for a question): a policy
    that returns anything else ends the episode ``policy_error`` (scored 0), never judged as an answer."""
    trajectory_judge: Any = None
    """A `TrajectoryJudge` to judge the finished episode with, instead of `judge(steps)` (e.g. core's return judge)."""
    judge_reference: Any = None
    """What `trajectory_judge` compares against."""

    @property
    @abc.abstractmethod
    def observation(self) -> Any:
        """The current native observation."""

    @property
    @abc.abstractmethod
    def done(self) -> bool:
        """True once the episode is over (terminated or truncated)."""

    @abc.abstractmethod
    def act(self, action: Any) -> Step:
        """Apply `action`; return the step (observation it was chosen from, reward, flags)."""

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """Judge the finished episode; raise `VerifierFailure` when the verifier itself fails.

        Sessions that set `trajectory_judge` need not implement it.
        """
        msg = f"{type(self).__name__} has neither a judge() nor a trajectory_judge."
        raise VerifierFailure(msg)

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release resources held by the session."""

    async def aact(self, action: Any) -> Step:
        """Async twin of `act`; override for environments that do I/O."""
        return self.act(action)

    async def aclose(self) -> None:
        """Async twin of `close`."""
        self.close()

    def recorded_observation(self, observation: Any) -> Any:
        """The JSON-able form of `observation` for a step the loop records itself (a reply or action refused).

        Steps from `act` already carry the session's own form; sessions whose native observations are
        not JSON-able (numpy arrays) override this so every recorded step serialises alike.
        """
        return observation

    # ---- tools: formats whose actions are tool calls (the manifest claims `tools`)

    def tool_call(self, action: Any) -> tuple[str, Any] | None:
        """The tool `action` calls, as ``(name, arguments)``; None when it is not a tool call (the default).

        Asked of environments that claim the `tools` capability only, before each action is applied;
        the call is then recorded as a `ToolCall` (timed around `act`, with `tool_result` or the error
        `act` raised). It must not raise: a malformed action is `act`'s to refuse.
        """
        return None

    def tool_result(self, step: Step) -> Any:
        """What the tool answered, as the `ToolCall` records it (JSON-able): by default the observation after it."""
        return self.recorded_observation(self.observation)

    # ---- text codec: how a chat model sees and drives this environment

    def render(self) -> list[dict[str, Any]]:
        """Chat messages presenting the current observation (the system prompt on the first turn)."""
        msg = "This environment has no text codec, so a chat model cannot play it."
        raise UnsupportedPolicyError(msg)

    def parse_action(self, text: str) -> Any:
        """Turn a model's reply into an action; raise `PolicyFailure` when it cannot be parsed."""
        if not isinstance(text, str):
            msg = f"Expected the model's reply as text, got {type(text).__name__}."
            raise PolicyFailure(msg)
        return text

    def reply_choices(self) -> Sequence[str] | None:
        """Every valid reply, where there are few (a small finite action space): each parses to one action.

        A text policy asked to constrain its decoding (``Endpoint(..., constrain=True)``) then replies
        with exactly one of them. None (the default): replies are free text.
        """
        return None

    # ---- built-in policies

    def reference_action(self) -> Any:
        """The oracle's action for the current observation."""
        msg = "This environment has no reference (oracle) policy."
        raise UnsupportedPolicyError(msg)

    def null_action(self) -> Any:
        """An action that does nothing useful (empty answer, no-op)."""
        msg = "This environment has no null action."
        raise UnsupportedPolicyError(msg)

    def constant_actions(self) -> Sequence[Any] | None:
        """Cheap actions to play on every turn of every task, for the audit's floor (None: the space is too big).

        Question formats offer a few common answers; finite action spaces, each action. The audit adds
        the reference's own answers of the sampled tasks where they are short text.
        """
        return None

    def random_action(self, rng: random.Random) -> Any:
        """A random valid action (for text environments: a garbage answer)."""
        msg = "This environment has no random action."
        raise UnsupportedPolicyError(msg)
