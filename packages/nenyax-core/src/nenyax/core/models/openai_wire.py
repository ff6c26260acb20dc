"""OpenAI chat-completions wire format <-> `ModelCall`, shared by the openai provider and the proxy.

Besides OpenAI's fields this reads vLLM's token-id extensions (``prompt_token_ids`` on the response,
``token_ids`` per choice) so a model served by vLLM records exact token ids.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from nenyax.core.contract.chat import ChatRequest, Delta, TextRequest
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
        tokens = tuple(str(item["token"]) for item in scored) if scored and all("token" in i for i in scored) else None
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
            tokens=tokens,
            top_logprobs=_alternatives(scored) if request.params.get("top_logprobs") else None,
            finish_reason=choice.get("finish_reason"),
            usage=usage,
            fingerprint=data.get("system_fingerprint"),
        )
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise _malformed(where, f"{type(exc).__name__}: {exc}") from exc


def _alternatives(scored: list[dict[str, Any]] | None) -> tuple[tuple[dict[str, Any], ...], ...] | None:
    """Chat logprobs' ``top_logprobs`` lists, per token, as `ModelCall.top_logprobs` keeps them."""
    if not scored:
        return None
    return tuple(
        tuple({"token": str(alt["token"]), "logprob": float(alt["logprob"])} for alt in item.get("top_logprobs") or ())
        for item in scored
    )


def text_request_body(request: TextRequest, *, token_ids: bool) -> dict[str, Any]:
    """The JSON body for ``POST /completions`` (legacy logprobs: an int, the alternatives wanted)."""
    prompt: str | list[int] = request.prompt if isinstance(request.prompt, str) else list(request.prompt)
    body: dict[str, Any] = {"model": request.model, "prompt": prompt, **request.params}
    body["logprobs"] = request.top_logprobs
    if request.echo:
        body["echo"] = True
    if token_ids:
        body["return_token_ids"] = True
    return body


