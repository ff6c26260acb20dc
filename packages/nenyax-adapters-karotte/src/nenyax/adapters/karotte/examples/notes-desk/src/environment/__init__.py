"""The notes-desk environment: its tasks are the `Task` classes under `environment.tasks` (the template's rule)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from karotte import Task

STUDENT_UID = int(os.environ.get("KAROTTE_DEMOTE_ID", "1000"))


def get_tasks() -> list[type[Task]]:
    """Every `Task` subclass with an id, one package per task under `tasks/` (as `karotte create-env` lays out)."""
    from karotte import Task

    import environment.tasks

    found: list[type[Task]] = []
    for folder in sorted(Path(environment.tasks.__path__[0]).iterdir()):
        if not folder.is_dir() or folder.name.startswith("_"):
            continue
        module = importlib.import_module(f"environment.tasks.{folder.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Task) and value is not Task and getattr(value, "id", None):
                found.append(value)
    return found
