"""Build a value that fits a JSON schema: the null action (the plainest) and random actions.

A server's ``/schema`` may use any JSON Schema construct: pydantic's subset (``$ref``, ``anyOf``
for optionals and unions, ``enum``/``const``, bounds, arrays) and what hand-written schemas add
(``oneOf``/``anyOf`` of ``required`` sets beside top-level ``properties``, ``allOf``, ``prefixItems``,
``multipleOf``, type lists). An alternative (``anyOf``/``oneOf``) is built merged with the schema
around it and kept only when the whole node validates, so "exactly one of" holds; the first
alternative that can be built wins (the one a server lists first is its primary form). What cannot
be built (a ``pattern``, an empty range, ``false``) raises `Unbuildable` with the reason in words.
"""

from __future__ import annotations

import math
import random
import string
from typing import Any

import jsonschema

_UNBOUNDED = 100
"""Half-width of the range a random number is drawn from when the schema sets no bounds."""
_MAX_DEPTH = 32
"""Deeper than this a schema is taken as recursive without a base case."""
_COMBINATORS = ("anyOf", "oneOf")


class Unbuildable(ValueError):
    """The schema admits no value this builder can make; the message says which part, in words."""


class Builder:
    """Null and random values of one schema (its local ``$ref`` targets resolved against it)."""

    def __init__(self, validator: jsonschema.protocols.Validator, skip: frozenset[str] = frozenset()) -> None:
        """`validator` holds the root schema; `skip` names top-level optional fields never filled in."""
        self.validator = validator
        self.root = validator.schema
        self.skip = skip

    def null_value(self) -> Any:
        """The plainest value of the root schema: defaults, else lowest values and first options."""
        return self._value(self.root, None, 0, top=True)

    def random_value(self, rng: random.Random) -> Any:
        """A value of the root schema drawn from `rng`, within every bound the schema sets."""
        return self._value(self.root, rng, 0, top=True)

    # ---- schema plumbing

    def resolve(self, schema: Any) -> Any:
        """Follow local ``$ref`` pointers (``#/$defs/Name``) to the schema they name."""
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < _MAX_DEPTH:
            ref = str(schema["$ref"])
            if not ref.startswith("#"):
                raise Unbuildable(f"it refers to {ref!r}, outside the schema")
            node: Any = self.root
            for part in ref.removeprefix("#").strip("/").split("/") if ref.strip("#/") else ():
                node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
            if node is None:
                raise Unbuildable(f"its reference {ref!r} names nothing")
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema, seen = (_merge(node, rest) if rest and isinstance(node, dict) else node), seen + 1
        return schema

    def fits(self, schema: Any, value: Any) -> bool:
        """Whether `value` fits `schema`, a node of the root schema (its references resolve against the root)."""
        return bool(self.validator.evolve(schema=schema).is_valid(value))

    # ---- building

    def _value(
        self, schema: Any, rng: random.Random | None, depth: int, *, top: bool = False, lean: bool = False
    ) -> Any:
        """A value of `schema`; a `lean` object holds its required fields only, a `top` one never the skipped ones."""
        if depth > _MAX_DEPTH:
            raise Unbuildable("it nests deeper than 32 levels")
        schema = self.resolve(schema)
        if schema is True or schema == {}:
            return None if rng is None else _word(rng)
        if schema is False:
            raise Unbuildable("a part of it admits no value (false)")
        if not isinstance(schema, dict):
            raise Unbuildable(f"a part of it is {type(schema).__name__}, not a schema")
        for key in ("allOf", *_COMBINATORS):
            if isinstance(schema.get(key), list):
                return self._alternatives(schema, key, rng, depth, top, lean)
        if rng is None and "default" in schema and self.fits(schema, schema["default"]):
            return schema["default"]
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list):
            options = [v for v in schema["enum"] if self.fits(schema, v)]
            if not options:
                raise Unbuildable(f"no value of its enum {_short(schema['enum'])} fits the rest of its schema")
            return options[0] if rng is None else rng.choice(options)
        kind = _kind(schema)
        if isinstance(kind, list):
            return self._typed_union(schema, kind, rng, depth, top, lean)
        value = self._typed(schema, kind, rng, depth, top, lean)
        if not self.fits(schema, value):
            raise Unbuildable(f"{_short(value)} was the best try and does not fit {_short(schema)}")
        return value

    def _alternatives(
        self, schema: dict[str, Any], key: str, rng: random.Random | None, depth: int, top: bool, lean: bool
    ) -> Any:
        """`allOf` merged in; `anyOf`/`oneOf`: the first alternative that, merged with its context, fits the node."""
        parts = schema[key]
        rest = {k: v for k, v in schema.items() if k != key}
        if key == "allOf":
            merged = rest
            for part in parts:
                merged = _merge(merged, self.resolve(part))
            return self._value(merged, rng, depth + 1, top=top, lean=lean)
        if rng is None and "default" in schema and self.fits(schema, schema["default"]):
            return schema["default"]
        if rng is None and any(self.resolve(p) == {"type": "null"} for p in parts) and self.fits(schema, None):
            return None  # an optional value's plainest form (pydantic writes `X | None` so)
        reasons = []
        for part in parts:
            branch = _merge(rest, self.resolve(part))
            # A random object tries its optional fields too, then only its required ones (for "exactly one of").
            for thin in (lean, True) if rng is not None and not lean else (True,):
                try:
                    value = self._value(branch, rng, depth + 1, top=top, lean=thin)
                except Unbuildable as exc:
                    reasons.append(str(exc))
                    break
                if self.fits(schema, value):
                    return value
                reasons.append(f"{_short(value)} does not fit the whole {key}")
        first = f" ({reasons[0]})" if reasons else ""
        raise Unbuildable(f"none of its {len(parts)} {key} alternatives could be built{first}")

    def _typed_union(
        self, schema: dict[str, Any], kinds: list[Any], rng: random.Random | None, depth: int, top: bool, lean: bool
    ) -> Any:
        order = list(kinds) if rng is None else rng.sample(list(kinds), len(kinds))
        reason = "its type list is empty"
        for kind in order:
            try:
                value = self._typed(schema, kind, rng, depth, top, lean)
            except Unbuildable as exc:
                reason = str(exc)
                continue
            if self.fits(schema, value):
                return value
            reason = f"{_short(value)} does not fit {_short(schema)}"
        raise Unbuildable(reason)

    def _typed(
        self, schema: dict[str, Any], kind: Any, rng: random.Random | None, depth: int, top: bool, lean: bool
    ) -> Any:
        if kind in ("integer", "number"):
            return _number(schema, kind == "integer", rng)
        if kind == "string":
            return self._string(schema, rng)
        if kind == "boolean":
            return False if rng is None else rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            return self._array(schema, rng, depth)
        if kind == "object":
            return self._object(schema, rng, depth, top, lean)
        if kind is None:
            return None if rng is None else _word(rng)
        raise Unbuildable(f"its type {kind!r} is not a JSON type")

    def _string(self, schema: dict[str, Any], rng: random.Random | None) -> str:
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", low + 12))
        if high < low:
            raise Unbuildable(f"a string must be at least {low} and at most {high} characters long")
        if "pattern" in schema:
            raise Unbuildable(f"a string must match the pattern {schema['pattern']!r}, which no value is drawn for")
        if rng is None:
            return "a" * low
        high = min(high, low + 12)
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(max(low, min(1, high)), high)))

    def _array(self, schema: dict[str, Any], rng: random.Random | None, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 7's tuple form
            prefix, items = items, schema.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, len(prefix)) + (0 if rng is None else 3)))
        if high < low:
            raise Unbuildable(f"an array must hold at least {low} and at most {high} items")
        if items is False:
            high = min(high, len(prefix))
        count = max(low, len(prefix)) if rng is None else rng.randint(max(low, min(len(prefix), high)), high)
        if count < low:
            raise Unbuildable(f"an array must hold at least {low} items, but only {len(prefix)} are allowed")
        return [self._value(prefix[i] if i < len(prefix) else items, rng, depth + 1) for i in range(count)]

    def _object(
        self, schema: dict[str, Any], rng: random.Random | None, depth: int, top: bool, lean: bool
    ) -> dict[str, Any]:
        props = schema.get("properties", {})
        props = props if isinstance(props, dict) else {}
        required = [k for k in schema.get("required", ()) if isinstance(k, str)]
        extra = schema.get("additionalProperties", True)
        names = list(required)
        if rng is not None and not lean:  # a random object fills its optional fields too (the top's bookkeeping aside)
            names += [k for k in props if k not in names and not (top and k in self.skip)]
        wanted = int(schema.get("minProperties", 0))
        names += [k for k in props if k not in names and len(names) < wanted]
        out = {}
        for name in names:
            sub = props.get(name, extra)
            if sub is False:
                raise Unbuildable(f"the field {name!r} is required but not allowed")
            out[name] = self._value(sub, rng, depth + 1)
        return out


