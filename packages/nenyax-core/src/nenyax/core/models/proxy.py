"""The recording proxy: an OpenAI-compatible server on loopback that rollout- and task-mode formats call.

Each episode gets its own path prefix (``/e/<trajectory id>/v1``), so every call is attributed to the
right trajectory. A call is answered by the episode's responder: an `Endpoint` (forwarded to its
provider) or an in-process text policy (a function of the chat messages), and recorded as a
`ModelCall` by the episode's `EpisodeRecorder` (the one place model calls are recorded).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import orjson
from aiohttp import web

from nenyax.core.contract.chat import WIRE_KEYS, ChatRequest, Delta, TextRequest
from nenyax.core.contract.trajectory import ModelCall, Status, new_id
from nenyax.core.errors import InfraFailure, NenyaxError, PolicyFailure, RequestRefused
from nenyax.core.models.endpoint import Endpoint
from nenyax.core.models.openai_wire import (
    chunk_json,
    completion_chunks,
    completion_json,
    final_chunk,
    text_completion_json,
)
from nenyax.core.models.recorder import EpisodeRecorder
from nenyax.core.models.responses_wire import messages_from_input, response_json, responses_tools

Responder = Callable[[ChatRequest], Awaitable[ModelCall]]
"""Answers one chat request. The route's recorder records what it returns, unless it has a true
``records_itself`` attribute (it records its calls in the episode's recorder itself)."""


def as_responder(policy: Any) -> Responder:
    """An Endpoint forwards; a function of the messages (sync or async) answers in-process."""
    if isinstance(policy, Endpoint):
        return policy.send
    if not callable(policy):
        msg = f"{policy!r} cannot answer model calls: pass an Endpoint or a function of the chat messages."
        raise TypeError(msg)

    async def respond(request: ChatRequest) -> ModelCall:
        text = policy(list(request.messages))
        if inspect.isawaitable(text):
            text = await text
        return ModelCall(
            messages=request.messages,
            response={"role": "assistant", "content": str(text)},
            provider="in-process",
            model=getattr(policy, "__qualname__", type(policy).__name__),
            params=dict(request.params),
            tools=request.tools,
            finish_reason="stop",
        )

    return respond


@attrs.define
class EpisodeRoute:
    """One episode's slice of the proxy: where to point the harness, and what it called."""

    id: str
    """The episode's trajectory id (the route's path prefix)."""
    base_url: str
    responder: Responder
    recorder: EpisodeRecorder
    """Where the episode's calls are recorded (and published to its observers)."""
    policy: Any = None
    failures: list[tuple[Status, str]] = attrs.Factory(list)
    """Calls that could not be answered, with the status they give the episode (infra or policy error)."""
    model: str = "nenyax"
    inflight: set[asyncio.Task[Any]] = attrs.Factory(set)
    """Calls being answered now; cancelled when the episode closes (a timed-out loop leaves no work behind)."""
    keep_calls: bool = True
    """False: a call is published to the recorder's observers and then let go (a server that runs for days)."""

    @property
    def calls(self) -> list[ModelCall]:
        """Every call answered on this route so far, as recorded."""
        return self.recorder.model_calls

    def status(self) -> Status:
        """The status the episode takes from its model calls: the first failure's, else ok."""
        return self.failures[0][0] if self.failures else Status.OK


class _Refused(Exception):
    """A call the proxy answers with an HTTP error (the failure is already recorded on the route)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _record(route: EpisodeRoute, exc: Exception) -> _Refused:
    """Classify a responder's failure for the episode: a refused request, infrastructure, or the policy's own."""
    if isinstance(exc, RequestRefused):  # the loop asked for what cannot be honoured: its to handle, not ours
        return _Refused(400, str(exc))
    if isinstance(exc, InfraFailure):
        route.failures.append((Status.INFRA_ERROR, str(exc)))
        return _Refused(502, str(exc))
    if isinstance(exc, NenyaxError) and not isinstance(exc, PolicyFailure):
        route.failures.append((Status.INFRA_ERROR, str(exc)))  # a misconfigured model is no policy failure
        return _Refused(502, str(exc))
    message = f"{type(exc).__name__}: {exc}"
    route.failures.append((Status.POLICY_ERROR, message))
    return _Refused(500, message)


def _error(status: int, message: str) -> web.Response:
    kind = "invalid_request_error" if status == 400 else "nenyax_proxy_error"  # OpenAI's type for a 400
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status, dumps=lambda o: orjson.dumps(o).decode())


def _json(data: Any) -> web.Response:
    return web.Response(body=orjson.dumps(data), content_type="application/json")


MAX_CHOICES = 128
"""The most choices (``n``) one request may ask for."""


def _params(body: dict[str, Any], wire: frozenset[str]) -> dict[str, Any]:
    """Every field of `body` that is a parameter (not one of `wire`), OpenAI's renamed limits folded in."""
    params = {k: v for k, v in body.items() if k not in wire}
    for alias in ("max_completion_tokens", "max_output_tokens"):
        if alias in params:
            value = params.pop(alias)
            params.setdefault("max_tokens", value)
    if params.get("top_logprobs") is not None and not body.get("logprobs", True):
        raise _Refused(400, "top_logprobs needs logprobs=true.")
    return params


def _choices(body: dict[str, Any]) -> int:
    n = body.get("n", 1)
    if n is None:
        return 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CHOICES:
        raise _Refused(400, f"'n' must be an integer from 1 to {MAX_CHOICES}, not {n!r}.")
    return n


class RecordingProxy:
    """Serve ``/e/<episode>/v1/{chat/completions,completions,responses,models}`` on loopback, and the same
    routes under ``/v1`` for one policy served to any client (`serve`: ``nenyax serve-model``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Bind to `host`:`port` when started (port 0 picks a free one)."""
        self.host, self.port = host, port
        self.routes: dict[str, EpisodeRoute] = {}
        self.served: EpisodeRoute | None = None
        """What ``/v1`` answers (None: those routes answer 404)."""
        self._runner: web.AppRunner | None = None

    async def start(self) -> RecordingProxy:
        """Start serving; returns self."""
        app = web.Application(client_max_size=64 * 1024**2)
        for prefix in ("/e/{episode}/v1", "/v1"):
            app.router.add_post(f"{prefix}/chat/completions", self._chat)
            app.router.add_post(f"{prefix}/completions", self._completions)
            app.router.add_post(f"{prefix}/responses", self._responses)
            app.router.add_get(f"{prefix}/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> RecordingProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def open_episode(
        self,
        policy: Any = None,
        model: str = "nenyax",
        *,
        responder: Responder | None = None,
        recorder: EpisodeRecorder | None = None,
    ) -> EpisodeRoute:
        """Register an episode answered by `responder` (else by `policy`); point the harness at ``route.base_url``.

        The route is the episode's `recorder`'s trajectory id (a fresh recorder when None).
        """
        if responder is None and policy is None:
            msg = "open_episode needs a policy or a responder to answer the episode's calls."
            raise TypeError(msg)
        recorder = recorder if recorder is not None else EpisodeRecorder()
        episode = recorder.id
        if episode in self.routes:
            msg = f"The episode {episode} already has a route on this proxy; an episode is opened once."
            raise ValueError(msg)
        route = EpisodeRoute(
            id=episode,
            base_url=f"http://{self.host}:{self.port}/e/{episode}/v1",
            responder=responder if responder is not None else as_responder(policy),
            recorder=recorder,
            policy=policy,
            model=model,
        )
        self.routes[episode] = route
        return route

    def serve(self, policy: Any, model: str, *, recorder: EpisodeRecorder | None = None) -> EpisodeRoute:
        """Answer ``/v1/...`` with `policy` for any client, as `model`; each call goes to `recorder`'s observers
        and is then let go (nothing accumulates while the server runs)."""
        recorder = recorder if recorder is not None else EpisodeRecorder()
        self.served = EpisodeRoute(
            id=recorder.id,
            base_url=f"http://{self.host}:{self.port}/v1",
            responder=as_responder(policy),
            recorder=recorder,
            policy=policy,
            model=model,
            keep_calls=False,
        )
        return self.served

    def _route_of(self, request: web.Request) -> EpisodeRoute | None:
        episode = request.match_info.get("episode")
        return self.served if episode is None else self.routes.get(episode)

    def close_episode(self, route: EpisodeRoute) -> list[ModelCall]:
        """Stop serving an episode, cancelling calls still being answered; return every call it made."""
        self.routes.pop(route.id, None)
        for task in list(route.inflight):
            task.cancel()
        return route.calls

    @contextlib.asynccontextmanager
    async def episode(
        self,
        policy: Any = None,
        model: str = "nenyax",
        *,
        responder: Responder | None = None,
        recorder: EpisodeRecorder | None = None,
    ) -> AsyncIterator[EpisodeRoute]:
        """``async with proxy.episode(endpoint) as route:`` — the route is closed on exit."""
        route = self.open_episode(policy, model, responder=responder, recorder=recorder)
        try:
            yield route
        finally:
            self.close_episode(route)

    # ------------------------------------------------------------ handlers

    async def _route_and_body(self, request: web.Request) -> tuple[EpisodeRoute, dict[str, Any]] | web.Response:
        route = self._route_of(request)
        if route is None:
            return _error(404, "No open episode has this path prefix; it may have finished already.")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _error(400, "The request body is not valid JSON.")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        return route, body

    async def _recorded(
        self, route: EpisodeRoute, request: Any, send: Callable[[Any], Awaitable[ModelCall]]
    ) -> ModelCall:
        """One call answered by `send` and recorded on the route (cancelled if the episode closes first)."""
        task = asyncio.current_task()
        if task is not None:
            route.inflight.add(task)
        try:
            if getattr(send, "records_itself", False):  # e.g. a policy whose own model calls are the record
                return await send(request)
            call = await route.recorder.model_call(request, send)
            if not route.keep_calls:
                route.recorder.model_calls.clear()
            return call
        except Exception as exc:
            raise _record(route, exc) from exc
        finally:
            route.inflight.discard(task)

    async def _answer(self, route: EpisodeRoute, request: ChatRequest, n: int) -> list[ModelCall]:
        """`n` choices for `request`, each its own recorded call (a seeded request's i-th sample uses seed + i)."""
        if n == 1:
            return [await self._recorded(route, request, route.responder)]
        requests = [request] * n
        seed = request.params.get("seed")
        if isinstance(seed, int) and not isinstance(seed, bool):
            requests = [attrs.evolve(request, params={**request.params, "seed": seed + i}) for i in range(n)]
        # Concurrent: the embedded model decodes them as one batch, a remote server as n requests.
        return list(await asyncio.gather(*(self._recorded(route, r, route.responder) for r in requests)))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "'messages' must be a non-empty list.")
        try:
            n = _choices(body)
            chat = ChatRequest(
                model=str(body.get("model") or route.model),
                messages=tuple(messages),
                tools=tuple(body.get("tools") or ()),
                params=_params(body, WIRE_KEYS),
            )
            if body.get("stream") and n == 1 and isinstance(route.policy, Endpoint):
                return await self._stream_chat(request, route, chat, route.policy)
            calls = await self._answer(route, chat, n)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        completion = completion_json(calls, model=str(body.get("model") or route.model))
        if not body.get("stream"):
            return _json(completion)
        # An in-process policy (or n > 1): its whole reply is ready at once; sent as one chunk per choice.
        stream = await _event_stream(request)
        for chunk in completion_chunks(completion):
            await stream.write(_event(chunk))
        await stream.write(b"data: [DONE]\n\n")
        await stream.write_eof()
        return stream

    async def _stream_chat(
        self, request: web.Request, route: EpisodeRoute, chat: ChatRequest, endpoint: Endpoint
    ) -> web.StreamResponse:
        """Pass the endpoint's reply on as it is produced; the call is recorded as it would be unstreamed.

        The response starts with the first piece, so a call that fails before one is an HTTP error;
        one that fails after ends the stream with an error event (the OpenAI client raises on it).
        """
        opened: list[web.StreamResponse] = []
        head = {"id": f"chatcmpl-{new_id()}", "created": int(time.time()), "model": chat.model}

        async def send(req: ChatRequest) -> ModelCall:
            async for item in endpoint.stream(req):
                if isinstance(item, ModelCall):
                    return item
                if not opened:
                    opened.append(await _event_stream(request))
                    await opened[0].write(_event(chunk_json(head, item, first=True)))
                else:
                    await opened[0].write(_event(chunk_json(head, item)))
            msg = f"The {endpoint.provider_name!r} provider's stream ended without its recorded call."
            raise InfraFailure(msg)

        try:
            call = await self._recorded(route, chat, send)
        except _Refused as exc:
            if not opened:
                return _error(exc.status, str(exc))
            error = {"error": {"message": str(exc), "type": "nenyax_proxy_error", "code": exc.status}}
            await opened[0].write(_event(error))
            await opened[0].write_eof()
            return opened[0]
        if not opened:  # an empty reply: the role chunk still comes first
            opened.append(await _event_stream(request))
            await opened[0].write(_event(chunk_json(head, Delta(), first=True)))
        await opened[0].write(_event(final_chunk(head, [call])))
        await opened[0].write(b"data: [DONE]\n\n")
        await opened[0].write_eof()
        return opened[0]

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        try:
            if body.get("stream"):
                raise _Refused(400, "This proxy answers /v1/completions without streaming; send stream=false.")
            prompts = _prompts(body.get("prompt", ""))
            n = _choices(body)
            top = body.get("logprobs")
            if top is not None and (isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 20):
                raise _Refused(
                    400, f"'logprobs' on /v1/completions is a number of alternatives from 0 to 20, not {top!r}."
                )
            echo = bool(body.get("echo"))
            text_wire = {"model", "prompt", "stream", "stream_options", "logprobs", "echo", "n", "return_token_ids"}
            params = _params(body, frozenset(text_wire))
            model = str(body.get("model") or route.model)
            calls: list[ModelCall] = []
            for prompt in prompts:
                text = TextRequest(model=model, prompt=prompt, params=params, echo=echo, top_logprobs=top or 0)
                calls.extend(await self._text_answer(route, text, n))
        except _Refused as exc:
            return _error(exc.status, str(exc))
        return _json(text_completion_json(calls, model=model, echo=echo, logprobs=top is not None))

    async def _text_answer(self, route: EpisodeRoute, request: TextRequest, n: int) -> list[ModelCall]:
        """A raw prompt continued by the endpoint (`Endpoint.complete_text`); an in-process policy, which
        knows only chat, is asked with the prompt as one user message (and cannot score a prompt)."""
        endpoint = route.policy if isinstance(route.policy, Endpoint) else None
        if endpoint is None:
            if request.echo:
                raise _Refused(400, "echo needs a model that scores prompts; this episode's policy is no model.")
            text = request.prompt if isinstance(request.prompt, str) else None
            if text is None:
                raise _Refused(
                    400, "Token-id prompts need a model with a tokenizer; this episode's policy is no model."
                )
            chat = ChatRequest(
                model=request.model, messages=({"role": "user", "content": text},), params=request.params
            )
            calls = await self._answer(route, chat, n)
            return [attrs.evolve(call, prompt=text) for call in calls]

        async def send(req: TextRequest) -> ModelCall:
            return await endpoint.complete_text(req)

        return list(await asyncio.gather(*(self._recorded(route, request, send) for _ in range(n))))

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        try:
            if body.get("stream"):
                raise _Refused(400, "This proxy answers /v1/responses without streaming; send stream=false.")
            if body.get("previous_response_id"):
                raise _Refused(400, "This proxy keeps no responses: send the whole input, not previous_response_id.")
            messages = messages_from_input(body)
            tools, tool_choice = responses_tools(body)
            wire = frozenset({"model", "input", "instructions", "tools", "tool_choice", "stream", "store", "n"})
            params = _params(body, wire)
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
            chat = ChatRequest(
                model=str(body.get("model") or route.model), messages=tuple(messages), tools=tools, params=params
            )
            [call] = await self._answer(route, chat, 1)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        except RequestRefused as exc:  # input items or tools the translation cannot carry
            return _error(400, str(exc))
        return _json(response_json(call, body, model=str(body.get("model") or route.model)))

    async def _models(self, request: web.Request) -> web.Response:
        route = self._route_of(request)
        if route is None:
            return _error(404, "No open episode has this path prefix.")
        return _json({"object": "list", "data": [{"id": route.model, "object": "model", "owned_by": "nenyax"}]})


def _prompts(prompt: Any) -> list[str | tuple[int, ...]]:
    """``prompt`` as the list of prompts it is: a string, token ids, or a list of either."""
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, list) and prompt and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        return [tuple(prompt)]
    if isinstance(prompt, list) and prompt:
        found: list[str | tuple[int, ...]] = []
        for item in prompt:
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in item):
                found.append(tuple(item))
            else:
                raise _Refused(400, "'prompt' must be a string, token ids, or a list of strings or of token-id lists.")
        return found
    raise _Refused(400, "'prompt' must be a string, token ids, or a list of strings or of token-id lists.")


async def _event_stream(request: web.Request) -> web.StreamResponse:
    stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await stream.prepare(request)
    return stream


def _event(data: Any) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"
