"""What the GRPO tests share: TRL's real GRPOTrainer (CPU) over the embedded SmolLM2-135M, trained through a
`NenyaxSpec`, and the checks that what it trained on is what the trajectories recorded.

The base model scores 0 on nearly every task of these environments, and a group scored alike trains nothing:
each trainer adds a signal of the test's own (`varied`) beside the environment's score, so that two optimizer
steps move the weights whatever the model says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from nenyax.core import Status, merged_samples, read_trajectories
from nenyax.trainers.trl import NenyaxSpec

SETTINGS: dict[str, Any] = {
    "per_device_train_batch_size": 4,
    "num_generations": 4,
    "max_completion_length": 24,
    "max_steps": 2,
    "learning_rate": 5e-5,
    "beta": 0.0,
    "temperature": 1.0,
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "use_cpu": True,
    "seed": 0,
    # On a CPU, TRL's defaults (bf16 autocast, activation checkpointing) cost minutes and change the logprobs:
    # the step-mode test took 197 s with them, 30 s without.
    "bf16": False,
    "gradient_checkpointing": False,
    "reward_weights": [1.0, 0.1],
}


def varied(completion_ids, **_):
    """The test's own signal, different for nearly any two completions (their token ids' sum, mod 5)."""
    return [float(sum(ids) % 5) for ids in completion_ids]


def trainer_for(spec: NenyaxSpec, folder: Path, tmp_path: Path, **overrides: Any) -> Any:
    """A GRPOTrainer on `spec` with a fresh copy of the model at `folder`."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return GRPOTrainer(
        model=model,
        args=GRPOConfig(output_dir=str(tmp_path / "out"), **{**SETTINGS, **overrides}),
        processing_class=tokenizer,
        train_dataset=spec.train_dataset,
        rollout_func=spec.rollout_func,
        reward_funcs=[*spec.reward_funcs, varied],
    )


def recording(spec: NenyaxSpec) -> list[dict[str, list[Any]]]:
    """What the spec's rollout_func hands TRL, batch by batch, from now on."""
    handed: list[dict[str, list[Any]]] = []
    play = spec.rollout_func

    def rollout_func(prompts, trainer):
        out = play(prompts, trainer)
        handed.append(out)
        return out

    spec.rollout_func = rollout_func  # type: ignore[method-assign]
    return handed


def nenyax(*args: str) -> str:
    """Run the CLI; it must succeed."""
    done = subprocess.run([sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def trains_two_steps(trainer: Any) -> None:
    """Train; two optimizer steps were taken and moved the weights."""
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    assert trainer.state.global_step == 2
    params = trainer.model.named_parameters()
    assert any(p.requires_grad and not torch.equal(p, before[n]) for n, p in params), "no weight moved"


def trains_two_steps_on_the_record(uri: str, mode: str, folder: Path, tmp_path: Path, **overrides: Any) -> None:
    """Two optimizer steps of GRPO on `uri`, and every check that TRL trained on exactly what was recorded."""
    spec = NenyaxSpec(uri, runs=tmp_path / "runs")
    assert spec.env.manifest.mode.value == mode
    handed = recording(spec)
    trainer = trainer_for(spec, folder, tmp_path, **overrides)
    trains_two_steps(trainer)

    recorded = list(read_trajectories(spec.run_dir / "trajectories.jsonl"))
    episodes = 2 * trainer.args.per_device_train_batch_size
    generated_at = range(0, 2, trainer.args.steps_per_generation)  # the steps at which a batch was generated
    assert len(recorded) == sum(len(out["prompt_ids"]) for out in handed) == episodes
    assert all(t.model_calls for t in recorded)  # every episode was played by the trainer's model
    given = sorted(
        (p, c, m)
        for out in handed
        for p, c, m in zip(out["prompt_ids"], out["completion_ids"], out["env_mask"], strict=True)
        if any(m)
    )
    trainable = [merged_samples(t)[0][0] for t in recorded if t.status in (Status.OK, Status.POLICY_ERROR)]
    played = sorted((list(s.prompt_ids), list(s.completion_ids), list(s.loss_mask)) for s in trainable)
    assert given == played  # TRL trained on exactly the recorded ids, the environment's tokens masked out
    assert len(given) >= episodes // 2
    # Every later call of an episode (terminus-2 asking again for a reply cut short) was built on the exact ids
    # before it, so no episode forked and TRL was handed each whole.
    assert not any(merged_samples(t)[1].count for t in recorded)
    assert {c.fingerprint for t in recorded for c in t.model_calls} == {f"trl:step-{n}" for n in generated_at}
    logged = [entry for entry in trainer.state.log_history if "rewards/nenyax_score/mean" in entry]
    assert len(logged) == len(generated_at)  # the environment's score reached TRL as a reward, at each generation

    # The run directory is a run like any other: it views and exports, and every sample TRL was handed is a
    # merged row (a forked episode's later samples are rows too).
    page = json.loads(nenyax("view", str(spec.run_dir), "--json"))["page"]
    assert os.path.getsize(page) > 0
    rows = tmp_path / "merged.jsonl"
    nenyax("export", str(spec.run_dir), "--rows", "merged", "--to", "jsonl", "--out", str(rows))
    exported = [json.loads(line) for line in rows.read_text().splitlines()]
    as_rows = {(tuple(r["prompt_ids"]), tuple(r["completion_ids"]), tuple(r["loss_mask"])) for r in exported}
    assert all((tuple(p), tuple(c), tuple(m)) in as_rows for p, c, m in played)
