"""A bundle's tasks, as AgentEnv reads and prepares them: its own lookup, parser and `prepare_bundle`.

A task plays as a Nenyax episode when AgentEnv can run it as one of its episodes (`EpisodeSpec.from_task`):
one agent it prompts, which the policy plays. A task AgentEnv cannot run that way (it prompts no agent, or
several) is left out at load, and the reason is kept (`manifest.extra["not_playable"]`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from nenyax.adapters.agentenv.reference import Answers, answers_of
from nenyax.core import BadURIError, UsageError


@attrs.frozen
class BundleTask:
    """One task of the bundle: its name (the stable id), AgentEnv's prepared task, its prompts' gold answers."""

    name: str
    task: Any
    """AgentEnv's `Task`, as `prepare_bundle` wrote it (its id and version in AgentEnv's stores)."""
    answers: Answers | None
    """What each prompt's response checks look for, when every verifier of the task is such a check."""


@attrs.frozen
class Prepared:
    root: Path
    name: str
    description: str | None
    tasks: list[BundleTask]
    not_playable: dict[str, str]


def locate(text: str) -> tuple[Path, str | None]:
    """The bundle folder `text` names, and an installed bundle's id root (AgentEnv's `agent-env run` lookup)."""
    from agent_env.bundle import BundleError
    from agent_env.bundle.installed import locate_bundle

    try:
        root, id_root = locate_bundle(text)
    except BundleError as exc:
        raise BadURIError(f"{text!r} is not an AgentEnv bundle: {exc.summary}") from exc
    return Path(root), None if id_root is None else str(id_root)


def prepare(text: str, only: str | None) -> Prepared:
    """Parse the bundle, write its tasks to AgentEnv's stores as a run would, and read each as an episode."""
    from agent_env.bundle import BundleError, BundleKind, parse_bundle, prepare_bundle
    from agent_env.store.routing import namespace_routing
    from agent_env.task import EpisodeSpec

    root, id_root = locate(text)
    if not root.is_dir():
        raise BadURIError(f"{root} is not a folder; name an AgentEnv bundle (a folder with tasks/, envs/, agents/...).")
    try:
        bundle = parse_bundle(root, id_root=id_root)
    except BundleError as exc:
        raise BadURIError(f"{root} is not an AgentEnv bundle: {exc.summary}") from exc
    entries = {entry.name: entry for entry in bundle.entries if entry.kind is BundleKind.TASK}
    if not entries:
        raise BadURIError(f"The AgentEnv bundle {root} has no tasks (tasks/<name>.json).")
    if only is not None:
        from nenyax.core.toolkit.tasks import pick

        entries = {only: entries[pick(f"agentenv:{text}", only, entries)]}
    try:
        with namespace_routing():
            prepared = prepare_bundle(root, tasks=list(entries), played=True, id_root=id_root)
    except BundleError as exc:
        raise UsageError(f"AgentEnv could not prepare the bundle {root}: {exc.summary}") from exc
    except (RuntimeError, OSError, ValueError) as exc:  # its preflight: a provider it cannot reach, a build...
        raise UsageError(f"AgentEnv could not prepare the bundle {root}: {' '.join(str(exc).split())[:400]}") from exc
    tasks, refused = [], {}
    for entry, task in prepared.tasks:
        try:
            EpisodeSpec.from_task(task)
        except Exception as exc:  # noqa: BLE001 - AgentEnv's EpisodeError, said as its own words
            refused[entry.name] = " ".join(str(exc).split())
            continue
        tasks.append(BundleTask(name=entry.name, task=task, answers=answers_of(entry.config)))
    return Prepared(root=root, name=bundle.name, description=bundle.description, tasks=tasks, not_playable=refused)
