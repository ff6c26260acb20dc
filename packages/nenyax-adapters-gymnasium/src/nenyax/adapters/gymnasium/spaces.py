"""Gymnasium spaces <-> JSON-native values, action validation and the per-space null action.

Trajectories hold JSON-native values only (so a JSONL record reads back equal), while policies and
the environment exchange native numpy values. Arrays (``Box``, ``MultiDiscrete``, ``MultiBinary``)
are recorded in nenyax-core's one encoding (`nenyax.core.contract.arrays`: dtype, shape, and the
numbers or, for large arrays, the bytes); other spaces follow their own ``to_jsonable`` /
``from_jsonable`` layout for a single value (``Discrete`` -> int, ``Text`` -> str); ``Tuple`` and
``Dict`` are walked here because their own methods work on batches (a Tuple's ``to_jsonable``
transposes a batch into one list per sub-space).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gymnasium import spaces
from nenyax.core.errors import PolicyFailure
from nenyax.core.toolkit import arrays

SUPPORTED = (
    spaces.Discrete,
    spaces.Box,
    spaces.MultiDiscrete,
    spaces.MultiBinary,
    spaces.Tuple,
    spaces.Dict,
    spaces.Text,
)
"""Space types with a JSON layout, a null action and a text codec."""


IMAGE_SIZE = 4096
"""Bytes from which a uint8 grid is an image (64x64): MiniGrid's 7x7x3 symbolic view is not one."""


def holds_an_image(space: spaces.Space[Any]) -> bool:
    """Whether observations of `space` carry an image: a uint8 Box of 2 or 3 dimensions (in a Dict or Tuple too)."""
    if isinstance(space, spaces.Box):
        return space.dtype == np.uint8 and len(space.shape) in (2, 3) and math.prod(space.shape) >= IMAGE_SIZE
    if isinstance(space, spaces.Dict):
        return any(holds_an_image(inner) for inner in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return any(holds_an_image(inner) for inner in space.spaces)
    return False


def to_json(space: spaces.Space[Any], value: Any, *, plain: bool = False) -> Any:
    """A JSON-native copy of `value`, an element of `space`: arrays in core's encoding, as records keep them.

    With `plain`, arrays are nested lists instead (the space's own layout): what a chat model reads and writes.
    """
    if isinstance(value, np.ndarray) and isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return value.tolist() if plain else arrays.encode(value)  # the common case first: one call
    if isinstance(space, spaces.Discrete):
        return int(value)
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return to_json(space, np.asarray(value), plain=plain)
    if isinstance(space, spaces.Text):
        return str(value)
    if isinstance(space, spaces.Tuple):
        return [to_json(sub, v, plain=plain) for sub, v in zip(space.spaces, value, strict=True)]
    if isinstance(space, spaces.Dict):
        return {key: to_json(sub, value[key], plain=plain) for key, sub in space.spaces.items()}
    # Graph, Sequence, OneOf...: the space's own layout for a batch of one.
    return jsonable(space.to_jsonable([value])[0])


def from_json(space: spaces.Space[Any], value: Any) -> Any:
    """The native value `value` (as written by `to_json`) stands for; ValueError when it cannot."""
    if isinstance(space, spaces.Tuple):
        if not isinstance(value, list | tuple) or len(value) != len(space.spaces):
            msg = f"expected a list of {len(space.spaces)} items"
            raise ValueError(msg)
        return tuple(from_json(sub, v) for sub, v in zip(space.spaces, value, strict=True))
    if isinstance(space, spaces.Dict):
        if not isinstance(value, dict) or set(value) != set(space.spaces):
            msg = f"expected an object with exactly the keys {', '.join(space.spaces)}"
            raise ValueError(msg)
        return {key: from_json(sub, value[key]) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Discrete):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            msg = f"expected an integer, got {value!r}"
            raise ValueError(msg)
        return np.int64(value)
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        # A recorded value (core's encoding; the gymnasium adapter's older bytes form is the same), or
        # plain numbers from a policy.
        array = arrays.decode(value) if arrays.is_encoded(value) else np.asarray(value)
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            msg = f"expected numbers, got {value!r}"
            raise ValueError(msg)
        if not np.issubdtype(space.dtype, np.floating) and not np.all(np.mod(array, 1) == 0):
            msg = f"expected whole numbers, got {value!r}"
            raise ValueError(msg)
        return array.astype(space.dtype)
    if isinstance(space, spaces.Text):
        if not isinstance(value, str):
            msg = f"expected a string, got {value!r}"
            raise ValueError(msg)
        return value
    return space.from_jsonable([value])[0]


def coerce_action(space: spaces.Space[Any], action: Any) -> tuple[Any, Any]:
    """The native action and its JSON form; `PolicyFailure` when `action` is not in `space`.

    Accepts a native value (numpy or Python) or its JSON form, so a policy may return either.
    """
    if isinstance(space, spaces.Discrete):
        # The hot path of every discrete env: no numpy conversion, no copy.
        if isinstance(action, int | np.integer) and not isinstance(action, bool):
            index = int(action)
            if space.start <= index < space.start + space.n:
                return action, index
        msg = f"The action {action!r} is not in the action space {space}."
        raise PolicyFailure(msg)
    native = action
    if not _native_for(space, action):
        try:
            native = from_json(space, action)
        except (ValueError, TypeError, KeyError) as exc:
            msg = f"The action {action!r} is not in the action space {space}: {exc}."
            raise PolicyFailure(msg) from exc
    try:
        ok = space.contains(native)
    except Exception:  # noqa: BLE001 - contains() of some spaces raises on malformed input instead of saying no
        ok = False
    if not ok:
        msg = f"The action {_short(action)} is not in the action space {space}."
        raise PolicyFailure(msg)
    return native, to_json(space, native)


def _native_for(space: spaces.Space[Any], value: Any) -> bool:
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return isinstance(value, np.ndarray)
    if isinstance(space, spaces.Tuple):
        return isinstance(value, tuple) and all(
            _native_for(sub, v) for sub, v in zip(space.spaces, value, strict=False)
        )
    if isinstance(space, spaces.Dict):
        return isinstance(value, dict) and all(_native_for(sub, value.get(k)) for k, sub in space.spaces.items())
    return isinstance(space, spaces.Text) and isinstance(value, str)


def null_action(space: spaces.Space[Any]) -> Any:
    """A fixed, do-nothing-ish action of `space`.

    Discrete: its first action (``start``); Box: zero, moved into the bounds when zero is outside
    them; MultiDiscrete: each component's first value; MultiBinary: all zeros; Text: the shortest
    string of the charset's first character; Tuple and Dict: the null action of each part.
    """
    if isinstance(space, spaces.Discrete):
        return np.int64(space.start)
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high).astype(space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        return np.asarray(space.start, dtype=space.dtype).copy()
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Text):
        return space.characters[0] * space.min_length
    if isinstance(space, spaces.Tuple):
        return tuple(null_action(sub) for sub in space.spaces)
    if isinstance(space, spaces.Dict):
        return {key: null_action(sub) for key, sub in space.spaces.items()}
    msg = f"No null action is defined for {type(space).__name__} spaces."
    raise TypeError(msg)


def jsonable(value: Any) -> Any:
    """Plain JSON data from an info dict's values (numpy arrays in core's encoding, scalars, tuples, nested dicts)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return arrays.encode(value) if value.dtype.kind in "biufc" else jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no inf/nan; keep the fact as text rather than a lossy null
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
