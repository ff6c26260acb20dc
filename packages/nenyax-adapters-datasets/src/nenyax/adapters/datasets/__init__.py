"""Local question/answer datasets (JSONL, JSON, Parquet, CSV, save_to_disk) as Nenyax environments (``hf:<path>``)."""

from nenyax.adapters.datasets._version import __version__

__all__ = ["__version__"]
