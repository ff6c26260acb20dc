"""`export_tasks`: an environment's tasks as prompt rows, the dataset a trainer's data loader takes.

    from nenyax.core import export_tasks
    result = export_tasks("reasoning_gym:basic_arithmetic?size=100", to="parquet", out="tasks.parquet")

A trainer that owns its loop (TRL's ``train_dataset``, verl's parquet files) iterates dataset rows; each
row names its task (``task_id``, ``env_uri``), so whatever plays it later plays that very task.
``prompt`` is the chat the model is first shown, where the environment can say it without playing: a
step environment with a text codec renders its first observation; a native loop or a harness builds its
prompt while it plays, so its rows carry none (null).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import attrs

from nenyax.core.contract.row_schema import MESSAGES, STRING, RowSchema, col
from nenyax.core.engine.environment import Environment, StepEnvironment
from nenyax.core.engine.export import BATCH
from nenyax.core.engine.loader import load
from nenyax.core.errors import UnsupportedPolicyError, UsageError
from nenyax.core.plugins.registry import Registry, default_registry

TASKS = RowSchema(
    "tasks",
    (
        col("prompt", MESSAGES, "the chat the model is first shown (step mode, text codec); null otherwise"),
        col("task_id", STRING, "the task, as the environment names it"),
        col("env_uri", STRING, "the environment's URI: load it to play the task"),
        col("split", STRING, "the split asked for (null: the environment's default)"),
        col("mode", STRING, "step, rollout or task"),
    ),
)
"""The columns of a task row."""


@attrs.frozen(kw_only=True)
class TaskExport:
    """What `export_tasks` wrote."""

    destination: str
    exporter: str
    rows: int
    prompts: int
    """Rows with a prompt (the others' environment builds its prompt while it plays)."""


def task_rows(env: Environment, *, split: str | None = None, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """A row per task of `env` (`split`, at most `limit`), in the environment's order."""
    renders = env if isinstance(env, StepEnvironment) else None
    for task in env.task_ids(split=split, limit=limit):
        prompt = None
        if renders is not None:
            session = renders.session(task=task)
            try:
                prompt = session.render()
            except UnsupportedPolicyError:
                renders = None  # no text codec: no task of this environment has a prompt to show
            finally:
                session.close()
        yield {"prompt": prompt, "task_id": task, "env_uri": env.uri, "split": split, "mode": env.manifest.mode.value}


def export_tasks(
    uri: str,
    *,
    to: str = "jsonl",
    out: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    registry: Registry | None = None,
    options: dict[str, Any] | None = None,
) -> TaskExport:
    """Write the tasks of the environment at `uri` as prompt rows with exporter `to`, to `out`
    (default: ``tasks<suffix>`` in the current folder). `options` go to the exporter's factory."""
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be at least 1, not {limit}.")
    plugins = registry or default_registry()
    exporter = plugins.create("exporter", to, **(options or {}))
    destination = Path(out) if out is not None else Path(f"tasks{exporter.suffix}")
    env = load(uri, registry=registry)
    try:
        rows = task_rows(env, split=split, limit=limit)
        writer = exporter.open(str(destination), schema=TASKS)
        written = prompts = 0
        try:
            while batch := list(islice(rows, BATCH)):
                writer.write_batch(batch)
                written += len(batch)
                prompts += sum(row["prompt"] is not None for row in batch)
        except BaseException:
            writer.abort()
            raise
        if not written:
            writer.abort()
            where = f" in split {split!r}" if split else ""
            raise UsageError(f"{uri} lists no task{where}; there is nothing to export.")
        return TaskExport(destination=writer.close(), exporter=to, rows=written, prompts=prompts)
    finally:
        env.close()
