"""The conformance checks of `tracer` plugins beyond the common ones (`nenyax.testing.checks.common`).

Spans are only ever ended (and so exported) by a tracer pointed at a collector this kit runs on
loopback (`nenyax.testing.collector`): the tracers sent spans are built with OpenTelemetry's own
variables (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_ENDPOINT``) naming it, and
first asked where they send (the ``destination`` of a `TraceDelivery` from a tracer given no span,
which sends nothing). A preset that reads its endpoint from variables of its own (a hosted backend's)
sends elsewhere, so its delivery checks are skipped, saying where it would send: the kit reaches
nothing beyond this machine. The checks that need no collector start spans they never end.

Each yields one sentence per problem found.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace

from nenyax.core.plugins.tracer import TraceDelivery
from nenyax.testing.collector import Collector, closed_port
from nenyax.testing.report import Check, Skip
from nenyax.testing.subject import Subject

SPANS = 3
"""Spans each delivery check ends."""
EXPORT_TIMEOUT_S = "2"
"""``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` for the tracers built here: a collector that is down costs that, once."""
SLOW_S = 30.0
"""Longer than this from the first flush to the end of shutdown, with the collector down, is a finding."""


def _fresh(subject: Subject) -> Any:
    """A new instance from the factory: one this check may shut down."""
    return subject.registry.create(subject.kind, subject.name, **subject.options)


def _crash(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


@contextlib.contextmanager
def _variables(base: str) -> Iterator[None]:
    """OpenTelemetry's OTLP variables naming the collector at `base` (and a short timeout), put back after."""
    wanted = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{base}/v1/traces",
        "OTEL_EXPORTER_OTLP_ENDPOINT": base,
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": EXPORT_TIMEOUT_S,
        "OTEL_EXPORTER_OTLP_TIMEOUT": EXPORT_TIMEOUT_S,
    }
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _aimed(subject: Subject, base: str) -> Any:
    """A new tracer sending to the collector at `base`; `Skip` when the plugin would send elsewhere."""
    with _variables(base):
        where = getattr(_fresh(subject).shutdown(), "destination", None)  # given no span, it sends nothing
        if not isinstance(where, str) or not where.startswith(f"{base}/"):
            msg = (
                f"with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT naming a collector on this machine the tracer sends to "
                f"{where!r}, and the kit sends spans nowhere else (check its delivery against a collector of your own)"
            )
            raise Skip(msg)
        return _fresh(subject)


def _end_spans(tracer: Any) -> list[str]:
    """End `SPANS` spans of unique names through the tracer's provider; their names."""
    names = [f"nenyax-kit-{uuid.uuid4().hex[:12]}-{i}" for i in range(SPANS)]
    otel = tracer.tracer_provider.get_tracer("nenyax.testing.checks.tracer")
    for name in names:
        otel.start_span(name).end()
    return names


def _shut(tracer: Any) -> tuple[Any, str | None]:
    """``shutdown()``'s answer, and the sentence for what went wrong with it (it must never raise)."""
    try:
        delivery = tracer.shutdown()
    except Exception as exc:  # noqa: BLE001 - shutdown raising is a finding: it must never stop a finished run
        return None, f"shutdown() raised {_crash(exc)}; it must say what was delivered and never raise."
    if not isinstance(delivery, TraceDelivery):
        return delivery, f"shutdown() returned a {type(delivery).__name__}, not a TraceDelivery."
    return delivery, None


def provider_makes_spans(subject: Subject) -> Iterator[str]:
    """``tracer_provider`` is an SDK provider: a span started through it records and has a valid context."""
    provider = subject.instance().tracer_provider
    if not callable(getattr(provider, "get_tracer", None)):
        yield f"tracer_provider is a {type(provider).__name__}, without get_tracer; give an SDK TracerProvider."
        return
    # Never ended: an ended span is exported, and this instance may send to a backend beyond this machine.
    span = provider.get_tracer("nenyax.testing.checks.tracer").start_span("nenyax-kit-probe")
    if not span.is_recording():
        yield "A span started through tracer_provider does not record (a no-op provider); core's spans would vanish."
    if not span.get_span_context().is_valid:
        yield "A span started through tracer_provider has no valid trace and span ids; a backend cannot store it."


def leaves_the_global_provider_alone(subject: Subject) -> Iterator[str]:
    """Building a tracer does not make its provider OpenTelemetry's global one (the application's is left alone)."""
    before = trace.get_tracer_provider()
    tracer = _fresh(subject)
    try:
        after = trace.get_tracer_provider()
        if after is not before or after is tracer.tracer_provider:
            yield (
                "Building the tracer set OpenTelemetry's global provider; hand the provider to core only, "
                "so an application's own provider keeps its spans."
            )
    finally:
        tracer.shutdown()


def shutdown_is_final(subject: Subject) -> Iterator[str]:
    """``shutdown`` of a tracer given no span says nothing was sent or lost, and a second call says the same."""
    tracer = _fresh(subject)
    first, problem = _shut(tracer)
    if problem:
        yield problem
        return
    if (first.sent, first.lost) != (0, 0):
        yield f"A tracer given no span says it sent {first.sent} and lost {first.lost}."
    second, problem = _shut(tracer)
    if problem:
        yield f"The second {problem}"
    elif second != first:
        yield f"A second shutdown() said {second}, the first {first}: say the same again."


def spans_reach_the_collector(subject: Subject) -> Iterator[str]:
    """Spans ended and flushed reach an OTLP/HTTP collector; ``flush`` says so, and ``shutdown`` counts them
    sent, none lost."""
    with Collector() as collector:
        tracer = _aimed(subject, collector.url)
        names = _end_spans(tracer)
        flushed = tracer.flush(timeout=10.0)
        arrived = sum(collector.holds(name) for name in names)
        delivery, problem = _shut(tracer)
    if arrived < SPANS:
        yield f"{SPANS - arrived} of {SPANS} span(s) ended and flushed never reached the collector at {collector.url}."
    elif not flushed:
        yield "flush() returned False though the collector received every span."
    if problem:
        yield problem
        return
    if (delivery.sent, delivery.lost) != (arrived, 0) or delivery.note is not None:
        yield f"shutdown() said {delivery}, but the collector received {arrived} span(s) and refused none."


def losses_are_counted(subject: Subject) -> Iterator[str]:
    """With the collector down, or refusing (HTTP 401), ``flush`` returns False and ``shutdown`` counts every
    span lost, none sent, with a note, within seconds; nothing raises."""
    for label in ("down", "refusing with HTTP 401"):
        with contextlib.ExitStack() as stack:
            if label == "down":
                base = f"http://127.0.0.1:{closed_port()}"
            else:
                base = stack.enter_context(Collector(status=401)).url
            tracer = _aimed(subject, base)
            _end_spans(tracer)
            started = time.monotonic()
            flushed = tracer.flush(timeout=10.0)
            delivery, problem = _shut(tracer)
            took = time.monotonic() - started
        if flushed:
            yield f"flush() returned True with the collector {label}; nothing went out."
        if problem:
            yield problem
            continue
        if delivery.sent or delivery.lost != SPANS:
            yield (
                f"With the collector {label}, shutdown() counted {delivery.sent} span(s) sent and {delivery.lost} "
                f"lost of {SPANS}; every one was lost."
            )
        elif not delivery.note:
            yield f"With the collector {label} and every span lost, the TraceDelivery's note says nothing."
        if took > SLOW_S:
            yield f"With the collector {label}, flush and shutdown took {took:.0f} s; a run's end would wait that long."


TRACER_CHECKS: tuple[Check, ...] = (
    Check(id="tracer/provider-makes-spans", summary="tracer_provider makes recording spans", run=provider_makes_spans),
    Check(
        id="tracer/leaves-the-global-provider-alone",
        summary="the global provider is left alone",
        run=leaves_the_global_provider_alone,
    ),
    Check(id="tracer/shutdown-is-final", summary="shutdown says the same twice, never raises", run=shutdown_is_final),
    Check(
        id="tracer/spans-reach-the-collector",
        summary="spans reach an OTLP collector, counted sent",
        run=spans_reach_the_collector,
    ),
    Check(
        id="tracer/losses-are-counted",
        summary="a collector down or refusing: spans counted lost",
        run=losses_are_counted,
    ),
)
"""The tracer kind's own checks, in the order they run (after `common_checks("tracer")`)."""
