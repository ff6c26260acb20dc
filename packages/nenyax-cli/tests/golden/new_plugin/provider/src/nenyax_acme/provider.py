"""The `acme` provider: an in-process model that echoes the last message. This is the file to make your own.

A provider is the transport behind an Endpoint (``Endpoint("acme:echo")``): `complete` sends one chat
request and returns the recorded `ModelCall` (the reply, and where the transport knows them, token ids and
per-token logprobs). This one needs no server: its "model" replies with the last message's text, one
character a token (token id = the character's code point), every token certain (logprob 0). Any model name
gets the same echo. For a real transport, send the request in `complete` (keep one connection pool per
event loop), raise `InfraFailure` for what retrying might fix (a server down) and `UsageError` for what it
cannot (a bad key, an unknown model).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from nenyax.core import ChatRequest, ModelCall, RequestRefused


def _text(content: object) -> str:
    """A message's text: OpenAI's content is a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class AcmeProvider:
    """The `acme` provider (what the plugin's factory returns, built from the Endpoint's options)."""

    honours = frozenset({"max_tokens", "temperature", "seed"})
    """The request fields it honours; an Endpoint refuses a request with any other before sending it. The
    echo is certain, so every temperature and seed gives the same reply: honoured, trivially."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None) -> None:
        """Take the options every provider is given; an in-process model has no use for either."""
        self.base_url = base_url
        self.api_key = api_key

    def prepare(self, model: str) -> None:
        """Load what the first reply would wait for (a real in-process model's weights); the echo needs nothing."""

    async def complete(self, request: ChatRequest) -> ModelCall:
        """The last message's text as the reply, at most ``max_tokens`` tokens of it, recorded with its tokens."""
        refused = sorted(set(request.params) - self.honours)
        if refused:
            honoured = ", ".join(sorted(self.honours))
            msg = f"The acme provider cannot honour {', '.join(refused)} (it honours {honoured})."
            raise RequestRefused(msg)
        started = time.time()
        prompt = "".join(f"{m.get('role')}: {_text(m.get('content'))}\n" for m in request.messages)
        reply = _text(request.messages[-1].get("content")) if request.messages else ""
        limit = request.params.get("max_tokens")
        cut = limit is not None and len(reply) > int(limit)
        if limit is not None:
            reply = reply[: int(limit)]
        return ModelCall(
            messages=tuple(request.messages),
            response={"role": "assistant", "content": reply},
            provider="acme",
            model=request.model,
            params=dict(request.params),
            tools=tuple(request.tools),
            prompt_token_ids=tuple(ord(c) for c in prompt),
            completion_token_ids=tuple(ord(c) for c in reply),
            tokens=tuple(reply),
            logprobs=(0.0,) * len(reply),
            finish_reason="length" if cut else "stop",
            usage={"prompt_tokens": len(prompt), "completion_tokens": len(reply), "total_tokens": len(prompt + reply)},
            started=started,
            duration_s=time.time() - started,
        )

    def detokenize(self, model: str, token_ids: Sequence[int]) -> str:
        """The text of token ids, as this model's tokenizer (one character a token) decodes them."""
        return "".join(map(chr, token_ids))

    async def aclose(self) -> None:
        """Nothing held: a real transport closes its connection pool here (safe to call twice)."""
