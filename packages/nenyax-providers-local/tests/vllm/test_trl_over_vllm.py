"""TRL's vLLM server mode through `NenyaxSpec`: where a trainer samples with ``use_vllm=True, vllm_mode="server"``
(TRL syncs its weights into the server before each rollout), the spec's episodes are sampled by that server,
token in, token out, and TRL is handed the ids vLLM returned.

The trainer here is TRL's own `GRPOConfig` on a stand-in for the trainer object: a real `GRPOTrainer` in vLLM
server mode opens an NCCL weight-transfer channel to the server at start, which a CPU-only machine cannot.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from trl import GRPOConfig

from nenyax.core import read_trajectories
from nenyax.core.errors import UsageError
from nenyax.trainers.trl import NenyaxSpec


def _trainer(tokenizer, tmp_path, **overrides):
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        use_vllm=True,
        max_completion_length=16,
        temperature=1.0,
        per_device_train_batch_size=2,
        num_generations=2,
        use_cpu=True,
        report_to="none",
        **overrides,
    )
    return SimpleNamespace(args=args, processing_class=tokenizer, state=SimpleNamespace(global_step=3))


def test_the_spec_samples_through_trls_vllm_server_and_hands_trl_its_ids(vllm, tokenizer, tmp_path):
    spec = NenyaxSpec("reasoning_gym:basic_arithmetic?size=2", runs=tmp_path / "runs")
    trainer = _trainer(tokenizer, tmp_path, vllm_mode="server", vllm_server_base_url=vllm)
    prompt = spec.train_dataset[0]["prompt"]
    out = spec.rollout_func([prompt, prompt], trainer)
    recorded = list(read_trajectories(spec.run_dir / "trajectories.jsonl"))
    assert len(recorded) == 2
    for trajectory in recorded:
        call = trajectory.model_calls[0]
        assert call.provider == "tokens"
        assert call.fingerprint == "trl:step-3"
    handed = sorted(zip(out["prompt_ids"], out["completion_ids"], strict=True))
    sampled = sorted(
        (list(t.model_calls[0].prompt_token_ids), list(t.model_calls[0].completion_token_ids)) for t in recorded
    )
    assert handed == sampled


def test_vllm_inside_trls_process_is_one_sentence(tokenizer, tmp_path):
    spec = NenyaxSpec("reasoning_gym:basic_arithmetic?size=2", runs=tmp_path / "runs")
    trainer = _trainer(tokenizer, tmp_path, vllm_mode="colocate")
    with pytest.raises(UsageError, match="server mode only"):
        spec.rollout_func([spec.train_dataset[0]["prompt"]] * 2, trainer)
