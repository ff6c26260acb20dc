"""`NenyaxTextEnv`: a Nenyax step environment as skyrl-gym's ``BaseTextEnv``, registered as ``nenyax``.

SkyRL's own generator (`SkyRLGymGenerator`) samples the model token in, token out and hands the env each
reply as text: ``init(prompt)`` gives the first chat, ``step(text)`` what the environment answered. Here each
episode is played by Nenyax's ordinary step loop on a private event loop, with a policy (`_Relay`) whose
replies are the texts SkyRL hands `step`, so the session's text codec, its turn limit, its verifier and its
statuses are Nenyax's own, exactly as ``nenyax run`` plays them.

The reward is 0.0 on every step but the last, whose reward is the judgment's score (a reply Nenyax cannot use
ends the episode ``policy_error``, scored 0, as Nenyax's loop does). SkyRL's text-env loop has no "failed"
status and adds up every reward it is handed, so an episode that failed for infrastructure (``infra_error``,
``env_error``, ``verifier_error``, ``timeout``) is raised (`EpisodeFailed`), never a reward of 0:
`NenyaxGenerator` masks such an episode instead.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any, NoReturn

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from nenyax.core import Environment, PolicyInfo, StepEnvironment, Trajectory, load
from nenyax.core.errors import InfraFailure, PolicyFailure, UsageError
from nenyax.core.toolkit.loops import LoopThread

ENV_ID = "nenyax"
"""The id the text env is registered under in skyrl-gym (a row's ``env_class``)."""

_LOOP = LoopThread("nenyax-skyrl-text-env")
"""Where every text env's episode plays (SkyRL calls `init` and `step` from its loop or its executor)."""

_ENVIRONMENTS: dict[str, Environment] = {}
_ENVIRONMENTS_LOCK = threading.Lock()


class EpisodeFailed(InfraFailure):
    """The episode ended for a reason that is not the model's (its status says which): it has no reward."""


def environment(uri: str) -> Environment:
    """The environment at `uri`, loaded once per process (SkyRL makes one text env per episode)."""
    with _ENVIRONMENTS_LOCK:
        if uri not in _ENVIRONMENTS:
            _ENVIRONMENTS[uri] = load(uri)
        return _ENVIRONMENTS[uri]


class _Relay:
    """The episode's policy: it shows each chat it is asked about and answers with the text SkyRL hands `step`."""

    speaks_text = True
    info = PolicyInfo(kind="trainer", name="skyrl:text-env")

    def __init__(self) -> None:
        self.asked: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue()
        self.replies: asyncio.Queue[str | None] = asyncio.Queue()

    async def act(self, turn: Any) -> str:
        self.asked.put_nowait([dict(m) for m in turn.messages])
        reply = await self.replies.get()
        if reply is None:
            raise PolicyFailure("SkyRL closed the text env before the episode ended.")
        return reply


class _Episode:
    """One episode in progress on the private loop."""

    def __init__(self, env: StepEnvironment, task: str, seed: int, sample: int) -> None:
        self.relay = _Relay()
        self.played: asyncio.Task[Trajectory] = asyncio.create_task(
            env.arollout(self.relay, task=task, seed=seed, sample=sample)
        )

    async def next(self, reply: str | None = None) -> list[dict[str, Any]] | Trajectory:
        """Hand the model's `reply` (None: the first turn); the next chat it is asked about, or the trajectory."""
        if reply is not None:
            self.relay.replies.put_nowait(reply)
        asking = asyncio.ensure_future(self.relay.asked.get())
        await asyncio.wait({asking, self.played}, return_when=asyncio.FIRST_COMPLETED)
        if asking.done():
            return asking.result()
        asking.cancel()
        return self.played.result()

    async def end(self) -> None:
        if not self.played.done():
            self.relay.replies.put_nowait(None)
            await asyncio.wait({self.played}, timeout=30)


def _abandon(episode: _Episode) -> None:
    """End an episode SkyRL dropped without closing its env (its loop stopped at its length limit)."""
    _LOOP.submit(episode.end())


class NenyaxTextEnv(BaseTextEnv):
    """A task of a Nenyax step environment, played one SkyRL turn at a time (see the module docstring).

    ``skyrl_gym.make("nenyax", env_config=..., extras={"nenyax_uri": URI, "nenyax_task": TASK_ID})``; the
    extras may also give ``nenyax_seed`` (default: ``env_config["seed"]``, else 0) and ``nenyax_sample``
    (the repeat's number: it seeds a random policy's draws and nothing of the model's).
    """

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        config = dict(env_config or {})
        uri = extras.get("nenyax_uri") or config.get("uri")
        task = extras.get("nenyax_task")
        if not uri or task is None:
            msg = (
                "A row of the nenyax text env names its environment and task in env_extras "
                "({'nenyax_uri': ..., 'nenyax_task': ...}); make the rows with nenyax.trainers.skyrl.skyrl_rows."
            )
            raise UsageError(msg)
        env = environment(str(uri))
        if not isinstance(env, StepEnvironment):
            msg = (
                f"{env.uri} runs its own loop ({env.manifest.mode.value} mode), which SkyRL's text-env loop "
                "cannot drive; train it with nenyax.trainers.skyrl.NenyaxGenerator."
            )
            raise UsageError(msg)
        self.env = env
        self.task = str(task)
        seed = extras.get("nenyax_seed", config.get("seed"))
        self.seed = 0 if seed is None else int(seed)
        self.sample = int(extras.get("nenyax_sample", 0))
        self.trajectory: Trajectory | None = None
        """The judged episode, once it is over."""
        self._episode: _Episode | None = None
        self._shown = 0
        self._finalizer: weakref.finalize | None = None

    def init(self, prompt: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Open the episode; the chat its session renders (SkyRL's dataset row shows the same one)."""
        self._episode = _LOOP.run(self._open())
        self._finalizer = weakref.finalize(self, _abandon, self._episode)
        self._finalizer.atexit = False
        first = _LOOP.run(self._episode.next())
        if isinstance(first, Trajectory):
            self._failed(first)  # a session that could not open: nothing to play
            msg = f"The episode of task {self.task} ended before the model was asked anything."
            raise EpisodeFailed(msg)
        self._shown = len(first)
        return first, {"nenyax_task": self.task, "nenyax_uri": self.env.uri}

    async def _open(self) -> _Episode:
        assert isinstance(self.env, StepEnvironment)
        return _Episode(self.env, self.task, self.seed, self.sample)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Play the model's reply; what the environment answered (the session's next chat messages)."""
        if self._episode is None:
            raise UsageError("SkyRL calls init() on the nenyax text env before step().")
        if self.trajectory is not None:
            raise UsageError(f"The episode of task {self.task} is over; SkyRL stops at done=True.")
        self.turns += 1
        after = _LOOP.run(self._episode.next(action))
        if isinstance(after, list):
            # The chat now holds the reply (as the assistant's message) and then the environment's answer.
            observations = after[self._shown + 1 :]
            self._shown = len(after)
            return BaseTextEnvStepOutput(
                observations=observations, reward=0.0, done=False, metadata={"nenyax_status": "running"}
            )
        self.trajectory = after
        judgment = after.judgment
        if not after.status.trainable or judgment is None:
            self._failed(after)
        metadata = {
            "nenyax_status": after.status.value,
            "nenyax_score": judgment.score,
            "nenyax_passed": judgment.passed,
            "nenyax_components": dict(judgment.components),
            "nenyax_feedback": judgment.feedback,
            "nenyax_trajectory_id": after.id,
        }
        return BaseTextEnvStepOutput(observations=[], reward=float(judgment.score), done=True, metadata=metadata)

    def _failed(self, trajectory: Trajectory) -> NoReturn:
        self.trajectory = trajectory
        why = f": {trajectory.error}" if trajectory.error else ""
        msg = (
            f"The episode of task {self.task} of {self.env.uri} ended {trajectory.status.value}{why}, which is no "
            "reward (SkyRL's text-env loop has no failed status; NenyaxGenerator masks such an episode instead)."
        )
        raise EpisodeFailed(msg)

    def get_metrics(self) -> dict[str, Any]:
        """The judged episode's score and pass, for SkyRL's env metrics."""
        judgment = self.trajectory.judgment if self.trajectory is not None else None
        if judgment is None:
            return {}
        metrics: dict[str, Any] = {"nenyax_score": judgment.score}
        if judgment.passed is not None:
            metrics["nenyax_passed"] = float(judgment.passed)
        return metrics

    def close(self) -> None:
        """End the episode where SkyRL stopped before it was over (its length limit)."""
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._episode is not None and self.trajectory is None:
            _LOOP.run(self._episode.end())
