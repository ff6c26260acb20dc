"""Core's `RowSchema` as an Arrow schema, and a batch of rows as an Arrow record batch.

``json`` columns are Arrow's ``arrow.json`` extension type over UTF-8 text (polars reads them as
strings, `datasets` as its ``Json`` feature). pyarrow cannot build an extension type from Python
objects inside a nested type, so a column holding JSON values is built with its storage type (text in
place of ``json``) and cast to the schema's type, which is free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pyarrow as pa

from nenyax.core import ColumnType, RowSchema

_SCALARS = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "binary": pa.binary(),
}


def arrow_type(type_: ColumnType, *, storage: bool = False) -> pa.DataType:
    """The Arrow type of `type_`; with `storage`, ``json`` as plain text (what Python values are built into)."""
    if type_.kind == "json":
        return pa.string() if storage else pa.json_(pa.string())
    if type_.kind == "list":
        assert type_.item is not None
        return pa.list_(arrow_type(type_.item, storage=storage))
    if type_.kind == "struct":
        return pa.struct([pa.field(f.name, arrow_type(f.type, storage=storage)) for f in type_.fields])
    return _SCALARS[type_.kind]


def arrow_schema(schema: RowSchema) -> pa.Schema:
    """The Arrow schema of `schema`'s rows (every field nullable)."""
    return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in schema.columns])


def _has_json(type_: ColumnType) -> bool:
    if type_.kind == "json":
        return True
    if type_.kind == "list":
        return type_.item is not None and _has_json(type_.item)
    return any(_has_json(f.type) for f in type_.fields)


def json_text(value: Any, type_: ColumnType) -> Any:
    """`value` with every ``json`` value in it as JSON text (the rest untouched)."""
    if value is None:
        return None
    if type_.kind == "json":
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    if type_.kind == "list":
        assert type_.item is not None
        return [json_text(v, type_.item) for v in value]
    if type_.kind == "struct":
        return {f.name: json_text(value.get(f.name), f.type) for f in type_.fields}
    return value


class BatchBuilder:
    """Builds record batches of one `RowSchema` from row dicts.

    The columns without ``json`` go through ``RecordBatch.from_pylist`` (pyarrow's C loop over the
    rows: 1.5x a Python loop gathering each column, measured in bench/export_parquet.py); each column
    holding ``json`` is gathered on its own, its JSON values turned to text, and cast to its type.
    """

    def __init__(self, schema: RowSchema) -> None:
        """Prepare the Arrow types of `schema`."""
        self.columns = schema.columns
        self.schema = arrow_schema(schema)
        self._json = [c for c in schema.columns if _has_json(c.type)]
        self._plain = pa.schema([f for f in self.schema if f.name not in {c.name for c in self._json}])

    def batch(self, rows: Sequence[Mapping[str, Any]]) -> pa.RecordBatch:
        """`rows` as one record batch of the schema (a key a row leaves out is null)."""
        plain = pa.RecordBatch.from_pylist(list(rows), schema=self._plain)
        if not self._json:
            return plain
        built = {name: plain.column(name) for name in self._plain.names}
        for column in self._json:
            texts = [json_text(row.get(column.name), column.type) for row in rows]
            storage = pa.array(texts, type=arrow_type(column.type, storage=True))
            built[column.name] = storage.cast(self.schema.field(column.name).type)
        return pa.RecordBatch.from_arrays([built[name] for name in self.schema.names], schema=self.schema)
