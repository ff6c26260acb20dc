"""`TokenServerProvider`: the ``tokens`` provider, chat over a token-in/token-out inference server.

The server is handed token ids and returns token ids; the chat template, the tool-call parsing and the
transcript are here, so what is recorded is exactly what the server sampled and each later turn's
prompt extends the earlier turns' exact ids (`nenyax.providers.local.turns`). Two wires:

- ``vllm``: vLLM's ``POST /v1/completions`` with the prompt as ids and ``return_token_ids`` (what TRL's
  own `VLLMClient.generate` sends; ``trl vllm-serve`` runs vLLM's server since TRL 1.x);
- ``sglang``: SGLang's native ``POST /generate`` with ``input_ids`` and ``return_logprob``.

The tokenizer is the model's own, read from a Hugging Face folder (or a ``local`` built-in's converted
folder): it must be the tokenizer the server runs, which is what a trainer serving its checkpoint has.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
import attrs
import orjson

from nenyax.core import SAMPLING_KEYS, ChatRequest, Endpoint, ModelCall, TextRequest
from nenyax.core.errors import InfraFailure, RequestRefused, UsageError
from nenyax.providers.local.models import materialize, resolve_model
from nenyax.providers.local.tools import reply
from nenyax.providers.local.turns import ChatTemplate, Transcripts

SERVERS = ("vllm", "sglang")
HONOURS = (SAMPLING_KEYS - {"n", "guided_choice"}) | {"tool_choice", "parallel_tool_calls", "user", "metadata"}
"""What a request may ask: sampling, and the tool fields this side of the wire handles."""
DEFAULT_MAX_TOKENS = 256
"""Where a request sets no ``max_tokens``: the local provider's default (vLLM's completions route would stop at 16)."""
_SGLANG_NAMES = {"max_tokens": "max_new_tokens", "min_tokens": "min_new_tokens", "seed": "sampling_seed"}
_FINISHED = {"stop": "stop", "length": "length"}


@attrs.frozen
class Sampled:
    """What a token server sampled for one prompt: `TokenServerProvider.generate`'s answer."""

    token_ids: list[int]
    logprobs: list[float]
    """One per sampled token: the sampling policy's logprob of it."""
    finish_reason: str | None
    """``stop`` or ``length`` (or the server's own word)."""
    usage: dict[str, int] = attrs.field(factory=dict)
    """``prompt_tokens`` and ``completion_tokens`` where the server counted them."""


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"The base URL {base_url!r} is not an http(s) URL; write it like 'http://127.0.0.1:8000'."
        raise UsageError(msg)
    return url.removesuffix("/v1")


