"""JSON schemas for ``/schema``, in the layout pydantic gives OpenEnv's own Action/Observation/State models.

An action is one JSON object. For a text environment (its sessions take the answer text as the
action) it is ``{"message": "<text>"}``. Otherwise it is ``{"action": <native JSON action>}``, and
when the environment has a text codec also ``{"message": "<model reply>"}``, parsed by the
environment's own ``parse_action``. The native action's schema is read from a Gymnasium-style
``action_space`` when the environment has one (duck-typed: no gymnasium import here).
"""

from __future__ import annotations

import math
from typing import Any

TEXT = "text"
NATIVE = "native"

_METADATA = {
    "additionalProperties": True,
    "description": "Additional metadata for the action",
    "title": "Metadata",
    "type": "object",
}


def _names(space: Any) -> set[str]:
    return {cls.__name__ for cls in type(space).__mro__}


def _number(low: Any, high: Any, integer: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer" if integer else "number"}
    lo, hi = float(low), float(high)
    if math.isfinite(lo):
        schema["minimum"] = int(lo) if integer else lo
    if math.isfinite(hi):
        schema["maximum"] = int(hi) if integer else hi
    return schema


def _nested(shape: tuple[int, ...], item: dict[str, Any]) -> dict[str, Any]:
    schema = item
    for size in reversed(shape):
        schema = {"type": "array", "items": schema, "minItems": int(size), "maxItems": int(size)}
    return schema


MAX_BOUNDED_ELEMENTS = 1024
"""A Box with bounds that differ per element is described element by element up to this size (bigger: unbounded)."""


def _box(low: Any, high: Any, integer: bool) -> dict[str, Any]:
    """A Box whose bounds differ per element: ``prefixItems`` give each element (or row) its own bounds."""
    if low.size > MAX_BOUNDED_ELEMENTS:
        return _nested(tuple(low.shape), {"type": "integer" if integer else "number"})
    if low.ndim == 0:
        return _number(low, high, integer)
    parts = [_box(low[i], high[i], integer) for i in range(low.shape[0])]
    return {"type": "array", "prefixItems": parts, "minItems": len(parts), "maxItems": len(parts)}


def _uniform(values: Any) -> Any:
    # Box bounds are arrays; one schema bound fits them only when every element agrees.
    flat = values.reshape(-1) if hasattr(values, "reshape") else [values]
    first = flat[0] if len(flat) else 0
    return first if all(v == first for v in flat) else None


def space_schema(space: Any) -> dict[str, Any]:
    """The JSON schema of one value of a Gymnasium-style space, or ``{}`` when it is not one we know."""
    names = _names(space)
    try:
        if "Discrete" in names:
            start, n = int(space.start), int(space.n)
            return {"type": "integer", "minimum": start, "maximum": start + n - 1}
        if "Box" in names:
            integer = getattr(space.dtype, "kind", "f") in "iub"
            low, high = _uniform(space.low), _uniform(space.high)
            if low is not None and high is not None:
                return _nested(tuple(space.shape), _number(low, high, integer))
            return _box(space.low, space.high, integer)
        if "MultiBinary" in names:
            return _nested(tuple(space.shape), {"type": "integer", "minimum": 0, "maximum": 1})
        if "MultiDiscrete" in names:
            nvec = space.nvec
            high = _uniform(nvec)
            item = {"type": "integer", "minimum": 0} | ({"maximum": int(high) - 1} if high is not None else {})
            return _nested(tuple(nvec.shape), item)
        if "Text" in names:
            return {"type": "string", "minLength": int(space.min_length), "maxLength": int(space.max_length)}
        if "Tuple" in names:
            parts = [space_schema(sub) for sub in space.spaces]
            return {"type": "array", "prefixItems": parts, "minItems": len(parts), "maxItems": len(parts)}
        if "Dict" in names:
            props = {key: space_schema(sub) for key, sub in space.spaces.items()}
            return {
                "type": "object",
                "properties": props,
                "required": list(props),
                "additionalProperties": False,
            }
    except (AttributeError, TypeError, ValueError, OverflowError):  # a look-alike shaped otherwise: say nothing
        return {}
    return {}


def action_schema(kind: str, parses_text: bool, native: dict[str, Any], about: str, title: str) -> dict[str, Any]:
    """The action model's schema: ``message`` for text envs, ``action`` (or ``message``) otherwise.

    An environment that takes either form gets the layout pydantic writes for a union of two models
    (``anyOf`` of whole models in ``$defs``, the native one first), beside the top-level ``properties``:
    each alternative is an action on its own, so a client that builds from the first one it meets
    (as schema-driven generators do) sends a valid action, and ``additionalProperties: false`` in each
    keeps them exclusive (the server refuses both at once).
    """
    message = {
        "description": "The answer or model reply, as text" if kind == TEXT else "A model reply, parsed by the env",
        "title": "Message",
        "type": "string",
    }
    if kind == TEXT:
        return _model(f"{title}Action", {"message": message})
    action = {"description": about or "The native action, as JSON", "title": "Action", **native}
    if not parses_text:
        return _model(f"{title}Action", {"action": action})
    native_model, text_model = f"{title}NativeAction", f"{title}MessageAction"
    return {
        "$defs": {
            native_model: _model(native_model, {"action": action}),
            text_model: _model(text_model, {"message": message}),
        },
        "additionalProperties": False,
        "anyOf": [{"$ref": f"#/$defs/{native_model}"}, {"$ref": f"#/$defs/{text_model}"}],
        "properties": {"metadata": _METADATA, "action": action, "message": message},
        "title": f"{title}Action",
        "type": "object",
    }


def _model(title: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One pydantic-style action model: OpenEnv's ``metadata`` and `fields`, all of them required."""
    return {
        "additionalProperties": False,
        "properties": {"metadata": _METADATA, **fields},
        "required": list(fields),
        "title": title,
        "type": "object",
    }


def observation_schema(about: str, title: str) -> dict[str, Any]:
    """The observation model's schema: OpenEnv's base fields plus what Nenyax adds."""
    return {
        "additionalProperties": False,
        "properties": {
            "done": {
                "default": False,
                "description": "Whether the episode has terminated",
                "title": "Done",
                "type": "boolean",
            },
            "reward": {
                "anyOf": [{"type": "boolean"}, {"type": "integer"}, {"type": "number"}, {"type": "null"}],
                "default": None,
                "description": "Reward for the last action; on the final step, the episode's judgment score",
                "title": "Reward",
            },
            "metadata": {
                "additionalProperties": True,
                "description": "Step facts; the final step adds `status` and `judgment` (score, passed, components...)",
                "title": "Metadata",
                "type": "object",
            },
            "observation": {"description": about or "The native observation, as JSON", "title": "Observation"},
            "messages": {
                "description": "Chat messages showing this observation to a model (the text codec), if any",
                "items": {"type": "object"},
                "title": "Messages",
                "type": "array",
            },
            "task_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Task Id"},
            "step": {"description": "Actions taken so far in the episode", "title": "Step", "type": "integer"},
        },
        "title": f"{title}Observation",
        "type": "object",
    }


def state_schema(title: str) -> dict[str, Any]:
    """The state model's schema (extra fields allowed, as OpenEnv's State)."""
    optional_str = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    return {
        "additionalProperties": True,
        "properties": {
            "episode_id": {
                **optional_str,
                "description": "Unique identifier for the current episode",
                "title": "Episode Id",
            },
            "step_count": {
                "default": 0,
                "description": "Number of steps taken in the current episode",
                "minimum": 0,
                "title": "Step Count",
                "type": "integer",
            },
            "task_id": {**optional_str, "title": "Task Id"},
            "seed": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "Seed"},
            "done": {"default": False, "title": "Done", "type": "boolean"},
            "status": {
                **optional_str,
                "description": "How the episode ended (ok, policy_error, env_error...)",
                "title": "Status",
            },
            "reference": {
                "anyOf": [{"type": "object"}, {"type": "null"}],
                "default": None,
                "description": "The oracle's action for this observation (only from `serve(..., reference=True)`)",
                "title": "Reference",
            },
        },
        "title": f"{title}State",
        "type": "object",
    }
