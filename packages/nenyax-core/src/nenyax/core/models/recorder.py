"""One episode's record in progress: its id, and the one place its model calls and tool calls are recorded.

The engine makes an `EpisodeRecorder` when an episode starts, so the trajectory id exists before
anything runs; the step loop hands it to policies on the `Turn`, the native loop to the recording
proxy's route. Every model call of the episode, from an `Endpoint` or an in-process policy, in any
mode, goes through `EpisodeRecorder.model_call`: it gets its id, start time and duration there, is
kept, and is published to the run's observers (`nenyax.core.contract.events`). Tool calls are kept and
published by `tool_call`; a native loop's are found by matching the ``tool_calls`` of each reply to
the ``tool`` messages that answer them (`answered_in`).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import attrs
import orjson

from nenyax.core.contract.chat import ChatRequest, TextRequest
from nenyax.core.contract.events import NO_OBSERVERS, ModelCallEnded, ModelCallStarted, Observers, ToolCalled
from nenyax.core.contract.failures import describe
from nenyax.core.contract.fidelity import token_fidelity
from nenyax.core.contract.trajectory import ModelCall, ToolCall, new_id

Send = Callable[[Any], Awaitable[ModelCall]]
"""Sends a request (a `ChatRequest`, or a `TextRequest` for a raw completion) and returns the call."""

UNANSWERED = "The native loop sent no tool message answering this call."
"""The error of a native tool call whose answer never came."""


@attrs.define(slots=True)
class _Asked:
    """A native tool call a reply asked for, waiting for its ``tool`` message."""

    name: str
    arguments: Any
    asked: float
    """Wall-clock time the reply that asked for it came back."""
    model_call_id: str


def call_seed(identity: str, number: int) -> int:
    """The sampling seed of the `number`-th call (from 1) of the episode `identity`: a 63-bit integer, the
    same in every process (a digest, not Python's salted ``hash``)."""
    digest = hashlib.sha256(f"{identity}/{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class EpisodeRecorder:
    """The record of one episode in progress (see the module docstring)."""

    __slots__ = ("_asked", "_calls_started", "id", "model_calls", "observers", "sampling_seed", "tool_calls")

    def __init__(self, observers: Observers = NO_OBSERVERS, *, id: str | None = None) -> None:
        """A fresh trajectory id (or `id`), publishing to `observers`."""
        self.id = id or new_id()
        """The trajectory id of the episode."""
        self.observers = observers
        self.model_calls: list[ModelCall] = []
        self.tool_calls: list[ToolCall] = []
        self._asked: dict[str, _Asked] = {}
        self.sampling_seed: str | None = None
        """The episode's identity (task, seed, sample) its calls' sampling seeds derive from; None: unseeded."""
        self._calls_started = 0

    async def model_call(self, request: ChatRequest | TextRequest, send: Send) -> ModelCall:
        """Send `request` with `send`, and record the call it returns (its id, start and duration stamped here).

        A failed call is published as ended with its error, and raised; it is not recorded as a call.
        """
        call_id = new_id()
        started = time.time()
        clock = time.perf_counter()
        self._calls_started += 1
        if self.sampling_seed is not None and request.episode_seed is None:
            request = attrs.evolve(request, episode_seed=call_seed(self.sampling_seed, self._calls_started))
        if self._asked:
            self.answered_in(getattr(request, "messages", ()), started)
        observers = self.observers
        if observers.model_call_started:
            event = ModelCallStarted(trajectory_id=self.id, call_id=call_id, request=request, started=started)
            observers.publish(observers.model_call_started, event)
        try:
            call = await send(request)
        except BaseException as exc:
            if observers.model_call_ended:
                ended = ModelCallEnded(
                    trajectory_id=self.id,
                    call_id=call_id,
                    call=None,
                    error=describe(exc),
                    duration_s=time.perf_counter() - clock,
                )
                observers.publish(observers.model_call_ended, ended)
            raise
        call = attrs.evolve(call, id=call_id, started=started, duration_s=time.perf_counter() - clock)
        self._keep(call)
        return call

    def add(self, request: ChatRequest, call: ModelCall, *, started: float, duration_s: float) -> ModelCall:
        """Record a call answered without `model_call` (an in-process policy's reply, timed by its caller);
        it is published as started and ended now."""
        call_id = new_id()
        if self._asked:
            self.answered_in(request.messages, started)
        observers = self.observers
        if observers.model_call_started:
            event = ModelCallStarted(trajectory_id=self.id, call_id=call_id, request=request, started=started)
            observers.publish(observers.model_call_started, event)
        call = attrs.evolve(call, id=call_id, started=started, duration_s=duration_s)
        self._keep(call)
        return call

    def _keep(self, call: ModelCall) -> None:
        self.model_calls.append(call)
        tool_calls = call.response.get("tool_calls")
        if tool_calls:
            self._ask(call, tool_calls)
        observers = self.observers
        if observers.model_call_ended:
            done = ModelCallEnded(trajectory_id=self.id, call_id=call.id, call=call, duration_s=call.duration_s)
            observers.publish(observers.model_call_ended, done)

    def token_faithful(self, policy: Any) -> bool | None:
        """Whether the episode's calls so far are token-faithful (`nenyax.core.contract.fidelity`), decoded
        with the policy's own ``detokenize`` (an `Endpoint`'s) when it has one; None when not known."""
        if not self.model_calls or all(c.completion_token_ids is None for c in self.model_calls):
            return None
        detokenize = getattr(policy, "detokenize", None)

        def decode(ids: Any) -> str | None:
            try:
                return None if detokenize is None else detokenize(ids)
            except Exception:  # noqa: BLE001 - a tokenizer that cannot decode leaves the verdict unknown
                return None

        return token_fidelity(self.model_calls, decode).faithful

    def tool_call(self, call: ToolCall) -> None:
        """Record a finished tool call and publish it."""
        self.tool_calls.append(call)
        if self.observers.tool_call:
            self.observers.publish(self.observers.tool_call, ToolCalled(trajectory_id=self.id, tool_call=call))

    # ---------------------------------------------------------------- a native loop's tool messages

    def _ask(self, call: ModelCall, tool_calls: Any) -> None:
        asked = call.started + call.duration_s
        for item in tool_calls if isinstance(tool_calls, list | tuple) else ():
            if not isinstance(item, dict):
                continue
            function = item.get("function")
            if not isinstance(function, dict):
                function = {}
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                # The model's arguments are a JSON string, kept as it is when it is not JSON.
                with contextlib.suppress(orjson.JSONDecodeError):
                    arguments = orjson.loads(arguments)
            tool_id = str(item.get("id") or new_id())
            self._asked[tool_id] = _Asked(
                name=str(function.get("name") or ""), arguments=arguments, asked=asked, model_call_id=call.id
            )

    def answered_in(self, messages: Iterable[dict[str, Any]], seen: float) -> None:
        """Record the asked tool calls that a ``tool`` message in `messages` answers (first seen at `seen`)."""
        for message in messages:
            if not isinstance(message, dict) or message.get("role") != "tool":
                continue
            tool_id = message.get("tool_call_id")
            asked = self._asked.pop(tool_id, None) if isinstance(tool_id, str) else None
            if asked is None:
                continue
            self.tool_call(
                ToolCall(
                    id=tool_id,  # type: ignore[arg-type]
                    name=asked.name,
                    arguments=asked.arguments,
                    result=message.get("content"),
                    started=asked.asked,
                    duration_s=max(0.0, seen - asked.asked),
                    model_call_id=asked.model_call_id,
                )
            )
            if not self._asked:
                return

    def finish_tools(self, messages: Iterable[dict[str, Any]], ended: float) -> None:
        """At a native episode's end: the tool calls its final transcript answers, then the unanswered ones."""
        if not self._asked:
            return
        self.answered_in(messages, ended)
        for tool_id, asked in list(self._asked.items()):
            self.tool_call(
                ToolCall(
                    id=tool_id,
                    name=asked.name,
                    arguments=asked.arguments,
                    error=UNANSWERED,
                    started=asked.asked,
                    duration_s=max(0.0, ended - asked.asked),
                    model_call_id=asked.model_call_id,
                )
            )
        self._asked.clear()
