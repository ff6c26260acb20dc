"""SkyRL's prompt dataset rows for a Nenyax environment's tasks: ``prompt``, ``env_class``, ``env_extras``.

SkyRL's `PromptDataset` reads a parquet or JSON file of such rows and hands its generator each row's prompt,
``env_class`` and ``env_extras``; the extras name the Nenyax task, so both `NenyaxTextEnv` and `NenyaxGenerator`
play exactly that task. A step environment's row shows its session's first chat; an environment that runs its
own loop (rollout, task mode) builds its prompt while it plays, so its row's prompt is a line naming the task
(SkyRL only measures and logs it).
"""

from __future__ import annotations

from typing import Any

from nenyax.core import task_rows
from nenyax.core.errors import UsageError
from nenyax.trainers.skyrl.text_env import ENV_ID, environment


def skyrl_rows(
    uri: str, *, split: str | None = None, limit: int | None = None, seed: int | None = None
) -> list[dict[str, Any]]:
    """A row per task of the environment at `uri` (`split`, at most `limit`), every episode of it played with
    `seed` (None: the env's or generator's own, 0 by default)."""
    env = environment(uri)  # the one the episodes play, loaded once per process
    rows = []
    for row in task_rows(env, split=split, limit=limit):
        prompt = row["prompt"] or [{"role": "user", "content": f"Task {row['task_id']} of {env.uri}."}]
        extras: dict[str, Any] = {"nenyax_uri": env.uri, "nenyax_task": row["task_id"]}
        if seed is not None:
            extras["nenyax_seed"] = seed
        rows.append({"prompt": prompt, "env_class": ENV_ID, "env_extras": extras})
    if not rows:
        raise UsageError(f"{env.uri} lists no task to train on.")
    return rows
