"""One loaded model per process and weights, serving requests in micro-batches on a worker thread.

Requests from any event loop (or none) are queued; a worker thread, started when work arrives and
gone when the queue is empty, takes everything queued (up to ``max_batch``) and decodes it as one
batch. So the model is only ever touched by one thread at a time, the event loops never block on
it, and a GRPO group of 8 concurrent requests costs about one generation, not eight.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import inspect
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.errors import InfraFailure, NenyaxError, PolicyFailure, UsageError
from nenyax.providers.local.cache import weights_digest
from nenyax.providers.local.constrain import ChoiceConstraint
from nenyax.providers.local.convert import quiet_transformers, read_manifest
from nenyax.providers.local.decode import Batch, HFBatch, Row, generate, hf_logits, left_padded, score_prompt
from nenyax.providers.local.llama import LlamaDecoder, unsupported
from nenyax.providers.local.models import ModelSource, materialize
from nenyax.providers.local.packed import usable_here
from nenyax.providers.local.sampling import Sampler, Sampling
from nenyax.providers.local.turns import ChatTemplate, Transcripts, first_line


@attrs.frozen(kw_only=True)
class Completion:
    """What one request produced."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: str
    alternatives: tuple[tuple[tuple[int, float], ...], ...] = ()
    """Per sampled token, its most likely alternatives (token id, logprob), when asked for."""
    prompt_scores: tuple[tuple[float, tuple[tuple[int, float], ...]], ...] | None = None
    """An echoed prompt: per token after the first, its logprob and most likely alternatives."""
    queued_s: float = 0.0
    """Seconds the request waited in the queue before the worker began serving it (its batch's start)."""


@attrs.frozen(kw_only=True)
class Extras:
    """What a request asks for besides sampling."""

    top_logprobs: int = 0
    prompt_ids: tuple[int, ...] | None = None
    """A raw prompt (a text completion): these ids are continued as they are, with no chat template."""
    echo: bool = False
    """Score the prompt too (`Completion.prompt_scores`)."""
    generate: bool = True
    """False: score the prompt only (an echo with max_tokens 0)."""
    on_token: Callable[[int, float], None] | None = None
    """Called on the worker thread with each sampled token and its logprob (streaming)."""


NO_EXTRAS = Extras()


@attrs.define
class _Job:
    messages: Sequence[dict[str, Any]]
    tools: Sequence[dict[str, Any]]
    sampling: Sampling
    extras: Extras = NO_EXTRAS
    future: concurrent.futures.Future[Completion] = attrs.Factory(concurrent.futures.Future)
    abandoned: threading.Event = attrs.Factory(threading.Event)
    submitted: float = attrs.Factory(time.perf_counter)


PACKED_FORMATS = ("int4",)
"""Weight formats decoded by `LlamaDecoder` (CPU only) rather than by the Hugging Face model."""


def _finish_reason(seq: Row) -> str:
    """Why `seq` ended: a reply with no token was cut by the length limit, unless its caller cancelled it first."""
    if seq.finish_reason == "cancelled" or (seq.completion and seq.finish_reason):
        return str(seq.finish_reason)
    return "length"


def _pick_device(requested: str) -> Any:
    import torch

    if requested == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    device = torch.device(requested)
    if device.type == "cuda" and not torch.cuda.is_available():
        msg = f"The device {requested!r} was asked for but this machine has no CUDA device; use device='auto'."
        raise UsageError(msg)
    if device.type == "mps" and not torch.backends.mps.is_available():
        msg = f"The device {requested!r} was asked for but MPS is not available here; use device='auto'."
        raise UsageError(msg)
    return device


