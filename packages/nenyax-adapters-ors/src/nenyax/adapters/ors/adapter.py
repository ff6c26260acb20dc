"""The ``ors`` adapter: loads ``ors:http://host:port/<env>`` by asking the server what it serves."""

from __future__ import annotations

from typing import Any

from nenyax.adapters.ors.options import QUICKSTART, parse_spec
from nenyax.core import EnvURI, LoadContext


class OrsAdapter:
    """The ``ors`` adapter: any server speaking the Open Reward Standard's HTTP protocol (ors-sdk, openreward)."""

    def __init__(self, examples: tuple[str, ...] | list[str] = (QUICKSTART,)) -> None:
        """`examples` are URIs of running servers (the default is the ors-sdk quickstart's address)."""
        self._examples = [str(e) for e in examples]

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Ask the server what it serves (tools, splits, tasks) and return the environment."""
        from nenyax.adapters.ors.discovery import discover
        from nenyax.adapters.ors.environment import OrsEnvironment

        spec = parse_spec(uri)
        return OrsEnvironment(uri.raw, spec, discover(spec))

    def examples(self) -> list[str]:
        """URIs that load while their server runs: by default the ors-sdk README's quickstart on port 8080."""
        return list(self._examples)
