"""The ``jsonl`` exporter: rows as JSON Lines (orjson), one row a line, bytes as base64.

A ``json`` column is written as the JSON it is (TRL and `datasets.load_dataset("json")` read
conversational rows this way); the raw shape keeps everything that differs between environments as
JSON text already, so its lines have one schema that `polars.read_ndjson` reads.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import IO, Any

import orjson

from nenyax.core.contract.row_schema import RowSchema
from nenyax.core.engine.export_files import PartialFile


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON-able")


class JsonlWriter:
    """Rows to one JSON Lines file, replaced whole at `close`."""

    def __init__(self, destination: str, schema: RowSchema) -> None:
        """Open `destination` for rows of `schema`."""
        self.schema = schema
        self._file = PartialFile(destination)
        self._out: IO[bytes] = self._file.partial.open("wb")

    def write_batch(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Append `rows`, one a line."""
        dumps = orjson.dumps
        self._out.write(b"".join(dumps(row, default=_default, option=orjson.OPT_APPEND_NEWLINE) for row in rows))

    def close(self) -> str:
        """Flush, then move the file into place."""
        self._out.close()
        return self._file.finish()

    def abort(self) -> None:
        """Close and remove what was written."""
        self._out.close()
        self._file.drop()


class JsonlExporter:
    """Writes rows as JSON Lines."""

    suffix = ".jsonl"

    def open(self, destination: str, *, schema: RowSchema) -> JsonlWriter:
        """A writer of `schema`'s rows to `destination`."""
        return JsonlWriter(destination, schema)
