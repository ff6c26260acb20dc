"""Core's `RowSchema` as `datasets.Features`.

``json`` columns become ``datasets.Json()``: without it `Dataset.from_list` infers one struct for every
row's tool-call arguments, and each row comes back with the keys of the others set to None (a chat
template then renders those bogus null arguments).
"""

from __future__ import annotations

from typing import Any

import datasets

from nenyax.core import ColumnType, RowSchema

_VALUES = {"string": "string", "int64": "int64", "float64": "float64", "bool": "bool", "binary": "binary"}


def feature(type_: ColumnType) -> Any:
    """The `datasets` feature of `type_`."""
    if type_.kind == "json":
        return datasets.Json()
    if type_.kind == "list":
        assert type_.item is not None
        return datasets.List(feature(type_.item))
    if type_.kind == "struct":
        return {f.name: feature(f.type) for f in type_.fields}
    return datasets.Value(_VALUES[type_.kind])


def features(schema: RowSchema) -> datasets.Features:
    """The `datasets.Features` of `schema`'s rows."""
    return datasets.Features({c.name: feature(c.type) for c in schema.columns})