class TokenServerProvider:
    """Chat completions over a server that takes and returns token ids (``Endpoint("tokens:MODEL",
    base_url=..., provider_options={"server": "sglang"})``); MODEL names the tokenizer's folder."""

    name = "tokens"
    honours = HONOURS

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        server: str = "vllm",
        served_model: str | None = None,
        tokenizer: Any = None,
        revision: Callable[[], str] | None = None,
        timeout: float = 300.0,
    ) -> None:
        """`served_model` is the name the server knows the model by (vLLM's ``--served-model-name``; by
        default the model named here); `tokenizer` a folder to read the tokenizer from instead of MODEL's, or
        a tokenizer object (a trainer's); `revision` names the weights the server holds now (a trainer that
        syncs them each step), recorded as each call's fingerprint."""
        if server not in SERVERS:
            msg = f"The tokens provider speaks to {' or '.join(SERVERS)} servers, not {server!r}."
            raise UsageError(msg)
        self.root = _root(base_url or "http://127.0.0.1:8000")
        self.server, self.served_model, self.tokenizer_source = server, served_model, tokenizer
        self.revision_of = revision
        self.api_key, self.timeout = api_key, aiohttp.ClientTimeout(total=timeout)
        self._templates: dict[str, tuple[ChatTemplate, Transcripts]] = {}
        self._vllm: Endpoint | None = None
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def revision(self) -> str | None:
        """The weights the server holds now, where the caller said (`revision`)."""
        return self.revision_of() if self.revision_of is not None else None

    def _template(self, model: str) -> tuple[ChatTemplate, Transcripts]:
        if model not in self._templates:
            tokenizer = self.tokenizer_source
            if tokenizer is None or isinstance(tokenizer, str):
                from transformers import AutoTokenizer

                folder = tokenizer or str(materialize(resolve_model(model))[0])
                try:
                    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
                except Exception as exc:
                    msg = f"Could not read a tokenizer from {folder} ({type(exc).__name__}); name the model's folder."
                    raise UsageError(msg) from exc
            template = ChatTemplate(tokenizer, name=model)
            self._templates[model] = (template, Transcripts(template))
        return self._templates[model]

    def detokenize(self, model: str, token_ids: Sequence[int]) -> str:
        """The text of `token_ids` (special tokens left out)."""
        return self._template(model)[0].decode(token_ids)

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Render the chat to ids (extending the earlier turns' ids), sample on the server, parse the reply."""
        choice = request.params.get("tool_choice")
        if choice not in (None, "auto", "none"):
            msg = f"The tokens provider cannot force a tool call (tool_choice={choice!r}); it honours auto and none."
            raise RequestRefused(msg)
        template, transcripts = await asyncio.to_thread(self._template, request.model)
        tools = () if choice == "none" else tuple(request.tools)
        prompt = transcripts.prompt(request.messages, tools)
        sampling = {"max_tokens": DEFAULT_MAX_TOKENS, **{k: v for k, v in request.params.items() if k in SAMPLING_KEYS}}
        started = time.perf_counter()
        sampled = await self.generate(request.model, prompt.ids, sampling)
        completion, logprobs, usage = sampled.token_ids, sampled.logprobs, sampled.usage
        response, finish = reply(template.decode(completion), sampled.finish_reason, tools, request.params)
        transcripts.remember(request.messages, tools, response, prompt.ids, completion)
        n_prompt, n_completion = len(prompt.ids), len(completion)
        return ModelCall(
            messages=request.messages,
            response=response,
            provider=self.name,
            model=request.model,
            params={**request.params, "max_tokens": sampling["max_tokens"]},
            tools=tools,
            prompt_token_ids=tuple(prompt.ids),
            completion_token_ids=tuple(completion),
            logprobs=tuple(logprobs),
            tokens=tuple(template.decode([i], special=True) for i in completion),
            finish_reason=finish,
            usage=usage or {"prompt_tokens": n_prompt, "completion_tokens": n_completion},
            chat_template_hash=template.hash,
            fingerprint=self.revision_of() if self.revision_of is not None else None,
            duration_s=time.perf_counter() - started,
        )

    async def generate(self, model: str, ids: list[int], sampling: dict[str, Any]) -> Sampled:
        """Sample a completion of the prompt `ids` on the server, with `sampling` (OpenAI's names: ``max_tokens``,
        ``temperature``...); `model` is the request's model name.

        The one call a subclass overrides to sample over another wire (a trainer's own server manager, as
        `nenyax-trainers-verl` does): the chat template, the tool calls and each later turn's ids stay here.
        Raise `InfraFailure` where the server failed and `RequestRefused` where it refused the request.
        """
        if self.server == "vllm":
            return await self._vllm_generate(model, ids, sampling)
        return await self._sglang_generate(ids, sampling)

    async def _vllm_generate(self, model: str, ids: list[int], sampling: dict[str, Any]) -> Sampled:
        if self._vllm is None:  # the openai provider's transport: its retries, its one sentence per refusal
            options = {"api_key": self.api_key} if self.api_key else {}
            self._vllm = Endpoint(
                f"openai:{self.served_model or model}", base_url=f"{self.root}/v1", provider_options=options
            )
        call = await self._vllm.complete_text(TextRequest(model=self._vllm.model, prompt=tuple(ids), params=sampling))
        if call.completion_token_ids is None or call.logprobs is None:
            msg = (
                f"The server at {self.root} returned no token ids or logprobs for a token prompt: the tokens "
                "provider needs vLLM's return_token_ids (vLLM >= 0.10.2); a text-only server is the openai provider's."
            )
            raise UsageError(msg)
        if call.prompt_token_ids is not None and list(call.prompt_token_ids) != ids:
            msg = f"The server at {self.root} reports a prompt other than the ids it was sent."
            raise InfraFailure(msg)
        return Sampled(list(call.completion_token_ids), list(call.logprobs), call.finish_reason, dict(call.usage))

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            session = aiohttp.ClientSession(headers=headers, timeout=self.timeout)
            self._sessions[loop] = session
        return session

    async def _sglang_generate(self, ids: list[int], sampling: dict[str, Any]) -> Sampled:
        params = {_SGLANG_NAMES.get(k, k): v for k, v in sampling.items()}
        if params.get("top_k") == 0:
            params["top_k"] = -1  # SGLang's "no top-k"
        body = {"input_ids": ids, "sampling_params": params, "return_logprob": True, "logprob_start_len": -1}
        url = f"{self.root}/generate"
        try:
            async with self._session().post(url, data=orjson.dumps(body), headers=_JSON) as response:
                raw = await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"The SGLang server at {self.root} could not be reached ({type(exc).__name__}: {exc})."
            raise InfraFailure(msg) from exc
        if status in (400, 422):
            said = raw[:300].decode(errors="replace")
            msg = f"The SGLang server at {self.root} refused the request (HTTP {status}): {said}"
            raise RequestRefused(msg)
        if status != 200:
            msg = f"The SGLang server at {self.root} failed the request (HTTP {status})."
            raise InfraFailure(msg)
        try:
            data = orjson.loads(raw)
            meta = data["meta_info"]
            scored = meta["output_token_logprobs"]
            completion = [int(item[1]) for item in scored]
            logprobs = [float(item[0]) for item in scored]
            if "output_ids" in data and list(data["output_ids"]) != completion:
                raise ValueError("output_ids and output_token_logprobs disagree")
            reason = (meta.get("finish_reason") or {}).get("type")
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as exc:
            msg = f"The SGLang server at {self.root} returned a malformed response ({type(exc).__name__}: {exc})."
            raise InfraFailure(msg) from exc
        if reason == "abort":
            msg = f"The SGLang server at {self.root} aborted the request ({meta.get('finish_reason')})."
            raise InfraFailure(msg)
        usage = {k: int(meta[k]) for k in ("prompt_tokens", "completion_tokens") if isinstance(meta.get(k), int)}
        return Sampled(completion, logprobs, _FINISHED.get(str(reason), reason), usage)

    async def aclose(self) -> None:
        """Close this loop's connections."""
        if self._vllm is not None:
            await self._vllm.aclose()
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()


_JSON = {"Content-Type": "application/json"}
