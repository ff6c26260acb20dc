"""What a server says about itself (``/health``, ``/metadata``, ``/schema``, the Task API) and what a probe measures.

The probe plays no episode: it opens sessions, resets them onto the same start and compares the
starts (observation, reward, done, and the ``state`` minus its episode bookkeeping). Equal starts
mean the server honours seeds (or, for a server with the Task API, its first task and seed 0); it is
what makes task ids worth anything. A server with the Task API is also asked whether another task
starts differently: one whose reset ignores ``split`` and ``index`` (OpenEnv drops reset keys the
environment's ``reset()`` does not declare) has its tasks treated as seeds instead. The probe's
findings are written into the manifest as sentences that do not depend on the values drawn, so the
manifest digest is the same on every load.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp
import attrs
import orjson

from nenyax.adapters.openenv.schema import ActionSchema
from nenyax.adapters.openenv.tasks import ServedTask, TaskCatalog, discover
from nenyax.adapters.openenv.wire import CAPACITY_REACHED, Channel, Reply, ServerError, get_json, observation_reply
from nenyax.core import BadURIError, EnvironmentFailure, InfraFailure
from nenyax.core.toolkit.loops import run_sync

if TYPE_CHECKING:
    from nenyax.adapters.openenv.options import ServerSpec

PROBE_SEED = 0
PROBE_RESETS = 3
"""Same-seed resets compared: an unseeded server would have to draw the same start three times."""
PROBE_OTHER_TASKS = 2
"""Other listed tasks compared with the first: if all of them start the same way, the reset ignores the task."""
STATE_BOOKKEEPING = frozenset({"episode_id", "step_count"})
"""State fields that legitimately differ between two sessions of the same episode."""


@attrs.frozen(kw_only=True)
class ServerInfo:
    """Everything the manifest and the sessions need to know about one server."""

    metadata: dict[str, Any]
    action: ActionSchema
    observation_schema: dict[str, Any]
    wire: str
    """``0.10`` (observations carry metadata, as openenv 0.10 sends them) or ``0.3`` (openenv-core 0.3: none)."""
    seeded: bool
    seeds: str
    """How `seeded` was decided, in a sentence."""
    seeds_vary: bool | None
    """Whether another seed starts differently (None when not measured)."""
    state_readable: bool
    catalog: TaskCatalog | None
    """The server's tasks from its Task API; None when it has none (or its reset ignores the task): seeds."""
    tasks: str
    """Where the task ids come from, in a sentence."""
    tasks_vary: bool | None
    """Whether another listed task starts differently from the first (None when not measured)."""


def reset_frame(spec: ServerSpec, seed: int, task: ServedTask | None) -> dict[str, Any]:
    """A reset's data: the seed, the URI's reset keys, and the task's split and index (which win over the URI's)."""
    frame = {"seed": seed, **spec.reset}
    if task is not None:
        frame.update(split=task.split, index=task.index)
    return frame


async def open_channel(http: aiohttp.ClientSession, spec: ServerSpec, reset: dict[str, Any]) -> tuple[Channel, Reply]:
    """A connected channel reset with `reset`; retries while the server is at capacity, up to ``capacity_wait``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + spec.capacity_wait
    delay = 0.05
    while True:
        channel = Channel(http, spec.ws, spec.timeout)
        await channel.open()
        try:
            kind, data = await channel.request("reset", reset)
        except ServerError as exc:
            await channel.close()
            if exc.code == CAPACITY_REACHED and loop.time() + delay < deadline:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            if exc.code == CAPACITY_REACHED:
                msg = (
                    f"The OpenEnv server at {spec.ws} is at capacity ({exc.message}) "
                    f"and stayed so for {spec.capacity_wait:g} s."
                )
                raise InfraFailure(msg) from exc
            msg = f"The OpenEnv server at {spec.ws} refused to reset with {reset}: {exc.details()} ({exc.code})."
            raise EnvironmentFailure(msg) from exc
        except BaseException:
            await channel.close()
            raise
        if kind != "observation":
            await channel.close()
            msg = f"The OpenEnv server at {spec.ws} answered a reset with a {kind!r} frame, not an observation."
            raise EnvironmentFailure(msg)
        try:
            return channel, observation_reply(data, spec.ws)
        except BaseException:
            await channel.close()
            raise


async def read_state(channel: Channel) -> dict[str, Any]:
    """The server's ``state`` of this session."""
    kind, data = await channel.request("state")
    if kind != "state" or not isinstance(data, dict):
        msg = f"The OpenEnv server at {channel.url} answered a state frame with {kind!r}, not a state object."
        raise EnvironmentFailure(msg)
    return data