def parse_text_response(data: Any, request: TextRequest, *, where: str, provider: str) -> ModelCall:
    """Turn a ``text_completion`` into a ModelCall (an echoed prompt's tokens go to `prompt_logprobs`)."""
    try:
        choice = data["choices"][0]
        text = choice["text"]
        if not isinstance(text, str):
            raise TypeError(f"choices[0].text is {type(text).__name__}, not text")
        scored = choice.get("logprobs") or {}
        tokens = [str(t) for t in scored.get("tokens") or ()]
        values = list(scored.get("token_logprobs") or ())
        tops = list(scored.get("top_logprobs") or ()) or [None] * len(tokens)
        offsets = list(scored.get("text_offset") or ())
        prompt_ids = _ids(data.get("prompt_token_ids") or choice.get("prompt_token_ids"))
        echoed = 0
        if request.echo:
            if not isinstance(request.prompt, str):
                echoed = len(request.prompt)
            elif prompt_ids is not None:
                echoed = len(prompt_ids)
            elif offsets:
                echoed = sum(1 for offset in offsets if offset < len(request.prompt))
            else:
                raise TypeError("an echoed completion must say where the prompt ends (text_offset or token ids)")
            text = text[len(request.prompt) :] if isinstance(request.prompt, str) else text

        def top(i: int) -> list[dict[str, Any]]:
            alts = tops[i] if i < len(tops) else None
            return [{"token": str(k), "logprob": float(v)} for k, v in (alts or {}).items()]

        prompt_logprobs = None
        if request.echo:
            prompt_logprobs = tuple(
                {
                    "id": prompt_ids[i] if prompt_ids else None,
                    "token": tokens[i],
                    "logprob": None if values[i] is None else float(values[i]),
                    "top_logprobs": top(i),
                }
                for i in range(min(echoed, len(tokens)))
            )
        completion = range(echoed, len(tokens))
        return ModelCall(
            messages=(),
            prompt=request.prompt if isinstance(request.prompt, str) else None,
            response={"role": "assistant", "content": text},
            provider=provider,
            model=str(data.get("model") or request.model),
            params=dict(request.params),
            prompt_token_ids=prompt_ids
            if prompt_ids is not None
            else _ids(None if isinstance(request.prompt, str) else list(request.prompt)),
            completion_token_ids=_ids(choice.get("token_ids")),
            logprobs=tuple(float(values[i]) for i in completion) if tokens else None,
            tokens=tuple(tokens[i] for i in completion) if tokens else None,
            top_logprobs=tuple(tuple(top(i)) for i in completion) if tokens and request.top_logprobs else None,
            prompt_logprobs=prompt_logprobs,
            finish_reason=choice.get("finish_reason"),
            usage={k: int(v) for k, v in (data.get("usage") or {}).items() if isinstance(v, int)},
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

    def feed(self, chunk: dict[str, Any]) -> Delta:
        """Add one parsed chunk; return what it added to the reply."""
        before = (len(self.content), len(self.token_ids), len(self.logprobs))
        fragments: list[dict[str, Any]] = []
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
                fragments.append(call)
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
        scored = self.logprobs[before[2] :]
        return Delta(
            text="".join(self.content[before[0] :]),
            token_ids=tuple(self.token_ids[before[1] :]),
            logprobs=tuple(float(item["logprob"]) for item in scored),
            tokens=tuple(str(item.get("token", "")) for item in scored),
            tool_calls=tuple(fragments),
        )

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


def parse_sse_line(line: bytes, assembler: StreamAssembler, where: str) -> Delta | None:
    """Feed one ``data: ...`` line of a server-sent event stream; return the piece of reply it carried."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return None
    payload = line[5:].strip()
    if payload == b"[DONE]":
        assembler.done = True
        return None
    try:
        data = orjson.loads(payload)
        if isinstance(data, dict) and "error" in data and "choices" not in data:
            raise ValueError(f"the server sent an error in the stream: {data['error']}")
        return assembler.feed(data)
    except (orjson.JSONDecodeError, TypeError, AttributeError, KeyError, ValueError) as exc:
        raise _malformed(where, f"bad stream chunk: {type(exc).__name__}: {exc}") from exc


# ---------------------------------------------------------------- serving (the recording proxy)


def _token_text(call: ModelCall, i: int) -> str:
    return call.tokens[i] if call.tokens is not None and i < len(call.tokens) else ""


def chat_logprobs(call: ModelCall, i: int) -> dict[str, Any]:
    """OpenAI's ``logprobs.content`` entry of completion token `i` of `call`."""
    token = _token_text(call, i)
    alternatives = call.top_logprobs[i] if call.top_logprobs is not None and i < len(call.top_logprobs) else ()
    return {
        "token": token,
        "logprob": call.logprobs[i] if call.logprobs is not None else 0.0,
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": alt["token"], "logprob": alt["logprob"], "bytes": list(str(alt["token"]).encode())}
            for alt in alternatives
        ],
    }


def _choice(call: ModelCall, index: int) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": index,
        "message": {"role": "assistant", **{k: v for k, v in call.response.items() if k != "role"}},
        "finish_reason": call.finish_reason or "stop",
    }
    if call.logprobs is not None:
        choice["logprobs"] = {"content": [chat_logprobs(call, i) for i in range(len(call.logprobs))]}
    if call.completion_token_ids is not None:
        choice["token_ids"] = list(call.completion_token_ids)
    return choice


def _usage(calls: list[ModelCall]) -> dict[str, int]:
    prompt = calls[0].usage.get("prompt_tokens", 0)  # one prompt, however many choices
    completion = sum(call.usage.get("completion_tokens", 0) for call in calls)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_json(calls: list[ModelCall], *, model: str) -> dict[str, Any]:
    """A ``chat.completion`` body with one choice per recorded call (token ids and logprobs when known)."""
    first = calls[0]
    body: dict[str, Any] = {
        "id": f"chatcmpl-{new_id()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [_choice(call, i) for i, call in enumerate(calls)],
        "usage": _usage(calls),
    }
    if first.prompt_token_ids is not None:
        body["prompt_token_ids"] = list(first.prompt_token_ids)
    if first.fingerprint:
        body["system_fingerprint"] = first.fingerprint
    return body


