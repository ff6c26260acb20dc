"""An environment folder's tasks, listed by karotte's own `karotte tasks list --json` (its task discovery)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import BadURIError, UsageError
from nenyax.core.errors import InfraFailure

KAROTTE = [sys.executable, "-c", "import sys; from karotte.cli import entry; sys.argv[0] = 'karotte'; entry()"]
"""karotte's command line, run by this interpreter (the karotte installed beside Nenyax)."""


@attrs.frozen
class KarotteTask:
    """One task of an environment, as karotte lists it."""

    id: str
    tools: tuple[str, ...] = ()
    hardware: str | None = None


def run_env(folder: Path) -> dict[str, str]:
    """The variables karotte runs with for `folder`: its ``src`` importable as the ``environment`` package
    (karotte finds tasks there), no model price list fetched (litellm's import reaches GitHub otherwise),
    and no ``CI`` (karotte prefixes every engine command with sudo when it is set)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder / "src"), env.get("PYTHONPATH", "")) if p)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def check_folder(folder: Path) -> None:
    """Refuse, in one sentence, a folder that is not a karotte environment."""
    if not folder.is_dir():
        raise BadURIError(f"{folder} is not a folder; name a karotte environment (one `karotte create-env` made).")
    if not (folder / "src" / "environment" / "__init__.py").is_file():
        raise BadURIError(
            f"{folder} is not a karotte environment: it has no src/environment package "
            "(`karotte create-env` makes one)."
        )
    if not (folder / "Containerfile").is_file():
        raise BadURIError(f"{folder} is not a karotte environment: it has no Containerfile to build its image from.")


def list_tasks(folder: Path) -> list[KarotteTask]:
    """The environment's tasks, by karotte's own discovery (its ``get_tasks``), in karotte's order."""
    try:
        done = subprocess.run(
            [*KAROTTE, "tasks", "list", "--json"],
            cwd=folder,
            env=run_env(folder),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InfraFailure(f"karotte took over 120 s to list the tasks of {folder}.") from exc
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).split())[-400:]
        raise UsageError(f"karotte could not list the tasks of {folder}: {tail}")
    try:
        rows: list[dict[str, Any]] = json.loads(done.stdout)
    except ValueError as exc:
        raise UsageError(
            f"karotte listed the tasks of {folder} in a form this adapter cannot read: {done.stdout[:200]!r}"
        ) from exc
    return [
        KarotteTask(id=str(row["id"]), tools=tuple(row.get("tools") or ()), hardware=row.get("required_hardware"))
        for row in rows
    ]
