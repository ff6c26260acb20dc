"""Task lists: an environment whose tasks form one split, and finding a task by id with a did-you-mean."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from nenyax.core.errors import BadURIError, did_you_mean

ONE_SPLIT = "tasks"
"""The name of the only split of an environment whose tasks are not split (a folder, a taskset)."""


def one_split_ids(uri: str, ids: Iterable[str], split: str | None, limit: int | None) -> list[str]:
    """`task_ids` of an environment with the one split ``tasks``: `ids` in order, at most `limit`."""
    if split not in (None, ONE_SPLIT):
        msg = f"{uri} has one split, {ONE_SPLIT!r}, not {split!r}."
        raise BadURIError(msg)
    found = list(ids)
    return found if limit is None else found[:limit]


def pick(uri: str, task_id: str | None, tasks: Collection[str]) -> str:
    """`task_id` when `tasks` holds it, the first task when it is None; else one sentence with a did-you-mean."""
    key = task_id if task_id is not None else next(iter(tasks))
    if key not in tasks:
        msg = f"{key!r} is not a task of {uri}." + did_you_mean(key, tasks, "task")
        raise BadURIError(msg)
    return key
