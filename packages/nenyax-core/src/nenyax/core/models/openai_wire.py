"""OpenAI chat-completions wire format <-> `ModelCall`, shared by the openai provider and the proxy.

Besides OpenAI's fields this reads vLLM's token-id extensions (``prompt_token_ids`` on the response,
``token_ids`` per choice) so a model served by vLLM records exact token ids.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import ModelCall, new_id
from nenyax.core.errors import InfraFailure


def request_body(request: ChatRequest, *, token_ids: bool, stream: bool) -> dict[str, Any]:
    """The JSON body for ``POST /chat/completions``."""
    body: dict[str, Any] = {"model": request.model, "messages": list(request.messages), **request.params}
    if request.tools:
        body["tools"] = list(request.tools)
    if request.logprobs:
        body["logprobs"] = True
    if token_ids:
        body["return_token_ids"] = True
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _malformed(where: str, detail: str) -> InfraFailure:
    return InfraFailure(f"The model server at {where} returned a malformed response ({detail}).")


def _ids(value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
        raise TypeError("token ids must be a list of integers")
    return tuple(value)


def parse_response(data: Any, request: ChatRequest, *, where: str, provider: str) -> ModelCall:
    """Turn a (non-streamed) chat completion into a ModelCall; raise InfraFailure if it is malformed."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            raise TypeError("choices[0].message is not an assistant message")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise TypeError(f"message content is {type(content).__name__}, not text")
        response = {"role": "assistant", "content": content}
        if message.get("tool_calls"):
            response["tool_calls"] = message["tool_calls"]
        scored = (choice.get("logprobs") or {}).get("content")
        logprobs = tuple(float(item["logprob"]) for item in scored) if scored else None
        usage = {k: int(v) for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        return ModelCall(
            messages=request.messages,
            response=response,
            provider=provider,
            model=str(data.get("model") or request.model),
            params=dict(request.params),
            tools=request.tools,
            prompt_token_ids=_ids(data.get("prompt_token_ids") or choice.get("prompt_token_ids")),
            completion_token_ids=_ids(choice.get("token_ids")),
            logprobs=logprobs,
            finish_reason=choice.get("finish_reason"),
            usage=usage,
            fingerprint=data.get("system_fingerprint"),
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise _malformed(where, f"{type(exc).__name__}: {exc}") from exc


class StreamAssembler:
    """Accumulates ``chat.completion.chunk`` events into one completion-shaped dict."""

    def __init__(self) -> None:
        """Start empty."""
        self.content: list[str] = []
        self.logprobs: list[dict[str, Any]] = []
        self.token_ids: list[int] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.data: dict[str, Any] = {}
        self.finish_reason: str | None = None
        self.done = False

    def feed(self, chunk: dict[str, Any]) -> None:
        """Add one parsed chunk."""
        for key in ("id", "model", "system_fingerprint", "prompt_token_ids", "usage"):
            if chunk.get(key) is not None:
                self.data[key] = chunk[key]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content is not None and not isinstance(content, str):
                raise TypeError(f"delta content is {type(content).__name__}, not text")
            if content:
                self.content.append(content)
            for call in delta.get("tool_calls") or []:
                slot = self.tool_calls.setdefault(call.get("index", 0), {"function": {"arguments": ""}})
                slot.update({k: v for k, v in call.items() if k not in ("function", "index")})
                function = call.get("function") or {}
                if function.get("name"):
                    slot["function"]["name"] = function["name"]
                slot["function"]["arguments"] += function.get("arguments") or ""
            self.logprobs.extend((choice.get("logprobs") or {}).get("content") or [])
            self.token_ids.extend(choice.get("token_ids") or [])
            if choice.get("prompt_token_ids") and "prompt_token_ids" not in self.data:
                self.data["prompt_token_ids"] = choice["prompt_token_ids"]
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def result(self) -> dict[str, Any]:
        """The assembled completion, in the non-streamed shape."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.tool_calls:
            message["tool_calls"] = [self.tool_calls[i] for i in sorted(self.tool_calls)]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        if self.logprobs:
            choice["logprobs"] = {"content": self.logprobs}
        if self.token_ids:
            choice["token_ids"] = self.token_ids
        return {**self.data, "choices": [choice]}


def parse_sse_line(line: bytes, assembler: StreamAssembler, where: str) -> None:
    """Feed one ``data: ...`` line of a server-sent event stream."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return
    payload = line[5:].strip()
    if payload == b"[DONE]":
        assembler.done = True
        return
    try:
        assembler.feed(orjson.loads(payload))
    except (orjson.JSONDecodeError, TypeError, AttributeError, KeyError, ValueError) as exc:
        raise _malformed(where, f"bad stream chunk: {type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------- serving (the recording proxy)


def completion_json(call: ModelCall, *, model: str) -> dict[str, Any]:
    """A ``chat.completion`` body built from a recorded call (with token ids and logprobs when known)."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", **{k: v for k, v in call.response.items() if k != "role"}},
        "finish_reason": call.finish_reason or "stop",
    }
    if call.logprobs is not None:
        choice["logprobs"] = {
            "content": [{"token": "", "logprob": lp, "bytes": None, "top_logprobs": []} for lp in call.logprobs]
        }
    if call.completion_token_ids is not None:
        choice["token_ids"] = list(call.completion_token_ids)
    body: dict[str, Any] = {
        "id": f"chatcmpl-{new_id()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": call.usage or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    if call.prompt_token_ids is not None:
        body["prompt_token_ids"] = list(call.prompt_token_ids)
    if call.fingerprint:
        body["system_fingerprint"] = call.fingerprint
    return body


def completion_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The same completion as stream chunks: one delta with everything, then the finish chunk."""
    choice = body["choices"][0]
    delta = {"role": "assistant", **{k: v for k, v in choice["message"].items() if k != "role"}}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
    head = {k: body[k] for k in ("id", "created", "model")}
    first: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
    if "logprobs" in choice:
        first["logprobs"] = choice["logprobs"]
    if "token_ids" in choice:
        first["token_ids"] = choice["token_ids"]
    chunks = [{**head, "object": "chat.completion.chunk", "choices": [first]}]
    if "prompt_token_ids" in body:
        chunks[0]["prompt_token_ids"] = body["prompt_token_ids"]
    last = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    chunks.append({**head, "object": "chat.completion.chunk", "choices": [last], "usage": body["usage"]})
    return chunks
