"""OpenEnv 0.10's Task API, read by the client: the server's splits and tasks, and how to reset onto one.

A dataset-backed OpenEnv server (``nenyax serve`` of a dataset, or any environment that defines
OpenEnv's ``TaskProvider`` methods) lists its tasks over HTTP: ``GET /list_environments``,
``GET /{env}/splits``, ``POST /{env}/tasks {"split"}`` (and ``/num_tasks`` for the true count when
``/tasks`` is a bounded preview). A task is then started by a ``reset`` carrying its ``split`` and
``index``, which is how OpenEnv defines task selection (there is no WebSocket frame for it).

A task's id is the ``id`` of its spec as the server lists it (``nenyax serve`` lists the Nenyax task
ids of the environment it serves, so a served dataset keeps its ids); a spec without one, or ids
that repeat, give ``<split>/<index>``. A server without the Task API (openenv-core 0.3 has no such
routes; openenv 0.10 answers 501 for an environment that does not provide it) has no catalog, and
its tasks stay reset seeds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp
import attrs
import orjson

from nenyax.adapters.openenv.wire import clip, reason
from nenyax.core import BadURIError, EnvironmentFailure, InfraFailure

if TYPE_CHECKING:
    from nenyax.adapters.openenv.options import ServerSpec

ABSENT = frozenset({404, 405, 501})
"""Statuses that mean "no Task API here": no such route (openenv-core 0.3), or OpenEnv 0.10's 501 for an
environment without the `TaskProvider` methods."""


@attrs.frozen(kw_only=True)
class ServedTask:
    """One task the server lists: the id Nenyax shows, and the split and index a reset selects it by."""

    id: str
    split: str
    index: int


@attrs.frozen(kw_only=True)
class TaskCatalog:
    """The server's tasks by split, in the server's order."""

    env_name: str
    """The ``{env}`` of the routes (``/list_environments``' answer)."""
    splits: dict[str, tuple[ServedTask, ...]]
    """Every split's listed tasks (at most the URI's ``tasks=`` of each, when it names a number)."""
    counts: dict[str, int | None]
    """Every split's true task count, as the server reports it (None where it does not)."""
    ids_from: str
    """``server`` (the specs' own ids) or ``position`` (``<split>/<index>``: the specs had none, or repeated)."""
    by_id: dict[str, ServedTask] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "by_id", {t.id: t for tasks in self.splits.values() for t in tasks})

    @property
    def first(self) -> ServedTask | None:
        """The first task of the first split that has one."""
        return next((tasks[0] for tasks in self.splits.values() if tasks), None)

    def find(self, task: str, uri: str) -> ServedTask:
        """The task with id `task`; `BadURIError` naming an example id when there is none."""
        found = self.by_id.get(task) if isinstance(task, str) else None
        if found is None:
            example = self.first
            like = f"; its task ids look like {example.id!r}" if example else "; it lists no tasks"
            msg = f"{task!r} is not a task of {uri}{like} (from the server's Task API)."
            raise BadURIError(msg)
        return found

    def sentence(self) -> str:
        """Where the tasks come from, in words that do not change between loads of the same server."""
        parts = []
        for name, tasks in self.splits.items():
            count = self.counts.get(name)
            of = f" of its {count}" if count is not None and count != len(tasks) else ""
            parts.append(f"{len(tasks)}{of} in split {name!r}")
        ids = "the ids it lists" if self.ids_from == "server" else "ids <split>/<index> (its specs name no unique id)"
        return (
            f"From the server's Task API (/{self.env_name}/splits and /tasks): {', '.join(parts) or 'no splits'}, "
            f"with {ids}; an episode resets with its task's split and index."
        )


async def _call(http: aiohttp.ClientSession, base: str, route: str, body: Any = None) -> tuple[int, Any]:
    """``GET`` (or ``POST`` `body`) a Task API route: (status, JSON or None); `InfraFailure` if unreachable."""
    url = base + route
    try:
        request = http.get(url) if body is None else http.post(url, json=body)
        async with request as response:
            status, text = response.status, await response.read()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        msg = f"Cannot reach the OpenEnv server at {base} ({reason(exc)}) for its Task API ({route})."
        raise InfraFailure(msg) from exc
    if status in ABSENT:
        return status, None
    if status >= 400:
        body = clip(text.decode(errors="replace"))
        msg = f"The OpenEnv server at {base} answered {route} with HTTP {status}: {body!r}."
        raise EnvironmentFailure(msg)
    try:
        return status, orjson.loads(text)
    except orjson.JSONDecodeError:
        msg = f"The OpenEnv server at {base} answered {route} with something that is not JSON: {clip(str(text))!r}."
        raise EnvironmentFailure(msg) from None


