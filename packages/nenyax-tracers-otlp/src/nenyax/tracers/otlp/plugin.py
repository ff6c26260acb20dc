"""Entry-point module: declares the presets without importing them (or the OpenTelemetry SDK)."""

from nenyax.core.hookspecs import PluginSpec, hookimpl

_PRESETS = {
    "otlp": "any OTLP/HTTP collector, by OpenTelemetry's OTEL_EXPORTER_OTLP_* variables",
    "langfuse": "Langfuse over OTLP (LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY, LANGFUSE_HOST)",
    "phoenix": "Arize Phoenix over OTLP (PHOENIX_COLLECTOR_ENDPOINT, PHOENIX_PROJECT_NAME, PHOENIX_API_KEY)",
    "mlflow": "an MLflow tracking server over OTLP (MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_ID)",
    "wandb": "W&B Weave over OTLP (WANDB_API_KEY, WANDB_ENTITY, WANDB_PROJECT)",
}


@hookimpl
def nenyax_register_tracers() -> list[PluginSpec]:
    """One tracer per backend preset."""
    return [
        PluginSpec(kind="tracer", name=name, factory=f"nenyax.tracers.otlp.presets:{name}", summary=summary)
        for name, summary in _PRESETS.items()
    ]
