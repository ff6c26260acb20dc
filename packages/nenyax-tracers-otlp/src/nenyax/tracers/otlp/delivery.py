"""An OTLP exporter that counts what it delivered and loses, and never logs per batch.

OpenTelemetry's HTTP exporter logs an error for every batch it cannot send, and retries a connection
error with backoff until its timeout (10 s by default) for each batch. With the collector down, a run
would print a line per batch and wait that long per batch at its end. `CountingExporter` wraps it:
it counts the spans each export sent or lost, keeps the first failure's reason (read from the
exporter's own log record, which it silences), and after a failure stops trying for `pause_s`
seconds (those batches are counted lost at once), so a dead collector costs one timeout, not one per
batch. The loss is said once, by `TraceDelivery.note`, when the tracer shuts down.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from nenyax.core import TraceDelivery

# The loggers OpenTelemetry's HTTP span exporter writes each failed batch to.
EXPORTER_LOGGERS = ("opentelemetry.exporter.otlp.proto.http.trace_exporter",)
PAUSE_S = 30.0
"""After a lost batch, how long batches are counted lost without being sent."""


class _Silence(logging.Filter):
    """Drops the exporter's per-batch records while a `CountingExporter` is exporting, keeping the first."""

    def __init__(self) -> None:
        super().__init__()
        self.first: str | None = None
        """The first failure's most telling message: a retried error's own words win over "gave up"."""
        self.active = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.active:
            return True  # someone else's exporter, outside ours: not ours to silence
        message = record.getMessage()
        telling = self.first is None or (_GAVE_UP in self.first and _GAVE_UP not in message)
        if record.levelno >= logging.WARNING and telling:
            self.first = message
        return False


_GAVE_UP = "due to timeout, max retries or shutdown"


class CountingExporter(SpanExporter):
    """Wraps a span exporter: counts spans sent and lost, silences its per-batch logs, pauses after a loss."""

    def __init__(self, inner: SpanExporter, destination: str, *, pause_s: float = PAUSE_S) -> None:
        self.inner = inner
        self.destination = destination
        self.pause_s = pause_s
        self.sent = 0
        self.lost = 0
        self.reason: str | None = None
        self._paused_until = 0.0
        self._lock = threading.Lock()
        self._silence = _Silence()
        for name in EXPORTER_LOGGERS:
            logging.getLogger(name).addFilter(self._silence)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Send a batch (unless paused after a loss) and count it."""
        if time.monotonic() < self._paused_until:
            self._count(len(spans), ok=False)
            return SpanExportResult.FAILURE
        self._silence.active += 1
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - an exporter bug must not reach the batch thread's log either
            self._note(f"{type(exc).__name__}: {exc}")
            result = SpanExportResult.FAILURE
        finally:
            self._silence.active -= 1
        ok = result is SpanExportResult.SUCCESS
        if not ok:
            self._note(self._silence.first)
            self._paused_until = time.monotonic() + self.pause_s
        self._count(len(spans), ok=ok)
        return result

    def _count(self, n: int, *, ok: bool) -> None:
        with self._lock:
            if ok:
                self.sent += n
            else:
                self.lost += n

    def _note(self, reason: str | None) -> None:
        if self.reason is None:
            self.reason = _short(reason) if reason else "the collector did not accept the batch"

    def delivery(self) -> TraceDelivery:
        """What was sent and lost so far."""
        return TraceDelivery(destination=self.destination, sent=self.sent, lost=self.lost, reason=self.reason)

    def shutdown(self) -> None:
        """Shut the wrapped exporter down and stop filtering its logger."""
        try:
            self.inner.shutdown()
        finally:
            for name in EXPORTER_LOGGERS:
                logging.getLogger(name).removeFilter(self._silence)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here; the wrapped exporter's answer."""
        return bool(self.inner.force_flush(timeout_millis))


def _short(reason: Any) -> str:
    """The exporter's message cut to its gist: requests' connection errors run to several hundred characters."""
    text = " ".join(str(reason).split())
    if _GAVE_UP in text:
        return "no answer within the export timeout (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT)"
    for marker in ("Failed to establish a new connection: ", "reason: "):
        if marker in text:
            text = text.split(marker, 1)[1]
    for end in (" encountered while exporting", "'))", '"))'):
        text = text.split(end)[0]
    text = text.rstrip("')\" ")
    return text if len(text) <= 160 else text[:157] + "..."
