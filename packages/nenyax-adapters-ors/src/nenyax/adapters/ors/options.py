"""``ors:http://host:port/<env>?<options>``: a URI to the server, the environment and the adapter's options."""

from __future__ import annotations

from urllib.parse import urlsplit

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.options import Option, Options

DEFAULT_MAX_TURNS = 50
"""Tool calls per episode when the URI names no bound (ORS has no step limit of its own)."""
QUICKSTART = "ors:http://127.0.0.1:8080/mathenv"
"""The ors-sdk README's quickstart server (its ``MathEnv`` on port 8080)."""
OPTIONS = Options(
    "ors",
    Option("split", str, help="The split tasks come from (default: the server's first)."),
    Option("max_turns", int, default=DEFAULT_MAX_TURNS, minimum=1, help="Tool calls allowed per episode."),
    Option("answer_key", str, help="The task field holding the honest answer (what the reference plays)."),
    Option("answer_tool", str, help="The tool that takes an answer (default: found from the tools)."),
    Option("terminal_tool", str, help="The tool plain replies are sent to."),
)
"""Query keys the adapter understands."""


@attrs.frozen(kw_only=True)
class OrsSpec:
    """What a URI asks for."""

    base_url: str
    """``scheme://host:port[/prefix]``, no trailing slash."""
    env: str | None
    """The environment's name on the server; None asks the server (it must serve exactly one)."""
    split: str | None
    max_turns: int
    answer_key: str | None
    answer_tool: str | None
    terminal_tool: str | None


def parse_spec(uri: EnvURI) -> OrsSpec:
    """Validate `uri`'s server address and options (the server itself is asked nothing here)."""
    target = uri.target.strip()
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"{target!r} is not an ORS server address; write the URI as 'ors:http://host:port/<environment>'."
        raise BadURIError(msg)
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError as exc:
        msg = f"The port in {target!r} is not a number from 0 to 65535."
        raise BadURIError(msg) from exc
    if parts.query or parts.fragment:
        msg = f"Put the adapter's options after the address as '?key=value', not inside {target!r}."
        raise BadURIError(msg)
    prefix, _, env = parts.path.rstrip("/").rpartition("/")
    read = OPTIONS.read(uri)
    return OrsSpec(
        base_url=f"{parts.scheme}://{parts.netloc}{prefix}",
        env=env or None,
        split=read["split"],
        max_turns=read["max_turns"],
        answer_key=read["answer_key"],
        answer_tool=read["answer_tool"],
        terminal_tool=read["terminal_tool"],
    )
