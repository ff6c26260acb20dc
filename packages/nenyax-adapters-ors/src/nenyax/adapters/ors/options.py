"""``ors:http://host:port/<env>?<options>``: a URI to the server, the environment and the adapter's options."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import attrs

from nenyax.core import BadURIError, EnvURI
from nenyax.core.toolkit.suggest import did_you_mean

DEFAULT_MAX_TURNS = 50
"""Tool calls per episode when the URI names no bound (ORS has no step limit of its own)."""
QUICKSTART = "ors:http://127.0.0.1:8080/mathenv"
"""The ors-sdk README's quickstart server (its ``MathEnv`` on port 8080)."""
OPTIONS = ("split", "max_turns", "answer_key", "answer_tool", "terminal_tool")
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


def _text_option(uri: EnvURI, params: dict[str, Any], key: str) -> str | None:
    value = params.pop(key, None)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        msg = f"{key} in {uri.raw!r} must be a name, got {value!r}."
        raise BadURIError(msg)
    return value


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
    params = dict(uri.params)
    spec = OrsSpec(
        base_url=f"{parts.scheme}://{parts.netloc}{prefix}",
        env=env or None,
        split=_text_option(uri, params, "split"),
        max_turns=_max_turns(uri, params),
        answer_key=_text_option(uri, params, "answer_key"),
        answer_tool=_text_option(uri, params, "answer_tool"),
        terminal_tool=_text_option(uri, params, "terminal_tool"),
    )
    if params:
        key = sorted(params)[0]
        msg = f"The ors adapter has no option {key!r}." + did_you_mean(key, OPTIONS, "option")
        raise BadURIError(msg)
    return spec


def _max_turns(uri: EnvURI, params: dict[str, Any]) -> int:
    value = params.pop("max_turns", DEFAULT_MAX_TURNS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"max_turns in {uri.raw!r} must be an integer of at least 1, got {value!r}."
        raise BadURIError(msg)
    return value
