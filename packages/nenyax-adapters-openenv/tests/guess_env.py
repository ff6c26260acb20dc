"""The tests' own OpenEnv environment: guess a secret number, served by OpenEnv's own `create_app`.

Works with both distributions of OpenEnv (`openenv` 0.10 and `openenv-core` 0.3: same import package).

- `GuessEnv` (app ``seeded``): the secret is ``Random(seed).randint(1, 100)``, so a reset seed
  recreates the episode. Its `state` carries ``solution`` (the optimal action, ``{"guess": secret}``):
  the tests load it with ``?reference=solution``, so the reference policy is the environment's own
  answer read over the wire, not something Nenyax invents.
- `RandomGuessEnv` (app ``unseeded``): ignores the seed and draws its secret (1..1000) from the
  operating system's randomness: an honest example of an environment that does not honour seeds.

- `TaskGuessEnv` (app ``tasks``): the seeded game plus OpenEnv's Task API (the `TaskProvider`
  methods): splits ``train`` and ``test`` of fixed secrets, listed as ``{"id": "test-1", "index": 1,
  "split": "test"}``; a reset with ``split`` and ``index`` plays that task's secret, one without
  plays the seed's. `IgnoringTaskGuessEnv` (app ``tasks-ignored``) lists the same tasks, but its
  ``reset()`` declares neither ``split`` nor ``index`` (nor ``**kwargs``), so OpenEnv drops them:
  the mistake OpenEnv's Task API guide warns of. openenv-core 0.3 serves no Task API routes at all.

Rules: seven tries (the reset argument ``tries`` changes that: ``?tries=3`` in a URI); each wrong guess answers ``higher`` or ``lower`` with reward 0; the right one
ends the episode with reward 1. The server refuses the guess 13 with a pydantic validator that JSON
Schema cannot express, so a client that validates against ``/schema`` still meets a server-side
rejection (the `VALIDATION_ERROR` path).
"""

from __future__ import annotations

import inspect
import random
from typing import Any, ClassVar

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

TRIES = 7


class GuessAction(Action):
    """One guess of the secret."""

    guess: int = Field(..., ge=1, le=100, description="Your guess, an integer from 1 to 100")

    @field_validator("guess")
    @classmethod
    def _not_thirteen(cls, value: int) -> int:
        if value == 13:
            # A PydanticCustomError: OpenEnv's server cannot serialise a plain ValueError's context and
            # would answer SESSION_ERROR and drop the socket instead of VALIDATION_ERROR.
            raise PydanticCustomError("unlucky", "the server refuses 13: it is unlucky")
        return value


class WideGuessAction(Action):
    """One guess of the secret of the unseeded game."""

    guess: int = Field(..., ge=1, le=1000, description="Your guess, an integer from 1 to 1000")


class GuessObservation(Observation):
    """What the player sees."""

    hint: str = Field(description="'guess a number', 'higher', 'lower' or 'correct'")
    low: int = Field(description="Smallest possible secret")
    high: int = Field(description="Largest possible secret")
    tries_left: int = Field(description="Guesses left")


class GuessState(State):
    """The hidden state, including the answer."""

    secret: int = 0
    solution: dict[str, Any] = Field(default_factory=dict)


