"""The tracer conformance kit: a sound tracer passes it, and each check catches a tracer broken the way it checks.

The tracers here are small fakes on the OpenTelemetry SDK (core's test dependency) whose exporter POSTs
each batch's span names to the endpoint OpenTelemetry's variables name, as an OTLP/HTTP exporter would
(nenyax-core has no OTLP exporter); the real presets pass the same kit in nenyax-tracers-otlp's suite.
The kit's collector runs on loopback and nothing else is reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import urllib.request

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.util._once import Once

from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.core.plugins.tracer import TraceDelivery
from nenyax.testing import CHECKS, Report, Subject, Verdict, run_check
from nenyax.testing.collector import Collector, closed_port


class PostingExporter(SpanExporter):
    """POSTs each batch's span names as JSON; counts what the collector accepted and what it did not."""

    def __init__(self, endpoint):
        self.endpoint, self.sent, self.lost, self.reason = endpoint, 0, 0, None

    def post(self, spans):
        body = json.dumps([s.name for s in spans]).encode()
        request = urllib.request.Request(self.endpoint, data=body, headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=2).close()

    def export(self, spans):
        try:
            self.post(spans)
        except OSError as exc:  # refused, down, an HTTP error status
            self.lost += len(spans)
            self.reason = self.reason or str(exc)
            return SpanExportResult.FAILURE
        self.sent += len(spans)
        return SpanExportResult.SUCCESS


class SoundTracer:
    """Sends to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; says honestly what it sent and lost."""

    exporter_type = PostingExporter

    def __init__(self):
        self.destination = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://localhost:4318/v1/traces")
        self.exporter = self.exporter_type(self.destination)
        self._provider = TracerProvider()
        self._provider.add_span_processor(BatchSpanProcessor(self.exporter))
        self.delivery = None

    @property
    def tracer_provider(self):
        return self._provider

    def flush(self, timeout=10.0):
        return self._provider.force_flush(int(timeout * 1000)) and self.exporter.lost == 0

    def shutdown(self):
        if self.delivery is None:
            self._provider.shutdown()
            e = self.exporter
            self.delivery = TraceDelivery(destination=self.destination, sent=e.sent, lost=e.lost, reason=e.reason)
        return self.delivery


class NoOpTracer(SoundTracer):
    """Hands core a provider that makes no spans at all."""

    @property
    def tracer_provider(self):
        return trace.NoOpTracerProvider()


class GlobalTracer(SoundTracer):
    """Makes its provider OpenTelemetry's global one, taking the application's place."""

    def __init__(self):
        super().__init__()
        trace.set_tracer_provider(self._provider)


class ShutdownRaisesTwice(SoundTracer):
    """A second shutdown raises (an atexit hook after the run's own call would print a traceback)."""

    def shutdown(self):
        if self.delivery is not None:
            msg = "already shut down"
            raise RuntimeError(msg)
        return super().shutdown()


class DropsSpans(PostingExporter):
    def post(self, spans):
        pass  # never sent, yet counted sent


class ClaimsDelivery(SoundTracer):
    """Counts spans sent that it never sent."""

    exporter_type = DropsSpans


class CountsFailuresAsSent(PostingExporter):
    def export(self, spans):
        with contextlib.suppress(OSError):  # the loss is swallowed
            self.post(spans)
        self.sent += len(spans)
        return SpanExportResult.SUCCESS


class HidesLosses(SoundTracer):
    """Counts every span sent, whether or not the collector took it."""

    exporter_type = CountsFailuresAsSent


class RecordsAttempts(PostingExporter):
    attempts: list = []  # noqa: RUF012 - every batch any instance was asked to send

    def post(self, spans):
        self.attempts.extend(s.name for s in spans)
        msg = "not sent: this stands for a backend beyond this machine"
        raise OSError(msg)


class SendsElsewhere(SoundTracer):
    """A hosted backend's preset: its endpoint comes from a variable of its own, never OpenTelemetry's."""

    exporter_type = RecordsAttempts

    def __init__(self):
        super().__init__()
        self.destination = "https://traces.example.invalid/v1/traces"


MODULE = "nenyax_tracer_kit_flawed"
sys.modules[MODULE] = sys.modules[__name__]
TRACERS = {
    "sound": "SoundTracer",
    "noop": "NoOpTracer",
    "global": "GlobalTracer",
    "raisestwice": "ShutdownRaisesTwice",
    "claims": "ClaimsDelivery",
    "hides": "HidesLosses",
    "elsewhere": "SendsElsewhere",
}


