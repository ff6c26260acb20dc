"""Helpers of the tests: the shipped bundle, bundles written in a test, the CLI run as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from nenyax.adapters.agentenv.adapter import EXAMPLES_DIR

QUIZ = EXAMPLES_DIR / "quiz"
QUIZ_TASKS = ("capital", "colors", "sum")


def nenyax(*args, timeout=600):
    """The `nenyax` console script beside this interpreter (the venv's), as a user runs it."""
    script = Path(sys.executable).with_name("nenyax")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "nenyax.cli"]
    return subprocess.run(
        [*argv, *args], capture_output=True, text=True, timeout=timeout, check=False, env=os.environ.copy()
    )


def write_bundle(root: Path, **tasks: list[dict]) -> Path:
    """A bundle folder with these tasks (tasks/<name>.json, each a list of AgentEnv steps)."""
    (root / "tasks").mkdir(parents=True)
    (root / "README.md").write_text("A bundle written by a test.\n")
    for name, steps in tasks.items():
        (root / "tasks" / f"{name}.json").write_text(json.dumps(steps))
    return root


def asking(prompt: str, *verifiers: dict) -> list[dict]:
    """A task that deploys a played agent, prompts it once, and runs `verifiers` on its reply."""
    return [
        {"id": "deploy", "type": "deploy_agent", "a2a_agent_id": "solver", "env_ids": [], "sandbox_type": "local"},
        {"id": "ask", "type": "prompt_agent", "prompt_id": "ask", "depends_on": ["deploy"], "prompt": prompt},
        *({**v, "depends_on": ["ask"]} for v in verifiers),
    ]
