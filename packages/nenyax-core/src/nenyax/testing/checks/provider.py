"""The conformance checks of `provider` plugins beyond the common ones (`nenyax.testing.checks.common`).

Two read the provider's members: its calls are coroutines, its ``honours`` names request fields. The
others share one real exchange (kept in `Subject.shared`, so a model loads once): a short chat request
to `complete`, the same request to `stream` where the provider has one, then `aclose` twice.

The kit asks a model only where one answers without the network: an in-process provider (one with
``prepare``, the member that loads an in-process model's weights; it is called first, so the wait for
them is not the call's) or a provider whose options name a ``base_url`` (a server the user points it at;
`nenyax.testing.model_server` serves one on loopback). Elsewhere those checks are skipped, saying how to
run them. The model asked for is the one ``NENYAX_MODEL`` or the default `Endpoint` names for this
provider (``local:smollm2-135m``), else ``nenyax-kit`` (a scripted server answers any name).

Each yields one sentence per problem found.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterator, Iterator, Set
from typing import Any

import attrs

from nenyax.core.contract.chat import ChatRequest, Delta
from nenyax.core.contract.trajectory import ModelCall
from nenyax.core.errors import NenyaxError
from nenyax.core.models.endpoint import DEFAULT_MODEL
from nenyax.testing.report import Check, Skip
from nenyax.testing.subject import Subject

PROMPT = ({"role": "user", "content": "Say hello in one word."},)
PARAMS = {"max_tokens": 8, "temperature": 0.0}
"""Sent where the provider honours them: a short, greedy reply keeps an in-process model's call to seconds."""
CALL_TIMEOUT_S = 60.0
"""How long one call may take (the model already loaded) before it counts as hung."""
PLACEHOLDER_MODEL = "nenyax-kit"


def kit_model(subject: Subject) -> str:
    """The model the kit asks this provider for (see the module docstring)."""
    for spec in (os.environ.get("NENYAX_MODEL") or "", DEFAULT_MODEL):
        provider, sep, model = spec.partition(":")
        if sep and provider == subject.name and model:
            return model
    return PLACEHOLDER_MODEL


@attrs.define
class Exchange:
    """What one conversation with the provider gave: the request, the call, the stream, the closing."""

    request: ChatRequest
    call: Any = None
    """What `complete` returned."""
    streamed: Any = None
    """What `stream` yielded (a list), what it returned when that was no async iterator, or None without one."""
    stream_error: NenyaxError | None = None
    timed_out: str | None = None
    """The method that did not return within `CALL_TIMEOUT_S`."""
    closing: list[str] = attrs.field(factory=list)
    """The problems of closing twice after the call."""


async def _awaited(value: Any) -> Any:
    # A plain method (which provider/calls-are-coroutines reports) is still read, so that flaw stays its own.
    return await value if inspect.isawaitable(value) else value


async def _collect(produced: Any) -> Any:
    if not hasattr(produced, "__aiter__"):
        return produced  # provider/streams-what-it-completes says it is no async iterator
    iterator: AsyncIterator[Any] = produced
    return [item async for item in iterator]


async def _close_twice(provider: Any, when: str) -> list[str]:
    problems = []
    for attempt in ("first", "second"):
        try:
            await _awaited(provider.aclose())
        except Exception as exc:  # noqa: BLE001 - closing must not fail: whatever it raised is the finding
            problems.append(f"The {attempt} aclose() {when} raised {type(exc).__name__}: {exc}.")
    return problems


async def _converse(provider: Any, request: ChatRequest) -> Exchange:
    made = Exchange(request=request)
    try:
        try:
            made.call = await asyncio.wait_for(_awaited(provider.complete(request)), CALL_TIMEOUT_S)
        except TimeoutError:
            made.timed_out = "complete"
            return made
        stream = getattr(provider, "stream", None)
        if callable(stream):
            try:
                made.streamed = await asyncio.wait_for(_collect(stream(request)), CALL_TIMEOUT_S)
            except TimeoutError:
                made.timed_out = "stream"
            except NenyaxError as exc:
                made.stream_error = exc
    finally:  # closed on the loop that made the calls, whatever happened (an open session would leak)
        made.closing = await _close_twice(provider, "after a call")
    return made


