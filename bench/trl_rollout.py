"""P10: what `NenyaxSpec.rollout_func` adds per completion token to TRL's GRPOTrainer, against TRL generating
by itself, same model, same prompts, same batch.

Two GRPOTrainers on the embedded SmolLM2-135M (CPU, float32) train `--steps` steps each on the same
reasoning-gym prompts (`basic_arithmetic`, `--prompts` per step x `--group` generations, at most
`--max-tokens` tokens, temperature 1.0):

- TRL alone: its own generation (`GRPOTrainer._generate`: the chat template, transformers' `generate` on the
  batch);
- through Nenyax: `rollout_func=spec.rollout_func`, so each completion is an episode played through the
  recording Endpoint by the trainer's live model, judged, streamed to a run directory, and its merged sample
  handed back.

Each side's `_generate` (everything from the prompts to the completions TRL scores) is timed over the steps
after a warm-up one, and divided by the completion tokens it produced. Prints both and the ratio
(Nenyax / TRL; goal <= 1.10). Run from the repository root, with nenyax-trainers-trl and
nenyax-adapters-reasoning-gym installed: ``python bench/trl_rollout.py [--prompts 4 --group 4 --steps 3]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

from _report import figure

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

URI = "reasoning_gym:basic_arithmetic?size=64"


def _timed_generation(trainer: Any, spent: list[tuple[float, int]]) -> None:
    """Time every call of the trainer's `_generate` and count the completion tokens it returned."""
    generate = trainer._generate

    def timed(prompts: list) -> Any:
        started = time.perf_counter()
        out = generate(prompts)
        took = time.perf_counter() - started
        completions = out[1]  # (prompt_ids, completion_ids, ...)
        mask = out[2] if len(out) > 2 and isinstance(out[2], list) and out[2] and isinstance(out[2][0], list) else None
        tokens = sum(sum(m) for m in mask) if mask is not None else sum(len(c) for c in completions)
        spent.append((took, tokens))
        return out

    trainer._generate = timed


def _run(side: str, args: argparse.Namespace, folder: Any, spec: Any, out_dir: str) -> tuple[float, int, float]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = GRPOConfig(
        output_dir=out_dir,
        per_device_train_batch_size=args.prompts * args.group,
        num_generations=args.group,
        max_completion_length=args.max_tokens,
        max_steps=args.steps + 1,
        learning_rate=1e-6,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        seed=0,
    )
    if side == "nenyax":
        extra: dict[str, Any] = {"rollout_func": spec.rollout_func, "reward_funcs": spec.reward_funcs}
    else:
        extra = {"reward_funcs": [_length_reward]}
    trainer = GRPOTrainer(
        model=model, args=config, processing_class=tokenizer, train_dataset=spec.train_dataset, **extra
    )
    spent: list[tuple[float, int]] = []
    _timed_generation(trainer, spent)
    trainer.train()
    measured = spent[1:]  # the first step warms up
    seconds = sum(s for s, _ in measured)
    tokens = sum(t for _, t in measured)
    return seconds, tokens, seconds / max(tokens, 1)


def _length_reward(completion_ids: list, **_: Any) -> list[float]:
    """TRL alone's reward: computed after `_generate`, so it is not in the timing (any function serves)."""
    return [float(len(ids)) for ids in completion_ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    from nenyax.providers.local.provider import LocalProvider
    from nenyax.trainers.trl import NenyaxSpec

    folder = LocalProvider().weights("smollm2-135m")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side in ("trl", "nenyax"):
            spec = NenyaxSpec(URI, runs=f"{tmp}/runs")
            results[side] = _run(side, args, folder, spec, f"{tmp}/{side}")
            seconds, tokens, per = results[side]
            print(f"{side:>6}: {tokens} completion tokens in {seconds:.2f} s, {per * 1e3:.2f} ms per token")
    ratio = results["nenyax"][2] / results["trl"][2]
    batch = f"{args.prompts} prompts x {args.group}, <= {args.max_tokens} tokens, {args.steps} steps"
    print(f"ratio (Nenyax / TRL alone, per completion token): {ratio:.3f}  ({batch})")
    detail = (
        f"{results['nenyax'][2] * 1e3:.1f} vs {results['trl'][2] * 1e3:.1f} ms per completion token; {batch}; "
        "SmolLM2-135M on CPU"
    )
    figure("P10", ratio, goal=1.10, better="lower", detail=detail)


if __name__ == "__main__":
    main()
