"""The `provider` kind: the transport behind an `Endpoint`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from nenyax.core.contract.chat import ChatRequest
    from nenyax.core.contract.trajectory import ModelCall


@runtime_checkable
class Provider(Protocol):
    """Sends chat requests; built by the plugin's factory from the Endpoint's keyword options.

    A provider that must load something before its first reply (an in-process model's weights) may
    also define ``prepare(model: str) -> None``: load it now, synchronously, so the caller can show
    that wait on its own and the first call's latency is the call's alone (`Endpoint.prepare`).
    """

    async def complete(self, request: ChatRequest) -> ModelCall:
        """Send one chat request; return the recorded call (token ids and logprobs when known).

        Raise `InfraFailure` (one sentence) when the transport or server fails after retries, or
        the server's response is malformed: the episode then ends ``infra_error``, never scored.
        Raise `UsageError` for what retrying cannot fix (no API key, a rejected key, an unknown
        model). Must work from any event loop; keep one connection pool per loop, not one per call.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and models held for the current event loop."""
        ...