def _start(subject: Subject) -> Exchange | BaseException:
    provider = subject.instance()
    in_process = callable(getattr(provider, "prepare", None))
    if not in_process and not subject.options.get("base_url"):
        return Skip(
            "the provider has no prepare() (an in-process model) and its options name no base_url, so no model "
            f"answers without the network: give it one, e.g. `nenyax provider-check {subject.name} "
            "--option base_url=http://127.0.0.1:8000/v1`"
        )
    model = kit_model(subject)
    honours = getattr(provider, "honours", None)
    params = {k: v for k, v in PARAMS.items() if not isinstance(honours, Set) or k in honours}
    request = ChatRequest(model=model, messages=PROMPT, params=params)
    try:
        if in_process:
            provider.prepare(model)
        return asyncio.run(_converse(provider, request))
    except NenyaxError as exc:  # it said what went wrong (no such model, no server): nothing to check
        return Skip(f"the provider did not answer the kit's request for {model!r} ({type(exc).__name__}: {exc})")
    except Exception as exc:  # noqa: BLE001 - kept, and raised in each check that needed the exchange
        return exc


def _exchange(subject: Subject) -> Exchange:
    """The one exchange the checks share, made on first use; raises its Skip (or crash) in each."""
    made = subject.shared.get("provider/exchange")
    if made is None:
        made = subject.shared["provider/exchange"] = _start(subject)
    if isinstance(made, BaseException):
        raise made
    result: Exchange = made
    return result


def _recorded(subject: Subject) -> ModelCall:
    """The call `complete` recorded; the checks reading it are skipped when it gave none."""
    made = _exchange(subject)
    if not isinstance(made.call, ModelCall):
        raise Skip("complete() recorded no ModelCall (see provider/completes-a-chat)")
    return made.call


def calls_are_coroutines(subject: Subject) -> Iterator[str]:
    """`complete` and `aclose` (and `complete_text`, where it has one) are ``async def``: callers await them
    on their event loop, and a blocking call would stall every episode on it."""
    provider = subject.instance()
    for name in ("complete", "aclose", "complete_text"):
        method = getattr(provider, name, None)
        if method is not None and not inspect.iscoroutinefunction(method):
            yield f"{name} is not a coroutine function; define it as `async def {name}(...)`."


def honours_names_fields(subject: Subject) -> Iterator[str]:
    """``honours``, where the provider has it, is a set of request field names (the rest are refused)."""
    honours = getattr(subject.instance(), "honours", None)
    if honours is None:
        raise Skip("the provider has no honours: it forwards every field to a server that decides")
    if not isinstance(honours, Set) or not all(isinstance(field, str) for field in honours):
        yield f"honours is {honours!r:.80}; it must be a frozenset of request field names such as 'temperature'."


def completes_a_chat(subject: Subject) -> Iterator[str]:
    """`complete` returns a `ModelCall` recording the request's messages and an assistant reply."""
    made = _exchange(subject)
    if made.timed_out == "complete":
        yield f"complete() had not answered a request for {PARAMS['max_tokens']} tokens after {CALL_TIMEOUT_S:g} s."
        return
    call = made.call
    if not isinstance(call, ModelCall):
        yield f"complete() returned {type(call).__name__}, not a nenyax.core.ModelCall."
        return
    if tuple(call.messages) != made.request.messages:
        yield f"The recorded call's messages are {call.messages!r:.100}, not the request's {made.request.messages!r}."
    reply = call.response
    if not isinstance(reply, dict) or reply.get("role") != "assistant":
        yield f"The recorded response is {reply!r:.100}, not an assistant message ({{'role': 'assistant', ...}})."
    elif not isinstance(reply.get("content"), str) and not reply.get("tool_calls"):
        yield f"The assistant message {reply!r:.100} has neither text content nor tool calls."


