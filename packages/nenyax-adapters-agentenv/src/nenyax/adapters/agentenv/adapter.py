"""The ``agentenv`` adapter: loads ``agentenv:<bundle folder or installed bundle>[?task=...]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nenyax.core import AdapterCapabilities, EnvURI, Listing, LoadContext, UsageError

EXAMPLES_DIR = Path(__file__).parent / "examples"
"""Bundles shipped here (offline): `quiz`."""


def example_uri(name: str = "quiz") -> str:
    """The ``agentenv:`` URI of a shipped example bundle."""
    return f"agentenv:{EXAMPLES_DIR / name}"


def _require_agentenv() -> None:
    try:
        import agent_env  # noqa: F401
    except ImportError as exc:
        if exc.name not in ("agent_env", None) and not str(exc.name).startswith("agent_env."):
            raise  # installed but broken: its own error says what
        raise UsageError("agentenv-framework is not installed: pip install nenyax-adapters-agentenv.") from exc


class AgentEnvAdapter:
    """The ``agentenv`` adapter: every playable task of an AgentEnv bundle, run by AgentEnv as an episode."""

    capabilities = AdapterCapabilities(listing=True)

    def __init__(self, examples: tuple[str, ...] | list[str] | None = None) -> None:
        """`examples` are URIs that load offline (default: the bundle shipped with this adapter)."""
        self._examples = [str(e) for e in examples] if examples is not None else [example_uri()]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Parse and prepare the bundle with AgentEnv (it writes its tasks to its stores, as a run would)."""
        _require_agentenv()
        from nenyax.adapters.agentenv.bundle import prepare
        from nenyax.adapters.agentenv.environment import AgentEnvEnvironment
        from nenyax.adapters.agentenv.options import parse_spec

        spec = parse_spec(uri, context.config if context is not None else None)
        prepared = prepare(spec.bundle, spec.task)
        if not prepared.tasks:
            why = "; ".join(f"{name}: {reason}" for name, reason in prepared.not_playable.items())
            raise UsageError(f"No task of the AgentEnv bundle {prepared.root} prompts one agent to play ({why}).")
        return AgentEnvEnvironment(spec, prepared)

    def examples(self) -> list[str]:
        """URIs that load offline: the bundle shipped with this adapter."""
        return list(self._examples)

    def listing(self, where: str | None = None) -> list[Listing]:
        """The bundles under `where` (default: the shipped examples): folders with a tasks/ folder."""
        root = Path(where).expanduser() if where else EXAMPLES_DIR
        folders = [root] if (root / "tasks").is_dir() else sorted(p for p in root.iterdir() if p.is_dir())
        return [
            Listing(uri=f"agentenv:{folder}", description=f"the AgentEnv bundle {folder.name}")
            for folder in folders
            if (folder / "tasks").is_dir()
        ]
