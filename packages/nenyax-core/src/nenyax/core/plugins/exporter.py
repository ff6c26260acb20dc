"""The `exporter` kind: writers for a stream of rows; which rows (raw, SFT, DPO) is decided once in core.

Rows come from `nenyax.core.contract.rows`; an exporter only writes them to a destination URI
(a file path today, e.g. ``runs/out.parquet``; a dataset repository later).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class RowWriter(Protocol):
    """An open destination: rows go in one at a time, `close` makes them durable."""

    def write(self, row: Mapping[str, Any]) -> None:
        """Add one row (JSON-able values; nested objects allowed)."""
        ...

    def close(self) -> str:
        """Finish writing; return where the rows are (a path or URI)."""
        ...


@runtime_checkable
class Exporter(Protocol):
    """Opens destinations of one format (jsonl, parquet, hf)."""

    def open(self, destination: str, *, shape: str) -> RowWriter:
        """Open `destination` for rows of `shape` (``raw``, ``sft`` or ``dpo``); refuse a bad path in one sentence."""
        ...
