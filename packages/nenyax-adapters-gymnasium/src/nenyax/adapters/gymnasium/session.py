"""One gymnasium episode: reset from the task's seed, step until terminated or truncated."""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from gymnasium import spaces
from nenyax.adapters.gymnasium import codec
from nenyax.adapters.gymnasium.spaces import coerce_action, jsonable, null_action, to_json
from nenyax.adapters.gymnasium.wrappers import bookkeeping_free
from nenyax.core import Session, Step
from nenyax.core.errors import PolicyFailure, RetryablePolicyFailure, UnsupportedPolicyError
from nenyax.core.toolkit.arrays import encode

if TYPE_CHECKING:
    from nenyax.adapters.gymnasium.environment import GymEnvironment

_ANSI_HIGHLIGHT = re.compile(r"\x1b\[4\dm(.*?)\x1b\[0m")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


MAX_CONSTANT_ACTIONS = 32
"""Larger discrete spaces get no constant probes: the audit would play too many episodes."""


class GymSession(Session):
    """An episode on an env borrowed from the environment's pool (given back on close)."""

    def __init__(self, env: GymEnvironment, reset_seed: int) -> None:
        """Borrow an env and reset it with `reset_seed`; a reset that raises gives nothing back to the pool."""
        self.env = env
        self.seed = reset_seed
        self.task_id = f"{env.spec.target}/seed/{reset_seed}"
        # Judged like every step format: by a judge object, here core's return judge.
        self.trajectory_judge = env.judge
        self.judge_reference = env.judge_reference
        self._gym = env.acquire()
        self._core, self._limit = bookkeeping_free(self._gym)
        self._elapsed = 0
        try:
            self._obs, _info = self._core.reset(seed=reset_seed)
        except Exception:
            env.release(self._gym, healthy=False)
            raise
        # This env's own spaces: sampling seeds the space, which must not be shared between sessions.
        self._obs_space = self._gym.observation_space
        self._act_space = self._gym.action_space
        self._array_obs = isinstance(self._obs_space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary)
        self._record = env.observations
        self._retries_left = env.spec.retries
        self._feedback: str | None = None
        act = self._act_space
        self._int_low = int(act.start) if isinstance(act, spaces.Discrete) else 0
        self._int_high = int(act.start + act.n) if isinstance(act, spaces.Discrete) else 0
        self._done = False
        self._healthy = True
        self._closed = False
        self._last_reward: float | None = None
        self._rendered = False
        self._note: dict[str, Any] | None = None
        self._sampling_rng: random.Random | None = None
        self._fallback_rng = random.Random(f"fallback:{self.task_id}")

    @property
    def observation(self) -> Any:
        """The current native observation (numpy arrays, ints, tuples, dicts)."""
        return self._obs

    @property
    def done(self) -> bool:
        """True once the env reported terminated or truncated."""
        return self._done

    def act(self, action: Any) -> Step:
        """Step the env with `action` (native or its JSON form); an action outside the space is the policy's failure."""
        # Fast paths for the common shapes (a Python int into a Discrete space, an array observation):
        # this method runs once per env step and its cost is what Nenyax adds to the env's own.
        if type(action) is int and self._int_low <= action < self._int_high:
            native = action_json = action
        else:
            native, action_json = coerce_action(self._act_space, action)
        obs = self._obs
        # Encoded before the step: an env may reuse its observation buffer in place.
        observation_json: Any
        if self._array_obs and type(obs) is np.ndarray and self._record != "none":
            observation_json = encode(obs)  # the hot path of CartPole-like envs, without a method call
        else:
            observation_json = None if self._record == "none" else self.recorded_observation(obs)
        try:
            obs, reward, terminated, truncated, info = self._core.step(native)
        except BaseException:
            self._healthy = False  # an env that raised mid-step is closed, not handed to the next episode
            raise
        self._elapsed += 1
        if self._limit is not None and self._elapsed >= self._limit:
            truncated = True  # TimeLimit's rule, applied here because the session steps beneath it
        self._obs = obs
        self._done = bool(terminated or truncated)
        self._retries_left = self.env.spec.retries  # each action gets its own retries
        if self._record in ("last", "ends") and not self._done and not (self._record == "ends" and self._elapsed == 1):
            observation_json = None
        self._last_reward = float(reward)
        info = jsonable(info) if info else {}
        if self._note is not None:
            info.update(self._note)
            self._note = None
        return Step(
            observation=observation_json,
            action=action_json,
            reward=self._last_reward,
            terminated=bool(terminated),
            truncated=bool(truncated),
            info=info,
        )

    def recorded_observation(self, observation: Any) -> Any:
        """The JSON form of a native observation: arrays in core's encoding (dtype, shape, numbers or bytes);
        None with ``observations=none``, whose record keeps no observation at all (the final one included)."""
        if self._record == "none":
            return None
        if self._array_obs and type(observation) is np.ndarray:
            return encode(observation)  # the hot path of CartPole-like envs
        return to_json(self._obs_space, observation)

    def close(self) -> None:
        """Give the env back to the pool (or close it when it raised)."""
        if not self._closed:
            self._closed = True
            self.env.release(self._gym, healthy=self._healthy)

    # ---- text codec

    def render(self) -> list[dict[str, Any]]:
        """The system prompt on the first turn, then the observation (and the last reward) as a user message."""
        env = self.env
        if env.codec_problem:
            raise UnsupportedPolicyError(env.codec_problem)
        messages = []
        if not self._rendered:
            self._rendered = True
            messages.append({"role": "system", "content": self._system_prompt()})
        parts = []
        if self._feedback is not None:
            # A retry: the parser's own sentence says what was wrong and what a valid reply looks like.
            parts.append(f"Your last reply was not a valid action: {self._feedback} Reply again.")
            self._feedback = None
        elif self._last_reward is not None:
            parts.append(f"Reward for your last action: {self._last_reward:g}.")
        parts.append(f"Observation: {codec.format_value(self._obs_space, self._obs)}")
        picture = self._ansi()
        if picture:
            parts.append(f"Rendered ([x] marks the agent):\n{picture}")
        messages.append({"role": "user", "content": "\n".join(parts)})
        return messages

    def _system_prompt(self) -> str:
        env = self.env
        manifest = env.manifest
        limit = f" It ends after at most {env.max_episode_steps} actions." if env.max_episode_steps else ""
        about = f" {manifest.description}" if manifest.description else ""
        return (
            f"You control the Gymnasium environment {env.spec.target}.{about}{limit}\n"
            f"Each turn you see the observation, {codec.describe(env.observation_space)}, "
            "and the reward your last action earned; maximise the total reward.\n"
            f"Reply with your action inside <action></action>: {codec.describe(env.action_space, env.meanings)}.\n"
            f"For example: <action>{codec.example(env.action_space, env.meanings)}</action>"
        )

    def _ansi(self) -> str | None:
        if getattr(self._core, "render_mode", None) != "ansi":
            return None
        try:
            text = self._core.render()
        except Exception:  # noqa: BLE001 - the env's own code, and a picture is a nicety: the observation is enough
            return None
        if not isinstance(text, str):
            return None
        return _ANSI.sub("", _ANSI_HIGHLIGHT.sub(r"[\1]", text)).strip("\n")

    def parse_action(self, text: str) -> Any:
        """The action the reply names; when it names none, a retry while the action has retries left, then the
        URI's ``on_unparseable`` fallback or `PolicyFailure`."""
        try:
            return codec.parse(self._act_space, text, self.env.meanings)
        except PolicyFailure as exc:
            if self._retries_left > 0:
                self._retries_left -= 1
                self._feedback = str(exc)
                raise RetryablePolicyFailure(str(exc)) from exc
            mode = self.env.spec.on_unparseable
            if mode == "fail":
                raise
            # Recorded on the step this action produces, so a fallback never passes for the model's choice.
            self._note = {"unparseable": str(exc), "fallback": mode}
            if mode == "noop":
                return self.null_action()
            return self._sample(self._fallback_rng)

    def reply_choices(self) -> list[str] | None:
        """``<action>name</action>`` (or the integer, where actions have no names) for each action of a
        small discrete space, exactly as the parser reads them."""
        space = self._act_space
        if not isinstance(space, spaces.Discrete) or space.n > MAX_CONSTANT_ACTIONS:
            return None
        meanings = self.env.meanings
        words = meanings if meanings else [str(a) for a in range(self._int_low, self._int_high)]
        return [f"<action>{word}</action>" for word in words]

    # ---- built-in policies

    def reference_action(self) -> Any:
        """The planner's action (tabular envs only)."""
        plan = self.env.plan
        if plan is None:
            raise UnsupportedPolicyError(f"{self.env.spec.target} has no reference policy. {self.env.why_no_reference}")
        return plan.action(self._obs)

    def null_action(self) -> Any:
        """The space's fixed do-nothing-ish action (see `spaces.null_action`)."""
        return null_action(self._act_space)

    def constant_actions(self) -> list[int] | None:
        """Each action of a small discrete space (the audit plays each one on every step)."""
        if isinstance(self._act_space, spaces.Discrete) and self._act_space.n <= MAX_CONSTANT_ACTIONS:
            return list(range(self._int_low, self._int_high))
        return None

    def random_action(self, rng: random.Random) -> Any:
        """A sample of the action space, seeded from `rng` (once per episode, so the episode replays)."""
        return self._sample(rng)

    def _sample(self, rng: random.Random) -> Any:
        if self._sampling_rng is not rng:
            self._sampling_rng = rng
            self._act_space.seed(rng.getrandbits(63))
        return self._act_space.sample()
