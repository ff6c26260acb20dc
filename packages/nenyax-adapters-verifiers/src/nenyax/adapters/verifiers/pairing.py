"""Which verifiers `Env` class plays a v1 taskset: the one verifiers' own loader would use.

verifiers pairs a taskset id with the `Env` subclass its package exports in ``__all__`` (its TextArena,
OpenEnv, Harbor and NeMo Gym tasksets bring one: the game engine or the server plays the user), and
falls back to `SingleAgentEnv` (one model run of the task) only when there is none
(`verifiers.v1.utils.loaders.environment_class`). A ``verifiers:<module>:<attr>`` URI names the taskset
class itself, which has no id: the same rule is applied to the URI's module, then to the class's own
module and its package, and an `Env` subclass defined beside the class counts as exported.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from nenyax.core import BadURIError

_ENV = {"verifiers.v1.env"}


def is_env_class(obj: Any) -> bool:
    """A subclass of verifiers' v1 `Env` (not `Env` itself)."""
    return (
        isinstance(obj, type)
        and obj.__module__ not in _ENV
        and any(c.__name__ == "Env" and c.__module__ in _ENV for c in obj.__mro__)
    )


def _unique(found: list[type]) -> list[type]:
    return list(dict.fromkeys(found))


def _exported(module: types.ModuleType) -> list[type]:
    names = getattr(module, "__all__", None) or ()
    found = (getattr(module, name, None) for name in names)
    return _unique([obj for obj in found if isinstance(obj, type) and is_env_class(obj)])


def _defined(module: types.ModuleType) -> list[type]:
    return _unique([obj for obj in vars(module).values() if is_env_class(obj) and obj.__module__ == module.__name__])


def _one(found: list[type], where: str, what: str) -> type | None:
    if len(found) > 1:
        names = ", ".join(cls.__name__ for cls in found)
        msg = f"{where} offers {len(found)} verifiers Env classes ({names}) for {what}; export the one that plays it."
        raise BadURIError(msg)
    return found[0] if found else None


def paired_env(taskset_class: type, uri_module: str) -> type | None:
    """The `Env` subclass that plays `taskset_class` as verifiers would, or None (verifiers' `SingleAgentEnv`)."""
    own = taskset_class.__module__
    what = taskset_class.__name__
    for name in dict.fromkeys((uri_module, own, own.rpartition(".")[0])):
        module = sys.modules.get(name) if name else None
        if module is not None and (found := _one(_exported(module), f"The module {name!r}", what)) is not None:
            return found
    module = sys.modules.get(own)
    return _one(_defined(module), f"The module {own!r}", what) if module is not None else None
