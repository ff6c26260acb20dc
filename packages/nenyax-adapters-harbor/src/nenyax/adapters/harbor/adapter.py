"""The ``harbor`` adapter: loads ``harbor:<task folder>`` or ``harbor:<folder of task folders>``."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from nenyax.core import AdapterCapabilities, BadURIError, EnvURI, Listing, LoadContext, UsageError

EXAMPLES_DIR = Path(__file__).parent / "examples"
"""Small offline tasks shipped here (plain-shell verifiers): a pass/fail one, a partial-credit one..."""


def example_task(name: str) -> str:
    """The ``harbor:`` URI of one shipped example task (``hello-file``, ``count-lines``, ``reverse-words``)."""
    return f"harbor:{EXAMPLES_DIR / name}"


def example_uris() -> list[str]:
    """The shipped examples as one dataset URI: one `nenyax check` covers every task (each check of an
    example costs a few harbor trials, so one per task would repeat the same measurement three times)."""
    return [f"harbor:{EXAMPLES_DIR}"]


def _description(task: Path) -> str:
    """task.toml's ``[task] description``, read without harbor (listing stays cheap, and works on 3.11)."""
    try:
        meta = tomllib.loads((task / "task.toml").read_text(errors="replace")).get("task", {})
    except (OSError, tomllib.TOMLDecodeError):
        return "a harbor task (its task.toml does not parse)"
    return str(meta.get("description") or meta.get("name") or "a harbor task")


def _require_harbor() -> None:
    """Import what every episode needs of harbor now, so that harbor absent, or installed but broken, is one
    sentence at load rather than each episode's error."""
    from nenyax.adapters.harbor._missing import absent_or_raise, not_installed

    # litellm (terminus-2's client) otherwise fetches its model price list from GitHub when imported: three
    # retries against a network a sandboxed run may not have, before it falls back to its own copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import harbor  # noqa: F401
    except ImportError as exc:
        absent_or_raise(exc, "harbor")
        raise UsageError(not_installed()) from exc
    # Its stand-ins exist for harbor absent only: a broken import raises its own sentence here. (terminus-2,
    # whose litellm takes some 15 s to import, is imported by the first model episode, with the same rule.)
    import nenyax.adapters.harbor.backend  # noqa: F401


class HarborAdapter:
    """The ``harbor`` adapter: harbor tasks run by harbor's own trials and agents in a Nenyax sandbox."""

    capabilities = AdapterCapabilities(listing=True)

    def __init__(self, examples: tuple[str, ...] | list[str] | None = None) -> None:
        """`examples` are URIs that load offline (default: the tasks shipped with this adapter)."""
        self._examples = [str(e) for e in examples] if examples is not None else example_uris()

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Validate the task folder(s) and the sandbox choice; nothing runs until an episode does."""
        _require_harbor()
        from nenyax.adapters.harbor.environment import HarborEnvironment
        from nenyax.adapters.harbor.options import parse_spec
        from nenyax.adapters.harbor.tasks import find_tasks
        from nenyax.core import default_registry

        spec = parse_spec(uri, context.config if context is not None else None)
        tasks = find_tasks(spec.target)
        registry = context.registry if context is not None else default_registry()
        return HarborEnvironment(spec, tasks, registry)

    def examples(self) -> list[str]:
        """URIs that load offline: the example tasks shipped with this adapter."""
        return list(self._examples)

    def listing(self, where: str | None = None) -> list[Listing]:
        """The task folders under `where` (default: the shipped examples), after the folder as one dataset."""
        root = Path(where).expanduser() if where else EXAMPLES_DIR
        if not root.is_dir():
            raise BadURIError(f"{root} is not a folder; name one holding harbor task folders.")
        if (root / "task.toml").is_file():
            return [Listing(uri=f"harbor:{root}", description=_description(root))]
        tasks = sorted(child for child in root.iterdir() if (child / "task.toml").is_file())
        if not tasks:
            return []
        dataset = Listing(uri=f"harbor:{root}", description=f"a dataset of {len(tasks)} harbor tasks")
        return [dataset, *(Listing(uri=f"harbor:{task}", description=_description(task)) for task in tasks)]
