"""The tests' task files and the example tasks' URIs, imported by name (this folder is on `pythonpath`)."""

from pathlib import Path

TASKS = Path(__file__).parent / "tasks"
ARITHMETIC = "hud:nenyax.adapters.hud.example:arithmetic"
HAIKU = "hud:nenyax.adapters.hud.example:haiku"


def task_uri(name: str, attr: str | None = None, query: str = "") -> str:
    """``hud:<absolute path of tests/tasks/<name>.py>[:attr]`` plus `query`."""
    return f"hud:{TASKS / (name + '.py')}{':' + attr if attr else ''}{query}"
