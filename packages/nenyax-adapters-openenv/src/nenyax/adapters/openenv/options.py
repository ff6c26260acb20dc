"""``openenv:ws://host:port`` (or ``http``, ``https``, ``wss``): the server's addresses and the adapter's options."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

DEFAULT_TASKS = 100
"""How many seed task ids `task_ids()` lists by default (any seed is a valid task); a server with the
Task API lists its own tasks, all of them unless the URI names ``tasks=``."""
DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for the server's answer to one frame (OpenEnv's own client waits 60 s too)."""
DEFAULT_CAPACITY_WAIT = 30.0
"""Seconds a new session keeps retrying while the server answers CAPACITY_REACHED."""
OPTIONS = Options(
    "openenv",
    Option("tasks", int, default=DEFAULT_TASKS, positive=True, help="How many seed task ids to list."),
    Option("reference", str, help="Dotted path into the server's state holding the optimal action."),
    Option("seeded", bool, help="Whether the server honours seeds (measured at load when unset)."),
    Option(
        "stochastic",
        bool,
        help="Whether outcomes are random for a fixed seed (slippery dynamics); else /metadata's `stochastic`.",
    ),
    Option("timeout", float, default=DEFAULT_TIMEOUT, positive=True, help="Seconds to wait for one frame."),
    Option(
        "capacity_wait",
        float,
        default=DEFAULT_CAPACITY_WAIT,
        minimum=0,
        help="Seconds a new session retries while the server is at capacity.",
    ),
    Option("max_turns", int, positive=True, help="Actions allowed per episode (the server's own limit when unset)."),
)
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
    stochastic: bool | None
    """The user's word on random outcomes for a fixed seed; None: the ``stochastic`` of ``/metadata`` (else false)."""
    timeout: float
    capacity_wait: float
    max_turns: int | None
    reset: dict[str, Any]
    """Extra keyword arguments sent in every ``reset`` (the URI's other query keys)."""


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
    if "seed" in uri.params:
        msg = (
            f"Remove seed from {uri.raw!r}: seeds are chosen per episode, by task id (seed/<n>) or --seed, "
            "and sent in each reset."
        )
        raise BadURIError(msg)
    read = OPTIONS.read(uri, rest=True)
    reference = read["reference"]
    if reference is not None and not reference.strip("."):
        msg = f"reference in {uri.raw!r} must name a field of the server's state, like reference=solution."
        raise BadURIError(msg)
    return ServerSpec(
        http=http,
        ws=ws,
        tasks=read["tasks"],
        task_limit=read["tasks"] if "tasks" in read.given else None,
        reference=reference,
        seeded=read["seeded"],
        stochastic=read["stochastic"],
        timeout=read["timeout"],
        capacity_wait=read["capacity_wait"],
        max_turns=read["max_turns"],
        reset=read.rest,
    )