def _kind(schema: dict[str, Any]) -> Any:
    """The schema's type, or the one its keywords imply when it names none."""
    if "type" in schema:
        return schema["type"]
    if {"properties", "required", "additionalProperties", "minProperties"} & set(schema):
        return "object"
    if {"items", "prefixItems", "minItems", "maxItems"} & set(schema):
        return "array"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(schema):
        return "number"
    if {"minLength", "maxLength", "pattern"} & set(schema):
        return "string"
    return None


def _merge(base: Any, part: Any) -> Any:
    """`base` and `part` as one schema: properties and required sets joined, bounds narrowed, the rest `part`'s."""
    if not isinstance(base, dict) or not isinstance(part, dict):
        return part if base in (True, {}) else base if part in (True, {}) else part
    out = dict(base)
    for key, value in part.items():
        if key == "properties" and isinstance(out.get(key), dict) and isinstance(value, dict):
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = _merge(props[name], sub) if name in props else sub
            out[key] = props
        elif key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key in ("minimum", "exclusiveMinimum", "minItems", "minLength", "minProperties") and key in out:
            out[key] = max(out[key], value)
        elif key in ("maximum", "exclusiveMaximum", "maxItems", "maxLength", "maxProperties") and key in out:
            out[key] = min(out[key], value)
        else:
            out[key] = value
    return out


