"""The ``gymnasium`` adapter: registered env ids and env classes by import path."""

from __future__ import annotations

import functools
import importlib
from typing import Any

import gymnasium as gym
from nenyax.adapters.gymnasium.environment import GymEnvironment
from nenyax.adapters.gymnasium.options import ids_of_module, import_module, make, parse_spec
from nenyax.core import AdapterCapabilities, EnvURI, Listing, LoadContext
from nenyax.core.errors import BadURIError


class GymnasiumAdapter:
    """The ``gymnasium`` adapter: every registered env id, and any ``gymnasium.Env`` class by import path."""

    capabilities = AdapterCapabilities(listing=True)

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> GymEnvironment:
        """Build the environment for `uri` (one env is made now, so bad arguments fail at load)."""
        spec = parse_spec(uri)
        return GymEnvironment(uri.raw, spec, lambda: make(spec))

    def examples(self) -> list[str]:
        """URIs that load offline: a classic-control env, a tabular one with kwargs (audited), a card game."""
        return [
            "gymnasium:CartPole-v1",
            "gymnasium:FrozenLake-v1?is_slippery=false&map_name=4x4",
            "gymnasium:Blackjack-v1",
        ]

    @staticmethod
    def env_ids(import_modules: tuple[str, ...] | list[str] = ()) -> list[str]:
        """Every env id gymnasium registers (some need extras, or cannot be made at all).

        Each module of `import_modules` (``"minigrid"``) is imported first, and the ids it registers
        are listed in gymnasium's ``module:EnvId`` form, the target a URI names them by
        (``gymnasium:minigrid:MiniGrid-Empty-5x5-v0``). Only those modules are imported; a module that
        cannot be imported is a `BadURIError` naming it.
        """
        for module_name in import_modules:
            import_module(module_name, module_name)
        third_party = {env_id: f"{m}:{env_id}" for m in import_modules for env_id in ids_of_module(m)}
        return sorted(third_party.get(env_id, env_id) for env_id in gym.registry)

    def listing(self, where: str | None = None, imports: tuple[str, ...] = ()) -> list[Listing]:
        """Every registered env id, described by its entry point; `where` filters ids by substring.

        Each module of `imports` (``nenyax list --import ale_py``) is imported here, and the ids it
        registers are listed under it (``gymnasium:<module>:<id>``); an id whose env lives in another
        package is listed under that package (``gymnasium:minigrid:MiniGrid-Empty-5x5-v0``). A new
        process knows such an id only once its module is imported, so the bare id would not load.
        """
        owner: dict[str, str] = {}
        for module_name in imports:
            before = set(gym.registry)
            try:
                importlib.import_module(module_name)
            except ImportError as exc:
                msg = f"Cannot import {module_name!r} ({exc}); install it or drop --import {module_name}."
                raise BadURIError(msg) from exc
            for env_id in set(gym.registry) - before:
                owner[env_id] = module_name
            for env_id in ids_of_module(module_name):  # imported before: known by its entry point
                owner.setdefault(env_id, module_name)
        return [
            Listing(
                uri=_uri(env_id, owner.get(env_id)),
                description=_entry_point(gym.registry[env_id].entry_point),
                unavailable=_unavailable(gym.registry[env_id].entry_point),
            )
            for env_id in self.env_ids()
            if not where or where.lower() in env_id.lower()
        ]


def _uri(env_id: str, module: str | None = None) -> str:
    package = module or _entry_point(gym.registry[env_id].entry_point).partition(":")[0].split(".")[0]
    return f"gymnasium:{env_id}" if package in ("", "gymnasium") else f"gymnasium:{package}:{env_id}"


def _unavailable(entry: Any) -> str | None:
    """Why an id cannot load: gymnasium keeps ids whose env moved away (``Ant-v2``: mujoco-py; the gym
    compatibility envs: shimmy) registered to a `_raise_*` stub, whose own message says where it went."""
    stub = getattr(entry, "__module__", "") == "gymnasium.envs" and getattr(entry, "__name__", "").startswith("_raise")
    if callable(entry) and stub:
        try:
            entry()
        except Exception as exc:  # noqa: BLE001 - the stub's whole job is to raise its explanation
            return str(exc) or type(exc).__name__
    if isinstance(entry, str) and ":" in entry:
        return _module_missing(entry.partition(":")[0])
    return None


@functools.cache
def _module_missing(module: str) -> str | None:
    """Why the module of a string entry point does not import here (MuJoCo, Box2D or JAX not installed...), else
    None. Importing it is what `gymnasium.make` does first; a module's import is done once per process."""
    try:
        importlib.import_module(module)
    except (ImportError, gym.error.DependencyNotInstalled) as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


def _entry_point(entry: Any) -> str:
    # A string names the env class; a callable is a factory (gymnasium registers one that only raises
    # for envs whose dependency is gone, such as the mujoco-py versions).
    if entry is None or isinstance(entry, str):
        return entry or ""
    return f"{getattr(entry, '__module__', '?')}:{getattr(entry, '__qualname__', repr(entry))}"
