"""What a ``harbor:`` URI names: a task folder or a dataset folder, and how its trials run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from nenyax.core import BadURIError, EnvURI

OPTIONS = ("sandbox", "sandbox_options", "image", "max_turns", "trials_dir", "agent_timeout")
"""The query keys (and ``[adapters.harbor]`` config keys) the adapter reads; any other is refused."""


@attrs.frozen(kw_only=True)
class HarborSpec:
    """A parsed ``harbor:<folder>?...`` URI."""

    uri: str
    target: str
    """The task or dataset folder."""
    sandbox: str = "bwrap"
    """The Nenyax sandbox plugin the trials run in."""
    sandbox_options: dict[str, Any] = attrs.field(factory=dict)
    """Options of that plugin's factory (``{"bwrap": "/usr/bin/bwrap"}``)."""
    image: str | None = None
    """An image for the sandbox instead of its default (a sandbox that builds images builds the task's)."""
    max_turns: int | None = None
    """terminus-2's turn limit for a model policy (harbor's default: unbounded)."""
    trials_dir: Path | None = None
    """Where harbor's trial folders are kept (logs, rewards); None: a temporary folder per episode."""
    agent_timeout: float | None = None
    """Seconds the agent may take, instead of task.toml's ``[agent] timeout_sec``."""


def _positive(key: str, value: Any, kind: type) -> Any:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value <= 0
        or (kind is int and value != int(value))
    ):
        what = "a positive integer" if kind is int else "a positive number of seconds"
        raise BadURIError(f"'{key}' must be {what}, not {value!r}.")
    return kind(value)


def parse_spec(uri: EnvURI, config: Mapping[str, Any] | None = None) -> HarborSpec:
    """The URI's folder and options; the run config's ``[adapters.harbor]`` table gives defaults."""
    target = uri.target.strip()
    if not target:
        raise BadURIError("Name a folder: 'harbor:<task folder>' or 'harbor:<folder of task folders>'.")
    params = {**dict(config or {}), **dict(uri.params)}
    unknown = sorted(set(params) - set(OPTIONS))
    if unknown:
        raise BadURIError(f"{uri.raw!r} sets {', '.join(map(repr, unknown))}; harbor URIs take {', '.join(OPTIONS)}.")
    sandbox = params.get("sandbox", "bwrap")
    if not isinstance(sandbox, str) or not sandbox:
        raise BadURIError(f"'sandbox' must name a sandbox plugin (bwrap, docker...), not {sandbox!r}.")
    options = params.get("sandbox_options", {})
    if not isinstance(options, dict):
        raise BadURIError(f"'sandbox_options' must be a JSON object of the sandbox's options, not {options!r}.")
    image = params.get("image")
    if image is not None and not isinstance(image, str):
        raise BadURIError(f"'image' must name an image, not {image!r}.")
    trials = params.get("trials_dir")
    return HarborSpec(
        uri=uri.raw,
        target=target,
        sandbox=sandbox,
        sandbox_options=options,
        image=image,
        max_turns=_positive("max_turns", params.get("max_turns"), int),
        trials_dir=Path(str(trials)).expanduser() if trials else None,
        agent_timeout=_positive("agent_timeout", params.get("agent_timeout"), float),
    )
