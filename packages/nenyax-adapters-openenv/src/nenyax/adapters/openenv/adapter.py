"""The ``openenv`` adapter: ``openenv:ws://host:port`` (or ``http``, ``https``, ``wss``), a running server."""

from __future__ import annotations

import os
from typing import Any

from nenyax.adapters.openenv.options import parse_spec
from nenyax.core import EnvURI, LoadContext

EXAMPLES_VARIABLE = "NENYAX_OPENENV_EXAMPLES"
"""Comma-separated URIs `examples()` returns instead of the default (the conformance kit needs live servers)."""
DEFAULT_EXAMPLE = "openenv:ws://127.0.0.1:8000"
"""Where `uvicorn server.app:app` (OpenEnv's generated servers) listens by default."""


class OpenEnvAdapter:
    """The ``openenv`` adapter: a running OpenEnv server, spoken to over its ``/ws`` protocol."""

    def __init__(self, examples: list[str] | None = None) -> None:
        """`examples` overrides what `examples()` returns (else ``$NENYAX_OPENENV_EXAMPLES``, else port 8000)."""
        self._examples = examples

    def load(self, uri: EnvURI, context: LoadContext | None = None) -> Any:
        """Ask the server what it is (``/health``, ``/metadata``, ``/schema``, a probe session) and wrap it."""
        from nenyax.adapters.openenv.environment import OpenEnvEnvironment

        return OpenEnvEnvironment.connect(uri.raw, parse_spec(uri))

    def examples(self) -> list[str]:
        """URIs of running servers: an OpenEnv environment only loads while its server runs."""
        if self._examples is not None:
            return list(self._examples)
        configured = os.environ.get(EXAMPLES_VARIABLE, "")
        found = [u.strip() for u in configured.split(",") if u.strip()]
        return found or [DEFAULT_EXAMPLE]
