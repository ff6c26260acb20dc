"""A Nenyax exporter writing Parquet through pyarrow: the exporter plugin named ``parquet``."""

from nenyax.exporters.parquet._version import __version__

__all__ = ["__version__"]
