"""Entry-point module: declares the exporter without importing `datasets`."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_exporters() -> PluginSpec:
    """The ``hf`` exporter."""
    return PluginSpec(
        kind="exporter",
        name="hf",
        factory="nenyax.exporters.hf.writer:HfExporter",
        summary="a Hugging Face dataset folder (save_to_disk); tool-call arguments kept exact as datasets.Json",
    )
