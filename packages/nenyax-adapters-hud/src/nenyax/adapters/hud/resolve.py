"""Import what a ``hud:`` URI names and collect its task rows and the live environments that serve them.

A module or file holds hud `Task` rows (what calling an ``@env.template`` returns), `Taskset`s of them,
or lists of them; without an attribute every public one is collected, as hud's own
``Taskset.from_module`` does. Each row is served by the `Environment` that minted it (or, for a row
built by hand, the module's environment of the row's ``env`` name), through hud's `LocalRuntime`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import attrs

from nenyax.adapters.hud.options import HudSpec
from nenyax.core import BadURIError, UsageError
from nenyax.core.errors import did_you_mean
from nenyax.core.toolkit.failures import describe
from nenyax.core.toolkit.imports import broken_import, module_absent


@attrs.frozen
class Resolved:
    """The task rows a URI names, by slug, and the environment serving each."""

    tasks: dict[str, Any]
    """hud `Task` rows by slug (hud's own stable row id: the template id plus a hash of its arguments)."""
    envs: dict[str, Any]
    """The `Environment` serving each slug."""
    name: str
    """The taskset's name (the `Taskset`'s, else the attribute's or the module's)."""


def _import_file(spec: HudSpec) -> types.ModuleType:
    path = Path(spec.path or "").expanduser().resolve()
    if not path.is_file() or path.suffix != ".py":
        raise BadURIError(f"{spec.path!r} is no Python file of HUD tasks (looked at {path}).")
    name = f"nenyax_hud_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise BadURIError(f"{spec.path!r} cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # sibling imports resolve, as under hud's LocalRuntime(path)
    try:
        found.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise UsageError(f"Importing {spec.path} failed: {describe(exc)}.") from exc
    finally:
        sys.path.remove(str(path.parent))
    return module


def _import_module(spec: HudSpec) -> types.ModuleType:
    name = spec.module or ""
    try:
        found = importlib.util.find_spec(name)
    except ValueError:
        found = None
    except ImportError as exc:  # finding a.b imports a: absent, or installed and broken (then say why)
        if not module_absent(exc, name or ""):
            raise broken_import(repr(name), exc) from exc
        found = None
    if found is None:
        msg = (
            f"No module {name!r} is importable: install it, put it on sys.path, "
            "or name its file as 'hud:path/to/tasks.py'."
        )
        raise BadURIError(msg)
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise UsageError(f"Importing {name!r} failed: {describe(exc)}.") from exc


def _rows(value: Any) -> list[Any] | None:
    """The task rows `value` is or holds (a `Task`, a `Taskset`, a list of tasks), else None."""
    from hud import Task, Taskset

    if isinstance(value, Task):
        return [value]
    if isinstance(value, Taskset):
        return list(value)
    if isinstance(value, list | tuple) and value and all(isinstance(item, Task) for item in value):
        return list(value)
    return None


def _environments(module: types.ModuleType) -> dict[str, Any]:
    from hud import Environment

    found: dict[str, Any] = {}
    for name in dir(module):
        value = getattr(module, name, None)
        if isinstance(value, Environment):
            found.setdefault(value.name, value)
    return found


def _attribute(module: types.ModuleType, spec: HudSpec) -> Any:
    obj: Any = module
    for part in (spec.attr or "").split("."):
        if not hasattr(obj, part):
            public = [n for n in dir(obj) if not n.startswith("_")]
            msg = f"{spec.source} has no attribute {spec.attr!r}.{did_you_mean(part, public, 'attribute')}"
            raise BadURIError(msg)
        obj = getattr(obj, part)
    return obj


def resolve(spec: HudSpec) -> Resolved:
    """Import the module or file `spec` names and collect its task rows, each with its environment."""
    from hud import Taskset

    module = _import_file(spec) if spec.path else _import_module(spec)
    stem = Path(spec.path).stem if spec.path else (spec.module or "").rsplit(".", 1)[-1]
    if spec.attr is not None:
        obj = _attribute(module, spec)
        rows = _rows(obj)
        if rows is None:
            msg = f"{spec.source}:{spec.attr} is {type(obj).__name__}, not a hud Task, Taskset or list of tasks."
            raise BadURIError(msg)
        name = obj.name if isinstance(obj, Taskset) else spec.attr
    else:
        rows = []
        for attr in sorted(n for n in dir(module) if not n.startswith("_")):
            rows += _rows(getattr(module, attr, None)) or []
        rows = list({id(row): row for row in rows}.values())  # a task in a Taskset and a list counts once
        name = stem
    if not rows:
        raise BadURIError(f"{spec.source} holds no hud tasks (call an @env.template to make one).")
    try:
        tasks = Taskset(name, rows).tasks  # hud's own check that slugs are unique
    except ValueError as exc:
        raise BadURIError(f"{spec.source}: {' '.join(str(exc).split())}") from exc
    local = _environments(module)
    envs = {}
    for slug, row in tasks.items():
        if row.runtime_config is not None:  # an image or Compose project: hud's DockerRuntime, not run here
            msg = (
                f"Task {slug!r} of {spec.source} asks for a runtime of its own (runtime_config); "
                "Nenyax runs hud tasks only in LocalRuntime."
            )
            raise BadURIError(msg)
        # A row minted by `@env.template` keeps its environment (hud's own placement rule reads it too).
        env = getattr(row, "_env", None) or local.get(row.env)
        if env is None:
            msg = f"Task {slug!r} of {spec.source} names the environment {row.env!r}, which the module does not hold."
            raise BadURIError(msg)
        envs[slug] = env
    return Resolved(tasks=dict(tasks), envs=envs, name=str(name))
