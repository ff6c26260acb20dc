"""The learner's policy: the current LoRA weights sampled on the Tinker service, every call recorded.

Tinker samples token ids, not chat: the policy renders the transcript with the base model's own chat
template (the tokenizer tinker's ``get_tokenizer()`` gives), samples from those ids, and records the ids
and the sampler's logprobs in the `ModelCall`, which is exactly what `nenyax.learners.tinker.datums`
trains on afterwards (no re-tokenisation between sampling and training).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from nenyax.core import ChatRequest, ModelCall, PolicyInfo
from nenyax.core.errors import InfraFailure, RequestRefused, UsageError

HONOURED = frozenset({"temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "n"})
"""The request fields Tinker's `SamplingParams` can honour (``n`` only as 1: one reply per call)."""


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def sampling_params(params: Mapping[str, Any]) -> Any:
    """The `tinker.SamplingParams` of a request's parameters; a field it cannot honour is refused in one sentence."""
    import tinker

    refused = sorted(set(params) - HONOURED)
    if refused:
        honoured = ", ".join(sorted(HONOURED))
        msg = f"The tinker policy cannot honour {', '.join(map(repr, refused))} (it honours {honoured})."
        raise RequestRefused(msg)
    if params.get("n", 1) != 1:
        msg = f"The tinker policy answers one reply per call, not n={params['n']!r}."
        raise RequestRefused(msg)
    fields = {k: v for k, v in params.items() if k != "n" and v is not None}
    if fields.get("top_k") == 0:
        fields["top_k"] = -1  # OpenAI-style "no limit" is tinker's -1
    return tinker.SamplingParams(**fields)


@attrs.define
class TinkerPolicy:
    """A text policy sampling from one Tinker `SamplingClient` (one revision of the weights)."""

    sampler: Any
    """The tinker ``SamplingClient`` of the weights this policy plays."""
    tokenizer: Any
    """The base model's tokenizer (``TrainingClient.get_tokenizer()``)."""
    base_model: str
    revision: str
    params: dict[str, Any] = attrs.field(factory=dict)
    """The learner's sampling parameters: the user's choice, so they win over a native loop's own."""
    defaults: dict[str, Any] = attrs.field(factory=dict)
    """Parameters used only where the request sets none (the learner's ``max_tokens``)."""
    speaks_text: bool = attrs.field(default=True, init=False)
    info: PolicyInfo = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.info = PolicyInfo(
            kind="tinker",
            name=f"tinker:{self.base_model}",
            provider="tinker",
            model=self.base_model,
            revision=self.revision,
        )

    def prompt_ids(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> list[int]:
        """`messages` rendered with the base model's chat template, ready for the assistant's turn, as ids."""
        try:
            text = self.tokenizer.apply_chat_template(
                [dict(m) for m in messages],
                tools=[dict(t) for t in tools] or None,
                add_generation_prompt=True,
                tokenize=False,
            )
        except Exception as exc:
            msg = f"The chat template of {self.base_model!r} cannot render these messages ({_first_line(exc)})."
            raise UsageError(msg) from exc
        # The rendered template already holds every special token the model expects.
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def send(self, request: ChatRequest) -> ModelCall:
        """Sample one reply to `request` on the service and return it as a recorded call."""
        import tinker

        asked = dict(request.params)
        sent = {**self.defaults, **asked, **self.params}
        params = sampling_params(sent)
        prompt = self.prompt_ids(request.messages, request.tools)
        try:
            response = await self.sampler.sample(
                prompt=tinker.ModelInput.from_ints(prompt), num_samples=1, sampling_params=params
            )
        except Exception as exc:  # the service, the network: never the policy's fault
            msg = f"The Tinker service did not sample a reply ({_first_line(exc)})."
            raise InfraFailure(msg) from exc
        sequence = response.sequences[0]
        tokens = [int(t) for t in sequence.tokens]
        logprobs = sequence.logprobs
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return ModelCall(
            messages=tuple(request.messages),
            response={"role": "assistant", "content": text},
            provider="tinker",
            model=self.base_model,
            params=sent,
            tools=tuple(request.tools),
            prompt_token_ids=tuple(prompt),
            completion_token_ids=tuple(tokens),
            logprobs=None if logprobs is None else tuple(float(x) for x in logprobs),
            requested_params=asked,
            finish_reason=str(sequence.stop_reason),
            usage={
                "prompt_tokens": len(prompt),
                "completion_tokens": len(tokens),
                "total_tokens": len(prompt) + len(tokens),
            },
            fingerprint=self.revision,
        )

    async def act(self, turn: Any) -> str:
        """Reply to the step transcript, or to the native loop's whole request; the turn's recorder records it."""
        request: ChatRequest = turn.request or ChatRequest(model=self.base_model, messages=tuple(turn.messages))
        call = await turn.recorder.model_call(request, self.send)
        content = call.response.get("content")
        return content if isinstance(content, str) else ""
