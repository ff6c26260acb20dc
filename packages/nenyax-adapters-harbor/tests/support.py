"""What the test modules import by name (this folder is on `pythonpath` in pyproject.toml)."""

from pathlib import Path


def uri(folder: Path, query: str = "") -> str:
    """``harbor:<folder>`` plus `query`."""
    return f"harbor:{folder}" + (f"?{query}" if query else "")
