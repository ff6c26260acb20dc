"""OpenTelemetry GenAI spans from the episode event stream, through ``opentelemetry-api`` only.

`GenAISpans` is an observer (`nenyax.core.contract.events`): pass it as ``observers=[GenAISpans()]`` to
``env.rollout``, ``env.rollouts``, ``run_jobs`` or ``check``. Per episode it emits

- ``invoke_agent {env}`` (INTERNAL), the root: from `EpisodeStarted` to the trajectory's end, with
  ``gen_ai.agent.name`` (the environment, its URI without the query), ``gen_ai.conversation.id`` (the
  trajectory id), the policy's provider and model, the usage summed over the episode's calls, the
  status (ERROR for any status but ``ok``, ``error.type`` the status) and the judgment: a
  ``gen_ai.evaluation.result`` event plus the plain attributes ``nenyax.judgment.score`` /
  ``.passed`` / ``.judge`` and ``nenyax.status``;
- ``chat {model}`` (CLIENT; ``text_completion {model}`` for a raw prompt), a child per model call, its
  start and end the call's recorded ``started`` and ``duration_s``, with provider, request and response
  model, sampling parameters, usage and finish reasons; a call that failed has status ERROR and its
  sentence as the description;
- ``execute_tool {tool}`` (INTERNAL), a child per tool call, with the tool's name, call id and type,
  ERROR when the call failed or was never answered.

Every span carries ``gen_ai.conversation.id``. Message content (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.tool.definitions``, tool arguments and results, the judge's
feedback as ``gen_ai.evaluation.explanation``) is recorded only when the user opts in with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``true``, or ``span_only``/``span_and_event``),
each as a JSON string in the conventions' ``{role, parts}`` shape. The names are in
`nenyax.core.contract.genai_attributes`.

Where the spans go is the application's business: with no ``tracer_provider`` the spans go to the
global one (``opentelemetry.trace.get_tracer_provider()``, read when each span starts, so a provider
an application sets later still receives them); without the OpenTelemetry SDK that is the API's no-op
tracer, and tracing costs almost nothing. Nenyax never sets the global provider: a tracer plugin
(the ``tracer`` kind) builds an SDK provider for its backend and hands it in as ``tracer_provider``.

An episode played on another process (``backend="process"``) reaches the caller's observers as its
`EpisodeStarted` and `EpisodeEnded` only: its chat and tool spans are made at its end from the
trajectory's records, with the same recorded times, so the trace is the same wherever it played.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from nenyax.core._version import __version__
from nenyax.core.contract import genai_attributes as ga
from nenyax.core.contract.chat import TextRequest
from nenyax.core.contract.events import (
    EpisodeEnded,
    EpisodeStarted,
    ModelCallEnded,
    ModelCallStarted,
    Observer,
    ToolCalled,
)
from nenyax.core.contract.trajectory import ModelCall, ToolCall, Trajectory
from nenyax.core.contract.trajectory import Status as EpisodeStatus

INSTRUMENTATION_NAME = "nenyax"
"""The instrumentation scope of every span Nenyax emits."""


def capture_content_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `CAPTURE_CONTENT_ENV` asks for message content on spans (off when unset)."""
    value = (os.environ if environ is None else environ).get(ga.CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in ga.CAPTURE_CONTENT_ON


class _Episode:
    """One episode in progress: its root span and the calls already given a span of their own."""

    __slots__ = ("context", "root", "started_calls", "traced_calls", "traced_tools")

    def __init__(self, root: Span) -> None:
        self.root = root
        self.context = trace.set_span_in_context(root)
        self.started_calls: dict[str, ModelCallStarted] = {}
        self.traced_calls: set[str] = set()
        self.traced_tools: set[str] = set()


class GenAISpans(Observer):
    """An observer that turns each episode into ``invoke_agent`` / ``chat`` / ``execute_tool`` spans."""

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
        """Spans go to `tracer_provider` (an SDK ``TracerProvider``), or the global one when None.

        `capture_content` None reads `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` once, here.
        """
        self.tracer = trace.get_tracer(INSTRUMENTATION_NAME, __version__, tracer_provider=tracer_provider)
        self.capture_content = capture_content_from_env() if capture_content is None else capture_content
        self._episodes: dict[str, _Episode] = {}

    def __repr__(self) -> str:
        return f"GenAISpans(capture_content={self.capture_content})"

    # ------------------------------------------------------------------ events

    def on_episode_started(self, event: EpisodeStarted) -> None:
        """Open the episode's root span at its recorded start."""
        self._episodes[event.trajectory_id] = self._open(
            event.trajectory_id,
            event.env_uri,
            event.policy,
            event.started,
            event.task_id,
            event.seed,
            event.sample,
            event.group_id,
        )

    def on_model_call_started(self, event: ModelCallStarted) -> None:
        """Remember the request: a call that fails has only it to be described by."""
        episode = self._episodes.get(event.trajectory_id)
        if episode is not None:
            episode.started_calls[event.call_id] = event

    def on_model_call_ended(self, event: ModelCallEnded) -> None:
        """A ``chat`` span for the call, as recorded (or as it failed)."""
        episode = self._episodes.get(event.trajectory_id)
        if episode is None:
            return
        started = episode.started_calls.pop(event.call_id, None)
        episode.traced_calls.add(event.call_id)
        if event.call is not None:
            self._call_span(episode, event.trajectory_id, event.call)
        else:
            self._failed_call_span(episode, event, started)

    def on_tool_call(self, event: ToolCalled) -> None:
        """An ``execute_tool`` span for the finished call."""
        episode = self._episodes.get(event.trajectory_id)
        if episode is None:
            return
        episode.traced_tools.add(event.tool_call.id)
        self._tool_span(episode, event.trajectory_id, event.tool_call)

    def on_episode_ended(self, event: EpisodeEnded) -> None:
        """Spans for what was not seen live (an episode played elsewhere), then close the root."""
        traj = event.trajectory
        episode = self._episodes.pop(traj.id, None)
        if episode is None:  # no EpisodeStarted reached us: open it now, at its recorded start
            start = traj.timing.started if traj.timing else time.time()
            episode = self._open(
                traj.id, traj.env_uri, traj.policy, start, traj.task_id, traj.seed, traj.sample, traj.group_id
            )
        for call in traj.model_calls:
            if call.id not in episode.traced_calls:
                self._call_span(episode, traj.id, call)
        for tool_call in traj.tool_calls:
            if tool_call.id not in episode.traced_tools:
                self._tool_span(episode, traj.id, tool_call)
        self._close(episode.root, traj)

    # ------------------------------------------------------------------ spans

    def _open(
        self,
        trajectory_id: str,
        env_uri: str,
        policy: Any,
        started: float,
        task_id: str | None,
        seed: int | None,
        sample: int,
        group_id: str | None,
    ) -> _Episode:
        env_name = env_uri.partition("?")[0]  # a span name stays low-cardinality: no query string
        attributes: dict[str, Any] = {
            ga.OPERATION_NAME: ga.INVOKE_AGENT,
            ga.AGENT_NAME: env_name,
            ga.CONVERSATION_ID: trajectory_id,
            ga.ENV_URI: env_uri,
            ga.SAMPLE: sample,
            ga.POLICY_KIND: policy.kind,
        }
        _put(attributes, ga.PROVIDER_NAME, policy.provider)
        _put(attributes, ga.REQUEST_MODEL, policy.model)
        _put(attributes, ga.POLICY_NAME, policy.name or None)
        _put(attributes, ga.POLICY_REVISION, policy.revision)
        _put(attributes, ga.TASK_ID, task_id)
        _put(attributes, ga.SEED, seed)
        _put(attributes, ga.GROUP_ID, group_id)
        root = self.tracer.start_span(
            f"{ga.INVOKE_AGENT} {env_name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(started),
        )
        return _Episode(root)

    def _call_span(self, episode: _Episode, trajectory_id: str, call: ModelCall) -> None:
        operation = ga.TEXT_COMPLETION if call.prompt is not None else ga.CHAT
        attributes: dict[str, Any] = {
            ga.OPERATION_NAME: operation,
            ga.CONVERSATION_ID: trajectory_id,
            ga.MODEL_CALL_ID: call.id,
        }
        _put(attributes, ga.PROVIDER_NAME, call.provider or None)
        _put(attributes, ga.REQUEST_MODEL, call.model or None)
        # The record keeps the model as requested; the server's answer is that model's (no alias resolution).
        _put(attributes, ga.RESPONSE_MODEL, call.model or None)
        for key, name in ga.REQUEST_PARAMS.items():
            _put(attributes, name, _attribute_value(call.params.get(key)))
        _put(attributes, ga.USAGE_INPUT_TOKENS, call.usage.get("prompt_tokens"))
        _put(attributes, ga.USAGE_OUTPUT_TOKENS, call.usage.get("completion_tokens"))
        if call.finish_reason:
            attributes[ga.RESPONSE_FINISH_REASONS] = (call.finish_reason,)
        if call.queued_s:
            attributes[ga.QUEUED_S] = call.queued_s
        if self.capture_content:
            attributes[ga.INPUT_MESSAGES] = _json(_input_messages(call))
            attributes[ga.OUTPUT_MESSAGES] = _json([_output_message(call)])
            if call.tools:
                attributes[ga.TOOL_DEFINITIONS] = _json(list(call.tools))
        start = call.started or time.time()
        span = self.tracer.start_span(
            f"{operation} {call.model}".rstrip(),
            context=episode.context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=_ns(start),
        )
        span.end(end_time=_ns(start + call.duration_s))

    def _failed_call_span(self, episode: _Episode, event: ModelCallEnded, started: ModelCallStarted | None) -> None:
        request = started.request if started is not None else None
        operation = ga.TEXT_COMPLETION if isinstance(request, TextRequest) else ga.CHAT
        model = request.model if request is not None else ""
        attributes: dict[str, Any] = {
            ga.OPERATION_NAME: operation,
            ga.CONVERSATION_ID: event.trajectory_id,
            ga.MODEL_CALL_ID: event.call_id,
            ga.ERROR_TYPE: ga.ERROR_TYPE_OTHER,
        }
        _put(attributes, ga.REQUEST_MODEL, model or None)
        start = started.started if started is not None else time.time() - event.duration_s
        span = self.tracer.start_span(
            f"{operation} {model}".rstrip(),
            context=episode.context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=_ns(start),
        )
        span.set_status(Status(StatusCode.ERROR, event.error or "the model call failed"))
        span.end(end_time=_ns(start + event.duration_s))

    def _tool_span(self, episode: _Episode, trajectory_id: str, tool_call: ToolCall) -> None:
        attributes: dict[str, Any] = {
            ga.OPERATION_NAME: ga.EXECUTE_TOOL,
            ga.CONVERSATION_ID: trajectory_id,
            ga.TOOL_NAME: tool_call.name,
            ga.TOOL_CALL_ID: tool_call.id,
            ga.TOOL_TYPE: ga.TOOL_TYPE_FUNCTION,
        }
        _put(attributes, ga.STEP, tool_call.step)
        if self.capture_content:
            attributes[ga.TOOL_CALL_ARGUMENTS] = _json(tool_call.arguments)
            if tool_call.error is None:
                attributes[ga.TOOL_CALL_RESULT] = _json(tool_call.result)
        if tool_call.error is not None:
            attributes[ga.ERROR_TYPE] = ga.ERROR_TYPE_OTHER
        start = tool_call.started or time.time()
        span = self.tracer.start_span(
            f"{ga.EXECUTE_TOOL} {tool_call.name}",
            context=episode.context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(start),
        )
        if tool_call.error is not None:
            span.set_status(Status(StatusCode.ERROR, tool_call.error))
        span.end(end_time=_ns(start + tool_call.duration_s))

    def _close(self, root: Span, traj: Trajectory) -> None:
        root.set_attribute(ga.STATUS, traj.status.value)
        # The task and seed the episode played (at its start only those asked for were known).
        if traj.task_id is not None:
            root.set_attribute(ga.TASK_ID, traj.task_id)
        if traj.seed is not None:
            root.set_attribute(ga.SEED, traj.seed)
        inputs = sum(call.usage.get("prompt_tokens", 0) for call in traj.model_calls)
        outputs = sum(call.usage.get("completion_tokens", 0) for call in traj.model_calls)
        if traj.model_calls:
            root.set_attribute(ga.USAGE_INPUT_TOKENS, inputs)
            root.set_attribute(ga.USAGE_OUTPUT_TOKENS, outputs)
        ended = traj.timing.ended if traj.timing else time.time()
        judgment = traj.judgment
        if judgment is not None:
            root.set_attribute(ga.SCORE, judgment.score)
            if judgment.passed is not None:
                root.set_attribute(ga.PASSED, judgment.passed)
            if judgment.judge:
                root.set_attribute(ga.JUDGE, judgment.judge)
            event: dict[str, Any] = {
                ga.EVALUATION_NAME: judgment.judge or "judgment",
                ga.EVALUATION_SCORE_VALUE: judgment.score,
            }
            if judgment.passed is not None:
                event[ga.EVALUATION_SCORE_LABEL] = "pass" if judgment.passed else "fail"
            if self.capture_content and judgment.feedback:  # a judge's feedback often quotes the answer
                event[ga.EVALUATION_EXPLANATION] = judgment.feedback
            root.add_event(ga.EVALUATION_RESULT, attributes=event, timestamp=_ns(ended))
        if traj.status is not EpisodeStatus.OK:
            root.set_attribute(ga.ERROR_TYPE, traj.status.value)
            root.set_status(Status(StatusCode.ERROR, traj.error or traj.status.value))
        root.end(end_time=_ns(ended))


# ---------------------------------------------------------------------- helpers


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _put(attributes: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        attributes[name] = value


def _attribute_value(value: Any) -> Any:
    """A sampling parameter as an attribute can hold it (a scalar or a list of strings), else None."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An OpenAI-shaped chat message's content as the conventions' parts."""
    parts: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "content": reasoning})
    content = message.get("content")
    if message.get("role") == "tool":
        parts.append({"type": "tool_call_response", "id": message.get("tool_call_id"), "response": content})
    elif isinstance(content, str):
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                parts.append({"type": "text", "content": part.get("text", "")})
            else:
                parts.append(dict(part) if isinstance(part, Mapping) else {"type": "text", "content": str(part)})
    for tool_call in message.get("tool_calls") or ():
        function = tool_call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):  # else the model's own string, kept as it is
                arguments = json.loads(arguments)
        parts.append(
            {"type": "tool_call", "id": tool_call.get("id"), "name": function.get("name"), "arguments": arguments}
        )
    return parts


def _input_messages(call: ModelCall) -> list[dict[str, Any]]:
    if call.prompt is not None:
        return [{"role": "user", "parts": [{"type": "text", "content": call.prompt}]}]
    return [{"role": m.get("role", "user"), "parts": _parts(m)} for m in call.messages]


def _output_message(call: ModelCall) -> dict[str, Any]:
    message = call.response or {}
    out: dict[str, Any] = {"role": message.get("role", "assistant"), "parts": _parts(message)}
    if call.finish_reason:
        out["finish_reason"] = call.finish_reason
    return out
