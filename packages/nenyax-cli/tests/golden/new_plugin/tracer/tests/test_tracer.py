"""Where the `acme` tracer sends: what the conformance kit cannot know it should choose."""

from nenyax_acme.tracer import AcmeTracer


def test_it_sends_where_opentelemetrys_variables_say(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/")
    tracer = AcmeTracer()
    delivery = tracer.shutdown()  # given no span, it sends nothing
    assert delivery.destination == "http://127.0.0.1:9/v1/traces"
    assert (delivery.sent, delivery.lost) == (0, 0)
