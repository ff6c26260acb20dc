"""Import what a ``verifiers:`` URI names and decide which verifiers API runs it.

An environment id is a module verifiers' own loaders would import: a legacy one exposes
``load_environment(**args)`` returning an `Environment`; a v1 taskset exports its `Taskset` subclass in
``__all__``. ``<module>:<attr>`` names local code: an `Environment`, a `Taskset` class or instance, or a
factory returning one of them. The API is read off the object (its classes' modules), so nothing of
verifiers is imported here that the object did not import already.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from typing import Any, Literal

import attrs

from nenyax.adapters.verifiers.library import Library, need_legacy, need_v1
from nenyax.adapters.verifiers.options import VerifiersSpec
from nenyax.adapters.verifiers.pairing import paired_env
from nenyax.core import BadURIError, UsageError
from nenyax.core.errors import did_you_mean
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.imports import broken_import, module_absent

_LEGACY_ENV = {"verifiers.legacy.envs.environment", "verifiers.envs.environment"}
_V1_TASKSET = {"verifiers.v1.taskset"}
_SYNTHETIC = "nenyax_verifiers_taskset_"


@attrs.frozen
class Resolved:
    """What the URI names, ready for one of the two environment classes."""

    api: Literal["legacy", "v1"]
    env: Any = None
    """legacy: the verifiers `Environment`."""
    taskset_id: str = ""
    """v1: an id verifiers' `load_taskset` resolves (a module exporting the `Taskset` subclass)."""
    taskset: Any = None
    """v1: a ready `Taskset` instance the URI named, used in place of one built from the id."""
    config: dict[str, Any] = attrs.field(factory=dict)
    """v1: fields of the taskset's config (the URI's arguments, unless a factory took them)."""


def _derives(obj_type: type, modules: set[str], name: str) -> bool:
    return any(c.__name__ == name and c.__module__ in modules for c in getattr(obj_type, "__mro__", ()))


def is_legacy_environment(obj: Any) -> bool:
    """A legacy verifiers `Environment` instance (SingleTurnEnv, MultiTurnEnv, ToolEnv...)."""
    return _derives(type(obj), _LEGACY_ENV, "Environment")


def is_taskset_class(obj: Any) -> bool:
    """A v1 `Taskset` subclass."""
    return isinstance(obj, type) and _derives(obj, _V1_TASKSET, "Taskset") and obj.__module__ not in _V1_TASKSET


def is_taskset(obj: Any) -> bool:
    """A v1 `Taskset` instance."""
    return _derives(type(obj), _V1_TASKSET, "Taskset")


def _bundled(spec: VerifiersSpec, library: Library) -> str:
    """The module a plain id names: verifiers' own bundled taskset first (``verifiers:textarena`` is
    `verifiers.v1.tasksets.textarena`, as verifiers' loader resolves it), else the module itself."""
    if spec.attr is None and library.v1:
        bundled = f"verifiers.v1.tasksets.{spec.module.lower()}"
        try:
            if importlib.util.find_spec(bundled) is not None:
                return bundled
        except Exception:  # noqa: BLE001 - no bundled taskset of that name (or none importable): the plain id
            pass
    return spec.module


def _import(spec: VerifiersSpec, library: Library) -> types.ModuleType:
    name = _bundled(spec, library)
    try:
        found = importlib.util.find_spec(name)
    except ValueError:
        found = None
    except ImportError as exc:  # finding a.b imports a: absent, or installed and broken (then say why)
        if not module_absent(exc, name):
            raise broken_import(repr(name), exc) from exc
        found = None
    if found is None:
        msg = (
            f"No installed module {name!r} provides a verifiers environment: install it (pip install, "
            "or `prime env install <owner>/<id>`), or name local code as 'verifiers:<module>:<attribute>'."
        )
        raise BadURIError(msg)
    try:
        return importlib.import_module(name)
    except AttributeError as exc:
        if "verifiers" in str(exc) and not library.legacy:
            need_legacy(library, f"The module {name!r}")
        raise UsageError(f"Importing {name!r} failed: {describe(exc)}.") from exc
    except Exception as exc:
        raise UsageError(f"Importing {name!r} failed: {describe(exc)}.") from exc