def _malformed(base: str, route: str, answer: Any, expected: str) -> EnvironmentFailure:
    msg = f"The OpenEnv server at {base} answered {route} with {clip(repr(answer), 80)}, not {expected}."
    return EnvironmentFailure(msg)


def _split_names(base: str, route: str, answer: Any) -> list[tuple[str, int | None]]:
    """(name, count) of each split: OpenEnv normalises them to ``{"name", "type"}``; ``nenyax serve`` adds a count."""
    if not isinstance(answer, list):
        raise _malformed(base, route, answer, "a list of splits")
    found = []
    for item in answer:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name:
            raise _malformed(base, route, item, 'a split ({"name": ...})')
        count = item.get("count") if isinstance(item, dict) else None
        found.append((name, count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None))
    return found


def _spec_id(spec: Any) -> str | None:
    value = spec.get("id") if isinstance(spec, dict) else None
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value) or None


def _spec_index(spec: Any, position: int) -> int:
    # A spec names its own index where it has one (OpenEnv's guide lists {"id", "index", "split"});
    # the reset must use the server's index, which is also its position in an unsliced listing.
    value = spec.get("index") if isinstance(spec, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else position


async def _count(http: aiohttp.ClientSession, base: str, env: str, split: str) -> int | None:
    status, answer = await _call(http, base, f"/{env}/num_tasks", {"split": split})
    count = answer.get("num_tasks") if status not in ABSENT and isinstance(answer, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


async def discover(http: aiohttp.ClientSession, spec: ServerSpec) -> tuple[TaskCatalog | None, str]:
    """The server's task catalog, or None with the reason in a sentence when it has no Task API.

    A Task API that answers with the wrong shapes is an `EnvironmentFailure`: falling back to seeds
    would hide a broken server behind task ids it never listed.
    """
    base = spec.http
    status, names = await _call(http, base, "/list_environments")
    if status in ABSENT:
        return None, f"No Task API (/list_environments answered HTTP {status}), so tasks are reset seeds seed/<n>."
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise _malformed(base, "/list_environments", names, "a list of environment names")
    if not names:
        return None, "No Task API (/list_environments lists no environment), so tasks are reset seeds seed/<n>."
    env = quote(names[0], safe="")
    status, answer = await _call(http, base, f"/{env}/splits")
    if status in ABSENT:
        return None, f"No Task API (/{env}/splits answered HTTP {status}), so tasks are reset seeds seed/<n>."
    specs: dict[str, list[Any]] = {}
    counts: dict[str, int | None] = {}
    for split, count in _split_names(base, f"/{env}/splits", answer):
        status, listed = await _call(http, base, f"/{env}/tasks", {"split": split})
        if status in ABSENT:
            return None, f"No Task API (/{env}/tasks answered HTTP {status}), so tasks are reset seeds seed/<n>."
        if not isinstance(listed, dict) or not isinstance(listed.get("tasks"), list):
            raise _malformed(base, f"/{env}/tasks", listed, '{"tasks": [...]}')
        specs[split] = listed["tasks"]
        counts[split] = count if count is not None else await _count(http, base, env, split)
    return build_catalog(names[0], specs, counts, spec.task_limit), ""


def build_catalog(
    env: str, specs: dict[str, list[Any]], counts: dict[str, int | None], limit: int | None
) -> TaskCatalog:
    """The catalog of the task specs each split listed (the first `limit` of each, when given)."""
    kept = {split: listed[:limit] if limit is not None else listed for split, listed in specs.items()}
    own = {(split, n): _spec_id(s) for split, listed in kept.items() for n, s in enumerate(listed)}
    named = [i for i in own.values() if i is not None]
    # The server's own ids where every spec has one and none repeats (across splits too); else by position.
    by_server = len(named) == len(own) and len(set(named)) == len(named)
    splits = {
        split: tuple(
            ServedTask(
                id=(own[split, n] or "") if by_server else f"{split}/{_spec_index(s, n)}",
                split=split,
                index=_spec_index(s, n),
            )
            for n, s in enumerate(listed)
        )
        for split, listed in kept.items()
    }
    return TaskCatalog(env_name=env, splits=splits, counts=counts, ids_from="server" if by_server else "position")
