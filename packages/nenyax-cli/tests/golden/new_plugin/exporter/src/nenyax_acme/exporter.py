"""The `acme` exporter: rows as one JSON array per destination. This is the file to make your own.

Core makes the rows (raw, SFT, DPO, each with its `RowSchema`) and hands them over in batches; an exporter
only writes them. What it owes every caller, whatever its format: a `suffix` for default destinations, and
a destination that appears whole at `close` (written beside it, then moved into place), or not at all
after `abort`. For a columnar format, build its schema from `schema` in `open`, before the first row.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from nenyax.core import UsageError
from nenyax.core.contract.row_schema import RowSchema


def _jsonable(value: Any) -> Any:
    """What `json` cannot write itself: bytes (pre-tokenized rows may hold them), as base64 text."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    msg = f"{type(value).__name__} is not JSON-able"
    raise TypeError(msg)


class JsonArrayWriter:
    """Rows of one schema to one file, written beside the destination and moved there at `close`."""

    def __init__(self, destination: Path, schema: RowSchema) -> None:
        """Start the file beside `destination` (its folder is made when missing)."""
        self.destination = destination
        self.schema = schema
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            folder = destination.parent
            handle, partial = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".partial", dir=folder)
        except OSError as exc:
            msg = f"{destination} cannot be written ({exc.strerror or exc}); name another destination."
            raise UsageError(msg) from exc
        self.partial = Path(partial)
        self._out: IO[str] = os.fdopen(handle, "w", encoding="utf-8")
        self._out.write("[")
        self._first = True

    def write_batch(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Append `rows` to the array."""
        for row in rows:
            self._out.write("\n" if self._first else ",\n")
            self._out.write(json.dumps(row, default=_jsonable, ensure_ascii=False))
            self._first = False

    def close(self) -> str:
        """End the array and move the file into place; return where the rows are."""
        self._out.write("\n]\n")
        self._out.close()
        os.replace(self.partial, self.destination)
        return str(self.destination)

    def abort(self) -> None:
        """Drop what was written; the destination stays as it was."""
        self._out.close()
        self.partial.unlink(missing_ok=True)


class AcmeExporter:
    """The `acme` exporter (what the plugin's factory returns)."""

    suffix = ".json"

    def open(self, destination: str, *, schema: RowSchema) -> JsonArrayWriter:
        """A writer of `schema`'s rows to `destination` (replaced at `close`); a folder there is refused."""
        path = Path(destination)
        if path.is_dir():
            msg = f"{path} is a folder; name a file to export to."
            raise UsageError(msg)
        return JsonArrayWriter(path, schema)
