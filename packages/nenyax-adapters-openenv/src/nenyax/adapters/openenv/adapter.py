"""``openenv:ws://host:port`` (or ``http``, ``https``, ``wss``): a URI to a server address and options."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

import attrs

from nenyax.core import BadURIError, EnvURI

DEFAULT_TASKS = 100
"""How many seed task ids `task_ids()` lists by default (any seed is a valid task); a server with the
Task API lists its own tasks, all of them unless the URI names ``tasks=``."""
DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for the server's answer to one frame (OpenEnv's own client waits 60 s too)."""
DEFAULT_CAPACITY_WAIT = 30.0
"""Seconds a new session keeps retrying while the server answers CAPACITY_REACHED."""
EXAMPLES_VARIABLE = "NENYAX_OPENENV_EXAMPLES"
"""Comma-separated URIs `examples()` returns instead of the default (the conformance kit needs live servers)."""
DEFAULT_EXAMPLE = "openenv:ws://127.0.0.1:8000"
"""Where `uvicorn server.app:app` (OpenEnv's generated servers) listens by default."""
ADAPTER_KEYS = ("tasks", "reference", "seeded", "timeout", "capacity_wait", "max_turns")
"""Query keys the adapter consumes; every other key is passed to the server's ``reset``."""
_WS_OF = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_HTTP_OF = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


@attrs.frozen(kw_only=True)
class ServerSpec:
    """What a URI asks for: the server's addresses and the adapter's options."""

    http: str
    """Base URL for ``/health``, ``/metadata`` and ``/schema`` (no trailing slash)."""
    ws: str
    """The ``/ws`` URL episodes connect to."""
    tasks: int
    """How many seed task ids to list (the URI's ``tasks=``, else `DEFAULT_TASKS`)."""
    task_limit: int | None
    """The URI's ``tasks=`` as given (None when absent): caps each split of a server's Task API listing."""
    reference: str | None
    """Dotted path into the server's ``state`` holding the optimal action, if the user named one."""
    seeded: bool | None
    """The user's word on whether the server honours seeds; None: measure it at load."""
    timeout: float
    capacity_wait: float
    max_turns: int | None
    reset: dict[str, Any]
    """Extra keyword arguments sent in every ``reset`` (the URI's other query keys)."""


def _positive(uri: EnvURI, key: str, value: Any, integer: bool) -> Any:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
        what = "a whole number" if integer else "a number"
        msg = f"{key} in {uri.raw!r} must be {what} above 0, got {value!r}."
        raise BadURIError(msg)
    return value


def _addresses(uri: EnvURI) -> tuple[str, str]:
    target = uri.target.strip()
    parts = urlsplit(target)
    if parts.scheme not in _WS_OF or not parts.hostname:
        msg = (
            f"{target!r} is not an OpenEnv server address; write it as openenv:ws://host:port "
            "(or http://, https://, wss://), for example openenv:ws://127.0.0.1:8000."
        )
        raise BadURIError(msg)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError as exc:
        msg = f"The port in {target!r} is not a number from 0 to 65535."
        raise BadURIError(msg) from exc
    # The URL may name the /ws route itself, or the app's root (possibly under a path prefix).
    path = parts.path.rstrip("/").removesuffix("/ws").rstrip("/")
    netloc = parts.netloc
    return f"{_HTTP_OF[parts.scheme]}://{netloc}{path}", f"{_WS_OF[parts.scheme]}://{netloc}{path}/ws"


def parse_spec(uri: EnvURI) -> ServerSpec:
    """Validate the server address and the adapter's own keys of `uri`."""
    http, ws = _addresses(uri)
    params = dict(uri.params)
    if "seed" in params:
        msg = (
            f"Remove seed from {uri.raw!r}: seeds are chosen per episode, by task id (seed/<n>) or --seed, "
            "and sent in each reset."
        )
        raise BadURIError(msg)
    given = params.pop("tasks", None)
    tasks = _positive(uri, "tasks", DEFAULT_TASKS if given is None else given, integer=True)
    reference = params.pop("reference", None)
    if reference is not None and (not isinstance(reference, str) or not reference.strip(".")):
        msg = f"reference in {uri.raw!r} must name a field of the server's state, like reference=solution."
        raise BadURIError(msg)
    seeded = params.pop("seeded", None)
    if seeded is not None and not isinstance(seeded, bool):
        msg = f"seeded in {uri.raw!r} must be true or false (or left out to measure it), got {seeded!r}."
        raise BadURIError(msg)
    timeout = float(_positive(uri, "timeout", params.pop("timeout", DEFAULT_TIMEOUT), integer=False))
    wait = params.pop("capacity_wait", DEFAULT_CAPACITY_WAIT)
    if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
        msg = f"capacity_wait in {uri.raw!r} must be a number of seconds of at least 0, got {wait!r}."
        raise BadURIError(msg)
    max_turns = params.pop("max_turns", None)
    if max_turns is not None:
        _positive(uri, "max_turns", max_turns, integer=True)
    return ServerSpec(
        http=http,
        ws=ws,
        tasks=tasks,
        task_limit=None if given is None else tasks,
        reference=reference,
        seeded=seeded,
        timeout=timeout,
        capacity_wait=float(wait),
        max_turns=max_turns,
        reset=params,
    )


class OpenEnvAdapter:
    """The ``openenv`` adapter: a running OpenEnv server, spoken to over its ``/ws`` protocol."""

    def __init__(self, examples: list[str] | None = None) -> None:
        """`examples` overrides what `examples()` returns (else ``$NENYAX_OPENENV_EXAMPLES``, else port 8000)."""
        self._examples = examples

    def load(self, uri: EnvURI, context: Any = None) -> Any:
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
