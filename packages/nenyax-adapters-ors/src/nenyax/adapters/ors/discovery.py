"""What a server serves, asked once at load: its environments, the chosen one's tools, splits and tasks."""

from __future__ import annotations

from typing import Any

import attrs

from nenyax.adapters.ors.options import OrsSpec
from nenyax.adapters.ors.wire import Client, Refused, new_http
from nenyax.core import BadURIError, EnvironmentFailure
from nenyax.core.toolkit.loops import run_sync
from nenyax.core.toolkit.suggest import did_you_mean


@attrs.frozen(kw_only=True)
class ServerInfo:
    """The server's answers, as JSON data."""

    env: str
    """The environment's name on the server."""
    environments: tuple[str, ...]
    """Every environment the server lists."""
    tools: tuple[dict[str, Any], ...]
    """Class-level tool specs (``name``, ``description``, ``input_schema``)."""
    terminal_tool: dict[str, Any] | None
    """openreward's hidden terminal tool (``name``, ``arg``), which a plain reply is sent to."""
    splits: tuple[tuple[str, str], ...]
    """``(name, type)`` in the server's order."""
    tasks: dict[str, tuple[Any, ...] | None]
    """Each split's task specs, or None where the server only counts them (no ``list_tasks``)."""
    counts: dict[str, int]
    version: str | None
    """``GET /version`` (openreward servers), else None."""


def _expect(value: Any, kind: type, what: str, base_url: str) -> Any:
    if not isinstance(value, kind):
        msg = f"The ORS server at {base_url} answered {what} with {type(value).__name__}, not a {kind.__name__}."
        raise EnvironmentFailure(msg)
    return value


async def _environments(client: Client, spec: OrsSpec) -> tuple[str, tuple[str, ...]]:
    try:
        names = _expect(await client.request("GET", "/list_environments"), list, "/list_environments", spec.base_url)
    except Refused as exc:
        if spec.env is None:
            msg = f"The ORS server at {spec.base_url} lists no environments ({exc.detail}); name one in the URI."
            raise BadURIError(msg) from exc
        return spec.env, (spec.env,)
    names = tuple(str(n) for n in names)
    if spec.env is None:
        if len(names) != 1:
            example = f"ors:{spec.base_url}/{names[0] if names else '<environment>'}"
            msg = f"The ORS server at {spec.base_url} serves {len(names)} environments; name one, e.g. {example!r}."
            raise BadURIError(msg)
        return names[0], names
    # The server matches names case-insensitively; keep the URI's spelling.
    if spec.env.lower() not in {n.lower() for n in names}:
        msg = f"The ORS server at {spec.base_url} serves no environment {spec.env!r}." + did_you_mean(
            spec.env, names, "environment"
        )
        raise BadURIError(msg)
    return spec.env, names


async def _tasks(client: Client, env: str, split: str) -> tuple[tuple[Any, ...] | None, int]:
    try:
        body = await client.request("POST", f"/{env}/tasks", {"split": split})
    except Refused as exc:
        if exc.status != 400:
            raise
        # Environments too large to list answer 400 and serve tasks by index only.
        count = await client.request("POST", f"/{env}/num_tasks", {"split": split})
        return None, int(_expect(count, dict, f"/{env}/num_tasks", client.base_url).get("num_tasks", 0))
    tasks = _expect(_expect(body, dict, f"/{env}/tasks", client.base_url).get("tasks"), list, "tasks", client.base_url)
    return tuple(tasks), len(tasks)


async def _discover(spec: OrsSpec) -> ServerInfo:
    async with new_http() as http:
        client = Client(spec.base_url, http)
        env, names = await _environments(client, spec)
        try:
            tools_body = _expect(await client.request("GET", f"/{env}/tools"), dict, f"/{env}/tools", spec.base_url)
            raw_splits = _expect(await client.request("GET", f"/{env}/splits"), list, f"/{env}/splits", spec.base_url)
        except Refused as exc:
            if exc.status == 404:
                msg = f"The server at {spec.base_url} does not serve ORS routes for {env!r} ({exc.detail})."
                raise BadURIError(msg) from exc
            raise EnvironmentFailure(str(exc)) from exc
        splits = tuple(
            (str(s.get("name")), str(s.get("type", ""))) if isinstance(s, dict) else (str(s), "") for s in raw_splits
        )
        tasks: dict[str, tuple[Any, ...] | None] = {}
        counts: dict[str, int] = {}
        for name, _type in splits:
            try:
                tasks[name], counts[name] = await _tasks(client, env, name)
            except Refused as exc:
                raise EnvironmentFailure(f"Listing the tasks of split {name!r} failed: {exc}.") from exc
        try:
            version_body = await client.request("GET", "/version")
        except (Refused, EnvironmentFailure):
            # ors-sdk has no /version (it redirects to /<env>/version, which 404s).
            version_body = None
        version = version_body.get("version") if isinstance(version_body, dict) else None
    terminal = tools_body.get("terminal_tool")
    tools = _expect(tools_body.get("tools", []), list, f"/{env}/tools", spec.base_url)
    return ServerInfo(
        env=env,
        environments=names,
        tools=tuple(t for t in tools if isinstance(t, dict)),
        terminal_tool=terminal if isinstance(terminal, dict) and terminal.get("name") else None,
        splits=splits,
        tasks=tasks,
        counts=counts,
        version=str(version) if version is not None else None,
    )


def discover(spec: OrsSpec) -> ServerInfo:
    """Ask the server `spec` names what it serves; unreachable is `InfraFailure`, a wrong name `BadURIError`."""
    return run_sync(_discover(spec))
