"""Entry-point module: declares the exporter without importing pyarrow."""

from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_exporters() -> PluginSpec:
    """The ``parquet`` exporter."""
    return PluginSpec(
        kind="exporter",
        name="parquet",
        factory="nenyax.exporters.parquet.writer:ParquetExporter",
        summary="Parquet (pyarrow, zstd): one schema whatever the environments; polars and datasets read it",
    )
