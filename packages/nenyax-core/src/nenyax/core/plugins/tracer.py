"""The `tracer` kind: where core's OpenTelemetry GenAI spans go.

Core emits the spans itself (`nenyax.core.engine.tracing.GenAISpans`) through ``opentelemetry-api``
only, and never builds or sets a provider: with no tracer plugin the spans go to the global provider,
so an application that configured OpenTelemetry receives them as it receives its own. A tracer plugin
is the SDK side for one backend: it builds an SDK ``TracerProvider`` (resource attributes, a batching
span processor, an OTLP/HTTP exporter with the backend's endpoint and headers; keys read from
environment variables and never written into a span or a resource) and hands it to core as
``GenAISpans(tracer.tracer_provider)``. It does not make that provider global either.

A backend that cannot be reached never stops a run: the plugin counts the spans it could not deliver
and says so once, in `TraceDelivery.note`, when it shuts down; nothing is logged per span.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs


@attrs.frozen(kw_only=True)
class TraceDelivery:
    """What a tracer delivered over its life: spans sent and lost, and why the lost ones were."""

    destination: str
    """Where the spans were sent (the OTLP endpoint URL; never a key)."""
    sent: int = 0
    """Spans the backend accepted."""
    lost: int = 0
    """Spans that could not be delivered (the backend down, refusing, or too slow)."""
    reason: str | None = None
    """The first failure, in a few words, when spans were lost."""

    @property
    def note(self) -> str | None:
        """One sentence for the user when spans were lost, else None."""
        if not self.lost:
            return None
        why = f" ({self.reason})" if self.reason else ""
        total = self.sent + self.lost
        return (
            f"Traces lost: {self.lost} of {total} span(s) could not be sent to {self.destination}{why}; "
            "the run itself is complete."
        )


@runtime_checkable
class Tracer(Protocol):
    """A backend preset (otlp, langfuse, phoenix, ...): an SDK TracerProvider configured for it."""

    @property
    def tracer_provider(self) -> Any:
        """The SDK ``TracerProvider`` sending to this backend (core passes it to `GenAISpans`)."""
        ...

    def flush(self, timeout: float = 10.0) -> bool:
        """Send what is buffered; True when everything went out within `timeout` seconds."""
        ...

    def shutdown(self) -> TraceDelivery:
        """Flush, release the exporter's connections, and say what was delivered (never raises)."""
        ...
