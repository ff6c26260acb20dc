"""Finding and validating harbor task folders: one sentence naming the file and field when one is broken.

A URI names a task folder (it holds ``task.toml``) or a dataset folder (its sub-folders holding a
``task.toml`` are its tasks). Each task is read with harbor's own `Task`, after the checks below, so
the sentence says which file is missing rather than harbor's traceback.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import BadURIError

_TEST_SCRIPTS = ("test.sh", "test.ps1", "test.cmd", "test.bat")
_SOLVE_SCRIPTS = ("solve.sh", "solve.ps1", "solve.cmd", "solve.bat")


@attrs.frozen(kw_only=True)
class HarborTask:
    """One validated task folder."""

    id: str
    """The folder's name: stable across machines, unique in its dataset."""
    path: Path
    name: str
    """task.toml's ``[task] name`` (``org/name``), else the folder's name."""
    description: str
    has_solution: bool
    """``solution/solve.sh`` exists, so the ``oracle`` agent (the reference policy) can run."""
    digest: str
    """sha256 of the task's files (what it asks and how it grades): in the manifest's digest."""
    config: Any
    """harbor's parsed `TaskConfig`."""


def _first_error(exc: Any) -> tuple[str, str]:
    """(the dotted field, harbor's message) of a pydantic validation error's first problem."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0] if errors else {"loc": (), "msg": str(exc)}
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return field, " ".join(str(first["msg"]).split()).rstrip(".")


def _digest(folder: Path) -> str:
    sha = hashlib.sha256()
    # Bytecode is no part of a task: running its tests by hand must not make it another task.
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        sha.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + sha.hexdigest()


def read_task(folder: Path) -> HarborTask:
    """Validate `folder` as a harbor task and read it; `BadURIError` names the file (and field) at fault."""
    from pydantic import ValidationError

    config_path = folder / "task.toml"
    if not config_path.is_file():
        raise BadURIError(f"{folder} is not a harbor task: it has no task.toml.")
    try:
        data = tomllib.loads(config_path.read_text(errors="replace"))
    except tomllib.TOMLDecodeError as exc:
        raise BadURIError(f"{config_path} is not valid TOML: {exc}.") from exc
    from harbor.models.task.config import TaskConfig

    try:
        config = TaskConfig.model_validate(data)
    except ValidationError as exc:
        field, why = _first_error(exc)
        raise BadURIError(f"{config_path} has an invalid field {field}: {why}.") from exc
    if not config.steps and not (folder / "instruction.md").is_file():
        raise BadURIError(f"The harbor task {folder} has no instruction.md (the prompt given to the agent).")
    if not config.environment.docker_image and not (folder / "environment").is_dir():
        raise BadURIError(
            f"The harbor task {folder} has no environment/ folder (a Dockerfile), and task.toml names no "
            "environment.docker_image."
        )
    if not config.steps and not any((folder / "tests" / name).is_file() for name in _TEST_SCRIPTS):
        raise BadURIError(f"The harbor task {folder} has no tests/test.sh (the verifier that writes the reward).")
    from harbor.models.task.task import Task

    try:
        task = Task(folder)
    except (OSError, ValueError, RuntimeError) as exc:  # harbor's own checks, beyond those above
        text = " ".join(str(exc).split()).rstrip(".")
        raise BadURIError(f"harbor refuses the task {folder}: {text}.") from exc
    meta = config.task
    return HarborTask(
        id=folder.name,
        path=folder.resolve(),
        name=task.name,
        description=(getattr(meta, "description", "") or "") if meta is not None else "",
        has_solution=any((folder / "solution" / name).is_file() for name in _SOLVE_SCRIPTS),
        digest=_digest(folder),
        config=config,
    )


def find_tasks(target: str) -> list[HarborTask]:
    """The task `target` names, or the tasks of the dataset folder it names (sorted by folder name)."""
    folder = Path(target).expanduser()
    if not folder.exists():
        raise BadURIError(
            f"{folder} does not exist; name a harbor task folder (holding task.toml) or a folder of them."
        )
    if not folder.is_dir():
        raise BadURIError(f"{folder} is a file; name a harbor task folder (holding task.toml) or a folder of them.")
    if (folder / "task.toml").is_file():
        return [read_task(folder)]
    children = sorted(child for child in folder.iterdir() if child.is_dir() and (child / "task.toml").is_file())
    if not children:
        raise BadURIError(
            f"{folder} holds no task.toml, and none of its folders does: it is no harbor task or dataset."
        )
    return [read_task(child) for child in children]
