"""numpy arrays in records: one encoding for every adapter, which keeps dtype and shape at any size.

    {"__ndarray__": "float32", "values": [0.0135, -0.0221, 0.0411, 0.0373]}
    {"__ndarray__": "uint8", "shape": [210, 160, 3], "data": "<base64>"}

An array of at most `LIST_MAX` booleans, integers or finite floats keeps its numbers as nested lists
(``values``), so a person reads them in a replay: their nesting is the shape (``shape`` is written
too only for an empty array of several axes, whose nesting cannot say it). Any other (larger,
complex, or holding inf or nan, which JSON cannot write) keeps its bytes (``data``: base64 of the
C-order, little-endian bytes) and its ``shape``. Each record is one dict and its lists: a CartPole
episode keeps 500 of them alive, which the garbage collector walks, so nothing is added that the
numbers already say. A
210x160x3 uint8 frame is then ~134 kB of JSONL instead of ~360 kB of nested lists. Both forms decode
to an equal array of the same dtype and shape. What the gymnasium adapter wrote before this module,
``{"__ndarray__": {"dtype", "shape", "data"}}``, decodes too.

numpy stays optional: nothing here imports it until an array is met (`serde` recognises one by its
type, through ``sys.modules``), or until `decode` is asked for one.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

TAG = "__ndarray__"
"""The key that marks an encoded array; its value is the dtype's name."""
LIST_MAX = 64
"""Arrays of at most this many numbers keep them as lists (every classic-control and MuJoCo locomotion
observation but Humanoid's); larger ones keep their bytes."""

_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex (no JSON number: always `data`)


def is_array_type(cls: type) -> bool:
    """True for numpy's ndarray and its subclasses; never imports numpy (no array exists without it)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(cls, type) and issubclass(cls, np.ndarray)


def is_encoded(value: Any) -> bool:
    """True when `value` is an array as `encode` writes it (or as the gymnasium adapter once did)."""
    return type(value) is dict and TAG in value and len(value) <= 3


def encode(array: Any) -> dict[str, Any]:
    """`array` (a numpy array) as ``{"__ndarray__": dtype, "values": [...]}`` or ``{..., "shape", "data"}``.

    TypeError, in one sentence, for an array that holds neither booleans nor numbers (structured,
    object, string or datetime dtypes). This runs once per recorded step of every array observation,
    so it is kept short.
    """
    dtype = array.dtype
    name = _NAMES.get(dtype)  # numpy computes `dtype.name` in Python: slower than all the rest
    if name is None:
        name = _name(dtype)
    size = array.size
    if size <= LIST_MAX and dtype.kind != "c":
        values = array.tolist()
        # JSON has no inf or nan (orjson writes null): those keep their bytes. A sum is finite only when
        # every term is (one that overflows is a false alarm, which merely picks the bytes form).
        if dtype.kind == "f":
            ndim = array.ndim
            total = sum(values) if ndim == 1 else values if ndim == 0 else float(array.sum(dtype="f8"))
            if total - total != 0.0:
                values = None
        if values is not None:
            if size == 0 and array.ndim > 1:
                return {TAG: name, "shape": list(array.shape), "values": values}
            return {TAG: name, "values": values}
    little = array.astype(dtype.newbyteorder("<"), order="C", copy=False)
    return {TAG: name, "shape": list(array.shape), "data": base64.b64encode(little.tobytes()).decode("ascii")}


_NAMES: dict[Any, str] = {}
"""The name of each dtype met so far, among those records keep (a handful per process)."""


def _name(dtype: Any) -> str:
    if dtype.kind not in _KINDS:  # structured dtypes are kind V: refused here too
        msg = (
            f"A numpy array of dtype {dtype} cannot be recorded: records keep arrays of booleans and numbers only; "
            "record each field (or the values as plain Python data) instead."
        )
        raise TypeError(msg)
    name: str = dtype.name  # numpy works the name out in Python: cached per dtype
    _NAMES[dtype] = name
    return name


def decode(value: Any) -> Any:
    """The numpy array an encoded record stands for; ValueError, in one sentence, when it is not one."""
    import numpy as np  # only a reader that wants arrays back needs numpy

    try:
        body = value if isinstance(value[TAG], str) else value[TAG]  # the gymnasium adapter's older form nests
        dtype = np.dtype(value[TAG] if body is value else body["dtype"])
        if dtype.kind not in _KINDS:
            msg = f"dtype {dtype} is not one records keep"
            raise ValueError(msg)
        if "data" in body:
            shape = tuple(int(n) for n in body["shape"])
            little = dtype.newbyteorder("<")
            flat = np.frombuffer(base64.b64decode(body["data"], validate=True), dtype=little)
            return flat.reshape(shape).astype(dtype.newbyteorder("="))
        array = np.asarray(body["values"], dtype=dtype)
        return array.reshape(tuple(int(n) for n in body["shape"])) if "shape" in body else array
    except (KeyError, TypeError, ValueError) as exc:
        msg = f"Not an encoded array record ({exc})."
        raise ValueError(msg) from exc


def decode_all(value: Any) -> Any:
    """`value` with every encoded array in it (in lists and dicts, at any depth) decoded to numpy."""
    if is_encoded(value):
        return decode(value)
    if isinstance(value, dict):
        return {k: decode_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [decode_all(v) for v in value]
    return value
