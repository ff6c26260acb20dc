"""The `exporter` kind: writers of rows in batches; which rows (raw, SFT, DPO) and their columns are decided in core.

Rows and their `RowSchema` come from `nenyax.core.contract.rows`; an exporter only writes them to a
destination (a path today: ``runs/x/sft.parquet``, a dataset folder). It is given the schema when it
opens the destination, so a columnar writer builds its own (pyarrow, `datasets.Features`) before the
first row, and it gets rows in batches, so it builds each batch column by column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from nenyax.core.contract.row_schema import RowSchema


@runtime_checkable
class RowWriter(Protocol):
    """An open destination: batches of rows go in, `close` makes them durable.

    Nothing is at the destination until `close` returns (a killed export leaves no half-written file
    where a reader would take it for a whole one); `abort` drops what was written.
    """

    def write_batch(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Add rows of the schema given to `Exporter.open` (a nullable key may be left out)."""
        ...

    def close(self) -> str:
        """Finish writing; return where the rows are (a path or URI)."""
        ...

    def abort(self) -> None:
        """Drop everything written so far; the destination is left as it was."""
        ...


@runtime_checkable
class Exporter(Protocol):
    """Opens destinations of one format (jsonl, parquet, hf)."""

    suffix: str
    """What a default destination's name ends with (``.jsonl``, ``.parquet``, ``.hf`` for a dataset folder)."""

    def open(self, destination: str, *, schema: RowSchema) -> RowWriter:
        """Open `destination` for rows of `schema` (replaced at `close`); refuse a bad path in one sentence."""
        ...