class Engine:
    """A model and its tokenizer, loaded on first use, decoding queued requests in batches."""

    def __init__(self, source: ModelSource, *, device: str, dtype: str, max_batch: int, batch_window_s: float) -> None:
        """Prepare (but do not load) the model `source` names; loading happens on the worker thread."""
        self.source = source
        self.device_name, self.dtype_name = device, dtype
        self.max_batch, self.batch_window_s = max_batch, batch_window_s
        self._lock = threading.Lock()  # guards _pending and _draining
        self._load_lock = threading.Lock()  # one load, even when a caller loads eagerly while the worker does
        self._pending: list[_Job] = []
        self._draining = False
        self._holds = 0
        self._released = threading.Event()  # cleared while `hold()` is in effect
        self._released.set()
        self._thread: threading.Thread | None = None
        self._abandon: weakref.WeakKeyDictionary[concurrent.futures.Future[Completion], threading.Event] = (
            weakref.WeakKeyDictionary()
        )
        self.model: Any = None
        """The loaded model: a Hugging Face module, or a `LlamaDecoder` for the packed formats."""
        self.tokenizer: Any = None
        self.folder: Path | None = None
        self._revision: str | None = None
        self._revision_of: Callable[[], str] | None = None
        """A live model's revision, asked at each call (its weights change as its trainer steps)."""
        self.chat_template_hash: str | None = None
        self.transcripts: Transcripts | None = None
        """Recent replies' exact ids, so that a later turn's prompt extends them (`nenyax.providers.local.turns`)."""
        self.converted = False
        """Whether loading had to convert the GGUF (False when the cache already held it)."""
        self.load_seconds: float | None = None
        self.batch_sizes: collections.deque[int] = collections.deque(maxlen=1024)
        """Size of each decoded batch, most recent last (to see micro-batching at work)."""

    # ------------------------------------------------------------ queue

    def submit(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        sampling: Sampling,
        extras: Extras = NO_EXTRAS,
    ) -> concurrent.futures.Future[Completion]:
        """Queue one chat request (or, with ``extras.prompt_ids``, a raw prompt); the returned future
        resolves to its `Completion` or a NenyaxError."""
        job = _Job(messages=messages, tools=tools, sampling=sampling, extras=extras)
        self._abandon[job.future] = job.abandoned
        with self._lock:
            self._pending.append(job)
            start, self._draining = not self._draining, True
        if start:
            try:
                # Not a daemon: the interpreter must wait for a batch to finish, since a thread killed
                # inside torch at exit aborts the process ("terminate called without an active exception").
                # It ends by itself once the queue is empty, and every decode is bounded by max_tokens.
                self._thread = threading.Thread(target=self._drain, name=f"nenyax-local:{self.source.name}")
                self._thread.start()
            except RuntimeError as exc:
                with self._lock:
                    self._draining = False
                msg = f"Could not start a thread for the local model ({exc})."
                raise InfraFailure(msg) from exc
        return job.future

    def abandon(self, future: concurrent.futures.Future[Completion]) -> None:
        """Nobody waits for `future` any more: drop it from the queue, or stop its decode at the next token.

        `Future.cancel()` alone cannot stop a request already decoding (a running future refuses it).
        """
        future.cancel()
        event = self._abandon.get(future)
        if event is not None:
            event.set()

    @property
    def queued(self) -> int:
        """How many submitted requests wait for the worker to take them."""
        with self._lock:
            return len(self._pending)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Queue requests without decoding them until the block ends; then they start together.

        Requests submitted inside the block share a batch (up to ``max_batch``) whatever the timing,
        where the batch window only makes that likely. A request cancelled meanwhile never runs.
        """
        with self._lock:
            self._holds += 1
            self._released.clear()
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                if self._holds == 0:
                    self._released.set()

    def wait_idle(self, timeout: float | None = None) -> None:
        """Block until the worker thread has served everything queued and stopped."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _drain(self) -> None:
        while True:
            self._released.wait()
            with self._lock:
                waiting = len(self._pending)
            # A short pause lets requests issued together (one asyncio.gather) join one batch.
            if 0 < waiting < self.max_batch and self.batch_window_s > 0:
                time.sleep(self.batch_window_s)
            with self._lock:
                jobs = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                if not jobs:
                    self._draining = False
                    return
            try:
                self._serve([j for j in jobs if j.future.set_running_or_notify_cancel()])
            except BaseException as exc:  # never leave a caller waiting forever
                failure = InfraFailure(f"The local model failed unexpectedly ({first_line(exc)}).")
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(failure)
                if not isinstance(exc, Exception):
                    with self._lock:
                        self._draining = False
                    raise

    # ------------------------------------------------------------ serving

    def _serve(self, jobs: list[_Job]) -> None:
        if not jobs:
            return
        serving = time.perf_counter()
        queued = {id(job): serving - job.submitted for job in jobs}
        try:
            self.load()
        except NenyaxError as exc:
            for job in jobs:
                job.future.set_exception(exc)
            return
        ready: list[tuple[_Job, Row]] = []
        scores: dict[int, tuple[tuple[float, tuple[tuple[int, float], ...]], ...]] = {}
        for job in jobs:
            try:
                row = self._sequence(job)
                if job.extras.echo:
                    found = score_prompt(self._logits(row.prompt_ids), row.prompt_ids, job.extras.top_logprobs)
                    scores[id(job)] = tuple((lp, tuple(alts)) for lp, alts in found)
                if not job.extras.generate:
                    job.future.set_result(self._completion(row, scores.get(id(job)), queued[id(job)]))
                    continue
                ready.append((job, row))
            except NenyaxError as exc:
                job.future.set_exception(exc)
            except Exception as exc:  # noqa: BLE001 - scoring a prompt failed in torch: the waiter must hear
                job.future.set_exception(InfraFailure(f"The local model failed scoring a prompt ({first_line(exc)})."))
        if not ready:
            return
        self.batch_sizes.append(len(ready))
        try:
            seqs = [seq for _, seq in ready]
            generate(self._start(seqs), seqs, eos_ids=self._eos_ids, decode=self.decode)
        except Exception as exc:  # noqa: BLE001 - every waiter must get an answer, whatever torch raised
            failure = InfraFailure(f"The local model {self.source.name!r} failed while generating ({first_line(exc)}).")
            for job, _ in ready:
                job.future.set_exception(failure)
            return
        for job, seq in ready:
            job.future.set_result(self._completion(seq, scores.get(id(job)), queued[id(job)]))

    def _start(self, seqs: Sequence[Row]) -> Batch:
        ids, mask = left_padded(seqs, self._pad_id)
        if isinstance(self.model, LlamaDecoder):
            return self.model.start(ids, mask, room=max(s.max_new for s in seqs))
        return HFBatch(self.model, ids, mask, self._cache_kwarg)

    def _logits(self, ids: Sequence[int]) -> Any:
        if isinstance(self.model, LlamaDecoder):
            return self.model.score(list(ids))
        return hf_logits(self.model, ids)

    def _completion(
        self, seq: Row, scores: tuple[tuple[float, tuple[tuple[int, float], ...]], ...] | None, queued_s: float
    ) -> Completion:
        return Completion(
            queued_s=queued_s,
            prompt_ids=tuple(seq.prompt_ids),
            completion_ids=tuple(seq.completion),
            logprobs=tuple(seq.logprobs),
            text=self.decode(seq.completion),
            finish_reason=_finish_reason(seq),
            alternatives=tuple(tuple(alts) for alts in seq.alternatives),
            prompt_scores=scores,
        )

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        """The text of each token alone (a byte that only forms a character with its neighbours shows as U+FFFD)."""
        return [self.tokenizer.decode([i], skip_special_tokens=False) for i in ids]

    def encode(self, text: str) -> list[int]:
        """A raw prompt's token ids, as a completions server tokenizes it (the tokenizer's special tokens added)."""
        return list(self.tokenizer(text)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        """The text of `ids` without special tokens (how the completion text is always derived)."""
        text: str = self.tokenizer.decode(ids, skip_special_tokens=True)  # transformers: untyped in the lint session
        return text

    def prompt_ids(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> list[int]:
        """`messages` as token ids ready for the assistant's turn: the model's chat template, each later turn
        on the exact ids an earlier reply sampled (`nenyax.providers.local.turns`)."""
        assert self.transcripts is not None  # set with the tokenizer
        return self.transcripts.prompt(messages, tools).ids

    def _sequence(self, job: _Job) -> Row:
        extras = job.extras
        prompt = list(extras.prompt_ids) if extras.prompt_ids is not None else self.prompt_ids(job.messages, job.tools)
        room = job.sampling.max_tokens
        if self._context is not None:
            room = min(room, self._context - len(prompt))
            if room < 1:
                msg = f"The prompt is {len(prompt)} tokens, which fills the model's {self._context}-token context."
                raise PolicyFailure(msg)
        sampling = job.sampling
        constraint = None
        if sampling.guided_choice:
            constraint = ChoiceConstraint.from_choices(sampling.guided_choice, self._encode_text, self._eos_ids)
        return Row(
            prompt_ids=prompt,
            sampler=Sampler(sampling),
            max_new=room,
            min_new=sampling.min_tokens,
            constraint=constraint,
            abandoned=job.abandoned,
            top_k=extras.top_logprobs,
            on_token=extras.on_token,
        )

    def _encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ------------------------------------------------------------ loading

    def load(self) -> None:
        """Load the model and tokenizer (converting a GGUF into the cache first if needed); idempotent."""
        with self._load_lock:
            if self.model is None:
                # On the caller's thread, on purpose: its OpenMP team outlives the load, and with two teams
                # alive GNU OpenMP stops spin-waiting. Loading on a thread of its own made an idle box's decode
                # 2x faster (int4: 10.5 against 24 ms a token) but one busy process beside it 10-20x slower
                # (200-425 ms a token: spinning threads wait on a descheduled one), which timed out CI's
                # embedded-model tests. See the int4 section of this package's README.
                self._load()

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        started = time.perf_counter()
        packed = self.dtype_name in PACKED_FORMATS
        device = _pick_device("cpu" if packed and self.device_name == "auto" else self.device_name)
        if packed:
            why = usable_here(self.dtype_name) or (None if device.type == "cpu" else "they run on the CPU only")
            if why:
                msg = f"The local provider cannot decode with {self.dtype_name} weights here: {why}."
                raise UsageError(msg)
        folder, converted = materialize(self.source)
        try:
            with quiet_transformers():
                tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
                model = AutoModelForCausalLM.from_pretrained(
                    folder, dtype=torch.float32 if packed else getattr(torch, self.dtype_name), local_files_only=True
                )
            model.to(device).eval()
        except Exception as exc:
            msg = f"Could not load a chat model from {folder} ({first_line(exc)})."
            raise (InfraFailure(msg) if self.source.builtin else UsageError(msg)) from exc
        if packed:
            why = unsupported(model.config)
            if why:
                msg = f"The local provider cannot decode {self.source.name!r} with {self.dtype_name} weights: {why}."
                raise UsageError(msg)
        self._adopt_tokenizer(tokenizer, where=f"The model at {folder}")
        manifest = read_manifest(folder) if self.source.is_gguf else None
        digest = manifest["weights"] if manifest and "weights" in manifest else weights_digest(folder)
        # Another weight format is another policy (its logits differ), so the revision says which.
        self._revision = digest if self.dtype_name == "float32" else f"{digest}+{self.dtype_name}"
        self._adopt_model(model, tokenizer)
        # One tiny forward pass now: the first one in a process pays for torch's lazy set-up (thread
        # pools, kernel selection), which belongs to loading, not to the first request's latency.
        if packed:
            model = LlamaDecoder(model, self.dtype_name)
            model.score([self._pad_id])
        else:
            with torch.inference_mode():
                model(input_ids=torch.tensor([[self._pad_id]], device=device))
        self.folder, self.converted, self.tokenizer = folder, converted, tokenizer
        self.load_seconds = time.perf_counter() - started
        self.model = model  # last: a non-None model means everything above is set

    @property
    def revision(self) -> str | None:
        """``sha256:<hex>`` of the weight files actually loaded, with ``+<dtype>`` unless they run as float32;
        a live model's, what its `revision` callable says now."""
        return self._revision_of() if self._revision_of is not None else self._revision

    @classmethod
    def live(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        name: str,
        revision: Callable[[], str],
        max_batch: int = 16,
        batch_window_s: float = 0.01,
    ) -> Engine:
        """An engine over a model object already in this process (a trainer's), sampled with its weights as
        they are at each call: nothing is copied or loaded. `revision` names the weights now (a trainer's
        step), so each recorded call says which policy sampled it."""
        source = ModelSource(name=name, path=Path(name), is_gguf=False)
        dtype = str(model.dtype).removeprefix("torch.")
        engine = cls(source, device="auto", dtype=dtype, max_batch=max_batch, batch_window_s=batch_window_s)
        engine._adopt_tokenizer(tokenizer, where=f"The live model {name!r}")
        engine._adopt_model(model, tokenizer)
        engine._revision_of = revision
        engine.tokenizer, engine.load_seconds = tokenizer, 0.0
        engine.model = model
        return engine

    def _adopt_tokenizer(self, tokenizer: Any, *, where: str) -> None:
        if not tokenizer.chat_template:
            msg = f"{where} has no chat template, so it cannot answer chat requests."
            raise UsageError(msg)
        template = ChatTemplate(tokenizer, name=self.source.name)
        self.chat_template_hash, self.transcripts = template.hash, Transcripts(template)

    def _adopt_model(self, model: Any, tokenizer: Any) -> None:
        """What decoding needs to know of `model` and its tokenizer: its end tokens, padding, context, cache."""
        eos = model.generation_config.eos_token_id
        eos_ids = {eos} if isinstance(eos, int) else set(eos or ())
        if tokenizer.eos_token_id is not None:
            eos_ids.add(tokenizer.eos_token_id)
        self._eos_ids = frozenset(eos_ids)
        pad = tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else min(eos_ids, default=0)
        self._context: int | None = getattr(model.config, "max_position_embeddings", None)
        # transformers 5 renamed the forward's `past_key_values` to `cache`; follow whichever exists.
        params = inspect.signature(model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in params else "past_key_values"


_ENGINES: weakref.WeakValueDictionary[tuple[str, str, str], Engine] = weakref.WeakValueDictionary()
_ENGINES_LOCK = threading.Lock()


def shared_engine(source: ModelSource, *, device: str, dtype: str, max_batch: int, batch_window_s: float) -> Engine:
    """The process's engine for these weights, device and dtype, created if no provider holds one.

    Engines are shared so that several Endpoints on one model load it once; one is freed when the
    last provider holding it is closed. The first provider's batching settings win.
    """
    key = (source.key, device, dtype)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = Engine(source, device=device, dtype=dtype, max_batch=max_batch, batch_window_s=batch_window_s)
            _ENGINES[key] = engine
        return engine
