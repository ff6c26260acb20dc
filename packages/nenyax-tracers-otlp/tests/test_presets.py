"""Each preset's endpoint, headers and resource, read from its variables; a missing key is one sentence."""

import base64

import pytest

from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import default_registry
from nenyax.core.plugins.tracer import Tracer

PRESETS = ("otlp", "langfuse", "phoenix", "mlflow", "wandb")
KEYS = {
    "LANGFUSE_PUBLIC_KEY": "pk-lf-1",
    "LANGFUSE_SECRET_KEY": "sk-lf-secret",
    "WANDB_API_KEY": "wandb-secret",
    "WANDB_ENTITY": "team",
    "WANDB_PROJECT": "proj",
}


@pytest.fixture
def clean_env(monkeypatch):
    for name in [
        *KEYS,
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "LANGFUSE_HOST",
        "LANGFUSE_BASE_URL",
        "PHOENIX_COLLECTOR_ENDPOINT",
        "PHOENIX_API_KEY",
        "PHOENIX_PROJECT_NAME",
        "MLFLOW_TRACKING_URI",
        "MLFLOW_EXPERIMENT_ID",
        "MLFLOW_TRACKING_TOKEN",
        "WANDB_BASE_URL",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
    ]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_every_preset_is_registered_and_is_a_tracer(clean_env):
    for name, value in KEYS.items():
        clean_env.setenv(name, value)
    registry = default_registry()
    assert set(PRESETS) <= set(registry.names("tracer"))
    for name in PRESETS:
        tracer = registry.create("tracer", name)
        try:
            assert isinstance(tracer, Tracer)
            assert tracer.resource_attributes["service.name"] == "nenyax"
            for secret in ("sk-lf-secret", "wandb-secret"):  # a key is in the headers only
                assert secret not in repr(tracer)
                assert secret not in tracer.destination
                assert secret not in str(tracer.resource_attributes)
        finally:
            tracer.shutdown()


def test_the_defaults_point_at_each_backends_usual_place(clean_env):
    for name, value in KEYS.items():
        clean_env.setenv(name, value)
    registry = default_registry()
    expected = {
        "otlp": "http://localhost:4318/v1/traces",
        "langfuse": "https://cloud.langfuse.com/api/public/otel/v1/traces",
        "phoenix": "http://localhost:6006/v1/traces",
        "mlflow": "http://localhost:5000/v1/traces",
        "wandb": "https://trace.wandb.ai/otel/v1/traces",
    }
    for name, endpoint in expected.items():
        tracer = registry.create("tracer", name)
        assert tracer.destination == endpoint
        tracer.shutdown()


def sent(tracer, receiver):
    """One span through the tracer to the loopback receiver: the request it made (headers lower-cased)."""
    seen, _ = receiver
    tracer.tracer_provider.get_tracer("test").start_span("probe").end()
    delivery = tracer.shutdown()
    assert (delivery.sent, delivery.lost) == (1, 0)
    request = seen.requests[-1]
    return request["path"], {k.lower(): v for k, v in request["headers"].items()}, request["body"]


def test_langfuse_sends_the_key_pair_as_basic_auth_to_its_otel_route(clean_env, receiver):
    for name, value in KEYS.items():
        clean_env.setenv(name, value)
    clean_env.setenv("LANGFUSE_HOST", receiver[1] + "/")
    tracer = default_registry().create("tracer", "langfuse")
    assert tracer.destination == receiver[1] + "/api/public/otel/v1/traces"
    path, headers, body = sent(tracer, receiver)
    assert path == "/api/public/otel/v1/traces"
    assert headers["authorization"] == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-secret").decode()
    assert headers["x-langfuse-ingestion-version"] == "4"
    assert headers["content-type"] == "application/x-protobuf"
    assert b"sk-lf-secret" not in body  # the key is in the header only
    assert b"pk-lf-1" not in body


def test_phoenix_mlflow_and_wandb_route_by_their_own_headers_and_resource_attributes(clean_env, receiver):
    for name, value in KEYS.items():
        clean_env.setenv(name, value)
    clean_env.setenv("PHOENIX_COLLECTOR_ENDPOINT", receiver[1])
    clean_env.setenv("PHOENIX_PROJECT_NAME", "evals")
    clean_env.setenv("PHOENIX_API_KEY", "px-key")
    clean_env.setenv("MLFLOW_TRACKING_URI", receiver[1] + "/")
    clean_env.setenv("MLFLOW_EXPERIMENT_ID", "7")
    clean_env.setenv("WANDB_BASE_URL", receiver[1])
    registry = default_registry()
    path, headers, _ = sent(registry.create("tracer", "phoenix"), receiver)
    assert (path, headers["authorization"]) == ("/v1/traces", "Bearer px-key")
    [(_, resource)] = receiver[0].spans
    assert resource["openinference.project.name"] == "evals"
    path, headers, _ = sent(registry.create("tracer", "mlflow"), receiver)
    assert (path, headers["x-mlflow-experiment-id"]) == ("/v1/traces", "7")
    path, headers, body = sent(registry.create("tracer", "wandb"), receiver)
    assert (path, headers["wandb-api-key"], headers["project_id"]) == ("/otel/v1/traces", "wandb-secret", "team/proj")
    resource = receiver[0].spans[-1][1]
    assert (resource["wandb.entity"], resource["wandb.project"]) == ("team", "proj")
    assert b"wandb-secret" not in body


def test_otlp_reads_opentelemetrys_own_variables(clean_env, receiver):
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver[1] + "/")
    clean_env.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20abc,x-team=evals")
    clean_env.setenv("OTEL_SERVICE_NAME", "my-evals")
    tracer = default_registry().create("tracer", "otlp")
    assert tracer.destination == receiver[1] + "/v1/traces"
    path, headers, _ = sent(tracer, receiver)
    assert (path, headers["authorization"], headers["x-team"]) == ("/v1/traces", "Basic abc", "evals")
    assert receiver[0].spans[-1][1]["service.name"] == "my-evals"
    clean_env.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other:9/exact/path")
    exact = default_registry().create("tracer", "otlp")
    assert exact.destination == "http://other:9/exact/path"
    exact.shutdown()


@pytest.mark.parametrize(
    ("preset", "missing"),
    [
        ("langfuse", "LANGFUSE_PUBLIC_KEY"),
        ("langfuse", "LANGFUSE_SECRET_KEY"),
        ("wandb", "WANDB_API_KEY"),
        ("wandb", "WANDB_ENTITY"),
    ],
)
def test_a_preset_missing_its_key_names_the_variable_in_one_sentence(clean_env, preset, missing):
    for name, value in KEYS.items():
        if name != missing:
            clean_env.setenv(name, value)
    with pytest.raises(UsageError) as caught:
        default_registry().create("tracer", preset)
    message = str(caught.value)
    assert message == (
        f"The {preset} tracer needs {missing}: set that environment variable (the key is never written into traces)."
    )
