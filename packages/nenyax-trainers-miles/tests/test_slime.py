"""slime's `custom_generate` against `nenyax serve-model` as the policy server: the `Sample` it fills holds
the tokens the model sampled (prompt and response, the mask, the logprobs), as the trajectory recorded them."""

from __future__ import annotations

import asyncio
from argparse import Namespace

import pytest
from samples import Sample

from nenyax.core import merged_samples, read_trajectories
from nenyax.trainers.miles import custom_generate, prompt_rows, reward
from nenyax.trainers.miles.episodes import run_dirs

STEP = "reasoning_gym:basic_arithmetic?size=2"
ARGS = Namespace(dynamic_sampling_filter_path="nenyax.trainers.miles.keep_group")


def test_custom_generate_fills_the_sample_with_the_recorded_tokens(model_url, tmp_path, monkeypatch):
    monkeypatch.setenv("NENYAX_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("NENYAX_POLICY_BASE_URL", model_url)
    (row, *_) = prompt_rows(STEP, limit=1)
    sample = Sample(group_index=3, prompt=row["prompt"], metadata=dict(row["metadata"]))
    sampling = {"max_new_tokens": 10, "temperature": 1.0, "top_p": 1.0, "sampling_seed": None}  # slime's names
    filled = asyncio.run(custom_generate(None, sample, sampling))
    assert filled is sample
    verdict = sample.metadata["nenyax"]
    (run,) = [path for uri, path in run_dirs().items() if uri.startswith("reasoning_gym:")]
    (trajectory,) = [t for t in read_trajectories(run / "trajectories.jsonl") if t.id == verdict["trajectory_id"]]
    (call,) = trajectory.model_calls
    assert call.params["max_tokens"] == 10  # slime's max_new_tokens, sent as OpenAI's
    assert trajectory.group_id == "slime-group-3"
    (merged,), _ = merged_samples(trajectory)
    assert sample.tokens == [*call.prompt_token_ids, *call.completion_token_ids]
    assert sample.response_length == len(call.completion_token_ids) == len(sample.loss_mask)
    assert sample.rollout_log_probs == pytest.approx(list(call.logprobs))
    assert sample.loss_mask == list(merged.loss_mask) == [1] * sample.response_length
    assert sample.response == call.response["content"]
    expected = Sample.Status.TRUNCATED if call.finish_reason == "length" else Sample.Status.COMPLETED
    assert sample.status is expected
    assert not sample.remove_sample
    assert asyncio.run(reward(ARGS, sample)) == trajectory.judgment.score
