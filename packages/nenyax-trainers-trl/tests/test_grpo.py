"""TRL's real GRPOTrainer (CPU) trains the embedded SmolLM2-135M on a Nenyax environment through
`NenyaxSpec`: the episodes are played by the trainer's own model object, and what TRL trains on is
exactly what the trajectories recorded."""

from __future__ import annotations

import pytest
import torch

from nenyax.core import Status, read_trajectories
from nenyax.providers.local.provider import LocalProvider
from nenyax.trainers.trl import NenyaxSpec


@pytest.fixture(scope="module")
def model_folder():
    return LocalProvider().weights("smollm2-135m")


def _trainer(spec, folder, tmp_path, **overrides):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=24,
        max_steps=2,
        learning_rate=5e-5,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
        reward_weights=[1.0, 0.1],
        **overrides,
    )
    return GRPOTrainer(
        model=model,
        args=config,
        processing_class=tokenizer,
        train_dataset=spec.train_dataset,
        rollout_func=spec.rollout_func,
        # The base model scores 0 on nearly every task, and a group scored alike trains nothing: a signal of
        # the test's own gives every group one, beside the environment's score.
        reward_funcs=[*spec.reward_funcs, varied],
    )


def varied(completion_ids, **_):
    """The test's own signal, different for nearly any two completions (their token ids' sum, mod 5)."""
    return [float(sum(ids) % 5) for ids in completion_ids]


def test_grpo_takes_two_steps_on_a_step_environment_with_the_ids_the_trajectories_recorded(model_folder, tmp_path):
    spec = NenyaxSpec("reasoning_gym:basic_arithmetic?size=8", run_dir=tmp_path / "runs")
    handed = []
    play = spec.rollout_func

    def recording(prompts, trainer):
        out = play(prompts, trainer)
        handed.append(out)
        return out

    spec.rollout_func = recording
    trainer = _trainer(spec, model_folder, tmp_path)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    assert trainer.state.global_step == 2
    changed = [n for n, p in trainer.model.named_parameters() if p.requires_grad and not torch.equal(p, before[n])]
    assert changed, ("no weight moved", trainer.state.log_history, [(sum(m), len(m)) for out in handed for m in out["env_mask"]], [out["nenyax_score"] for out in handed])
    recorded = list(read_trajectories(spec.run_dir / "trajectories.jsonl"))
    assert len(recorded) == sum(len(out["prompt_ids"]) for out in handed) == 8
    assert all(t.status is Status.OK for t in recorded)
    given = [(p, c) for out in handed for p, c in zip(out["prompt_ids"], out["completion_ids"], strict=True)]
    played = [(list(t.model_calls[0].prompt_token_ids), list(t.model_calls[0].completion_token_ids)) for t in recorded]
    assert sorted(given) == sorted(played)  # TRL trained on exactly the recorded ids
    assert {t.model_calls[0].fingerprint for t in recorded} == {"trl:step-0", "trl:step-1"}
    logged = [entry for entry in trainer.state.log_history if "rewards/nenyax_score/mean" in entry]
    assert len(logged) == 2  # the environment's score reached TRL as a reward, at each step
