"""`OtlpTracer`: an SDK TracerProvider with a batching processor and an OTLP/HTTP exporter, for one backend."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from nenyax.core import TraceDelivery
from nenyax.tracers.otlp.delivery import CountingExporter

SERVICE_NAME = "nenyax"
"""The resource's ``service.name`` unless ``OTEL_SERVICE_NAME`` says otherwise."""


class OtlpTracer:
    """The `nenyax.core.plugins.tracer.Tracer` of every preset: where it sends is the preset's business.

    `headers` may hold a key (read by the preset from its variable): it goes into the HTTP request
    only, never into `destination`, a span or the resource.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        headers: Mapping[str, str] | None = None,
        resource: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        """`endpoint` is the full traces URL (``.../v1/traces``); `timeout` None is OpenTelemetry's (10 s)."""
        self.destination = endpoint
        # Resource.create adds OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, but explicit attributes win:
        # Nenyax's service name only where the user named none.
        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        service = {} if named else {"service.name": SERVICE_NAME}
        self._resource = Resource.create({**service, **(resource or {})})
        self._exporter = CountingExporter(
            OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}), timeout=timeout), endpoint
        )
        self._provider = TracerProvider(resource=self._resource)
        self._provider.add_span_processor(BatchSpanProcessor(self._exporter))
        self._delivery: TraceDelivery | None = None

    def __repr__(self) -> str:
        return f"OtlpTracer({self.destination!r})"  # never the headers: they may hold a key

    @property
    def tracer_provider(self) -> TracerProvider:
        """The SDK provider to hand to `GenAISpans` (never made global here)."""
        return self._provider

    @property
    def resource_attributes(self) -> dict[str, Any]:
        """The resource every span of this tracer carries."""
        return dict(self._resource.attributes)

    def flush(self, timeout: float = 10.0) -> bool:
        """Export what is buffered; True when it all went out within `timeout` seconds."""
        done = self._provider.force_flush(int(timeout * 1000))
        return bool(done) and self._exporter.lost == 0

    def shutdown(self) -> TraceDelivery:
        """Flush, close the exporter, and say what was sent and lost (once; later calls repeat it)."""
        if self._delivery is None:
            try:
                self._provider.shutdown()
            except Exception as exc:  # noqa: BLE001 - the run is over and complete: a failing exporter must not change that
                self._exporter._note(f"{type(exc).__name__}: {exc}")
            self._delivery = self._exporter.delivery()
        return self._delivery
