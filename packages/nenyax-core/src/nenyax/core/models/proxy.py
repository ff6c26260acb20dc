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

from nenyax.core.contract.chat import SAMPLING_KEYS, ChatRequest
from nenyax.core.contract.trajectory import ModelCall, Status, new_id
from nenyax.core.errors import InfraFailure, NenyaxError, PolicyFailure
from nenyax.core.models.endpoint import Endpoint
from nenyax.core.models.openai_wire import completion_chunks, completion_json
from nenyax.core.models.recorder import EpisodeRecorder

Responder = Callable[[ChatRequest], Awaitable[ModelCall]]


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
    """Classify a responder's failure for the episode: infrastructure, or the policy's own."""
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
    body = {"error": {"message": message, "type": "nenyax_proxy_error", "code": status}}
    return web.json_response(body, status=status, dumps=lambda o: orjson.dumps(o).decode())


def _json(data: Any) -> web.Response:
    return web.Response(body=orjson.dumps(data), content_type="application/json")


def _messages_from_responses_input(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input", "")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for item in items:
        content = item.get("content", "")
        if isinstance(content, list):  # [{"type": "input_text", "text": ...}, ...]
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        messages.append({"role": item.get("role", "user"), "content": content})
    return messages


class RecordingProxy:
    """Serve ``/e/<episode>/v1/{chat/completions,completions,responses,models}`` on loopback."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Bind to `host`:`port` when started (port 0 picks a free one)."""
        self.host, self.port = host, port
        self.routes: dict[str, EpisodeRoute] = {}
        self._runner: web.AppRunner | None = None

    async def start(self) -> RecordingProxy:
        """Start serving; returns self."""
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post("/e/{episode}/v1/chat/completions", self._chat)
        app.router.add_post("/e/{episode}/v1/completions", self._completions)
        app.router.add_post("/e/{episode}/v1/responses", self._responses)
        app.router.add_get("/e/{episode}/v1/models", self._models)
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
        route = self.routes.get(request.match_info["episode"])
        if route is None:
            return _error(404, "No open episode has this path prefix; it may have finished already.")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _error(400, "The request body is not valid JSON.")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        return route, body

    async def _answer(self, route: EpisodeRoute, messages: list[dict[str, Any]], body: dict[str, Any]) -> ModelCall:
        params = {k: v for k, v in body.items() if k in SAMPLING_KEYS}
        if "max_completion_tokens" in body:
            params.setdefault("max_tokens", body["max_completion_tokens"])
        if "max_output_tokens" in body:
            params.setdefault("max_tokens", body["max_output_tokens"])
        request = ChatRequest(
            model=str(body.get("model") or route.model),
            messages=tuple(messages),
            tools=tuple(body.get("tools") or ()),
            params=params,
        )
        task = asyncio.current_task()
        if task is not None:
            route.inflight.add(task)
        try:
            return await route.recorder.model_call(request, route.responder)
        except Exception as exc:
            raise _record(route, exc) from exc
        finally:
            route.inflight.discard(task)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "'messages' must be a non-empty list.")
        try:
            call = await self._answer(route, messages, body)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        completion = completion_json(call, model=str(body.get("model") or route.model))
        if not body.get("stream"):
            return _json(completion)
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await stream.prepare(request)
        for chunk in completion_chunks(completion):
            await stream.write(b"data: " + orjson.dumps(chunk) + b"\n\n")
        await stream.write(b"data: [DONE]\n\n")
        await stream.write_eof()
        return stream

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        prompt = body.get("prompt", "")
        if not isinstance(prompt, str):
            return _error(400, "This proxy serves /v1/completions for a single string prompt.")
        if body.get("echo") and body.get("logprobs") is not None:
            if not isinstance(route.policy, Endpoint):
                return _error(400, "echo with logprobs needs a model server that scores prompts; this model cannot.")
            return await self._scored_prompt(route, body, prompt)
        try:
            call = await self._answer(route, [{"role": "user", "content": prompt}], body)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        choice: dict[str, Any] = {
            "index": 0,
            "text": (prompt if body.get("echo") else "") + str(call.response.get("content") or ""),
            "finish_reason": call.finish_reason or "stop",
            "logprobs": None,
        }
        if call.logprobs is not None and body.get("logprobs") is not None:
            choice["logprobs"] = {"token_logprobs": list(call.logprobs), "tokens": [], "top_logprobs": None}
        return _json(
            {
                "id": f"cmpl-{new_id()}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": body.get("model") or route.model,
                "choices": [choice],
                "usage": call.usage,
            }
        )

    async def _scored_prompt(self, route: EpisodeRoute, body: dict[str, Any], prompt: str) -> web.Response:
        endpoint = route.policy
        answered: dict[str, Any] = {}

        async def score(request: ChatRequest) -> ModelCall:
            data = await endpoint.text_completion(body)
            try:
                choice = data["choices"][0]
                text = str(choice.get("text", ""))
                finish = choice.get("finish_reason")
            except (KeyError, IndexError, TypeError, AttributeError) as exc:
                raise InfraFailure(f"The model server's completion is malformed ({exc!r}).") from exc
            answered["data"] = data
            return ModelCall(
                messages=request.messages,
                response={"role": "assistant", "content": text},
                provider=endpoint.provider_name,
                model=endpoint.model,
                params=dict(request.params),
                finish_reason=finish,
            )

        request = ChatRequest(
            model=endpoint.model,
            messages=({"role": "user", "content": prompt},),
            params={k: v for k, v in body.items() if k in SAMPLING_KEYS},
        )
        try:
            await route.recorder.model_call(request, score)
        except Exception as exc:  # noqa: BLE001 - whatever the policy raises is answered and recorded
            refused = _record(route, exc)
            return _error(refused.status, str(refused))
        return _json(answered["data"])

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        found = await self._route_and_body(request)
        if isinstance(found, web.Response):
            return found
        route, body = found
        try:
            messages = _messages_from_responses_input(body)
        except (AttributeError, TypeError) as exc:
            return _error(400, f"'input' must be a string or a list of message objects ({exc}).")
        try:
            call = await self._answer(route, messages, body)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        text = str(call.response.get("content") or "")
        return _json(
            {
                "id": f"resp_{new_id()}",
                "object": "response",
                "created_at": int(time.time()),
                "status": "completed",
                "model": body.get("model") or route.model,
                "output": [
                    {
                        "type": "message",
                        "id": f"msg_{new_id()}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                ],
                "output_text": text,
                "usage": {
                    "input_tokens": call.usage.get("prompt_tokens", 0),
                    "output_tokens": call.usage.get("completion_tokens", 0),
                    "total_tokens": call.usage.get("total_tokens", 0),
                },
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        route = self.routes.get(request.match_info["episode"])
        if route is None:
            return _error(404, "No open episode has this path prefix.")
        return _json({"object": "list", "data": [{"id": route.model, "object": "model", "owned_by": "nenyax"}]})
