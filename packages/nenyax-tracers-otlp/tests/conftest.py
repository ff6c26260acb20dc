"""A real OTLP/HTTP receiver on loopback (the protocol's own protobuf messages), and the CLI as users run it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from nenyax.testing.collector import Collector
from nenyax.testing.collector import closed_port as unused_port
from nenyax.testing.suites.isolation import own_checks_dir  # noqa: F401 - autouse: no test writes the user's tier cache


class Receiver:
    """What the loopback collector (`nenyax.testing.collector.Collector`) received: each request's path,
    headers, raw body and decoded message, and the spans in them."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector

    @property
    def requests(self) -> list[dict]:
        """Each request as ``{"path", "headers", "body", "message"}`` (the protocol's own protobuf, decoded)."""
        return [
            {
                "path": r.path,
                "headers": r.headers,
                "body": r.body,
                "message": ExportTraceServiceRequest.FromString(r.body),
            }
            for r in list(self.collector.requests)
        ]

    @property
    def spans(self) -> list:
        """Every span received, with its resource's attributes as ``span.resource``."""
        found = []
        for request in self.requests:
            for resource_spans in request["message"].resource_spans:
                resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append((span, resource))
        return found


def _value(any_value):
    return getattr(any_value, any_value.WhichOneof("value")) if any_value.WhichOneof("value") else None


def attributes(span) -> dict:
    """A protobuf span's attributes as a plain dict (arrays as tuples)."""
    out = {}
    for kv in span.attributes:
        value = _value(kv.value)
        if kv.value.WhichOneof("value") == "array_value":
            value = tuple(_value(v) for v in value.values)
        out[kv.key] = value
    return out


@pytest.fixture
def receiver():
    """An OTLP/HTTP collector on 127.0.0.1 answering every POST as a collector does; yields (Receiver, base URL)."""
    with Collector() as collector:
        yield Receiver(collector), collector.url


@pytest.fixture
def closed_port():
    """A loopback port nothing listens on: a collector that is down."""
    return unused_port()


def nenyax(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """The CLI in a fresh interpreter, as a user runs it (no tracing variable inherited from this shell)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "NENYAX_TRACE", "LANGFUSE_", "PHOENIX_"))}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli():
    """`nenyax(*args, env=...)`: the CLI in a fresh interpreter."""
    return nenyax


@pytest.fixture
def span_attributes():
    """`attributes(span)`: a received span's attributes as a dict."""
    return attributes
