"""verifiers 0.4's own loader and episode runner on a Nenyax taskset, as ``vf-eval`` runs each episode:
`vf.load_environment` over the env config, `env.serving()` (the interception server), `env.run_episode`."""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any

import verifiers.v1 as vf

from nenyax.trainers.verifiers import task_config

KEY_VAR = "NENYAX_VERIFIERS_TEST_KEY"
MAX_TOKENS = 16


def environment(uri: str, retries: int = 6, **taskset: Any) -> Any:
    """The verifiers env for `uri`, its seat in the local subprocess runtime (never the remote default)."""
    config = vf.resolve_env_config(
        {
            "taskset": task_config(uri, **taskset),
            "player": {
                "runtime": {"type": "subprocess"},
                "harness": {"id": "nenyax-verifiers", "model_retries": retries},
            },
        }
    )
    return vf.load_environment(config)


def context(base_url: str, max_tokens: int = MAX_TOKENS) -> Any:
    """The model context: the served model, greedy, short replies."""
    os.environ.setdefault(KEY_VAR, "unused")
    sampling = vf.Sampling(max_tokens=max_tokens, temperature=0.0)
    return vf.ModelContext(
        model="smollm2-135m", client=vf.EvalClientConfig(base_url=base_url, api_key_var=KEY_VAR), sampling=sampling
    )


def play(env: Any, task: Any, base_url: str, max_tokens: int = MAX_TOKENS) -> Any:
    """One episode of `task`, run by verifiers' own `Env.run_episode` inside `Env.serving`."""

    async def run() -> Any:
        async with env.serving():
            return await env.run_episode(task, context(base_url, max_tokens))

    return asyncio.run(run())


def assert_token_ids(trace, max_tokens: int = MAX_TOKENS) -> None:
    """Each model call of the trace kept the ids and logprobs the server sampled."""
    calls = trace.info["nenyax_token_ids"]
    assert calls
    assert len(calls) == len(trace.calls) == trace.num_turns
    for call in calls:
        assert call["prompt_ids"]
        assert 0 < len(call["completion_ids"]) <= max_tokens
        assert len(call["logprobs"]) == len(call["completion_ids"])
    # Each later prompt extends the one before (the same conversation, one turn longer).
    for before, after in itertools.pairwise(calls):
        assert after["prompt_ids"][: len(before["prompt_ids"])] == before["prompt_ids"]
