"""The `Env` that plays a Nenyax taskset: in step mode the Nenyax session is the seat's user.

As verifiers' own OpenEnv and TextArena tasksets do, the env opens the seat's interaction and answers
each reply: here Nenyax's own step loop runs (`env.arollout`) with a policy that hands the session's
rendered messages to the seat as the next user turn and returns the seat's reply, so Nenyax parses,
retries, steps and judges exactly as it does for any model. Rollout and task mode are one run of the
seat, whose harness (`NenyaxHarness`) plays the Nenyax episode in-process against the interception URL.
Either way the episode's outcome lands on ``trace.info`` before verifiers scores the trace.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from nenyax.core import InfraFailure, PolicyInfo, Status
from nenyax.trainers.verifiers import outcome
from nenyax.trainers.verifiers.taskset import NenyaxTask, environment


class SeatEnded(RuntimeError):
    """verifiers ended the seat's run (a turn limit, a ``@stop``) before the Nenyax episode was over."""


class SeatPolicy:
    """A Nenyax text policy that is verifiers' seat: each turn's new messages go to it as one user turn."""

    speaks_text = True

    def __init__(self, interaction: Any) -> None:
        self.interaction = interaction
        self.info = PolicyInfo(kind="verifiers", name="verifiers seat")
        self.sent = 0
        """How many of the episode's messages the seat has already seen."""
        self.ended: str | None = None
        """Why verifiers ended the seat's run early, if it did."""

    async def act(self, turn: Any) -> str:
        new = [m for m in turn.messages[self.sent :] if m.get("role") != "assistant"]
        self.sent = len(turn.messages) + 1  # the reply is appended to the transcript after this returns
        try:
            segment = await self.interaction.turn(new)
        except Exception as exc:  # verifiers' machinery or the model call: never the policy's reply
            raise InfraFailure(f"The verifiers seat's turn failed: {type(exc).__name__}: {exc}") from exc
        if segment.terminated:
            trace = self.interaction.trace
            if trace.errors:  # the model call failed: not the policy's doing
                raise InfraFailure(f"The verifiers seat's run failed: {trace.errors[-1].message}")
            self.ended = f"verifiers ended the seat's run ({trace.stop_condition}) before the episode was over."
            raise SeatEnded(self.ended)
        return str(segment.last_reply)


class NenyaxEnvConfig(vf.EnvConfig):
    """One seat, ``player``: the policy being evaluated or trained (``--env.player.*``)."""

    player: vf.AgentConfig = vf.AgentConfig()


class NenyaxEnv(vf.Env[NenyaxEnvConfig]):
    """A Nenyax environment's episode: the session plays the user (step mode), else one run of the seat."""

    async def run(self, task: NenyaxTask, agents: Any) -> None:
        if task.data.mode != "step":
            await agents.player.run(task)  # NenyaxHarness plays the episode and records its outcome
            return
        env = environment(task.data.uri)
        async with agents.player.interaction(task) as interaction:
            seat = SeatPolicy(interaction)
            trajectory = await env.arollout(seat, task=task.data.task_id, seed=task.data.seed)
            done = outcome.summary(trajectory)
            if seat.ended is not None and trajectory.status is Status.POLICY_ERROR:
                # Cut by verifiers, not judged by the environment: no reward, never a made-up 0.
                done.update(cut=True, error=seat.ended, score=None, passed=None, components={})
            interaction.trace.info[outcome.INFO_KEY] = done
