"""Helpers of the tests: karotte transcripts made with karotte's own schema, and the CLI run as a user runs it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from nenyax.adapters.karotte.adapter import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "notes-desk"
EXAMPLE_TASKS = ("count-words", "write-greeting")


def nenyax(*args, timeout=600, cwd=None):
    """The `nenyax` console script beside this interpreter (the venv's), as a user runs it."""
    script = Path(sys.executable).with_name("nenyax")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "nenyax.cli"]
    return subprocess.run(
        [*argv, *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, env=os.environ.copy()
    )


def example_copy(tmp_path: Path, name: str = "notes-desk") -> Path:
    """A copy of the shipped example to change (its image is its own: karotte names images by folder)."""
    copy = tmp_path / name
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def write_transcript(path: Path, *events) -> Path:
    """A transcript as karotte writes it, from karotte's own event classes."""
    from karotte.schemas.transcript import Transcript

    path.write_text(Transcript(run_id="t", events=list(events)).model_dump_json())
    return path
