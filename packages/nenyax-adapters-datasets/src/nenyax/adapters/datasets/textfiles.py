"""Reading CSV, JSON and JSON Lines files with the standard library, so no value is guessed.

Through ``datasets`` (pandas for CSV, pyarrow for JSON) a gold answer does not survive as written: CSV
``NA`` and ``null`` become missing, an all-number column turns ``007`` into ``7``, a JSON column that
mixes ``"007"`` and ``7`` comes back as ``7`` and ``7``, and an integer over 64 bits refuses the whole
file. Here every CSV cell is its text, and a JSON number is the text it was written as (``3.10``,
``1e3``, ``12345678901234567890123``); each row remembers the line it starts on, so a bad row can be
named.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nenyax.core.errors import BadURIError

TEXT_SUFFIXES = (".csv", ".json", ".jsonl")
"""Files read here; Parquet and save_to_disk folders carry their own types and go through datasets."""

# The csv module's default field limit (128 KiB) is smaller than a long worked solution can be.
_CSV_FIELD_LIMIT = 1 << 30

Row = dict[str, Any]


def _loads(text: str) -> Any:
    # Numbers keep the text they were written as; NaN and Infinity too.
    return json.loads(text, parse_int=str, parse_float=str, parse_constant=str)


def _kind(value: Any) -> str:
    return {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", type(None): "null"}.get(
        type(value), "a JSON number"
    )


def _csv(path: Path, handle: Any) -> tuple[list[str], list[Row], list[int]]:
    reader = csv.reader(handle)
    header: list[str] | None = None
    rows: list[Row] = []
    lines: list[int] = []
    next_line = 1
    for record in reader:
        start, next_line = next_line, reader.line_num + 1  # a quoted cell may span several lines
        if not record:  # a blank line, skipped as pandas does
            continue
        if header is None:
            header = _unique_names(record)
            continue
        if len(record) > len(header):
            msg = (
                f"Line {start} of {path.name} has {len(record)} fields but the header names "
                f"{len(header)} columns; quote cells that contain commas."
            )
            raise BadURIError(msg)
        rows.append(dict(zip(header, record, strict=False)))  # a short record lacks its last columns
        lines.append(start)
    return header or [], rows, lines


def _unique_names(header: list[str]) -> list[str]:
    """Header names as pandas would give them: ``Unnamed: 3`` for an empty one, ``a.1`` for a repeat."""
    names: list[str] = []
    for i, name in enumerate(header):
        name = name.strip() or f"Unnamed: {i}"
        base, n = name, 0
        while name in names:
            n += 1
            name = f"{base}.{n}"
        names.append(name)
    return names


def _jsonl(path: Path, handle: Any) -> tuple[list[Row], list[int]]:
    rows: list[Row] = []
    lines: list[int] = []
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            row = _loads(line)
        except json.JSONDecodeError as exc:
            msg = f"Line {number} of {path.name} is not valid JSON ({exc.msg} at column {exc.colno})."
            raise BadURIError(msg) from exc
        if not isinstance(row, dict):
            msg = f"Line {number} of {path.name} holds {_kind(row)}, not a JSON object (one row per line)."
            raise BadURIError(msg)
        rows.append(row)
        lines.append(number)
    return rows, lines


def _json(path: Path, text: str) -> tuple[list[Row], list[int] | None]:
    try:
        data = _loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # JSON Lines in a .json file, as many datasets ship them
            return _jsonl(path, text.splitlines(keepends=True))
        msg = f"{path.name} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        raise BadURIError(msg) from exc
    if isinstance(data, dict):
        columns = list(data.values())
        if columns and all(isinstance(c, list) and len(c) == len(columns[0]) for c in columns):
            # column-oriented: {"question": [...], "answer": [...]}
            return [dict(zip(data, values, strict=True)) for values in zip(*columns, strict=True)], None
        keys = ", ".join(list(data)[:5])
        msg = (
            f"{path.name} holds one JSON object (keys {keys}); the hf adapter reads a list of rows, "
            "columns of equal length, or JSON Lines."
        )
        raise BadURIError(msg)
    if not isinstance(data, list):
        msg = f"{path.name} holds {_kind(data)}; the hf adapter reads a list of rows or JSON Lines."
        raise BadURIError(msg)
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            msg = f"Row {index} of {path.name} (counting from 0) holds {_kind(row)}, not a JSON object."
            raise BadURIError(msg)
    return data, None


def _columns(rows: list[Row]) -> Iterator[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key not in seen:
                seen[key] = None
                yield key


def read_text_file(path: Path) -> tuple[list[str], list[Row], list[int] | None]:
    """The column names, the rows (values as written) and each row's first line (None for a JSON array)."""
    lines: list[int] | None
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            if path.suffix.lower() == ".csv":
                limit = csv.field_size_limit(_CSV_FIELD_LIMIT)
                try:
                    return _csv(path, handle)
                except csv.Error as exc:
                    msg = f"Cannot read {path.name} as CSV: {exc}."
                    raise BadURIError(msg) from exc
                finally:
                    csv.field_size_limit(limit)
            if path.suffix.lower() == ".jsonl":
                rows, lines = _jsonl(path, handle)
            else:
                rows, lines = _json(path, handle.read())
    except UnicodeDecodeError as exc:
        msg = f"{path.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8."
        raise BadURIError(msg) from exc
    except OSError as exc:
        msg = f"Cannot read {str(path)!r}: {exc.strerror or exc}."
        raise BadURIError(msg) from exc
    return list(_columns(rows)), rows, lines
