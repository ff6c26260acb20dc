"""The tests' task folder, imported by name by the test modules (this folder is on `pythonpath`)."""

from pathlib import Path

TASKS = Path(__file__).parent / "tasks"


def task_uri(name: str, query: str = "") -> str:
    """``lm_eval:<absolute path of tests/tasks/<name>.yaml>`` plus `query`."""
    return f"lm_eval:{TASKS / (name + '.yaml')}{query}"
