"""Episodes on a gymnasium-style resources server, played the way nemo-gym's ``gymnasium_agent`` plays them.

Such a server (a subclass of nemo-gym's ``resources_servers.gymnasium.GymnasiumServer``: blackjack,
grl_sokoban, grl_tetris, tales, example_multi_turn_gymnasium) serves ``/reset`` and ``/step``, not
``/seed_session`` and ``/verify``. ``gymnasium_agent`` (nemo-gym 0.4.0) posts the row to ``/reset``
(its observation, if any, joins the prompt as a user message), then for each model turn posts the
row plus that turn's Responses API object to ``/step``, which answers ``observation, reward,
terminated, truncated, info``; ``info["tool_outputs"]`` become ``function_call_output`` items and
the observation a user message. The episode ends when the server says terminated or truncated, or
after the agent's ``max_steps`` turns (then truncated); its reward is the sum of the step rewards.
Since nemo-gym 0.7, a reset whose info says ``supports_step_idempotency`` gets a fresh
``_ng_step_request_id`` with each step, and one that says ``supports_explicit_close`` gets
``POST /close`` when the episode closes, as gymnasium_agent 0.7 does.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from typing import Any

from nenyax.adapters.nemo_gym.environment import NemoGymSession
from nenyax.adapters.nemo_gym.responses import function_call, function_call_output, message, response_object
from nenyax.adapters.nemo_gym.wire import Reply
from nenyax.core import EnvironmentFailure, Judgment, PolicyFailure, Step, VerifierFailure


class GymnasiumSession(NemoGymSession):
    """One row's episode on a GymnasiumServer: ``/reset``, then ``/step`` per action."""

    _finished = False
    _total = 0.0
    _last_info: dict[str, Any] | None = None
    reset_info: dict[str, Any] | None = None

    async def start(self) -> None:
        """``POST /reset`` with the row; its observation joins the prompt, its session cookie is kept."""
        reply = await self.env.client.post("/reset", self.row, {})
        if reply.status >= 400:
            msg = f"{self.where}/reset refused {self.task_id} with {reply.status}: {reply.detail()}."
            raise EnvironmentFailure(msg)
        data = _object(reply, self.where, "/reset")
        self.cookies = reply.cookies
        reset_info = data.get("info")
        self.reset_info = reset_info if isinstance(reset_info, dict) else {}
        observation = data.get("observation")
        if isinstance(observation, str) and observation:
            self._observation = [*self._observation, {"role": "user", "content": observation}]

    @property
    def done(self) -> bool:
        """Done once the server ended the episode, or the agent's ``max_steps`` ran out."""
        return self._finished

    async def aact(self, action: Any) -> Step:
        """One model turn: the answer text or a tool call, sent to ``/step`` as that turn's response."""
        observation = self._observation
        call_id = f"call_{self._turns}"
        if isinstance(action, dict):
            name, arguments = self._tool_call(action)
            item = function_call(call_id, name, arguments)
            step_action: Any = {"name": name, "arguments": arguments}
        elif action is None or isinstance(action, str):
            step_action = action or ""
            item = message(f"msg_{self._turns}", step_action)
        else:
            shape = "{'name': ..., 'arguments': {...}}"
            msg = f"An action is the answer text or a tool call {shape}, not {type(action).__name__}."
            raise PolicyFailure(msg)
        body = {**self.row, "response": response_object([item], self.tools)}
        if (self.reset_info or {}).get("supports_step_idempotency") is True:
            body["_ng_step_request_id"] = uuid.uuid4().hex
        reply = await self.env.client.post("/step", body, self.cookies)
        self.cookies = reply.cookies
        if reply.status >= 400:
            msg = f"{self.where}/step failed with {reply.status}: {reply.detail()}."
            raise EnvironmentFailure(msg)
        data = _object(reply, self.where, "/step")
        reward = _step_reward(data, self.where)
        raw_info = data.get("info")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        terminated, truncated = bool(data.get("terminated")), bool(data.get("truncated"))
        self._turns += 1
        self._total += reward
        self._last_info = info
        new: list[dict[str, Any]] = []
        for output in info.get("tool_outputs") or []:
            if isinstance(output, dict) and "call_id" in output:
                new.append(function_call_output(str(output["call_id"]), str(output.get("output", ""))))
        text = data.get("observation")
        if isinstance(text, str) and text:
            new.append({"role": "user", "content": text})
        self.output += [item, *new]
        self._observation = new
        # Out of turns, the episode is cut where gymnasium_agent's max_steps cuts it.
        cut = not (terminated or truncated) and self._turns >= self.env.settings.max_turns
        self._finished = terminated or truncated or cut
        step_info: dict[str, Any] = {"step": info}
        if isinstance(action, dict):
            step_info["tool_output"] = "\n".join(o["output"] for o in new if o.get("type") == "function_call_output")
        if cut:
            step_info["cut"] = f"out of turns after {self._turns} (max_turns)"
        return Step(
            observation=observation,
            action=step_action,
            reward=reward,
            terminated=terminated,
            truncated=truncated or cut,
            info=step_info,
        )

    async def aclose(self) -> None:
        """``POST /close`` when the server asked for it at reset (nemo-gym 0.7), then let the pool go."""
        if not self._closed and (self.reset_info or {}).get("supports_explicit_close") is True:
            try:
                reply = await self.env.client.post("/close", {}, self.cookies)
            finally:
                await super().aclose()
            if reply.status >= 400:
                msg = f"{self.where}/close failed with {reply.status}: {reply.detail()}."
                raise EnvironmentFailure(msg)
            return
        await super().aclose()

    def judge(self, steps: Sequence[Step]) -> Judgment:
        """The sum of the server's step rewards (gymnasium_agent's reward); the last step's numbers as components."""
        if not self._finished:
            msg = "The episode ended before the server ended it or its turns ran out, so it has no reward."
            raise VerifierFailure(msg)
        info = self._last_info or {}
        components = {
            k: float(v)
            for k, v in info.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))
        }
        result = info.get("result")
        return Judgment(
            score=self._total,
            # A sum of step rewards says nothing of "solved" (blackjack's +1 is a won hand, sokoban's is a move).
            passed=None,
            components=components,
            feedback=f"result: {result}" if isinstance(result, str) else "",
            judge=f"nemo_gym:{self.env.manifest.name}/step",
        )


def _object(reply: Reply, where: str, route: str) -> dict[str, Any]:
    try:
        data = reply.json()
    except ValueError as exc:
        msg = f"{where}{route} answered with a body that is not JSON: {reply.text[:120]!r}."
        raise EnvironmentFailure(msg) from exc
    if not isinstance(data, dict):
        msg = f"{where}{route} answered with {type(data).__name__}, not a JSON object."
        raise EnvironmentFailure(msg)
    return data


def _step_reward(data: dict[str, Any], where: str) -> float:
    reward = data.get("reward", 0.0)
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        msg = f"{where}/step answered without a numeric reward (reward={reward!r})."
        raise VerifierFailure(msg)
    if not math.isfinite(reward):
        msg = f"{where}/step returned the non-finite reward {reward!r}, which is never a score."
        raise VerifierFailure(msg)
    return float(reward)
