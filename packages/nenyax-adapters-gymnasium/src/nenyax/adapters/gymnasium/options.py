"""``gymnasium:<env id | module:EnvId | module:Class>?<make kwargs>``: a URI parsed into a spec, and the env it makes.

``module:EnvId`` is gymnasium's own form (``gymnasium.make("minigrid:MiniGrid-Empty-5x5-v0")``): the
module is imported first, which registers its ids; only that module is imported, never every
installed package. ``module:Class`` names an env class; when the registry has an id for that class
its settings (time limit, reward threshold) are used, as ``gymnasium.make`` of the id would.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from typing import Any

import attrs

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec
from nenyax.core.contract.uri import EnvURI
from nenyax.core.errors import BadURIError, EnvironmentFailure, did_you_mean

DEFAULT_TASKS = 100
"""How many seeds `task_ids()` lists by default (any seed is a valid task)."""
DEFAULT_TIME_LIMIT = 1000
"""Time limit for envs that register none (CliffWalking, Blackjack, unregistered classes), so that
an episode that never terminates (a null policy walking into a wall) still ends, as truncated."""
FALLBACKS = ("fail", "noop", "random")
"""What an unparseable model reply does: end the episode as policy_error, or play a fallback action."""
OBSERVATIONS = ("all", "last", "none")
"""Which steps keep their observation: every step, the last one only, or none (long or heavy episodes)."""
DEFAULT_RETRIES = 3
"""Unparseable replies a chat policy may follow with another reply, per action, before `on_unparseable` applies."""
MAX_RETRIES = 20
ADAPTER_KEYS = ("tasks", "on_unparseable", "observations", "retries")
"""Query keys the adapter consumes itself instead of passing to ``gymnasium.make``."""


@attrs.frozen(kw_only=True)
class GymSpec:
    """What a URI asks for: which env, the kwargs for make, and the adapter's own options."""

    target: str
    """The env id, or ``module:Class``."""
    entry_point: str | None
    """``module:Class`` for an env class, else None."""
    env_id: str | None = None
    """The registered id to make (``MiniGrid-Empty-5x5-v0`` of ``minigrid:MiniGrid-Empty-5x5-v0``); None for a class."""
    registration: EnvSpec | None = None
    """The registry's spec for an env class (its time limit and threshold), when one exists."""
    kwargs: dict[str, Any]
    """Keyword arguments for ``gymnasium.make`` (the env's own, plus ``max_episode_steps``...)."""
    tasks: int
    on_unparseable: str
    observations: str = "all"
    """Which steps record their observation (`OBSERVATIONS`)."""
    retries: int = DEFAULT_RETRIES
    """Replies a chat policy may retry per action after an unparseable one, told the parser's error."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split()).rstrip(".")


def _registered_id(target: str) -> str:
    if target in gym.registry:
        return target
    suggestion = did_you_mean(target, gym.registry, "environment id")
    msg = f"gymnasium has no environment {target!r}." + suggestion
    raise BadURIError(msg)


def import_module(module_name: str, target: str) -> Any:
    """Import `module_name` (which registers its envs); `BadURIError` naming `target` when it cannot be imported."""
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        msg = f"Cannot import the module {module_name!r} of {target!r} ({_one_line(exc)})."
        raise BadURIError(msg) from exc


def _env_classes(module: Any) -> list[str]:
    return [n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, gym.Env)]


def ids_of_module(module_name: str) -> list[str]:
    """The registered ids whose entry point lives in `module_name` (or below it), after importing it."""
    root = module_name.split(".")[0]
    return sorted(
        env_id
        for env_id, env_spec in gym.registry.items()
        if isinstance(env_spec.entry_point, str) and re.match(rf"{re.escape(root)}[.:]", env_spec.entry_point)
    )


def registration_of(cls: type) -> EnvSpec | None:
    """The registry's spec for the env class `cls`: one without kwargs first, then the newest version.

    Only entry points of modules already imported are resolved, so this imports nothing.
    """
    found = []
    for env_spec in gym.registry.values():
        entry = env_spec.entry_point
        if isinstance(entry, str):
            module_name, _, name = entry.partition(":")
            module = sys.modules.get(module_name)
            if module is None or getattr(module, name, None) is not cls:
                continue
        elif entry is not cls:
            continue
        found.append(env_spec)
    if not found:
        return None
    return min(found, key=lambda e: (bool(e.kwargs), -(e.version or 0), e.id))


def _resolve(target: str) -> tuple[str | None, str | None, EnvSpec | None]:
    """(entry point, env id, registration) for ``module:Name``: a registered id or an env class of the module."""
    module_name, _, name = target.partition(":")
    module = import_module(module_name, target)
    if name in gym.registry:
        return None, name, None
    cls = getattr(module, name, None)
    if inspect.isclass(cls) and issubclass(cls, gym.Env):
        return target, None, registration_of(cls)
    known = ids_of_module(module_name) + _env_classes(module)
    msg = f"{module_name} registers no environment id and has no gymnasium.Env subclass {name!r}." + did_you_mean(
        name, known, "env id or class"
    )
    raise BadURIError(msg)


def parse_spec(uri: EnvURI) -> GymSpec:
    """Validate the env id (or class) and the adapter's own keys of `uri`."""
    target = uri.target.strip()
    if re.fullmatch(r"[\w.]+:\S+", target):
        entry_point, env_id, registration = _resolve(target)
    else:
        entry_point, env_id, registration = None, _registered_id(target), None
    params = dict(uri.params)
    tasks = params.pop("tasks", DEFAULT_TASKS)
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        msg = f"tasks in {uri.raw!r} must be an integer of at least 1, got {tasks!r}."
        raise BadURIError(msg)
    fallback = params.pop("on_unparseable", "fail")
    if fallback not in FALLBACKS:
        msg = f"on_unparseable must be one of {', '.join(FALLBACKS)}, got {fallback!r}."
        raise BadURIError(msg)
    observations = params.pop("observations", "all")
    if observations is None:  # the URI grammar reads `none` as null
        observations = "none"
    if observations not in OBSERVATIONS:
        msg = f"observations must be one of {', '.join(OBSERVATIONS)}, got {observations!r}."
        raise BadURIError(msg)
    retries = params.pop("retries", DEFAULT_RETRIES)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        msg = f"retries in {uri.raw!r} must be an integer from 0 to {MAX_RETRIES}, got {retries!r}."
        raise BadURIError(msg)
    steps = params.get("max_episode_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        msg = f"max_episode_steps in {uri.raw!r} must be an integer of at least 1, got {steps!r}."
        raise BadURIError(msg)
    return GymSpec(
        target=target,
        entry_point=entry_point,
        env_id=env_id,
        registration=registration,
        kwargs=params,
        tasks=tasks,
        on_unparseable=fallback,
        observations=observations,
        retries=retries,
    )


def _accepted(entry_point: Any) -> list[str]:
    try:
        factory = entry_point if callable(entry_point) else gym.envs.registration.load_env_creator(entry_point)
        return [p for p in inspect.signature(factory).parameters if p != "self"]
    except Exception:  # noqa: BLE001 - loading the creator runs the env's package: say nothing rather than guess
        return []


def _render_modes(entry_point: Any) -> list[str]:
    try:
        creator = entry_point if callable(entry_point) else gym.envs.registration.load_env_creator(entry_point)
        return list(getattr(creator, "metadata", {}).get("render_modes", []))
    except Exception:  # noqa: BLE001 - loading the creator runs the env's package; its error surfaces from make()
        return []


def make(spec: GymSpec) -> gym.Env[Any, Any]:
    """``gymnasium.make`` the env `spec` names; bad kwargs are a `BadURIError`, missing deps an `EnvironmentFailure`."""
    kwargs = dict(spec.kwargs)
    if spec.entry_point is not None:
        # The class's registration settings, but not its kwargs: the URI's own kwargs are what is made.
        reg = spec.registration
        env_spec = EnvSpec(
            id=spec.target,
            entry_point=spec.entry_point,
            reward_threshold=reg.reward_threshold if reg else None,
            nondeterministic=reg.nondeterministic if reg else False,
            max_episode_steps=reg.max_episode_steps if reg else None,
        )
    else:
        env_spec = gym.spec(spec.env_id or spec.target)
    registered_limit = env_spec.max_episode_steps
    if registered_limit is None:
        kwargs.setdefault("max_episode_steps", DEFAULT_TIME_LIMIT)
    if "render_mode" not in kwargs and "ansi" in _render_modes(env_spec.entry_point):
        # Text renders (FrozenLake's map, Taxi's grid) cost nothing until asked for, and the text codec shows them.
        kwargs["render_mode"] = "ansi"
    try:
        return gym.make(env_spec, **kwargs)
    except (ImportError, gym.error.DependencyNotInstalled) as exc:
        msg = f"gymnasium cannot make {spec.target!r} here: {_one_line(exc)}."
        raise EnvironmentFailure(msg) from exc
    except TypeError as exc:
        bad = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if bad:
            accepted = _accepted(env_spec.entry_point)
            msg = f"{spec.target} does not accept the argument {bad.group(1)!r}." + did_you_mean(
                bad.group(1), accepted, "argument"
            )
            raise BadURIError(msg) from exc
        msg = f"gymnasium could not make {spec.target!r} with {kwargs}: {_one_line(exc)}."
        raise BadURIError(msg) from exc
    except gym.error.Error as exc:
        msg = f"gymnasium could not make {spec.target!r}: {_one_line(exc)}."
        raise EnvironmentFailure(msg) from exc
    except Exception as exc:
        # Registered envs make fine with their defaults, so a failure with user kwargs is about them.
        if spec.kwargs:
            why = f"{type(exc).__name__} {_one_line(exc)}"
            msg = f"gymnasium rejected the arguments {spec.kwargs} for {spec.target!r}: {why}."
            raise BadURIError(msg) from exc
        msg = f"gymnasium could not make {spec.target!r}: {type(exc).__name__} {_one_line(exc)}."
        raise EnvironmentFailure(msg) from exc
