"""The `tracer` kind: where core's OpenTelemetry GenAI spans go.

Core owns the tracing: it builds its own SDK ``TracerProvider`` (never the global one, so nothing
changes behind the user's back), emits ``invoke_agent``/``chat``/``execute_tool`` spans itself, and
adds the span processors a tracer plugin returns. A tracer plugin only knows its backend: the
exporter, the endpoint, headers and resource attributes (keys read from environment variables).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Tracer(Protocol):
    """A backend preset (otlp, langfuse, phoenix, ...)."""

    def span_processors(self, settings: Mapping[str, Any]) -> Sequence[Any]:
        """OpenTelemetry SDK ``SpanProcessor`` objects for this backend, configured by `settings`."""
        ...

    def flush(self, timeout: float = 10.0) -> bool:
        """Send what is buffered; True when everything went out within `timeout` seconds."""
        ...

    def shutdown(self) -> None:
        """Flush and release the exporter's connections."""
        ...