def token_arrays_line_up(subject: Subject) -> Iterator[str]:
    """Where recorded, the completion's token ids, token texts, logprobs and alternatives have one entry per
    token; ids are integers, logprobs log-probabilities (at most 0), and a recorded prompt is not empty."""
    call = _recorded(subject)
    fields = ("completion_token_ids", "tokens", "logprobs", "top_logprobs")
    sizes = {name: len(getattr(call, name)) for name in fields if getattr(call, name) is not None}
    if not sizes and call.prompt_token_ids is None:
        raise Skip("the call recorded no token ids or logprobs (a provider records them where it knows them)")
    if len(set(sizes.values())) > 1:
        said = ", ".join(f"{name} {size}" for name, size in sizes.items())
        yield f"The recorded per-token fields differ in length ({said}); each has one entry per completion token."
    for name in ("prompt_token_ids", "completion_token_ids"):
        ids = getattr(call, name)
        if ids is not None and not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            yield f"{name} holds {ids!r:.60}, not integer token ids."
    if call.prompt_token_ids is not None and not call.prompt_token_ids:
        yield "prompt_token_ids is recorded but empty, for a prompt of one message."
    impossible = [lp for lp in call.logprobs or () if not lp <= 1e-6]  # `not <=` also catches NaN
    if impossible:
        yield f"logprobs {impossible[:3]} are not log-probabilities (each is at most 0)."


def streams_what_it_completes(subject: Subject) -> Iterator[str]:
    """`stream`, where the provider has it, yields `Delta`s and then the recorded call, whose reply is the
    text the deltas carried."""
    if not callable(getattr(subject.instance(), "stream", None)):
        raise Skip("the provider has no stream()")
    made = _exchange(subject)
    if made.stream_error is not None:
        raise Skip(f"stream() did not answer ({type(made.stream_error).__name__}: {made.stream_error})")
    if made.timed_out == "stream":
        yield f"stream() had not ended after {CALL_TIMEOUT_S:g} s."
        return
    items = made.streamed
    if not isinstance(items, list):
        yield f"stream(request) returned {type(items).__name__}, not an async iterator of Delta and then a ModelCall."
        return
    if not items or not isinstance(items[-1], ModelCall):
        yield "stream() did not end with the recorded call (a ModelCall, what complete() would return)."
        return
    strays = sorted({type(item).__name__ for item in items[:-1] if not isinstance(item, Delta)})
    if strays:
        yield f"stream() yielded {', '.join(strays)} before the recorded call; everything before it is a Delta."
    reply = items[-1].response if isinstance(items[-1].response, dict) else {}
    text = "".join(item.text for item in items[:-1] if isinstance(item, Delta))
    if not reply.get("tool_calls") and text != (reply.get("content") or ""):
        yield f"The streamed text {text!r:.80} is not the recorded reply {reply.get('content')!r:.80}."


def closes_twice(subject: Subject) -> Iterator[str]:
    """`aclose` may be called twice: on an event loop that made no call, and after a call."""
    yield from asyncio.run(_close_twice(subject.instance(), "on an event loop that made no call"))
    try:
        made = _exchange(subject)
    except Skip:
        return  # no call could be made: closing without one is what was checked
    yield from made.closing


PROVIDER_CHECKS: tuple[Check, ...] = (
    Check(id="provider/calls-are-coroutines", summary="complete and aclose are async", run=calls_are_coroutines),
    Check(id="provider/honours-names-fields", summary="honours is a set of field names", run=honours_names_fields),
    Check(id="provider/completes-a-chat", summary="a chat request gets a recorded reply", run=completes_a_chat),
    Check(
        id="provider/token-arrays-line-up",
        summary="token ids and logprobs have one entry per token",
        run=token_arrays_line_up,
    ),
    Check(
        id="provider/streams-what-it-completes",
        summary="a stream is deltas, then the recorded call",
        run=streams_what_it_completes,
    ),
    Check(id="provider/closes-twice", summary="aclose may be called twice", run=closes_twice),
)
"""The provider kind's own checks, in the order they run (after `common_checks("provider")`)."""
