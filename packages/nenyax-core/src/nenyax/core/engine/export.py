"""`export`: a run's trajectories as rows of one shape, written by one exporter plugin (what ``nenyax export`` runs).

    from nenyax.core.engine.export import export
    result = export("runs/x", to="parquet", rows="sft", min_score=1.0)
    result.destination    # 'runs/x/sft.parquet'

Rows are shaped by `nenyax.core.contract.rows` and streamed to the exporter in batches. A trajectories
file whose last line a killed writer cut off exports its complete records, and the result says what was
left (`ExportResult.cut_off_note`). Nothing is written when no trajectory makes a row of the shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract import rows as row_shapes
from nenyax.core.contract.trajectory import Trajectory
from nenyax.core.engine.rundirs import TRAJECTORIES
from nenyax.core.engine.sinks import read_trajectories
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry, default_registry

BATCH = 2048
"""Rows per batch handed to an exporter: large enough for a columnar writer, small enough to stream."""


@attrs.frozen(kw_only=True)
class ExportResult:
    """What an export wrote."""

    destination: str
    exporter: str
    shape: str
    tokenized: bool
    trajectories: int
    """Complete trajectories read from the source."""
    rows: int
    """Rows written (a trajectory may make none: see `nenyax.core.contract.rows.rows`)."""
    cut_off_note: str | None = None
    """The sentence about a cut-off last line the source had, or None."""


def source_file(source: str | Path) -> Path:
    """The trajectories file of `source`: a run directory (its ``trajectories.jsonl``) or a JSONL file."""
    path = Path(source)
    if path.is_dir():
        if not (path / TRAJECTORIES).exists():
            raise UsageError(
                f"{path} holds no {TRAJECTORIES}; name a run directory `nenyax eval` wrote, or a JSONL file."
            )
        return path / TRAJECTORIES
    if not path.exists():
        raise UsageError(f"{path} does not exist; name a run directory or a trajectories.jsonl file.")
    return path


def default_destination(source: str | Path, shape: str, suffix: str, *, tokenized: bool = False) -> Path:
    """Beside the source: ``<run>/<shape><suffix>`` for a run directory, ``<name>.<shape><suffix>`` for a file."""
    name = f"{shape}-tokens" if tokenized else shape
    path = Path(source)
    if path.is_dir():
        return path / f"{name}{suffix}"
    return path.with_name(f"{path.stem}.{name}{suffix}")


def export(
    source: str | Path,
    *,
    to: str = "jsonl",
    rows: str = "raw",
    out: str | Path | None = None,
    min_score: float | None = None,
    tokenized: bool = False,
    registry: Registry | None = None,
    options: dict[str, Any] | None = None,
) -> ExportResult:
    """Write the `rows` shape of `source`'s trajectories with exporter `to`, to `out` (default: beside `source`).

    `options` go to the exporter's factory. Bad input (an unknown shape or exporter, a missing source,
    no trajectory making a row) is a `UsageError` sentence; the destination is then left as it was.
    """
    shape_options = row_shapes.RowOptions(tokenized=tokenized, min_score=min_score)
    schema = row_shapes.schema(rows, shape_options)  # an unknown shape is refused before anything is read
    exporter = (registry or default_registry()).create("exporter", to, **(options or {}))
    path = source_file(source)
    destination = (
        Path(out) if out is not None else default_destination(source, rows, exporter.suffix, tokenized=tokenized)
    )
    if destination.resolve() == path.resolve():
        raise UsageError(f"{destination} is the file being exported; name another --out.")
    trajectories = read_trajectories(path, warn=False)
    counted = _Counted(iter(trajectories))
    shaped = row_shapes.rows(counted, rows, shape_options)
    writer = exporter.open(str(destination), schema=schema)
    written = 0
    try:
        while batch := list(islice(shaped, BATCH)):
            writer.write_batch(batch)
            written += len(batch)
    except BaseException:
        writer.abort()
        raise
    if not written:
        writer.abort()
        raise UsageError(_nothing_to_write(path, rows, counted.count, trajectories.cut_off_note, shape_options))
    return ExportResult(
        destination=writer.close(),
        exporter=to,
        shape=rows,
        tokenized=tokenized,
        trajectories=counted.count,
        rows=written,
        cut_off_note=trajectories.cut_off_note,
    )


class _Counted:
    """The trajectories as they are read, counted."""

    def __init__(self, items: Iterator[Trajectory]) -> None:
        self._items = items
        self.count = 0

    def __iter__(self) -> Iterator[Trajectory]:
        for item in self._items:
            self.count += 1
            yield item


def _nothing_to_write(path: Path, shape: str, count: int, note: str | None, options: row_shapes.RowOptions) -> str:
    tail = f" ({note})" if note else ""
    if not count:
        return f"{path} holds no complete trajectory{tail}; there is nothing to export."
    needs = {
        "sft": "an ok, judged trajectory with an assistant turn"
        + (" and exact token ids" if options.tokenized else "")
        + ("" if options.min_score is None else f", scored at least {options.min_score}"),
        "dpo": "a group (same group_id) with two judged trajectories of different scores answering the same prompt",
        "merged": "a model call recorded with token ids (a model played it, not a built-in policy)",
        "steps": "a model call recorded with token ids (a model played it, not a built-in policy)",
    }.get(shape, "a trajectory")
    return f"None of the {count} trajectories of {path} makes a row of the {shape} shape: one needs {needs}{tail}."