def bounds(schema: dict[str, Any], integer: bool) -> tuple[float | None, float | None]:
    """Inclusive bounds from minimum/maximum and their exclusive forms."""
    step = 1 if integer else 1e-9
    low = schema.get("minimum")
    if isinstance(schema.get("exclusiveMinimum"), int | float) and not isinstance(schema["exclusiveMinimum"], bool):
        low = max(low, schema["exclusiveMinimum"] + step) if low is not None else schema["exclusiveMinimum"] + step
    high = schema.get("maximum")
    if isinstance(schema.get("exclusiveMaximum"), int | float) and not isinstance(schema["exclusiveMaximum"], bool):
        high = min(high, schema["exclusiveMaximum"] - step) if high is not None else schema["exclusiveMaximum"] - step
    if integer:
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
    return low, high


def _number(schema: dict[str, Any], integer: bool, rng: random.Random | None) -> int | float:
    low, high = bounds(schema, integer)
    what = "an integer" if integer else "a number"
    if low is not None and high is not None and low > high:
        raise Unbuildable(f"{what} must be at least {low} and at most {high}")
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
        # Count multiples of `step` within the bounds, then pick one of them.
        first = math.ceil(low / step) if low is not None else (math.floor(high / step) if high is not None else 0)
        last = math.floor(high / step) if high is not None else first + 2 * _UNBOUNDED
        if low is None and high is not None:
            first = min(0, last) if rng is None else last - 2 * _UNBOUNDED
        if first > last:
            raise Unbuildable(f"{what} must be a multiple of {step} between {low} and {high}, and none is")
        k = first if rng is None else rng.randint(first, last)
        value = k * step
        return int(value) if integer else float(value)
    if rng is None:
        value = low if low is not None else (min(0, high) if high is not None else 0)
        return int(value) if integer else float(value)
    low = low if low is not None else (high - 2 * _UNBOUNDED if high is not None else -_UNBOUNDED)
    high = high if high is not None else low + 2 * _UNBOUNDED
    return rng.randint(math.ceil(low), math.floor(high)) if integer else rng.uniform(low, high)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
