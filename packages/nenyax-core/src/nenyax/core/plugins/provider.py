"""The `provider` kind: the transport behind an `Endpoint`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nenyax.core.contract.chat import ChatRequest
    from nenyax.core.contract.trajectory import ModelCall


@runtime_checkable
class Provider(Protocol):
    """Sends chat requests; built by the plugin's factory from the Endpoint's keyword options.

    Optional members, each found with ``getattr`` (an `Endpoint` says in one sentence when one is missing):

    - ``honours: frozenset[str]``: the request fields (`ChatRequest.params` keys) it can honour. A request
      with any other field is refused before it is sent (`RequestRefused`). Absent: it forwards every
      field to a server that decides (the ``openai`` provider), and what that server refuses is refused.
    - ``prepare(model: str) -> None``: load what the first reply would wait for (an in-process model's
      weights) now, synchronously, so the caller can show that wait on its own (`Endpoint.prepare`).
    - ``async complete_text(request: TextRequest) -> ModelCall``: a raw text completion (no chat
      template), recorded like a chat call; with ``request.echo`` the prompt's logprobs too.
    - ``stream(request: ChatRequest) -> AsyncIterator[Delta | ModelCall]``: the reply as it is produced,
      `Delta` by `Delta`, then the whole recorded call last (what `complete` would have returned).
    - ``detokenize(model: str, token_ids: Sequence[int]) -> str``: the text of token ids, as the model's
      tokenizer decodes them (the token-fidelity check compares it with the recorded text).
    - ``weights(model: str) -> Path``: a Hugging Face model folder (config, weights, tokenizer and chat
      template) holding exactly the weights this provider serves for `model`, for a learner to train
      from; a folder it returns can itself be named as a model (``<provider>:<folder>``), which is how a
      learner serves the weights it updated.
    """

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Send one chat request; return the recorded call (token ids and logprobs when known).

        Raise `InfraFailure` (one sentence) when the transport or server fails after retries, or
        the server's response is malformed: the episode then ends ``infra_error``, never scored.
        Raise `RequestRefused` for a request it cannot honour (a field or a value), `UsageError` for what
        retrying cannot fix (no API key, a rejected key, an unknown model). Must work from any event
        loop; keep one connection pool per loop, not one per call.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and models held for the current event loop."""
        ...
