"""The ``karotte`` adapter: loads ``karotte:<environment folder>[?task=...]`` into a task environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nenyax.core import AdapterCapabilities, BadURIError, EnvURI, Listing, LoadContext, UsageError

EXAMPLES_DIR = Path(__file__).parent / "examples"
"""Environments shipped here (offline, on the base image made on this machine): `notes-desk`."""


def example_uri(name: str = "notes-desk") -> str:
    """The ``karotte:`` URI of a shipped example environment."""
    return f"karotte:{EXAMPLES_DIR / name}"


def _require_karotte() -> None:
    """karotte absent (it needs Python >= 3.12) is one sentence at load, not each episode's error."""
    try:
        import karotte  # noqa: F401
    except ImportError as exc:
        if exc.name not in ("karotte", None) and not str(exc.name).startswith("karotte."):
            raise  # installed but broken: its own error says what
        msg = "karotte is not installed: pip install nenyax-adapters-karotte on Python >= 3.12 (karotte needs it)."
        raise UsageError(msg) from exc


class KarotteAdapter:
    """The ``karotte`` adapter: every task of a karotte environment, played by ``karotte run``."""

    capabilities = AdapterCapabilities(listing=True)

    def __init__(self, examples: tuple[str, ...] | list[str] | None = None) -> None:
        """`examples` are URIs that load offline (default: the environment shipped with this adapter)."""
        self._examples = [str(e) for e in examples] if examples is not None else [example_uri()]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Check the folder, list its tasks with karotte; nothing is built or run until an episode is."""
        from nenyax.adapters.karotte.environment import KarotteEnvironment
        from nenyax.adapters.karotte.options import parse_spec
        from nenyax.adapters.karotte.tasks import check_folder, list_tasks
        from nenyax.core.toolkit.tasks import pick

        spec = parse_spec(uri, context.config if context is not None else None)
        check_folder(spec.folder)
        _require_karotte()
        tasks = list_tasks(spec.folder)
        if not tasks:
            raise UsageError(f"The karotte environment {spec.folder} has no tasks (karotte listed none).")
        if spec.task is not None:
            chosen = pick(spec.uri, spec.task, [task.id for task in tasks])
            tasks = [task for task in tasks if task.id == chosen]
        return KarotteEnvironment(spec, tasks)

    def examples(self) -> list[str]:
        """URIs that load offline: the environment shipped with this adapter."""
        return list(self._examples)

    def listing(self, where: str | None = None) -> list[Listing]:
        """The karotte environments under `where` (default: the shipped examples), or `where` itself."""
        root = Path(where).expanduser() if where else EXAMPLES_DIR
        if not root.is_dir():
            raise BadURIError(f"{root} is not a folder; name one holding karotte environments.")
        folders = [root] if (root / "Containerfile").is_file() else sorted(root.iterdir())
        return [
            Listing(uri=f"karotte:{folder}", description=f"the karotte environment {folder.name}")
            for folder in folders
            if (folder / "src" / "environment" / "__init__.py").is_file() and (folder / "Containerfile").is_file()
        ]
