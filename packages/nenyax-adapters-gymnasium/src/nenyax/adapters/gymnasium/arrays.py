"""Large numpy arrays (images) recorded compactly: dtype, shape and base64 bytes instead of nested lists.

A 210x160x3 uint8 Atari frame is 100,800 bytes; as nested JSON lists it is ~360 kB of text and, in
memory, ~100,000 Python ints in ~34,000 lists (~1.6 MB). Recorded as ``{"__ndarray__": {"dtype":
"uint8", "shape": [210, 160, 3], "data": "<base64 of the C-order, little-endian bytes>"}}`` it is
~134 kB in JSONL and ~134 kB in memory. Arrays of at most `COMPACT_MIN_ELEMENTS` numbers (every
observation the text codec can show a model) stay plain lists, so small observations read as numbers.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

COMPACT_MIN_ELEMENTS = 1025
"""Arrays with at least this many numbers are recorded compactly (the codec shows at most 1024)."""
TAG = "__ndarray__"
"""The one key of a compact array's JSON object."""


def is_compact(value: Any) -> bool:
    """True when `value` is a compact array as `encode` writes it."""
    return isinstance(value, dict) and len(value) == 1 and TAG in value


def encode(array: np.ndarray) -> dict[str, Any]:
    """`array` as ``{"__ndarray__": {"dtype", "shape", "data"}}`` (data: base64 of little-endian C-order bytes)."""
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    data = base64.b64encode(np.ascontiguousarray(little).tobytes()).decode("ascii")
    return {TAG: {"dtype": array.dtype.name, "shape": list(array.shape), "data": data}}


def decode(value: dict[str, Any]) -> np.ndarray:
    """The array a compact record stands for; ValueError when the record is malformed."""
    try:
        body = value[TAG]
        dtype = np.dtype(body["dtype"]).newbyteorder("<")
        flat = np.frombuffer(base64.b64decode(body["data"], validate=True), dtype=dtype)
        return flat.reshape(tuple(body["shape"])).astype(dtype.newbyteorder("="))
    except (KeyError, TypeError, ValueError) as exc:
        msg = f"not a compact array record ({exc})"
        raise ValueError(msg) from exc


def record(array: np.ndarray) -> Any:
    """JSON for `array`: nested lists when small, the compact record when large."""
    return encode(array) if array.size >= COMPACT_MIN_ELEMENTS else array.tolist()
