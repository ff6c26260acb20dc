"""The ``parquet`` exporter: batches of rows to one zstd Parquet file, moved into place whole at `close`.

An unclosed Parquet file has no footer and no reader opens it, so the file is written beside its
destination and renamed once complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from nenyax.core import RowSchema
from nenyax.core.toolkit.files import PartialFile
from nenyax.exporters.parquet.arrow import BatchBuilder

ROW_GROUP = 65_536
"""Rows per row group: batches are gathered up to this many (small groups compress worse and read slower)."""


class ParquetWriter:
    """Rows of one schema to one Parquet file, in row groups of `ROW_GROUP` rows."""

    def __init__(self, destination: str, schema: RowSchema, compression: str) -> None:
        """Open `destination` for rows of `schema`."""
        self._file = PartialFile(destination)
        self._builder = BatchBuilder(schema)
        self._writer = pq.ParquetWriter(str(self._file.partial), self._builder.schema, compression=compression)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0

    def write_batch(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Build `rows` into Arrow columns; write a row group once `ROW_GROUP` rows are gathered."""
        if rows:
            self._pending.append(self._builder.batch(rows))
            self._pending_rows += len(rows)
            if self._pending_rows >= ROW_GROUP:
                self._flush()

    def _flush(self) -> None:
        if self._pending:
            table = pa.Table.from_batches(self._pending, schema=self._builder.schema)
            self._writer.write_table(table, row_group_size=max(ROW_GROUP, table.num_rows))
            self._pending, self._pending_rows = [], 0

    def close(self) -> str:
        """Write what is gathered and the footer, and move the file into place."""
        self._flush()
        self._writer.close()
        return self._file.finish()

    def abort(self) -> None:
        """Close and remove what was written."""
        self._pending = []
        self._writer.close()
        self._file.drop()


class ParquetExporter:
    """Writes rows as Parquet (``compression``: zstd by default; snappy, gzip, none...)."""

    suffix = ".parquet"

    def __init__(self, compression: str = "zstd") -> None:
        """An exporter compressing with `compression`."""
        self.compression = compression

    def open(self, destination: str, *, schema: RowSchema) -> ParquetWriter:
        """A writer of `schema`'s rows to `destination`."""
        return ParquetWriter(destination, schema, self.compression)
