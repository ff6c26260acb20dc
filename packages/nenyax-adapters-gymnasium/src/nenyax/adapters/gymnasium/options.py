"""``gymnasium:<env id | module:EnvId | module:Class>?<make kwargs>``: a URI parsed into a spec, and the env it makes.

``module:EnvId`` is gymnasium's own form (``gymnasium.make("minigrid:MiniGrid-Empty-5x5-v0")``): the
module is imported first, which registers its ids; only that module is imported, never every
installed package. ``module:Class`` names an env class; when the registry has an id for that class
its settings (time limit, reward threshold) are used, as ``gymnasium.make`` of the id would.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from typing import Any

import attrs

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec
from nenyax.core import EnvURI
from nenyax.core.errors import BadURIError, EnvironmentFailure, did_you_mean
from nenyax.core.toolkit.options import Option, Options

DEFAULT_TASKS = 100
"""How many seeds `task_ids()` lists by default (any seed is a valid task)."""
DEFAULT_TIME_LIMIT = 1000
"""Time limit for envs that register none (CliffWalking, Blackjack, unregistered classes), so that
an episode that never terminates (a null policy walking into a wall) still ends, as truncated."""
FALLBACKS = ("fail", "noop", "random")
"""What an unparseable model reply does: end the episode as policy_error, or play a fallback action."""
OBSERVATIONS = ("auto", "all", "ends", "last", "none")
"""Which steps keep their observation: every step, the first and the last, the last one only, or none (long or
heavy episodes); ``auto`` is ``ends`` for image observations and ``all`` for the rest."""
DEFAULT_RETRIES = 3
"""Unparseable replies a chat policy may follow with another reply, per action, before `on_unparseable` applies."""
MAX_RETRIES = 20
OPTIONS = Options(
    "gymnasium",
    Option("tasks", int, default=DEFAULT_TASKS, minimum=1, help="How many seeds the task list holds."),
    Option("on_unparseable", str, default="fail", choices=FALLBACKS, help="What an unparseable reply does."),
    Option("observations", str, default="auto", choices=OBSERVATIONS, help="Which steps keep their observation."),
    Option(
        "retries",
        int,
        default=DEFAULT_RETRIES,
        minimum=0,
        maximum=MAX_RETRIES,
        help="Replies a chat policy may retry per action after an unparseable one.",
    ),
    Option("max_episode_steps", int, minimum=1, help="The time limit, passed on to gymnasium.make."),
)
"""Query keys the adapter reads itself; every other key is passed to ``gymnasium.make``."""


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
    observations: str = "auto"
    """Which steps record their observation (`OBSERVATIONS`)."""
    retries: int = DEFAULT_RETRIES
    """Replies a chat policy may retry per action after an unparseable one, told the parser's error."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split()).rstrip(".")


# Packages whose environments register only when their module is imported, by the id's namespace or prefix:
# (module, what pip installs).
THIRD_PARTY = {
    "ALE/": ("ale_py", "ale-py"),
    "MiniGrid-": ("minigrid", "minigrid"),
    "BabyAI-": ("minigrid", "minigrid"),
    "MiniWorld-": ("miniworld", "miniworld"),
    "gymnasium_2048/": ("gymnasium_2048", "gymnasium-2048"),
    "highway-": ("highway_env", "highway-env"),
    "merge-": ("highway_env", "highway-env"),
    "roundabout-": ("highway_env", "highway-env"),
    "parking-": ("highway_env", "highway-env"),
    "intersection-": ("highway_env", "highway-env"),
    "racetrack-": ("highway_env", "highway-env"),
}


def _registered_id(target: str) -> str:
    if target in gym.registry:
        return target
    close = did_you_mean(target, gym.registry)
    msg = f"gymnasium has no environment {target!r}." + (close or _other_package(target))
    raise BadURIError(msg)


def _other_package(target: str) -> str:
    """How to name an id another package registers: ``gymnasium:<module>:<id>``, as ``gymnasium.make`` takes it."""
    known = next((how for prefix, how in THIRD_PARTY.items() if target.startswith(prefix)), None)
    if known is None:
        if "/" not in target:
            return did_you_mean(target, gym.registry, "environment id")
        return (
            f" Another package registers {target!r} when its module is imported: write "
            f"gymnasium:<module>:{target}, naming that module."
        )
    module, distribution = known
    said = f" Its package registers it when imported: write gymnasium:{module}:{target}"
    if importlib.util.find_spec(module) is None:
        return f"{said} ({module} is not installed: pip install {distribution})."
    return f"{said}."


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
    if "observations" in params and params["observations"] is None:  # the URI grammar reads `none` as null
        params["observations"] = "none"
    read = OPTIONS.read_mapping(params, where=f"in {uri.raw!r}", rest=True)
    kwargs = dict(read.rest)
    if "max_episode_steps" in read.given:  # checked here, passed on to gymnasium.make
        kwargs["max_episode_steps"] = read["max_episode_steps"]
    return GymSpec(
        target=target,
        entry_point=entry_point,
        env_id=env_id,
        registration=registration,
        kwargs=kwargs,
        tasks=read["tasks"],
        on_unparseable=read["on_unparseable"],
        observations=read["observations"],
        retries=read["retries"],
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
