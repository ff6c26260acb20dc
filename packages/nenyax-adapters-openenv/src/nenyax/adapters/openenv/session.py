"""One OpenEnv episode: a ``/ws`` connection reset onto its task (split and index, or seed), stepped until done."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import aiohttp

from nenyax.adapters.openenv import codec
from nenyax.adapters.openenv.server import lookup, open_channel, read_state
from nenyax.adapters.openenv.wire import VALIDATION_ERROR, Channel, Reply, ServerError, observation_reply
from nenyax.core import (
    BadURIError,
    EnvironmentFailure,
    Judgment,
    PolicyFailure,
    Session,
    Step,
    UnsupportedPolicyError,
)
from nenyax.core.toolkit.loops import LoopThread

if TYPE_CHECKING:
    from nenyax.adapters.openenv.environment import OpenEnvEnvironment

MAX_SEED = 2**63 - 1
"""Largest seed: seeds are recorded as JSON integers, which stay within 64 bits."""
JUDGMENT_KEY = "judgment"
"""A final observation's ``metadata[JUDGMENT_KEY]`` (``{score, passed, components, feedback}``), when
a server sends one (as ``nenyax serve`` does), is the episode's judgment instead of the reward sum."""


class OpenEnvSession(Session):
    """An episode on its own WebSocket connection (the server's environment instance lives as long as it)."""

    def __init__(self, env: OpenEnvEnvironment, task_id: str | None, seed: int, reset: dict[str, Any]) -> None:
        """Not started: `start` connects and resets with `reset` (the task's selection, the seed, the URI's keys)."""
        self.env = env
        self.seed = seed
        self.task_id = task_id
        self._reset = reset
        self._http: aiohttp.ClientSession | None = None
        self._channel: Channel | None = None
        self._reply: Reply | None = None
        self._last_reward: float | None = None
        self._rendered = False
        self._reference: Any = None
        self._runner: LoopThread | None = None
        """Set for sessions opened synchronously: their connection lives on this loop."""

    async def start(self) -> None:
        """Connect and reset."""
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        try:
            self._channel, self._reply = await open_channel(self._http, self.env.spec, self._reset)
            if self.task_id is None:
                self.task_id = self._named_task(self._reply)
            await self._fetch_reference()
        except BaseException:
            await self.aclose()
            raise

    def _named_task(self, reply: Reply) -> str | None:
        # A reset by seed alone lets the server pick the task; one that says which (``nenyax serve`` puts
        # the task id in the metadata) names a task of its own listing, which is recorded.
        catalog = self.env.info.catalog
        named = (reply.metadata or {}).get("task_id")
        return named if catalog is not None and isinstance(named, str) and named in catalog.by_id else None

    async def _fetch_reference(self) -> None:
        # The reference is read from the server's own state after every observation (only when the URI
        # names it): reference_action() must answer without I/O, and the answer changes as the episode goes.
        path = self.env.spec.reference
        if path is None or self._channel is None or self.done:
            return
        try:
            state = await read_state(self._channel)
        except ServerError as exc:
            msg = f"The OpenEnv server at {self._channel.url} refused a state frame for reference=: {exc.details()}."
            raise EnvironmentFailure(msg) from exc
        try:
            self._reference = self.env.info.action.wrap(lookup(state, path))
        except KeyError:
            msg = f"The server's state no longer has the field {path!r} that reference= names."
            raise EnvironmentFailure(msg) from None

    # ---- the episode

    @property
    def observation(self) -> dict[str, Any]:
        """The current observation: the server's observation object without its ``metadata``."""
        assert self._reply is not None, "the session was not started"
        return self._reply.observation

    @property
    def done(self) -> bool:
        """True once the server answered ``done: true``."""
        return self._reply is not None and self._reply.done

    async def aact(self, action: Any) -> Step:
        """Validate `action` against the schema, send it, and return the step the server answered."""
        assert self._reply is not None, "the session was not started"
        assert self._channel is not None, "the session was not started"
        action = self.env.info.action.check(action)
        before = self._reply
        try:
            kind, data = await self._channel.request("step", action)
        except ServerError as exc:
            if exc.code == VALIDATION_ERROR:
                msg = f"The server rejected the action {_short(action)}: {exc.details()}."
                raise PolicyFailure(msg) from exc
            msg = f"The OpenEnv server at {self._channel.url} failed the step: {exc.details()} ({exc.code})."
            raise EnvironmentFailure(msg) from exc
        if kind != "observation":
            msg = f"The OpenEnv server at {self._channel.url} answered a step with a {kind!r} frame."
            raise EnvironmentFailure(msg)
        reply = observation_reply(data, self._channel.url)
        self._reply = reply
        self._last_reward = reply.reward
        info: dict[str, Any] = {}
        if reply.metadata:
            info["metadata"] = reply.metadata
        if reply.reward is None:
            info["reward"] = None  # the server sent no reward: recorded as 0, marked so
        await self._fetch_reference()
        return Step(
            observation=before.observation,
            action=action,
            reward=0.0 if reply.reward is None else reply.reward,
            terminated=reply.done,
            info=info,
        )

    def act(self, action: Any) -> Step:
        """Synchronous `aact`, for sessions opened with `OpenEnvEnvironment.session`."""
        if self._runner is None:
            msg = "This session was opened with asession(); step it with aact()."
            raise RuntimeError(msg)
        return self._runner.run(self.aact(action))

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The sum of the rewards (or the server's own judgment in the final metadata, when it sends one)."""
        total = float(sum(step.reward for step in steps))
        ended = "done" if steps and steps[-1].terminated else "cut (the server never said done)"
        final = steps[-1].info.get("metadata", {}) if steps else {}
        sent = final.get(JUDGMENT_KEY) if isinstance(final, dict) else None
        if isinstance(sent, dict) and isinstance(sent.get("score"), int | float) and math.isfinite(sent["score"]):
            parts = sent.get("components")
            components: dict[str, Any] = parts if isinstance(parts, dict) else {}
            passed = sent.get("passed")
            return Judgment(
                score=float(sent["score"]),
                passed=passed if isinstance(passed, bool) else None,
                components={k: float(v) for k, v in components.items() if isinstance(v, int | float)},
                feedback=str(sent.get("feedback", "")),
                judge=f"openenv:{self.env.name} (the server's judgment)",
            )
        return Judgment(
            score=total,
            passed=None,
            components={"return": total, "length": float(len(steps))},
            feedback=f"{ended} after {len(steps)} step(s) with return {total:g}",
            judge=f"openenv:{self.env.name}",
        )

    async def aclose(self) -> None:
        """Close the connection politely (the server frees the session's slot) and the HTTP client."""
        channel, self._channel = self._channel, None
        http, self._http = self._http, None
        try:
            if channel is not None:
                await channel.close()
        finally:
            if http is not None:
                await http.close()

    def close(self) -> None:
        """Synchronous `aclose` (and the session's loop stops)."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        runner.close(self.aclose())

    # ---- text codec

    def render(self) -> list[dict[str, Any]]:
        """The system prompt on the first turn, then the observation (and the last reward)."""
        messages = []
        if not self._rendered:
            self._rendered = True
            info = self.env.info
            about = self.env.manifest.description
            prompt = codec.system_prompt(self.env.name, about, info.observation_schema, info.action)
            messages.append({"role": "system", "content": prompt})
        messages.append({"role": "user", "content": codec.observation_message(self.observation, self._last_reward)})
        return messages

    def parse_action(self, text: str) -> Any:
        """The JSON action in the reply, validated against the schema; `PolicyFailure` saying what is wrong."""
        return codec.parse(self.env.info.action, text)

    # ---- built-in policies

    def reference_action(self) -> Any:
        """The action the server's state holds under the URI's ``reference=`` field."""
        if self.env.spec.reference is None:
            msg = (
                f"{self.env.uri} has no reference policy: OpenEnv has no oracle of its own; add "
                "?reference=<state field> when the server's state holds the optimal action."
            )
            raise UnsupportedPolicyError(msg)
        return self._reference

    def null_action(self) -> Any:
        """The schema's plainest action (defaults, else each required field's lowest value)."""
        if not self.env.manifest.capabilities.null_policy:
            raise UnsupportedPolicyError(str(self.env.manifest.extra["null_action"]))
        return self.env.info.action.null_instance()

    def random_action(self, rng: random.Random) -> Any:
        """A random action within the schema's bounds, drawn from the episode's generator."""
        if not self.env.manifest.capabilities.random_policy:
            raise UnsupportedPolicyError(str(self.env.manifest.extra["random_action"]))
        return self.env.info.action.random_instance(rng)


def _short(action: Any) -> str:
    text = str(action)
    return text if len(text) <= 80 else text[:77] + "..."


def check_seed(seed: Any) -> int:
    """`seed` as a reset seed; `BadURIError` for anything but a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        msg = f"An OpenEnv reset seed here is an integer from 0 to {MAX_SEED}, not {seed!r}."
        raise BadURIError(msg)
    return seed