class GuessEnv(Environment):
    """Seeded guess-the-number: the reset seed fixes the secret."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    HIGH = 100

    def __init__(self) -> None:
        super().__init__()
        self._state = GuessState()
        self._tries = self._budget = TRIES

    def _draw(self, seed: int | None) -> int:
        return random.Random(seed).randint(1, self.HIGH)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, tries: int = TRIES, **kwargs: Any
    ) -> GuessObservation:
        secret = self._draw(seed)
        self._state = GuessState(episode_id=episode_id, step_count=0, secret=secret, solution={"guess": secret})
        self._tries = self._budget = int(tries)
        return GuessObservation(hint="guess a number", low=1, high=self.HIGH, tries_left=self._tries)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> GuessObservation:
        self._state.step_count += 1
        self._tries -= 1
        secret = self._state.secret
        if action.guess == secret:
            hint, reward, done = "correct", 1.0, True
        else:
            hint, reward, done = ("higher" if action.guess < secret else "lower"), 0.0, self._tries <= 0
        return GuessObservation(
            hint=hint,
            low=1,
            high=self.HIGH,
            tries_left=self._tries,
            reward=reward,
            done=done,
            metadata={"tries": self._budget - self._tries},
        )

    @property
    def state(self) -> GuessState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="guess",
            description="Guess a secret number from 1 to 100 in seven tries; each wrong guess says higher or lower.",
            version="1.0.0",
        )


class RandomGuessEnv(GuessEnv):
    """Unseeded guess-the-number: the secret ignores the reset seed."""

    HIGH = 1000

    def _draw(self, seed: int | None) -> int:
        return random.SystemRandom().randint(1, self.HIGH)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="guess-unseeded",
            description="Guess a secret number from 1 to 1000; the secret ignores the reset seed.",
            version="1.0.0",
        )


class JudgedGuessEnv(GuessEnv):
    """The seeded game, judging its own episodes: the final metadata carries a `judgment`, as `nenyax serve` sends it."""

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> GuessObservation:
        observation = super().step(action, timeout_s, **kwargs)
        if observation.done:
            tries = observation.metadata["tries"]
            solved = observation.hint == "correct"
            observation.metadata["judgment"] = {
                "score": 1.0 if solved else 0.0,
                "passed": solved,
                "components": {"tries": tries},
                "feedback": f"{'found' if solved else 'missed'} in {tries} tries",
            }
        return observation


class TaskGuessEnv(GuessEnv):
    """The seeded game with OpenEnv's Task API: each task is a fixed secret, selected by split and index."""

    SECRETS: ClassVar[dict[str, tuple[int, ...]]] = {"train": (17, 58, 91), "test": (5, 64)}

    def list_splits(self) -> list[str]:
        return list(self.SECRETS)

    def num_tasks(self, split: str) -> int:
        return len(self.SECRETS[split])

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        if not 0 <= index < self.num_tasks(split):
            raise IndexError(f"index {index} out of range for split {split}")
        return {"id": f"{split}-{index}", "index": index, "split": split}

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [self.get_task(split, i) for i in range(self.num_tasks(split))]

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return self.list_tasks(split)[start:stop]

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "train",
        index: int | None = None,
        **kwargs: Any,
    ) -> GuessObservation:
        observation = super().reset(seed=seed, episode_id=episode_id, **kwargs)
        if index is not None:  # the task's own secret; without an index the seed's, as OpenEnv's guide asks
            secret = self.SECRETS[split][index]
            self._state.secret, self._state.solution = secret, {"guess": secret}
        return observation


class IgnoringTaskGuessEnv(TaskGuessEnv):
    """Lists tasks, but its reset declares no split or index (nor **kwargs): OpenEnv drops them."""

    def reset(self, seed: int | None = None, episode_id: str | None = None) -> GuessObservation:  # type: ignore[override]
        return GuessEnv.reset(self, seed=seed, episode_id=episode_id)


def app(env: type[GuessEnv], action: type[Action], max_sessions: int) -> Any:
    """`create_app` of either OpenEnv version (0.3 has no `state_cls`)."""
    kwargs: dict[str, Any] = {"env_name": env.__name__.lower(), "max_concurrent_envs": max_sessions}
    if "state_cls" in inspect.signature(create_app).parameters:
        kwargs["state_cls"] = GuessState
    return create_app(env, action, GuessObservation, **kwargs)


APPS = {
    "seeded": lambda: app(GuessEnv, GuessAction, 8),
    "unseeded": lambda: app(RandomGuessEnv, WideGuessAction, 8),
    "judged": lambda: app(JudgedGuessEnv, GuessAction, 8),
    "tasks": lambda: app(TaskGuessEnv, GuessAction, 8),
    "tasks-ignored": lambda: app(IgnoringTaskGuessEnv, GuessAction, 8),
    # One session at a time: the capacity tests hold it and watch a second client be refused.
    "single": lambda: app(GuessEnv, GuessAction, 1),
}
"""The apps `serve_apps.py` can run, by name."""
