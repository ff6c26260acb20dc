"""The backend presets: each reads its endpoint and keys from environment variables and builds an `OtlpTracer`.

- ``otlp``: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` +
  ``/v1/traces`` (default ``http://localhost:4318``); headers ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``.
- ``langfuse``: ``LANGFUSE_HOST`` (or ``LANGFUSE_BASE_URL``, default ``https://cloud.langfuse.com``) +
  ``/api/public/otel/v1/traces``; ``Authorization: Basic base64(public:secret)`` from
  ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY`` (both required), ``x-langfuse-ingestion-version: 4``.
- ``phoenix``: ``PHOENIX_COLLECTOR_ENDPOINT`` (default ``http://localhost:6006``) + ``/v1/traces``;
  ``Authorization: Bearer`` when ``PHOENIX_API_KEY`` is set; the resource attribute
  ``openinference.project.name`` = ``PHOENIX_PROJECT_NAME`` (default ``default``).
- ``mlflow``: ``MLFLOW_TRACKING_URI`` (default ``http://localhost:5000``) + ``/v1/traces``;
  ``x-mlflow-experiment-id`` = ``MLFLOW_EXPERIMENT_ID`` (default ``0``); ``Authorization: Bearer`` when
  ``MLFLOW_TRACKING_TOKEN`` is set.
- ``wandb``: ``WANDB_BASE_URL`` (default ``https://trace.wandb.ai``) + ``/otel/v1/traces``; the
  ``wandb-api-key`` header from ``WANDB_API_KEY``, the resource attributes ``wandb.entity`` and
  ``wandb.project`` from ``WANDB_ENTITY`` and ``WANDB_PROJECT`` (all three required; also the older
  ``project_id`` header).

A key is read when the preset is built (``--trace NAME`` checks it before any episode runs) and goes
into the HTTP headers only. ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` (seconds) bounds each export, as in
OpenTelemetry; ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` add to the resource.
"""

from __future__ import annotations

import base64
import os
import urllib.parse
from collections.abc import Mapping

from nenyax.core.errors import UsageError
from nenyax.tracers.otlp.tracer import OtlpTracer

TRACES_PATH = "/v1/traces"


def otlp() -> OtlpTracer:
    """Any OTLP/HTTP collector, configured by OpenTelemetry's own variables."""
    exact = _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    endpoint = exact or _join(_env("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318", TRACES_PATH)
    headers = _otlp_headers(_env("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or _env("OTEL_EXPORTER_OTLP_HEADERS") or "")
    return OtlpTracer(endpoint, headers=headers, timeout=_timeout())


def langfuse() -> OtlpTracer:
    """Langfuse (cloud or self-hosted): its OTLP route, the project's key pair as Basic auth."""
    public, secret = _required("LANGFUSE_PUBLIC_KEY", "langfuse"), _required("LANGFUSE_SECRET_KEY", "langfuse")
    host = _env("LANGFUSE_HOST") or _env("LANGFUSE_BASE_URL") or "https://cloud.langfuse.com"
    token = base64.b64encode(f"{public}:{secret}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "x-langfuse-ingestion-version": "4"}
    return OtlpTracer(_join(host, "/api/public/otel/v1/traces"), headers=headers, timeout=_timeout())


def phoenix() -> OtlpTracer:
    """Arize Phoenix: ``/v1/traces`` on its UI port; the project by resource attribute."""
    base = _env("PHOENIX_COLLECTOR_ENDPOINT") or "http://localhost:6006"
    headers = {}
    if key := _env("PHOENIX_API_KEY"):
        headers["Authorization"] = f"Bearer {key}"
    project = _env("PHOENIX_PROJECT_NAME") or "default"
    resource = {"openinference.project.name": project}
    return OtlpTracer(_join(base, TRACES_PATH), headers=headers, resource=resource, timeout=_timeout())


def mlflow() -> OtlpTracer:
    """An MLflow tracking server (3.6 or later): ``/v1/traces``, the experiment by header."""
    base = _env("MLFLOW_TRACKING_URI") or "http://localhost:5000"
    if not base.startswith(("http://", "https://")):
        msg = f"MLFLOW_TRACKING_URI is {base!r}; the mlflow tracer needs a tracking server's http(s) URL."
        raise UsageError(msg)
    headers = {"x-mlflow-experiment-id": _env("MLFLOW_EXPERIMENT_ID") or "0"}
    if token := _env("MLFLOW_TRACKING_TOKEN"):
        headers["Authorization"] = f"Bearer {token}"
    return OtlpTracer(_join(base, TRACES_PATH), headers=headers, timeout=_timeout())


def wandb() -> OtlpTracer:
    """W&B Weave: ``/otel/v1/traces``, the API key by header, entity and project as resource attributes."""
    key = _required("WANDB_API_KEY", "wandb")
    entity, project = _required("WANDB_ENTITY", "wandb"), _required("WANDB_PROJECT", "wandb")
    base = _env("WANDB_BASE_URL") or "https://trace.wandb.ai"
    headers = {"wandb-api-key": key, "project_id": f"{entity}/{project}"}
    resource = {"wandb.entity": entity, "wandb.project": project}
    return OtlpTracer(_join(base, "/otel/v1/traces"), headers=headers, resource=resource, timeout=_timeout())


# ---------------------------------------------------------------------- helpers


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _required(name: str, preset: str) -> str:
    value = _env(name)
    if value is None:
        msg = f"The {preset} tracer needs {name}: set that environment variable (the key is never written into traces)."
        raise UsageError(msg)
    return value


def _join(base: str, path: str) -> str:
    base = base.rstrip("/")
    return base if base.endswith(path) else base + path


def _timeout() -> float | None:
    value = _env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or _env("OTEL_EXPORTER_OTLP_TIMEOUT")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        msg = f"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT is {value!r}; give the seconds as a number."
        raise UsageError(msg) from None


def _otlp_headers(spec: str) -> Mapping[str, str]:
    """OpenTelemetry's ``key=value,key2=value2`` header list (values percent-encoded)."""
    headers = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            msg = f"OTEL_EXPORTER_OTLP_HEADERS has {item!r}; write each header as name=value."
            raise UsageError(msg)
        headers[urllib.parse.unquote(name.strip())] = urllib.parse.unquote(value.strip())
    return headers