def lookup(state: dict[str, Any], path: str) -> Any:
    """The value at dotted `path` in `state`; KeyError naming the missing part."""
    node: Any = state
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(part)
        node = node[part]
    return node


async def _start(
    http: aiohttp.ClientSession, spec: ServerSpec, reset: dict[str, Any]
) -> tuple[Reply, dict[str, Any] | None]:
    channel, reply = await open_channel(http, spec, reset)
    try:
        try:
            state = await read_state(channel)
        except (ServerError, EnvironmentFailure):
            state = None  # a server whose state cannot be read still plays; the probe compares less
    finally:
        await channel.close()
    return reply, state


def _view(reply: Reply, state: dict[str, Any] | None) -> bytes:
    kept = None if state is None else {k: v for k, v in state.items() if k not in STATE_BOOKKEEPING}
    start = {"observation": reply.observation, "reward": reply.reward, "done": reply.done, "state": kept}
    return orjson.dumps(start, option=orjson.OPT_SORT_KEYS)


async def _fetch(spec: ServerSpec) -> ServerInfo:
    timeout = aiohttp.ClientTimeout(total=spec.timeout)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        health = await get_json(http, spec.http, "/health")
        schema = await get_json(http, spec.http, "/schema")
        if not isinstance(schema, dict) or "action" not in schema:
            why = "has no /health or /schema route" if health is None or schema is None else "serves no action schema"
            msg = f"The server at {spec.http} {why}, so it is not an OpenEnv server (is the address right?)."
            raise BadURIError(msg)
        metadata = await get_json(http, spec.http, "/metadata")
        try:
            action = ActionSchema(schema["action"])
        except ValueError as exc:
            msg = f"The OpenEnv server at {spec.http} serves an unusable action schema: {exc}."
            raise EnvironmentFailure(msg) from exc
        catalog, no_catalog = await discover(http, spec)
        task = catalog.first if catalog is not None else None
        first, state = await _start(http, spec, reset_frame(spec, PROBE_SEED, task))
        if spec.reference is not None:
            _check_reference(spec, state, action)
        wire = "0.3" if first.metadata is None else "0.10"
        seeds = await _measure_seeds(http, spec, first, state, task)
        tasks, tasks_vary = (catalog.sentence(), None) if catalog is not None else (no_catalog, None)
        if catalog is not None and task is not None and seeds.seeded and spec.seeded is None:
            tasks_vary = await _other_tasks_vary(http, spec, catalog, task, _view(first, state))
            if not tasks_vary:  # the reset ignores the task: its ids would name the same episode
                tasks, catalog = _ignored(catalog, task), None
                first, state = await _start(http, spec, reset_frame(spec, PROBE_SEED, None))
                seeds = await _measure_seeds(http, spec, first, state, None)
    return ServerInfo(
        metadata=metadata if isinstance(metadata, dict) else {},
        action=action,
        observation_schema=observed if isinstance(observed := schema.get("observation"), dict) else {},
        wire=wire,
        seeded=seeds.seeded,
        seeds=seeds.sentence,
        seeds_vary=seeds.vary,
        state_readable=state is not None,
        catalog=catalog,
        tasks=tasks,
        tasks_vary=tasks_vary,
    )


