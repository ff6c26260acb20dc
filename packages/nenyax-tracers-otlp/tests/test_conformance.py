"""Every preset passes the tracer conformance kit (`nenyax tracer-check NAME` runs the same checks).

The kit sends spans only to a collector it runs on loopback, naming it in OpenTelemetry's own variables:
``otlp`` reads those, so its delivery is checked end to end (sent, down, refusing); the hosted presets
read their own variables and would send to their backend, so the kit skips their delivery, saying so
(test_presets.py points each at a loopback receiver through its own variables instead).
"""

from __future__ import annotations

import os

import pytest

from nenyax.testing import CHECKS, Subject, Verdict, conformance_suite, run_check

KEYS = {  # made-up keys: the hosted presets refuse to start without theirs
    "LANGFUSE_PUBLIC_KEY": "pk-lf-1",
    "LANGFUSE_SECRET_KEY": "sk-lf-secret",
    "WANDB_API_KEY": "wandb-secret",
    "WANDB_ENTITY": "team",
    "WANDB_PROJECT": "proj",
}
DELIVERY = ("tracer/spans-reach-the-collector", "tracer/losses-are-counted")


@pytest.fixture(autouse=True)
def preset_env(monkeypatch):
    """No tracing variable from this shell; the hosted presets' keys."""
    for name in list(os.environ):
        if name.startswith(("OTEL_", "LANGFUSE_", "PHOENIX_", "MLFLOW_", "WANDB_")):
            monkeypatch.delenv(name)
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


class TestOtlp(conformance_suite("tracer")):
    plugin = "otlp"


class TestLangfuse(conformance_suite("tracer")):
    plugin = "langfuse"


class TestPhoenix(conformance_suite("tracer")):
    plugin = "phoenix"


class TestMlflow(conformance_suite("tracer")):
    plugin = "mlflow"


class TestWandb(conformance_suite("tracer")):
    plugin = "wandb"


def test_otlp_s_delivery_is_checked_end_to_end_and_the_hosted_presets_are_sent_nothing():
    checks = [c for c in CHECKS["tracer"] if c.id in DELIVERY]
    assert [run_check(c, Subject.from_environment("tracer", "otlp")).verdict for c in checks] == [Verdict.PASSED] * 2
    for name, where in (("langfuse", "https://cloud.langfuse.com"), ("wandb", "https://trace.wandb.ai")):
        for check in checks:
            outcome = run_check(check, Subject.from_environment("tracer", name))
            assert outcome.verdict is Verdict.SKIPPED
            assert f"the tracer sends to '{where}/" in outcome.reason
