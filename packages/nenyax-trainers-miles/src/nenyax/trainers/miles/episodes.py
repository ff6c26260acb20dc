"""What miles' and slime's hooks share: the environments a process plays, each episode's next sample number,
the run directory every episode streams to, and the episodes in flight (which `abort` stops).

miles and slime call their hooks as plain module functions, once per sample, with no object to keep state on:
the state is this module's, one per rollout process. Loading an environment is costly (an adapter, a
dataset, a sandbox image), so each URI is loaded once and kept.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nenyax.core import Environment, JsonlSink, Trajectory, load, new_run_dir
from nenyax.core.errors import EpisodeInterrupted, UsageError, did_you_mean

RUNS_VARIABLE = "NENYAX_RUNS"
"""Where the run directories go (default ``runs`` in the working directory): one per environment and process."""

URI_KEY, TASK_KEY, SEED_KEY = "nenyax_uri", "nenyax_task", "nenyax_seed"
"""The keys a row's ``metadata`` names its episode with (`nenyax.trainers.miles.rows` writes them)."""

_environments: dict[str, Environment] = {}
_sinks: dict[str, JsonlSink] = {}
_task_sets: dict[str, frozenset[str]] = {}
_plays: Counter[tuple[str, str]] = Counter()
_in_flight: set[asyncio.Task[Trajectory]] = set()


def named_episode(metadata: Mapping[str, Any] | None) -> tuple[str, str, int]:
    """The environment URI, task id and seed a sample's metadata names; one sentence where it names none."""
    metadata = metadata or {}
    uri, task = metadata.get(URI_KEY), metadata.get(TASK_KEY)
    if not isinstance(uri, str) or not isinstance(task, str):
        msg = (
            f"The sample's metadata names no Nenyax episode (it needs {URI_KEY!r} and {TASK_KEY!r}; it has "
            f"{sorted(metadata) or 'no keys'}): write the prompt data with `python -m nenyax.trainers.miles URI`."
        )
        raise UsageError(msg)
    seed = metadata.get(SEED_KEY, 0)
    if not isinstance(seed, int):
        msg = f"The sample's {SEED_KEY!r} must be an integer, not {seed!r}."
        raise UsageError(msg)
    return uri, task, seed


def environment(uri: str) -> Environment:
    """The environment at `uri`, loaded once per process."""
    env = _environments.get(uri)
    if env is None:
        env = _environments[uri] = load(uri)
    return env


def _task_set(env: Environment) -> frozenset[str]:
    """The environment's task ids, listed once (every episode checks its task against them)."""
    tasks = _task_sets.get(env.uri)
    if tasks is None:
        tasks = _task_sets[env.uri] = frozenset(env.task_ids())
    return tasks


def _sink(env: Environment) -> JsonlSink:
    sink = _sinks.get(env.uri)
    if sink is None:
        runs = Path(os.environ.get(RUNS_VARIABLE) or "runs")
        run_dir = new_run_dir(runs, env.manifest, {"trainer": "miles"})
        sink = _sinks[env.uri] = JsonlSink(run_dir / "trajectories.jsonl")
    return sink


def run_dirs() -> dict[str, Path]:
    """The run directory of each environment this process played, by URI (``nenyax view`` and ``export`` read them)."""
    return {uri: sink.path.parent for uri, sink in _sinks.items()}


async def play(uri: str, task: str, seed: int, policy: Any, *, group_id: str | None = None) -> Trajectory:
    """One episode of `task` with `policy`, streamed to the run directory; `abort` can stop it.

    Each episode of a task gets the next sample number (taken before anything is awaited): the policy's
    sampling is seeded from the episode, so the copies of one prompt miles samples would otherwise agree."""
    env = environment(uri)
    if task not in _task_set(env):
        msg = f"Task {task!r} is not a task of {env.uri}.{did_you_mean(task, env.task_ids())}"
        raise UsageError(msg)
    sample = _plays[uri, task]
    _plays[uri, task] += 1
    episode = asyncio.ensure_future(_played(env, policy, task, seed, sample, group_id))
    _in_flight.add(episode)
    try:
        return await episode
    finally:
        _in_flight.discard(episode)


async def _played(env: Environment, policy: Any, task: str, seed: int, sample: int, group_id: str | None) -> Trajectory:
    try:
        observers = [_sink(env)]
        return await env.arollout(policy, task=task, seed=seed, sample=sample, group_id=group_id, observers=observers)
    except EpisodeInterrupted as stopped:
        # `abort` cancelled it: the episode ended ``interrupted`` with what it had recorded (already streamed).
        # Core raises that as a KeyboardInterrupt for a CLI's sake; inside a trainer's hook it is a result (and
        # caught here, inside the task: a task that raised a KeyboardInterrupt would stop the trainer's loop).
        trajectory: Trajectory = stopped.trajectory  # type: ignore[assignment]  # core types it as object
        return trajectory


async def stop_all() -> int:
    """Cancel every episode in flight in this process and wait for each to end (its sandbox torn down, what it
    recorded streamed); how many were stopped."""
    stopping = [task for task in _in_flight if not task.done()]
    for task in stopping:
        task.cancel()
    await asyncio.gather(*stopping, return_exceptions=True)
    _in_flight.difference_update(stopping)
    return len(stopping)
