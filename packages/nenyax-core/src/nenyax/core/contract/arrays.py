"""numpy arrays in records: one encoding for every adapter, which keeps dtype and shape at any size.

    {"__ndarray__": {"dtype": "float32", "shape": [4], "values": [0.0135, -0.0221, 0.0411, 0.0373]}}
    {"__ndarray__": {"dtype": "uint8", "shape": [210, 160, 3], "data": "<base64>"}}

An array of at most `LIST_MAX` booleans, integers or finite floats keeps its numbers as nested lists
(``values``), so a person reads them in a replay; any other (larger, complex, or holding inf or nan,
which JSON cannot write) keeps its bytes (``data``: base64 of the C-order, little-endian bytes). A
210x160x3 uint8 frame is then ~134 kB of JSONL instead of ~360 kB of nested lists. Both forms decode
to an equal array of the same dtype and shape. The ``data`` form is the one the gymnasium adapter
wrote before this module, so its older records read unchanged.

numpy stays optional: nothing here imports it until an array is met (`serde` recognises one by its
type, through ``sys.modules``), or until `decode` is asked for one.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

TAG = "__ndarray__"
"""The one key of an encoded array's JSON object."""
LIST_MAX = 64
"""Arrays of at most this many numbers keep them as lists (every classic-control and MuJoCo locomotion
observation but Humanoid's); larger ones keep their bytes."""

_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex: what `data` holds exactly
_LIST_KINDS = "biuf"  # complex numbers have no JSON number


def is_array_type(cls: type) -> bool:
    """True for numpy's ndarray and its subclasses; never imports numpy (no array exists without it)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(cls, type) and issubclass(cls, np.ndarray)


def is_encoded(value: Any) -> bool:
    """True when `value` is an array as `encode` writes it."""
    return type(value) is dict and len(value) == 1 and TAG in value


def encode(array: Any) -> dict[str, Any]:
    """`array` (a numpy array) as ``{"__ndarray__": {"dtype", "shape", "values" or "data"}}``.

    TypeError, in one sentence, for an array that holds neither booleans nor numbers (structured,
    object, string or datetime dtypes).
    """
    dtype = array.dtype
    kind = dtype.kind
    if kind not in _KINDS or dtype.fields is not None:
        msg = (
            f"A numpy array of dtype {dtype} cannot be recorded: records keep arrays of booleans and numbers only; "
            "record each field (or the values as plain Python data) instead."
        )
        raise TypeError(msg)
    if array.size <= LIST_MAX and kind in _LIST_KINDS:
        values = array.tolist()
        if kind != "f" or _finite(values, array):
            return {TAG: {"dtype": dtype.name, "shape": list(array.shape), "values": values}}
    little = array.astype(dtype.newbyteorder("<"), order="C", copy=False)
    data = base64.b64encode(little.tobytes(order="C")).decode("ascii")
    return {TAG: {"dtype": dtype.name, "shape": list(array.shape), "data": data}}


def _finite(values: Any, array: Any) -> bool:
    # JSON has no inf or nan (orjson writes null): such arrays keep their bytes. A sum is finite only
    # when every term is (an overflowing sum is a false alarm, which merely picks the bytes form).
    if array.ndim == 1:
        total = sum(values)
    elif array.ndim == 0:
        total = values
    else:
        total = float(array.sum(dtype="float64"))
    return bool(total - total == 0.0)


def decode(value: Any) -> Any:
    """The numpy array an encoded record stands for; ValueError, in one sentence, when it is not one."""
    import numpy as np  # only a reader that wants arrays back needs numpy

    try:
        body = value[TAG]
        dtype = np.dtype(body["dtype"])
        if dtype.kind not in _KINDS or dtype.fields is not None:
            msg = f"dtype {dtype} is not one records keep"
            raise ValueError(msg)
        shape = tuple(int(n) for n in body["shape"])
        if "data" in body:
            little = dtype.newbyteorder("<")
            flat = np.frombuffer(base64.b64decode(body["data"], validate=True), dtype=little)
            return flat.reshape(shape).astype(dtype.newbyteorder("="))
        return np.asarray(body["values"], dtype=dtype).reshape(shape)
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