class Plugin:
    @hookimpl
    def nenyax_register_tracers(self):
        return [
            PluginSpec(kind="tracer", name=name, factory=f"{MODULE}:{attr}", summary="fake")
            for name, attr in TRACERS.items()
        ]


@pytest.fixture(autouse=True)
def otel_globals(monkeypatch):
    """OpenTelemetry's global provider as a fresh process has it (unset), put back after each test."""
    monkeypatch.setattr(trace, "_TRACER_PROVIDER_SET_ONCE", Once())
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


def subject(name):
    return Subject.from_registry("tracer", name, Registry.from_plugins(("fakes", Plugin())))


def check(check_id):
    return next(c for c in CHECKS["tracer"] if c.id == check_id)


def test_a_sound_tracer_passes_every_check():
    report = Report.of(CHECKS["tracer"], subject("sound"))
    verdicts = {o.check.id: o.verdict for o in report.outcomes}
    # The distribution checks do not apply to a tracer from a test module.
    for skipped in ("tracer/entry-point-named-after-distribution", "tracer/no-namespace-init"):
        assert verdicts.pop(skipped) is Verdict.SKIPPED
    assert set(verdicts.values()) == {Verdict.PASSED}, [(o.check.id, o.reason, o.findings) for o in report.outcomes]
    assert "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" not in os.environ  # the kit put OpenTelemetry's variables back


@pytest.mark.parametrize(
    ("check_id", "name", "says"),
    [
        ("tracer/provider-makes-spans", "noop", "does not record"),
        ("tracer/leaves-the-global-provider-alone", "global", "set OpenTelemetry's global provider"),
        ("tracer/shutdown-is-final", "raisestwice", "The second shutdown() raised RuntimeError: already shut down"),
        ("tracer/spans-reach-the-collector", "claims", "3 of 3 span(s) ended and flushed never reached"),
        ("tracer/losses-are-counted", "hides", "With the collector down, shutdown() counted 3 span(s) sent"),
        ("tracer/losses-are-counted", "hides", "flush() returned True with the collector refusing with HTTP 401"),
    ],
)
def test_each_check_catches_the_flaw_it_is_for(check_id, name, says):
    found = run_check(check(check_id), subject(name))
    assert found.verdict is Verdict.FAILED, (found.reason, found.findings)
    assert not found.reason
    assert any(says in f.message for f in found.findings), [f.message for f in found.findings]


def test_a_tracer_that_would_send_beyond_this_machine_is_sent_nothing_and_its_delivery_is_skipped():
    elsewhere = subject("elsewhere")
    for check_id in ("tracer/provider-makes-spans", "tracer/spans-reach-the-collector", "tracer/losses-are-counted"):
        found = run_check(check(check_id), elsewhere)
        if check_id == "tracer/provider-makes-spans":
            assert found.verdict is Verdict.PASSED  # its span is started, never ended, so never exported
        else:
            assert found.verdict is Verdict.SKIPPED
            assert "sends to 'https://traces.example.invalid/v1/traces'" in found.reason
    assert elsewhere.instance().tracer_provider.force_flush()  # whatever had been ended would be exported now
    assert RecordsAttempts.attempts == []


def test_the_kit_s_collector_records_what_an_exporter_posts_and_answers_as_told():
    with Collector() as up:
        exporter = PostingExporter(f"{up.url}/v1/traces")
        tracer = TracerProvider().get_tracer("t")
        span = tracer.start_span("nenyax-kit-seen")
        span.end()
        assert exporter.export([span]) is SpanExportResult.SUCCESS
        assert up.holds("nenyax-kit-seen")
        assert not up.holds("nenyax-kit-unseen")
        assert up.requests[0].path == "/v1/traces"
    with Collector(status=401) as refusing:
        assert PostingExporter(f"{refusing.url}/v1/traces").export([span]) is SpanExportResult.FAILURE
        assert len(refusing.requests) == 1
    started = time.monotonic()
    assert PostingExporter(f"http://127.0.0.1:{closed_port()}/v1/traces").export([span]) is SpanExportResult.FAILURE
    assert time.monotonic() - started < 2  # refused at once: nothing listens there
