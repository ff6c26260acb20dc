"""One `/run`: the row's Nenyax task played against the trainer's policy server, as NeMo Gym's answer.

Free of nemo-gym (the agent class in `agent` wraps it), so it reads the row as the plain JSON it arrived as.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nenyax.core import Endpoint, Environment
from nenyax.trainers.nemo_gym.mapping import failure_body, verify_response

TASK_KEY = "nenyax_task"
"""The row field naming the Nenyax task the row stands for (`rows()` writes it)."""
SEED_KEY = "nenyax_seed"
"""An optional row field: the episode's seed (default: the environment's own)."""


class RowError(ValueError):
    """A row that names no task: the caller's mistake (HTTP 422), found before any episode."""


async def play(
    env: Environment, row: dict[str, Any], urls: Iterator[str], settings: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    """Play `row`'s task once: (200, the verify response) for a trainable episode, else (503, why).

    `settings` are the agent config's (`policy_model_name`, `max_tokens`, `temperature`, `timeout`,
    `max_retries`); the row's `responses_create_params` (`max_output_tokens`, `temperature`, `top_p`) win.
    """
    task = row.get(TASK_KEY)
    if not isinstance(task, str) or not task:
        raise RowError(f"The row names no {TASK_KEY!r} (write the rows with `nenyax-nemo-gym-agent --write-rows`).")
    params = row.get("responses_create_params") or {}
    sampling = {
        "max_tokens": params.get("max_output_tokens") or settings.get("max_tokens"),
        "temperature": settings.get("temperature") if params.get("temperature") is None else params["temperature"],
        "top_p": params.get("top_p"),
    }
    retries = settings.get("max_retries")
    policy = Endpoint(
        f"openai:{settings['policy_model_name']}",
        base_url=next(urls),
        provider_options={} if retries is None else {"max_retries": retries},
        **{k: v for k, v in sampling.items() if v is not None},
    )
    try:
        trajectory = await env.arollout(
            policy,
            task=task,
            seed=row.get(SEED_KEY),
            sample=int(row.get("_ng_rollout_index") or 0),
            timeout=settings.get("timeout"),
        )
    finally:
        await policy.aclose()
    # Only ok and policy_error episodes are ever a reward; env/verifier/infra errors and timeouts are not.
    if not trajectory.status.trainable or trajectory.judgment is None:
        return 503, failure_body(trajectory)
    return 200, verify_response(row, trajectory, settings["policy_model_name"])