def chunk_json(head: dict[str, Any], delta: Delta, *, index: int = 0, first: bool = False) -> dict[str, Any]:
    """One ``chat.completion.chunk`` carrying `delta` (the role on the first chunk)."""
    piece: dict[str, Any] = {"role": "assistant"} if first else {}
    if delta.text or first:
        piece["content"] = delta.text
    if delta.tool_calls:
        piece["tool_calls"] = list(delta.tool_calls)
    choice: dict[str, Any] = {"index": index, "delta": piece, "finish_reason": None}
    if delta.logprobs:
        tokens = delta.tokens or ("",) * len(delta.logprobs)
        choice["logprobs"] = {
            "content": [
                {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
                for t, lp in zip(tokens, delta.logprobs, strict=False)
            ]
        }
    if delta.token_ids:
        choice["token_ids"] = list(delta.token_ids)
    return {**head, "object": "chat.completion.chunk", "choices": [choice]}


def final_chunk(head: dict[str, Any], calls: list[ModelCall]) -> dict[str, Any]:
    """The last chunk: each choice's finish reason, and the usage."""
    choices = [{"index": i, "delta": {}, "finish_reason": c.finish_reason or "stop"} for i, c in enumerate(calls)]
    chunk = {**head, "object": "chat.completion.chunk", "choices": choices, "usage": _usage(calls)}
    if calls[0].prompt_token_ids is not None:
        chunk["prompt_token_ids"] = list(calls[0].prompt_token_ids)
    return chunk


def completion_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A finished completion as stream chunks: one delta with everything per choice, then the finish chunk."""
    head = {k: body[k] for k in ("id", "created", "model")}
    chunks = []
    for choice in body["choices"]:
        delta = {"role": "assistant", **{k: v for k, v in choice["message"].items() if k != "role"}}
        if "tool_calls" in delta:
            delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
        first: dict[str, Any] = {"index": choice["index"], "delta": delta, "finish_reason": None}
        if "logprobs" in choice:
            first["logprobs"] = choice["logprobs"]
        if "token_ids" in choice:
            first["token_ids"] = choice["token_ids"]
        chunks.append({**head, "object": "chat.completion.chunk", "choices": [first]})
    if "prompt_token_ids" in body:
        chunks[0]["prompt_token_ids"] = body["prompt_token_ids"]
    last = [{"index": c["index"], "delta": {}, "finish_reason": c["finish_reason"]} for c in body["choices"]]
    chunks.append({**head, "object": "chat.completion.chunk", "choices": last, "usage": body["usage"]})
    return chunks


def _text_logprobs(call: ModelCall, *, echo: bool) -> dict[str, Any]:
    """Legacy completions' ``logprobs`` (tokens, token_logprobs, top_logprobs, text_offset); the prompt's
    first when echoed."""
    tokens: list[str] = []
    values: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    for item in (call.prompt_logprobs or ()) if echo else ():
        tokens.append(str(item.get("token", "")))
        values.append(item.get("logprob"))
        alts = item.get("top_logprobs") or []
        tops.append({str(a["token"]): float(a["logprob"]) for a in alts} if item.get("logprob") is not None else None)
    for i, value in enumerate(call.logprobs or ()):
        tokens.append(_token_text(call, i))
        values.append(value)
        alts = call.top_logprobs[i] if call.top_logprobs is not None and i < len(call.top_logprobs) else ()
        tops.append({str(a["token"]): float(a["logprob"]) for a in alts})
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops, "text_offset": offsets}


def text_completion_json(calls: list[ModelCall], *, model: str, echo: bool, logprobs: bool) -> dict[str, Any]:
    """A ``text_completion`` body, one choice per recorded call (a prompt list gives one call per prompt)."""
    choices = []
    for i, call in enumerate(calls):
        text = str(call.response.get("content") or "")
        if echo:
            text = (call.prompt or "") + text
        choice: dict[str, Any] = {"index": i, "text": text, "finish_reason": call.finish_reason or "stop"}
        choice["logprobs"] = _text_logprobs(call, echo=echo) if logprobs and call.logprobs is not None else None
        if call.completion_token_ids is not None:
            choice["token_ids"] = list(call.completion_token_ids)
        if call.prompt_token_ids is not None:
            choice["prompt_token_ids"] = list(call.prompt_token_ids)
        choices.append(choice)
    prompt = sum(call.usage.get("prompt_tokens", 0) for call in calls)
    completion = sum(call.usage.get("completion_tokens", 0) for call in calls)
    return {
        "id": f"cmpl-{new_id()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }
