"""The server's action schema (a pydantic JSON Schema from ``/schema``): validate, describe, instantiate.

OpenEnv derives ``/schema`` from the environment's pydantic models, so the schemas are the pydantic
subset of JSON Schema: objects with ``properties``/``required``, ``$ref`` into ``$defs``, ``anyOf``
for optionals and unions, ``enum``/``const`` for literals, numeric bounds, string lengths, arrays.
Hand-written servers (and ``nenyax serve``) add ``oneOf``/``anyOf`` of ``required`` sets beside the
top-level ``properties``. Validation itself is `jsonschema`'s (the whole standard); the null and random
actions come from `instances` (any of those shapes) and are validated like any other action, so a
schema they cannot satisfy leaves those policies unclaimed, with the reason in one sentence.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import jsonschema

from nenyax.adapters.openenv.instances import Builder, Unbuildable, bounds
from nenyax.core import PolicyFailure

BOOKKEEPING = frozenset({"metadata"})
"""Action fields every OpenEnv action inherits (``Action.metadata``): accepted, never asked of a policy."""


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
        if not props:  # a union of whole models (pydantic's `A | B`): the fields of each, in order
            for option in (o for key in ("anyOf", "oneOf") for o in top.get(key, ()) or ()):
                more = self.resolve(option).get("properties", {})
                props = {**props, **{k: v for k, v in more.items() if k not in props}}  # the first model's win
        self.fields: dict[str, dict[str, Any]] = {k: v for k, v in props.items() if k not in BOOKKEEPING}
        """The properties a policy sets (bookkeeping fields left out)."""
        self.required: tuple[str, ...] = tuple(k for k in top.get("required", ()) if k not in BOOKKEEPING)
        self.choices: tuple[tuple[str, ...], ...] = _required_sets(top, self.resolve)
        """Alternative sets of required fields (``oneOf``/``anyOf`` of ``required``), when the schema has them."""
        self._builder = Builder(self._validator, BOOKKEEPING)

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
            chosen = "one of the alternatives" if self._chosen(name) else "optional"
            need = "required" if name in self.required else chosen
            about = self.describe_value(prop)
            text = str(self.resolve(prop).get("description", "")).strip()
            parts.append(f'"{name}" ({about}, {need})' + (f": {text}" if text else ""))
        text = "a JSON object with " + "; ".join(parts)
        if self.choices:
            alternatives = " or ".join(" and ".join(f'"{k}"' for k in fields) for fields in self.choices)
            key = "oneOf" if "oneOf" in self.resolve(self.schema) else "anyOf"
            text += f" (send {alternatives}, as the schema's {key} asks)"
        return text

    def _chosen(self, name: str) -> bool:
        return any(name in fields for fields in self.choices)

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
            low, high = bounds(schema, kind == "integer")
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
        """The plainest valid action: defaults, else lowest values and first options; `Unbuildable` says why not."""
        return self._object(self._builder.null_value())

    def random_instance(self, rng: random.Random) -> dict[str, Any]:
        """A random action: each field (optional ones too, where the schema allows) drawn within its bounds."""
        return self._object(self._builder.random_value(rng))

    @staticmethod
    def _object(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            msg = f"it describes {type(value).__name__} values, and an OpenEnv action is a JSON object"
            raise Unbuildable(msg)
        return value


def _required_sets(top: dict[str, Any], resolve: Callable[[Any], dict[str, Any]]) -> tuple[tuple[str, ...], ...]:
    """The field sets of an ``anyOf``/``oneOf`` whose alternatives each require some of the action's fields."""
    for key in ("oneOf", "anyOf"):
        options = top.get(key)
        if not isinstance(options, list) or not options:
            continue
        sets = []
        for option in options:
            option = resolve(option)
            needed = tuple(k for k in option.get("required", ()) if k not in BOOKKEEPING)
            if not needed:
                return ()
            sets.append(needed)
        return tuple(sets)
    return ()


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _clip(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
