"""A gymnasium env as a step environment: one task per reset seed, judged by the episode's return."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium as gym
from gymnasium import spaces
from nenyax.adapters.gymnasium.codec import codec_problem
from nenyax.adapters.gymnasium.meanings import action_meanings
from nenyax.adapters.gymnasium.reference import TabularPlan, plan, table_of
from nenyax.adapters.gymnasium.session import GymSession
from nenyax.adapters.gymnasium.spaces import holds_an_image, jsonable
from nenyax.core import MAX_SEED, Capabilities, Manifest, Mode, ReturnJudge, Split, StepEnvironment
from nenyax.core.errors import BadURIError

if TYPE_CHECKING:
    from nenyax.adapters.gymnasium.options import GymSpec

POOL_SIZE = 64
"""Idle envs kept for reuse: ``gymnasium.make`` costs far more than a ``reset``."""
# Envs whose outcomes are random after the start even though they have no transition table to show it.
STOCHASTIC_CLASSES = frozenset({"BlackjackEnv", "BlackJackJaxEnv"})
# Box2D envs keep their physics world across resets, and BipedalWalker's third reset with the same
# seed already plays differently (measured): a reused env would break "the same seed replays".
FRESH_ENV_MODULES = ("gymnasium.envs.box2d",)
# A space's repr may hold an object address (MiniGrid's MissionSpace shows its mission function), which
# differs in every process and would make the manifest digest differ too.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
NO_ORACLE = "No oracle: the env has no transition table to plan on, and gymnasium ships no optimal controller for it."


def _why_table_is_incomplete(env: gym.Env[Any, Any]) -> str | None:
    # Taxi's fickle passenger changes destination at random outside P, so a plan on P is not optimal.
    if getattr(env.unwrapped, "fickle_passenger", False):
        return "No oracle: the fickle passenger changes destination outside the transition table the planner reads."
    return None


class GymEnvironment(StepEnvironment):
    """One gymnasium env id (or class) with fixed make kwargs; task ids ``<target>/seed/<n>``."""

    def __init__(self, uri: str, spec: GymSpec, factory: Callable[[], gym.Env[Any, Any]]) -> None:
        """Make one env now, so unknown kwargs and missing dependencies fail at load with a reason."""
        self.spec = spec
        self._factory = factory
        self.judge = ReturnJudge()
        first = factory()
        self._pool: list[gym.Env[Any, Any]] = [first]
        self.reuse_envs = not type(first.unwrapped).__module__.startswith(FRESH_ENV_MODULES)
        self.observation_space: spaces.Space[Any] = first.observation_space
        self.action_space: spaces.Space[Any] = first.action_space
        self.observations = spec.observations
        if self.observations == "auto":
            # Every frame of an image env is heavy (two random Pong episodes wrote 249 MB with all of them):
            # the first and the last frames still show where an episode began and ended, and seed checks compare
            # the first one.
            self.observations = "ends" if holds_an_image(self.observation_space) else "all"
        unwrapped = first.unwrapped
        n_actions = self.action_space.n if isinstance(self.action_space, spaces.Discrete) else 0
        self.meanings = action_meanings(unwrapped, int(n_actions)) if n_actions else None
        problem = codec_problem(self.observation_space, self.action_space)
        self.codec_problem = _stable(problem) if problem else None
        self.plan: TabularPlan | None = None
        self.why_no_reference: str | None = NO_ORACLE
        table = table_of(first)
        if table is not None:
            self.why_no_reference = _why_table_is_incomplete(first)
            if self.why_no_reference is None:
                self.plan = plan(table, int(self.observation_space.n), int(n_actions))
        env_spec = first.spec
        self.max_episode_steps = env_spec.max_episode_steps if env_spec else None
        stochastic = (
            self.plan.stochastic
            if self.plan is not None
            else type(unwrapped).__name__ in STOCHASTIC_CLASSES or bool(env_spec and env_spec.nondeterministic)
        )
        super().__init__(self._manifest(uri, first, stochastic))
        threshold = self.manifest.extra["spec"]["reward_threshold"]
        self.judge_reference = {"reward_threshold": threshold, "name": f"gymnasium:{spec.target}"}

    def _manifest(self, uri: str, first: gym.Env[Any, Any], stochastic: bool) -> Manifest:
        env_spec = first.spec
        # gymnasium's docstrings are markdown: skip the headings, keep the first paragraph.
        doc = "\n".join(
            line for line in (type(first.unwrapped).__doc__ or "").splitlines() if not line.lstrip().startswith("#")
        )
        paragraphs = [p for p in re.split(r"\n\s*\n", doc) if p.strip()]
        description = paragraphs[0] if paragraphs else ""
        threshold = env_spec.reward_threshold if env_spec else None
        return Manifest(
            uri=uri,
            format="gymnasium",
            format_version=gym.__version__,
            mode=Mode.STEP,
            name=self.spec.target,
            description=" ".join(description.split())[:500],
            splits=(Split(name="seeds", count=self.spec.tasks),),
            observation=(
                f"{_stable(self.observation_space)}, stored in steps as JSON (ints, strings, lists, objects; arrays "
                "as {'__ndarray__': dtype, 'values': [...]}, or with 'shape' and base64 'data' past 64 numbers)."
            ),
            action=(
                f"{_stable(self.action_space)}; chat models answer inside <action></action> (see the system prompt)."
            ),
            extra={
                "spec": {
                    "id": env_spec.id if env_spec else self.spec.target,
                    "entry_point": str(env_spec.entry_point) if env_spec else self.spec.entry_point,
                    "reward_threshold": threshold,
                    "max_episode_steps": self.max_episode_steps,
                    "nondeterministic": bool(env_spec and env_spec.nondeterministic),
                    "kwargs": jsonable(env_spec.kwargs if env_spec else {}),
                    # The registered id whose settings an env class was made with (None: not registered).
                    "registration": self.spec.registration.id if self.spec.registration else None,
                },
                "make_kwargs": jsonable(self.spec.kwargs),
                "score": (
                    "The undiscounted episode return (sum of rewards), not normalised; "
                    "passed is return >= the spec's reward_threshold when it has one."
                ),
                "reference": "policy iteration on env.unwrapped.P" if self.plan else self.why_no_reference,
                "text_codec": self.codec_problem or "ok",
                "on_unparseable": self.spec.on_unparseable,
                "retries": self.spec.retries,
                "observations": self.observations,
                "reuses_envs": self.reuse_envs,
                "action_meanings": list(self.meanings or ()),
            },
            capabilities=Capabilities(
                seeded=True,
                stable_task_ids=True,
                reference_policy=self.plan is not None,
                stochastic=stochastic,
                multi_turn=True,
                max_turns=self.max_episode_steps,
            ),
        )

    # ---- the pool: sessions borrow an env and give it back on close

    def acquire(self) -> gym.Env[Any, Any]:
        """An idle env, made on demand."""
        return self._pool.pop() if self._pool else self._factory()

    def release(self, env: gym.Env[Any, Any], healthy: bool) -> None:
        """Return `env` for reuse; an env that raised is closed instead (its state is unknown)."""
        if healthy and self.reuse_envs and len(self._pool) < POOL_SIZE:
            self._pool.append(env)
        else:
            _close_quietly(env)

    def close(self) -> None:
        """Close every idle env."""
        while self._pool:
            _close_quietly(self._pool.pop())

    # ---- tasks

    def task_ids(self, split: str | None = None, limit: int | None = None) -> list[str]:
        """``<target>/seed/0`` ... ``<target>/seed/<tasks-1>`` (any other seed is a valid task too)."""
        if split not in (None, "seeds"):
            msg = f"{self.spec.target} has one split, 'seeds', not {split!r}."
            raise BadURIError(msg)
        count = self.spec.tasks if limit is None else min(limit, self.spec.tasks)
        return [f"{self.spec.target}/seed/{n}" for n in range(count)]

    def parse_task(self, task: str) -> int:
        """The reset seed of `task`; `BadURIError` for a task of another env or a malformed id."""
        prefix = f"{self.spec.target}/seed/"
        digits = task[len(prefix) :] if task.startswith(prefix) else ""
        if not (digits.isascii() and digits.isdecimal()) or int(digits) > MAX_SEED:
            msg = f"{task!r} is not a task of {self.spec.target}; its task ids look like '{prefix}0'."
            raise BadURIError(msg)
        return int(task[len(prefix) :])

    def session(self, task: str | None = None, seed: int | None = None) -> GymSession:
        """Reset an env from `task`'s seed (else `seed`, else 0); a task's own seed wins over `seed`."""
        if task is not None:
            reset_seed = self.parse_task(task)
        else:
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
                msg = f"A gymnasium reset seed is a non-negative integer, not {seed!r}."
                raise BadURIError(msg)
            reset_seed = 0 if seed is None else seed
        return GymSession(self, reset_seed)


def _stable(text: object) -> str:
    """`text` without object addresses, so the manifest is the same in every process."""
    return _ADDRESS.sub("", str(text))


def _close_quietly(env: gym.Env[Any, Any]) -> None:
    # Closing a broken env must not hide the failure that broke it.
    with contextlib.suppress(Exception):
        env.close()
