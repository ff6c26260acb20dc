"""The server's action schema (a pydantic JSON Schema from ``/schema``): validate, describe, instantiate.

OpenEnv derives ``/schema`` from the environment's pydantic models, so the schemas are the pydantic
subset of JSON Schema: objects with ``properties``/``required``, ``$ref`` into ``$defs``, ``anyOf``
for optionals and unions, ``enum``/``const`` for literals, numeric bounds, string lengths, arrays.
Validation itself is `jsonschema`'s (the whole standard); the null and random actions built here
cover that subset and are validated like any other action, so a schema they cannot satisfy simply
leaves those policies unclaimed.
"""

from __future__ import annotations

import json
import math
import random
import string
from typing import Any

import jsonschema

from nenyax.core import PolicyFailure

BOOKKEEPING = frozenset({"metadata"})
"""Action fields every OpenEnv action inherits (``Action.metadata``): accepted, never asked of a policy."""
_UNBOUNDED = 100
"""Half-width of the range a random number is drawn from when the schema sets no bounds."""


class ActionSchema:
    """An action schema with its validator, its fields and the instances the built-in policies play."""

    def __init__(self, schema: dict[str, Any]) -> None:
        """Check `schema` is a usable JSON Schema (a `ValueError` with the reason otherwise)."""
        if not isinstance(schema, dict):
            msg = f"the action schema is {type(schema).__name__}, not a JSON object"
            raise ValueError(msg)
        try:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            msg = f"the action schema is not valid JSON Schema ({exc.message})"
            raise ValueError(msg) from exc
        self.schema = schema
        self._validator = cls(schema)
        top = self.resolve(schema)
        props = top.get("properties", {}) if top.get("type", "object") == "object" else {}
        self.fields: dict[str, dict[str, Any]] = {k: v for k, v in props.items() if k not in BOOKKEEPING}
        """The properties a policy sets (bookkeeping fields left out)."""
        self.required: tuple[str, ...] = tuple(k for k in top.get("required", ()) if k not in BOOKKEEPING)

    # ---- validation

    def problems(self, action: Any) -> list[str]:
        """Why `action` does not fit the schema, one short phrase per problem (empty when it fits)."""
        found = []
        for error in sorted(self._validator.iter_errors(action), key=lambda e: list(map(str, e.path))):
            where = ".".join(str(p) for p in error.path)
            found.append(f"{where}: {error.message}" if where else error.message)
        return found

    def check(self, action: Any) -> dict[str, Any]:
        """`action` when it fits the schema; `PolicyFailure` naming what is wrong otherwise."""
        problems = self.problems(action)
        if problems:
            shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
            msg = f"The action {_clip(action)} does not fit the server's action schema: {shown}."
            raise PolicyFailure(msg)
        return action  # type: ignore[no-any-return]

    def wrap(self, value: Any) -> Any:
        """A bare value for an action of exactly one field becomes ``{field: value}``; anything else is kept."""
        if not isinstance(value, dict) and len(self.fields) == 1:
            return {next(iter(self.fields)): value}
        return value

    # ---- words

    def describe(self) -> str:
        """The action's fields in words a model can follow."""
        if not self.fields:
            return "a JSON object (the schema lists no fields)"
        parts = []
        for name, prop in self.fields.items():
            need = "required" if name in self.required else "optional"
            about = self.describe_value(prop)
            text = str(self.resolve(prop).get("description", "")).strip()
            parts.append(f'"{name}" ({about}, {need})' + (f": {text}" if text else ""))
        return "a JSON object with " + "; ".join(parts)

    def describe_value(self, schema: dict[str, Any]) -> str:
        """One value's type and bounds, e.g. ``integer from 1 to 100``."""
        schema = self.resolve(schema)
        if "const" in schema:
            return f"exactly {json.dumps(schema['const'])}"
        if "enum" in schema:
            return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            return " or ".join(self.describe_value(o) for o in options)
        kind = schema.get("type")
        if isinstance(kind, list):
            return " or ".join(str(k) for k in kind)
        if kind in ("integer", "number"):
            low, high = _bounds(schema, kind == "integer")
            if low is not None and high is not None:
                return f"{kind} from {_num(low)} to {_num(high)}"
            if low is not None:
                return f"{kind} of at least {_num(low)}"
            if high is not None:
                return f"{kind} of at most {_num(high)}"
            return str(kind)
        if kind == "array":
            return f"array of {self.describe_value(schema.get('items', {}))}"
        if kind == "object" and "properties" in schema:
            return "object with " + ", ".join(f'"{k}"' for k in schema["properties"])
        return str(kind or "any JSON value")

    # ---- instances for the built-in policies

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Follow a local ``$ref`` (``#/$defs/Name``) to the schema it names."""
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 32:
            ref = str(schema["$ref"])
            node: Any = self.schema
            for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
                node = node.get(part, {}) if isinstance(node, dict) else {}
            schema, seen = (node if isinstance(node, dict) else {}), seen + 1
        return schema if isinstance(schema, dict) else {}

    def null_instance(self) -> dict[str, Any]:
        """The plainest valid action: defaults, else the lowest value of each required field."""
        return {k: self._null(self.fields[k]) for k in self.required if k in self.fields}

    def random_instance(self, rng: random.Random) -> dict[str, Any]:
        """A random action: every field (optional ones too), each drawn within its bounds."""
        return {k: self._random(prop, rng) for k, prop in self.fields.items()}

    def _null(self, schema: dict[str, Any]) -> Any:
        schema = self.resolve(schema)
        if "default" in schema:
            return schema["default"]
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            nulls = [o for o in options if self.resolve(o).get("type") == "null"]
            return None if nulls else self._null(options[0])
        kind = schema.get("type")
        kind = kind[0] if isinstance(kind, list) and kind else kind
        if kind in ("integer", "number"):
            low, high = _bounds(schema, kind == "integer")
            value = low if low is not None else (min(0, high) if high is not None else 0)
            return int(value) if kind == "integer" else float(value)
        if kind == "string":
            return "a" * int(schema.get("minLength", 0))
        if kind == "boolean":
            return False
        if kind == "array":
            return [self._null(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
        if kind == "object":
            props = schema.get("properties", {})
            return {k: self._null(props.get(k, {})) for k in schema.get("required", ())}
        return None

    def _random(self, schema: dict[str, Any], rng: random.Random) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return rng.choice(schema["enum"])
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            return self._random(rng.choice(options), rng)
        kind = schema.get("type")
        kind = rng.choice(kind) if isinstance(kind, list) and kind else kind
        if kind in ("integer", "number"):
            low, high = _bounds(schema, kind == "integer")
            low = low if low is not None else (high - 2 * _UNBOUNDED if high is not None else -_UNBOUNDED)
            high = high if high is not None else low + 2 * _UNBOUNDED
            return rng.randint(math.ceil(low), math.floor(high)) if kind == "integer" else rng.uniform(low, high)
        if kind == "string":
            low = int(schema.get("minLength", 0))
            high = max(low, min(int(schema.get("maxLength", low + 12)), low + 12))
            return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(max(low, 1), max(high, 1))))
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "array":
            low = int(schema.get("minItems", 0))
            high = max(low, min(int(schema.get("maxItems", low + 3)), low + 3))
            return [self._random(schema.get("items", {}), rng) for _ in range(rng.randint(low, high))]
        if kind == "object":
            props = schema.get("properties", {})
            return {k: self._random(props.get(k, {}), rng) for k in schema.get("required", ())}
        if kind == "null":
            return None
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def _bounds(schema: dict[str, Any], integer: bool) -> tuple[float | None, float | None]:
    """Inclusive bounds from minimum/maximum and their exclusive forms."""
    step = 1 if integer else 1e-9
    low = schema.get("minimum")
    if "exclusiveMinimum" in schema and isinstance(schema["exclusiveMinimum"], int | float):
        low = schema["exclusiveMinimum"] + step
    high = schema.get("maximum")
    if "exclusiveMaximum" in schema and isinstance(schema["exclusiveMaximum"], int | float):
        high = schema["exclusiveMaximum"] - step
    if integer:
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
    return low, high


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _clip(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