def _check_reference(spec: ServerSpec, state: dict[str, Any] | None, action: ActionSchema) -> None:
    """The user's ``?reference=`` must name a field of the state that holds a valid action."""
    if state is None:
        msg = f"reference={spec.reference} needs the server's state, but {spec.ws} does not answer state frames."
        raise BadURIError(msg)
    try:
        value = lookup(state, spec.reference or "")
    except KeyError as exc:
        fields = ", ".join(sorted(state)) or "none"
        msg = f"The server's state has no field {exc.args[0]!r} (reference={spec.reference}); its fields: {fields}."
        raise BadURIError(msg) from None
    problems = action.problems(action.wrap(value))
    if problems:
        msg = f"The state field {spec.reference!r} does not hold a valid action for reference= ({problems[0]})."
        raise BadURIError(msg)


@attrs.frozen(kw_only=True)
class _Seeds:
    seeded: bool
    sentence: str
    vary: bool | None


async def _measure_seeds(
    http: aiohttp.ClientSession,
    spec: ServerSpec,
    first: Reply,
    state: dict[str, Any] | None,
    task: ServedTask | None,
) -> _Seeds:
    if spec.seeded is not None:
        said = "honours" if spec.seeded else "does not honour"
        flag = str(spec.seeded).lower()
        return _Seeds(
            seeded=spec.seeded,
            sentence=f"The URI says the server {said} seeds (seeded={flag}); not measured.",
            vary=None,
        )
    what = "observation and state" if state is not None else "observation (the state is not readable)"
    onto = f"task {task.id!r} and seed {PROBE_SEED}" if task is not None else f"seed {PROBE_SEED}"
    view = _view(first, state)
    for _ in range(PROBE_RESETS - 1):
        again, again_state = await _start(http, spec, reset_frame(spec, PROBE_SEED, task))
        if _view(again, again_state) != view:
            return _Seeds(
                seeded=False,
                sentence=f"Not honoured: sessions reset with {onto} began from different {what}s.",
                vary=None,
            )
    same = f"Honoured: {PROBE_RESETS} sessions reset with {onto} began from the same {what}."
    if task is not None:  # tasks, not seeds, are what varies here: `_other_tasks_vary` measures that
        return _Seeds(seeded=True, sentence=same, vary=None)
    other, other_state = await _start(http, spec, reset_frame(spec, PROBE_SEED + 1, None))
    vary = _view(other, other_state) != view
    note = "" if vary else f" Seed {PROBE_SEED + 1} began the same way too: the server may ignore seeds."
    return _Seeds(seeded=True, sentence=same + note, vary=vary)


def _others(catalog: TaskCatalog, task: ServedTask) -> list[ServedTask]:
    listed = [t for tasks in catalog.splits.values() for t in tasks if t != task]
    return listed[:PROBE_OTHER_TASKS]


def _ignored(catalog: TaskCatalog, task: ServedTask) -> str:
    *before, last = [repr(t.id) for t in [task, *_others(catalog, task)]]
    return (
        f"The server lists tasks (/{catalog.env_name}/tasks), but {', '.join(before)} and {last} all began the "
        "same way: its reset ignores split and index (OpenEnv drops reset keys its reset() does not declare), "
        "so tasks are reset seeds seed/<n>."
    )


async def _other_tasks_vary(
    http: aiohttp.ClientSession, spec: ServerSpec, catalog: TaskCatalog, task: ServedTask, view: bytes
) -> bool:
    """True when some other listed task starts differently from `task` (or there is no other to compare)."""
    others = _others(catalog, task)
    for other in others:
        reply, state = await _start(http, spec, reset_frame(spec, PROBE_SEED, other))
        if _view(reply, state) != view:
            return True
    return not others


def fetch(spec: ServerSpec) -> ServerInfo:
    """Query and probe the server (synchronously; works inside a running event loop too)."""
    return run_sync(_fetch(spec))
