"""The `acme` tracer: core's GenAI spans to an OTLP/HTTP collector. This is the file to make your own.

Core emits its spans (`invoke_agent`, `chat {model}`, `execute_tool`) through ``opentelemetry-api`` only; a
tracer is the SDK side for one backend: a `TracerProvider` (never made OpenTelemetry's global one) with a
batching processor and an exporter. This one sends where OpenTelemetry's own variables say:
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``
(default ``http://localhost:4318``), with the headers of ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``. A backend
that cannot be reached never stops a run: the spans it did not take are counted, and said once at
`shutdown`. For a hosted backend, read its endpoint and key from variables of its own (a missing key: a
`UsageError` naming the variable) and send the key in headers only, never in a span or the resource.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence

from nenyax.core.plugins.tracer import TraceDelivery
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
"""Where OpenTelemetry's OTLP/HTTP exporter logs each batch it could not send."""


def endpoint() -> str:
    """Where the spans go: OpenTelemetry's variables, read as its own OTLP/HTTP exporter reads them."""
    exact = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or "http://localhost:4318"
    return exact or base.rstrip("/") + "/v1/traces"


class _Quiet(logging.Filter):
    """Drops the OTLP exporter's own record of each failed batch (the loss is said once, at `shutdown`),
    keeping the first one's words as the reason."""

    def __init__(self) -> None:
        super().__init__()
        self.first: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        self.first = self.first or record.getMessage()
        return False


class CountingExporter(SpanExporter):
    """Wraps the OTLP exporter: counts each batch's spans as sent or lost, and keeps why the first was lost."""

    def __init__(self, inner: SpanExporter, destination: str) -> None:
        """Count what `inner` sends to `destination`."""
        self.inner = inner
        self.destination = destination
        self.sent = self.lost = 0
        self.reason: str | None = None
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Send one batch (on the processor's thread) and count it."""
        quiet = _Quiet()
        logging.getLogger(EXPORTER_LOGGER).addFilter(quiet)
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - a failing export is counted, never raised into the run
            result, quiet.first = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
        finally:
            logging.getLogger(EXPORTER_LOGGER).removeFilter(quiet)
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self.sent += len(spans)
            else:
                self.lost += len(spans)
                self.reason = self.reason or (quiet.first or "the collector did not accept the batch")[:200]
        return result

    def shutdown(self) -> None:
        """Close the wrapped exporter's connections."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here: the wrapped exporter's answer."""
        return bool(self.inner.force_flush(timeout_millis))

    def delivery(self) -> TraceDelivery:
        """What was sent and lost so far."""
        with self._lock:
            return TraceDelivery(destination=self.destination, sent=self.sent, lost=self.lost, reason=self.reason)


class AcmeTracer:
    """The `acme` tracer (what the plugin's factory returns; it takes no options: variables configure it)."""

    def __init__(self) -> None:
        """Build the SDK provider for the collector the variables name (nothing is sent yet)."""
        self.destination = endpoint()
        # The exporter reads the headers and the timeout (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT) itself.
        self._exporter = CountingExporter(OTLPSpanExporter(endpoint=self.destination), self.destination)
        service = os.environ.get("OTEL_SERVICE_NAME") or "nenyax"
        self._provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self._provider.add_span_processor(BatchSpanProcessor(self._exporter))
        self._delivery: TraceDelivery | None = None

    @property
    def tracer_provider(self) -> TracerProvider:
        """The SDK provider core's spans go through (core hands it to `GenAISpans`; it is not made global)."""
        return self._provider

    def flush(self, timeout: float = 10.0) -> bool:
        """Send what is buffered; True when it all went out within `timeout` seconds."""
        lost = self._exporter.delivery().lost
        done = self._provider.force_flush(int(timeout * 1000))
        return bool(done) and self._exporter.delivery().lost == lost

    def shutdown(self) -> TraceDelivery:
        """Flush, close the exporter and say what was delivered; later calls say the same. Never raises."""
        if self._delivery is None:
            try:
                self._provider.shutdown()
            except Exception as exc:  # noqa: BLE001 - the run is over and complete: a failing exporter must not change that
                self._exporter.reason = self._exporter.reason or f"{type(exc).__name__}: {exc}"
            self._delivery = self._exporter.delivery()
        return self._delivery
