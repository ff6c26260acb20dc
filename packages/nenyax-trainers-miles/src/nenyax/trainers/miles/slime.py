"""slime's generate hook: `custom_generate` plays one Nenyax episode, any mode, against the policy's OpenAI
route, and fills slime's `Sample` with the exact token ids and logprobs the server sampled.

    --custom-generate-function-path nenyax.trainers.miles.custom_generate
    --custom-rm-path                nenyax.trainers.miles.reward
    --dynamic-sampling-filter-path  nenyax.trainers.miles.keep_group

slime has no session server that records calls (miles' has): the episode's calls are recorded by Nenyax, so
the server must answer with vLLM's token-id fields (``return_token_ids``: ``prompt_token_ids`` and each
choice's ``token_ids``), as ``vllm serve`` and ``nenyax serve-model`` do. Where it does not, the sample is
``FAILED`` with one sentence in its metadata, never trained on re-tokenized text.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from nenyax.core import SAMPLING_KEYS, Endpoint, Trajectory, merged_samples
from nenyax.trainers.miles.agent import METADATA_KEY, SESSION_MODEL, verdict
from nenyax.trainers.miles.episodes import named_episode, play

BASE_URL_VARIABLE = "NENYAX_POLICY_BASE_URL"
"""The policy's OpenAI base URL (with ``/v1``); default: slime's router, ``http://IP:PORT/v1``."""

_SLIME_TO_OPENAI = {"max_new_tokens": "max_tokens", "sampling_seed": "seed"}


def policy_url(args: Any) -> str:
    """Where the episode's calls go: `BASE_URL_VARIABLE`, else slime's SGLang router's OpenAI route."""
    if url := os.environ.get(BASE_URL_VARIABLE):
        return url.rstrip("/")
    return f"http://{args.sglang_router_ip}:{args.sglang_router_port}/v1"


def sampling(params: Mapping[str, Any]) -> dict[str, Any]:
    """slime's sampling parameters (SGLang's names) as the OpenAI ones the Endpoint sends."""
    renamed = {_SLIME_TO_OPENAI.get(key, key): value for key, value in params.items() if value is not None}
    return {key: value for key, value in renamed.items() if key in SAMPLING_KEYS}


async def custom_generate(args: Any, sample: Any, sampling_params: Mapping[str, Any]) -> Any:
    """Play the episode `sample.metadata` names and fill `sample` with what the model sampled in it."""
    uri, task, seed = named_episode(sample.metadata)
    endpoint = Endpoint(f"openai:{SESSION_MODEL}", base_url=policy_url(args), **sampling(sampling_params))
    try:
        trajectory = await play(uri, task, seed, endpoint, group_id=_group(sample))
    finally:
        await endpoint.aclose()
    fill(sample, trajectory)
    return sample


def _group(sample: Any) -> str | None:
    index = getattr(sample, "group_index", None)
    return None if index is None else f"slime-group-{index}"


def fill(sample: Any, trajectory: Trajectory) -> None:
    """Write the trajectory's one merged sequence into slime's `Sample` (tokens, response length, loss mask,
    rollout logprobs, status) and its judgment into ``metadata['nenyax']``, where `reward` reads it."""
    judged = verdict(trajectory)
    samples, forks = merged_samples(trajectory)
    status = type(sample).Status
    if not samples or samples[0].logprobs is None:
        judged["trainable"] = False
        judged["error"] = judged["error"] or (
            "The policy server answered without token ids or logprobs: slime trains on the sampled tokens, so it "
            "must return vLLM's `return_token_ids` fields."
            if trajectory.model_calls
            else "The episode made no model call."
        )
    else:
        merged = samples[0]
        sample.tokens = [*merged.prompt_ids, *merged.completion_ids]
        sample.response_length = len(merged.completion_ids)
        sample.loss_mask = list(merged.loss_mask)
        sample.rollout_log_probs = list(merged.logprobs or ())
        sample.response = "".join(str(trajectory.model_calls[i].response.get("content") or "") for i in merged.calls)
        judged["forked_calls"] = forks.count
    if not judged["trainable"]:
        sample.status, sample.remove_sample = status.FAILED, True
    else:
        last = trajectory.model_calls[-1].finish_reason if trajectory.model_calls else None
        sample.status = status.TRUNCATED if last == "length" else status.COMPLETED
    sample.metadata = {**(sample.metadata or {}), METADATA_KEY: judged}
