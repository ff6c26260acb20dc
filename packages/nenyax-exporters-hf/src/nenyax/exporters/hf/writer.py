"""The ``hf`` exporter: rows to a Hugging Face dataset folder (`Dataset.save_to_disk`), made whole at `close`.

``datasets.load_from_disk(path)`` reads it back, its features (``Json`` for tool calls) included; the
folder is made beside its destination and moved there once saved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import datasets

from nenyax.core import RowSchema
from nenyax.core.toolkit.files import PartialDir
from nenyax.exporters.hf.features import features


class HfWriter:
    """Rows of one schema, gathered batch by batch into one dataset."""

    def __init__(self, destination: str, schema: RowSchema) -> None:
        """Open `destination` (a folder) for rows of `schema`."""
        self._dir = PartialDir(destination)
        self._features = features(schema)
        self._parts: list[datasets.Dataset] = []

    def write_batch(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Encode `rows` with the schema's features (a key a row leaves out is None)."""
        if rows:
            names = list(self._features)
            complete = [{name: row.get(name) for name in names} for row in rows]
            self._parts.append(datasets.Dataset.from_list(complete, features=self._features))

    def close(self) -> str:
        """Save the dataset and move its folder into place."""
        dataset = datasets.concatenate_datasets(self._parts) if self._parts else self._empty()
        was_enabled = datasets.is_progress_bar_enabled()  # an export prints its own one line, not a bar per shard
        datasets.disable_progress_bars()
        try:
            dataset.save_to_disk(str(self._dir.partial))
        finally:
            if was_enabled:
                datasets.enable_progress_bars()
        return self._dir.finish()

    def abort(self) -> None:
        """Drop what was gathered; nothing was written yet."""
        self._parts.clear()
        self._dir.drop()

    def _empty(self) -> datasets.Dataset:
        return datasets.Dataset.from_list([], features=self._features)


class HfExporter:
    """Writes rows as a Hugging Face dataset folder."""

    suffix = ".hf"

    def open(self, destination: str, *, schema: RowSchema) -> HfWriter:
        """A writer of `schema`'s rows to the folder `destination`."""
        return HfWriter(destination, schema)
