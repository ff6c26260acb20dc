"""``gymnasium:<env id or module:Class>?<make kwargs>``: a URI parsed into a spec, and the env it makes."""

from __future__ import annotations

import importlib
import inspect
import re
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
ADAPTER_KEYS = ("tasks", "on_unparseable")
"""Query keys the adapter consumes itself instead of passing to ``gymnasium.make``."""


@attrs.frozen(kw_only=True)
class GymSpec:
    """What a URI asks for: which env, the kwargs for make, and the adapter's own options."""

    target: str
    """The env id, or ``module:Class``."""
    entry_point: str | None
    """``module:Class`` for an unregistered env class, else None."""
    kwargs: dict[str, Any]
    """Keyword arguments for ``gymnasium.make`` (the env's own, plus ``max_episode_steps``...)."""
    tasks: int
    on_unparseable: str


def _one_line(text: object) -> str:
    return " ".join(str(text).split()).rstrip(".")


def _registered_id(target: str) -> str:
    if target in gym.registry:
        return target
    suggestion = did_you_mean(target, gym.registry, "environment id")
    msg = f"gymnasium has no environment {target!r}." + suggestion
    raise BadURIError(msg)


def _env_class(target: str) -> str:
    module_name, _, class_name = target.rpartition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        msg = f"Cannot import the module {module_name!r} of {target!r} ({_one_line(exc)})."
        raise BadURIError(msg) from exc
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, gym.Env)):
        found = [n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, gym.Env)]
        msg = f"{module_name} has no gymnasium.Env subclass {class_name!r}." + did_you_mean(
            class_name, found, "env class"
        )
        raise BadURIError(msg)
    return target


def parse_spec(uri: EnvURI) -> GymSpec:
    """Validate the env id (or class) and the adapter's own keys of `uri`."""
    target = uri.target.strip()
    entry_point = _env_class(target) if re.fullmatch(r"[\w.]+:\w+", target) else None
    if entry_point is None:
        _registered_id(target)
    params = dict(uri.params)
    tasks = params.pop("tasks", DEFAULT_TASKS)
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        msg = f"tasks in {uri.raw!r} must be an integer of at least 1, got {tasks!r}."
        raise BadURIError(msg)
    fallback = params.pop("on_unparseable", "fail")
    if fallback not in FALLBACKS:
        msg = f"on_unparseable must be one of {', '.join(FALLBACKS)}, got {fallback!r}."
        raise BadURIError(msg)
    steps = params.get("max_episode_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        msg = f"max_episode_steps in {uri.raw!r} must be an integer of at least 1, got {steps!r}."
        raise BadURIError(msg)
    return GymSpec(target=target, entry_point=entry_point, kwargs=params, tasks=tasks, on_unparseable=fallback)


def _accepted(entry_point: Any) -> list[str]:
    try:
        factory = entry_point if callable(entry_point) else gym.envs.registration.load_env_creator(entry_point)
        return [p for p in inspect.signature(factory).parameters if p != "self"]
    except Exception:  # a creator we cannot introspect: say nothing rather than guess
        return []


def _render_modes(entry_point: Any) -> list[str]:
    try:
        creator = entry_point if callable(entry_point) else gym.envs.registration.load_env_creator(entry_point)
        return list(getattr(creator, "metadata", {}).get("render_modes", []))
    except Exception:  # the real error, if any, surfaces from make() with its own message
        return []


def make(spec: GymSpec) -> gym.Env[Any, Any]:
    """``gymnasium.make`` the env `spec` names; bad kwargs are a `BadURIError`, missing deps an `EnvironmentFailure`."""
    kwargs = dict(spec.kwargs)
    if spec.entry_point is not None:
        env_spec = EnvSpec(id=spec.target, entry_point=spec.entry_point)
        registered_limit = None
    else:
        env_spec = gym.spec(spec.target)
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
