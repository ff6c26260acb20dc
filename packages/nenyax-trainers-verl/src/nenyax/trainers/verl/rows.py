"""`verl_rows`: a Nenyax environment's tasks as the rows of verl's parquet dataset.

verl's `RLHFDataset` hands each row's columns to the agent loop's ``run`` as keyword arguments (with
``raw_prompt``, the chat built from ``prompt``), and routes the row by ``agent_name``. Each row here names
the loop (``nenyax``) and, in ``extra_info``, the environment's URI and the task (``nenyax_uri``,
``nenyax_task``), which `NenyaxAgentLoop` plays; ``prompt`` is the task's first chat (a step environment's), or
a line naming the task where the episode builds its own prompt (a format's loop, a harness).
"""

from __future__ import annotations

from typing import Any

from nenyax.core import load, task_rows
from nenyax.core.errors import UsageError

AGENT_NAME = "nenyax"


def verl_rows(
    uri: str, *, split: str | None = None, limit: int | None = None, registry: Any = None
) -> list[dict[str, Any]]:
    """One verl row per task of the environment at `uri` (`split`, at most `limit`); write them with
    ``pandas.DataFrame(rows).to_parquet(path)`` for ``data.train_files``."""
    env = load(uri, registry=registry)
    rows = []
    for index, row in enumerate(task_rows(env, split=split, limit=limit)):
        task = row["task_id"]
        prompt = row["prompt"] or [{"role": "user", "content": f"Task {task} of {env.uri}."}]
        rows.append(
            {
                "prompt": prompt,
                "agent_name": AGENT_NAME,
                "data_source": f"nenyax:{env.uri}",
                # verl's reward functions read reward_model; the episode's judgment is its reward here.
                "reward_model": {"style": "nenyax", "ground_truth": ""},
                "extra_info": {"index": index, "nenyax_uri": env.uri, "nenyax_task": task},
            }
        )
    if not rows:
        raise UsageError(f"{env.uri} lists no task to train on.")
    return rows
