"""The interface of each plugin kind, resolved from the kinds table (`nenyax.core.kinds.KINDS`).

One pattern for every kind: an instance implements its kind's interface, declares its optional
capabilities in a ``capabilities`` attribute (an attrs object of booleans, e.g. `JudgeCapabilities`),
and implements the protocol the table names for each capability it declares.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core.errors import UsageError
from nenyax.core.kinds import KINDS

if TYPE_CHECKING:
    from nenyax.core.plugins.registry import Registry


def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def interface(kind: str) -> Any:
    """The protocol a `kind` plugin's factory returns (imported on demand)."""
    return _resolve(KINDS[kind].interface)


def capability_interface(kind: str, capability: str) -> Any:
    """The protocol an instance of `kind` declaring `capability` also implements."""
    return _resolve(KINDS[kind].capabilities[capability])


def declared(obj: object) -> frozenset[str]:
    """The capabilities `obj` declares: the true fields of its ``capabilities`` attrs object, or the
    names in a collection of strings; none when it has no ``capabilities``."""
    caps = getattr(obj, "capabilities", None)
    if caps is None:
        return frozenset()
    if attrs.has(type(caps)):
        return frozenset(f.name for f in attrs.fields(type(caps)) if getattr(caps, f.name) is True)
    if isinstance(caps, Collection) and not isinstance(caps, str | Mapping):
        return frozenset(str(c) for c in caps)
    return frozenset()


def missing(kind: str, obj: object) -> str | None:
    """Why `obj` is not a `kind` plugin instance (the end of a sentence), or None when it is one."""
    if not isinstance(obj, interface(kind)):
        return f"is {type(obj).__name__}, which lacks the {kind} interface ({KINDS[kind].interface})"
    table = KINDS[kind].capabilities
    if KINDS[kind].needs_a_capability and not declared(obj) & set(table):
        return f"declares none of the {kind} capabilities ({', '.join(table)})"
    for capability in sorted(declared(obj) & set(table)):
        if not isinstance(obj, capability_interface(kind, capability)):
            return f"declares {capability!r} but lacks its methods ({table[capability]})"
    return None


def implements(kind: str, obj: object) -> bool:
    """True when `obj` has `kind`'s interface and the methods of every capability it declares."""
    return missing(kind, obj) is None


def create(
    registry: Registry, kind: str, name: str, options: Mapping[str, Any] | None = None, *, needs: Collection[str] = ()
) -> Any:
    """The `kind` plugin `name` built as ``factory(**options)``, checked against its interface and the
    capabilities the caller `needs`; every mistake is one `UsageError` sentence."""
    instance = registry.create(kind, name, **dict(options or {}))
    problem = missing(kind, instance)
    if problem:
        msg = f"The {kind} plugin {name!r} {problem}."
        raise UsageError(msg)
    lacking = sorted(set(needs) - declared(instance))
    if lacking:
        msg = f"The {kind} {name!r} cannot be used here: it does not declare {', '.join(map(repr, lacking))}."
        raise UsageError(msg)
    return instance