def _exported_taskset(module: types.ModuleType) -> type | None:
    names = getattr(module, "__all__", None) or ()
    found = [obj for name in names if is_taskset_class(obj := getattr(module, name, None))]
    return found[0] if len(found) == 1 else None


def _synthetic_id(cls: type, spec: VerifiersSpec) -> str:
    """A module id verifiers' loader finds `cls` under: it exports the `Taskset` subclass and, when the
    taskset brings one, the `Env` subclass that plays it (what verifiers' loader pairs by id)."""
    env = paired_env(cls, spec.module)
    exported = [cls] if env is None else [cls, env]
    key = "_".join(f"{c.__module__}_{c.__qualname__}" for c in exported)
    name = re.sub(r"\W", "_", f"{_SYNTHETIC}{key}").lower()
    module = sys.modules.get(name)
    if module is None or [getattr(module, c.__name__, None) for c in exported] != exported:
        module = types.ModuleType(name, f"{cls.__module__}:{cls.__qualname__}, as a verifiers taskset id.")
        for c in exported:
            setattr(module, c.__name__, c)
        module.__all__ = [c.__name__ for c in exported]  # type: ignore[attr-defined]
        sys.modules[name] = module
    return name


def _classify(obj: Any, spec: VerifiersSpec, library: Library, *, called: bool) -> Resolved:
    what = f"{spec.module}:{spec.attr}" if spec.attr else spec.module
    if is_legacy_environment(obj):
        need_legacy(library, repr(what))
        if spec.args and not called:
            msg = f"{what} is a ready Environment; arguments ({', '.join(sorted(spec.args))}) need a factory."
            raise BadURIError(msg)
        return Resolved(api="legacy", env=obj)
    if is_taskset_class(obj) or is_taskset(obj):
        need_v1(library, repr(what))
    if is_taskset_class(obj):
        return Resolved(api="v1", taskset_id=_synthetic_id(obj, spec), config={} if called else dict(spec.args))
    if is_taskset(obj):
        if spec.args and not called:
            msg = f"{what} is a ready Taskset; arguments ({', '.join(sorted(spec.args))}) need its class or a factory."
            raise BadURIError(msg)
        return Resolved(api="v1", taskset_id=_synthetic_id(type(obj), spec), taskset=obj)
    if callable(obj) and not called and not isinstance(obj, type):
        try:
            made = obj(**spec.args)
        except TypeError as exc:
            raise BadURIError(f"Calling {what} with {spec.args or 'no arguments'} failed: {exc}.") from exc
        except UsageError:
            raise
        except Exception as exc:
            raise UsageError(f"Building the environment {what} failed: {describe(exc)}.") from exc
        return _classify(made, spec, library, called=True)
    msg = (
        f"{what} is {type(obj).__name__}, not a verifiers Environment, Taskset or a factory of one "
        "(e.g. load_environment)."
    )
    raise BadURIError(msg)


def resolve(spec: VerifiersSpec, library: Library) -> Resolved:
    """Import `spec`'s module and turn what it names into a `Resolved` environment or taskset."""
    module = _import(spec, library)
    if spec.attr is not None:
        obj: Any = module
        for part in spec.attr.split("."):
            if not hasattr(obj, part):
                public = [n for n in dir(obj) if not n.startswith("_")]
                msg = f"{spec.module} has no attribute {spec.attr!r}.{did_you_mean(part, public, 'attribute')}"
                raise BadURIError(msg)
            obj = getattr(obj, part)
        return _classify(obj, spec, library, called=False)
    factory = getattr(module, "load_environment", None)
    if callable(factory):
        resolved = _classify(factory, spec, library, called=False)
        if resolved.api == "legacy":
            # What verifiers' own load_environment(env_id) records on the environment.
            resolved.env.env_id = resolved.env.env_id or spec.module
            resolved.env.env_args = resolved.env.env_args or dict(spec.args)
        return resolved
    exported = _exported_taskset(module)
    if exported is not None:
        need_v1(library, repr(module.__name__))
        return Resolved(api="v1", taskset_id=module.__name__, config=dict(spec.args))
    msg = (
        f"The module {spec.module!r} is no verifiers environment: it has no load_environment() and exports "
        "no single Taskset subclass in __all__."
    )
    raise BadURIError(msg)
