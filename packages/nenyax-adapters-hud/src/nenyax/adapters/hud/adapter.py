"""The ``hud`` adapter: loads ``hud:<module>[:<attr>]`` or ``hud:<path.py>[:<attr>]`` into a rollout environment."""

from __future__ import annotations

from typing import Any

from nenyax.core import EnvURI, LoadContext

EXAMPLES = (
    "hud:nenyax.adapters.hud.example:arithmetic",
    "hud:nenyax.adapters.hud.example:haiku",
)
"""Tasksets shipped here (offline, deterministic graders): one with reference answers, one without."""


class HudAdapter:
    """The ``hud`` adapter: hud 0.6 task rows, run by hud's `LocalRuntime` and `OpenAIChatAgent`."""

    def __init__(self, examples: tuple[str, ...] | list[str] = EXAMPLES) -> None:
        """`examples` are URIs that load offline (the default: the tasksets shipped with this adapter)."""
        self._examples = [str(e) for e in examples]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Import what the URI names, collect its task rows, and wrap them."""
        from nenyax.adapters.hud.environment import HudEnvironment
        from nenyax.adapters.hud.library import installed
        from nenyax.adapters.hud.options import parse_spec
        from nenyax.adapters.hud.resolve import resolve

        spec = parse_spec(uri)
        version = installed()
        return HudEnvironment(spec, version, resolve(spec))

    def examples(self) -> list[str]:
        """URIs that load offline: the arithmetic taskset (with answers) and the haiku one (without)."""
        return list(self._examples)
