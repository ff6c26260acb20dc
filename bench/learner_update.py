"""P6: the grpo learner's update throughput (completion tokens/s) against TRL's GRPOTrainer, same model, same batch.

One batch of real episodes is played first (reasoning-gym ``basic_arithmetic`` with the embedded SmolLM2-135M
through the learner's own policy; each group's members scored by rank so every group carries a signal). Then:

- nenyax: ``learner.update(groups)`` (grpo loss, AdamW, gradient clipping, and writing the new weights for the
  provider to serve them), timed over `--steps` updates after one warm-up;
- TRL: ``GRPOTrainer`` (loss_type grpo, beta 0, the same lr, clip and batch) whose ``rollout_func`` hands back
  the very same recorded completions and whose reward function the same scores, so its step does no
  generation: it is timed from the callback's step begin to step end, over the same number of steps after one
  warm-up.

Prints both tokens/s and the ratio (nenyax / TRL; goal >= 1.0), with and without nenyax's serving cost.
Run from the repository root: ``python bench/learner_update.py [--prompts 4 --group 2 --max-tokens 32 --steps 3]``
with nenyax-learners-torch, nenyax-providers-local, nenyax-adapters-reasoning-gym and trl installed.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time

import attrs
from _report import figure

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def ranked(groups):  # type: ignore[no-untyped-def]
    from nenyax.core.contract.trajectory import Judgment

    return [
        attrs.evolve(
            g,
            trajectories=tuple(
                attrs.evolve(t, judgment=Judgment(score=float(len(g.trajectories) - i), judge="rank"))
                for i, t in enumerate(g.trajectories)
            ),
        )
        for g in groups
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-6)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    import torch

    from nenyax.core import load
    from nenyax.core.plugins.registry import default_registry

    batch = args.prompts * args.group
    learner = default_registry().create(
        "learner", "grpo", lr=args.lr, max_tokens=args.max_tokens, micro_batch=batch, device=args.device
    )
    env = load("reasoning_gym:basic_arithmetic")
    groups = ranked(env.groups(learner.policy(), env.task_ids()[: args.prompts], n=args.group))
    calls = [t.model_calls[0] for g in groups for t in g.trajectories]
    tokens = sum(len(c.completion_token_ids) for c in calls)
    print(
        f"batch: {len(calls)} completions, {tokens} completion tokens, "
        f"prompts of {len(calls[0].prompt_token_ids)} tokens"
    )

    learner.update(groups)  # warm-up
    totals, trains = [], []
    for _ in range(args.steps):
        m = learner.update(groups)
        totals.append(m["seconds"])
        trains.append(m["train_seconds"])
    base = learner.base_folder
    learner.close()
    del learner
    gc.collect()
    ours, ours_train = tokens / statistics.median(totals), tokens / statistics.median(trains)

    # ---- TRL on the same batch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    by_prompt: dict[str, list] = {}
    for g, group in enumerate(groups):
        for t in group.trajectories:
            by_prompt.setdefault(f"task-{g}", []).append((t.model_calls[0], t.judgment.score))
    served: dict[str, int] = {}

    def rollout(prompts, trainer):  # type: ignore[no-untyped-def]
        out = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "score": []}
        for p in prompts:
            key = p if isinstance(p, str) else p[-1]["content"]
            i = served.get(key, 0) % args.group
            served[key] = i + 1
            call, score = by_prompt[key][i]
            out["prompt_ids"].append(list(call.prompt_token_ids))
            out["completion_ids"].append(list(call.completion_token_ids))
            out["logprobs"].append(list(call.logprobs))
            out["score"].append(score)
        return out

    def reward(completions, score, **_):  # type: ignore[no-untyped-def]
        return list(score)

    class Clock(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []

        def on_step_begin(self, *a, **k):  # type: ignore[no-untyped-def]
            self.start = time.perf_counter()

        def on_step_end(self, *a, **k):  # type: ignore[no-untyped-def]
            self.times.append(time.perf_counter() - self.start)

    clock = Clock()
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            use_cpu=args.device == "cpu",
            bf16=False,
            gradient_checkpointing=False,
            report_to="none",
            save_strategy="no",
            logging_strategy="no",
            loss_type="grpo",
            beta=0.0,
            epsilon=0.2,
            learning_rate=args.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            weight_decay=0.0,
            max_grad_norm=1.0,
            num_generations=args.group,
            per_device_train_batch_size=batch,
            max_completion_length=args.max_tokens,
            max_steps=args.steps + 1,
            shuffle_dataset=False,
            model_init_kwargs={"dtype": torch.float32},
        )
        dataset = Dataset.from_dict({"prompt": [f"task-{g}" for g in range(args.prompts)] * (args.steps + 1)})
        trainer = GRPOTrainer(
            model=str(base),
            reward_funcs=reward,
            args=config,
            train_dataset=dataset,
            processing_class=tokenizer,
            rollout_func=rollout,
            callbacks=[clock],
        )
        trainer.train()
    theirs = tokens / statistics.median(clock.times[1:])
    print(
        f"nenyax grpo update: {ours:.1f} tokens/s (median {statistics.median(totals):.2f} s per update, "
        "serving the new weights included)"
    )
    print(f"nenyax grpo, training only: {ours_train:.1f} tokens/s (median {statistics.median(trains):.2f} s)")
    print(f"TRL GRPOTrainer step: {theirs:.1f} tokens/s (median {statistics.median(clock.times[1:]):.2f} s per step)")
    print(f"ratio nenyax/TRL: {ours / theirs:.2f} (training only: {ours_train / theirs:.2f}; goal >= 1.0)")
    said = (
        f"{ours:.1f} vs TRL's {theirs:.1f} tokens/s, serving the new weights included "
        f"(training only {ours_train / theirs:.2f}); {tokens} completion tokens, median of {args.steps}"
    )
    figure("P6", ours / theirs, goal=1.0, better="higher", detail=said)


if __name__ == "__main__":
    main()
