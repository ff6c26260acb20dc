"""Every loss of `nenyax.learners.torch.losses` equals TRL 1.16's own, loss and gradients, within 1e-5.

Each test builds the real TRL trainer (GRPOTrainer, RLOOTrainer, DPOTrainer) around a tiny randomly initialised
Llama with SmolLM2's tokenizer, calls the trainer's own ``_compute_loss`` on a batch, and then computes the
project's loss from the same model's logits on the same tensors; both backward passes give the model's
gradients, compared parameter by parameter.
"""

from __future__ import annotations

import os

import pytest
import torch

from nenyax.learners.torch import losses

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
TOLERANCE = 1e-5
PROMPT, COMPLETION, BATCH = 5, 6, 4


def _batch(vocab: int, seed: int = 1) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    prompt_ids = torch.randint(0, vocab, (BATCH, PROMPT), generator=g)
    completion_ids = torch.randint(0, vocab, (BATCH, COMPLETION), generator=g)
    lengths = torch.tensor([6, 3, 5, 1])  # ragged completions, right-padded
    completion_mask = (torch.arange(COMPLETION)[None] < lengths[:, None]).long()
    return {
        "prompt_ids": prompt_ids,
        "prompt_mask": torch.ones_like(prompt_ids),
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "advantages": torch.tensor([1.3, -0.7, 0.4, -1.0]),
        # Behaviour and reference log-probabilities off the current model's, so ratios leave the clip range.
        "old_noise": torch.randn(BATCH, COMPLETION, generator=g) * 0.3,
        "ref_noise": torch.randn(BATCH, COMPLETION, generator=g) * 0.3,
    }


def _completion_logprobs(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:  # type: ignore[no-untyped-def]
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, PROMPT - 1 : -1]
    return losses.token_logprobs(logits, batch["completion_ids"])


def _grads(model) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    out = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return out


def _assert_same(theirs: torch.Tensor, ours: torch.Tensor, g_theirs: dict, g_ours: dict) -> None:
    assert torch.isfinite(ours)
    assert abs(theirs.item() - ours.item()) <= TOLERANCE, (theirs.item(), ours.item())
    assert g_theirs.keys() == g_ours.keys()
    assert g_ours, "no gradient reached the model"
    for name in g_theirs:
        assert torch.allclose(g_theirs[name], g_ours[name], atol=TOLERANCE, rtol=0), name
    assert any(g.abs().sum() > 0 for g in g_ours.values())


def _grpo_trainer(tokenizer, make_tiny, tmp_path, **config):  # type: ignore[no-untyped-def]
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        num_generations=2,
        per_device_train_batch_size=BATCH,
        max_completion_length=COMPLETION + 2,  # dr_grpo divides by it: not the batch's length, to tell them apart
        temperature=1.0,
        model_init_kwargs={"dtype": torch.float32},
        **config,
    )
    # By folder: with beta > 0 the trainer loads its reference model from the same place.
    folder = tmp_path / "tiny"
    make_tiny(len(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    trainer = GRPOTrainer(
        model=str(folder),
        reward_funcs=lambda completions, **_: [0.0] * len(completions),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["a", "b", "c", "d"]}),
        processing_class=tokenizer,
    )
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    return trainer


GRPO_CASES = [
    pytest.param({"loss_type": "grpo"}, id="grpo"),
    pytest.param({"loss_type": "dr_grpo"}, id="dr_grpo"),
    pytest.param({"loss_type": "dapo", "epsilon_high": 0.28}, id="dapo"),
    pytest.param({"loss_type": "bnpo"}, id="bnpo"),
    pytest.param({"loss_type": "grpo", "importance_sampling_level": "sequence"}, id="gspo"),
    pytest.param({"loss_type": "dapo", "beta": 0.04}, id="dapo-kl"),
    pytest.param(
        {"loss_type": "grpo", "beta": 0.04, "use_bias_correction_kl": False, "delta": 1.5}, id="grpo-kl-delta"
    ),
]


@pytest.mark.parametrize("config", GRPO_CASES)
def test_policy_gradient_loss_equals_grpo_trainer(config, tokenizer, make_tiny, tmp_path):
    trainer = _grpo_trainer(tokenizer, make_tiny, tmp_path, **config)
    model = trainer.model
    batch = _batch(len(tokenizer))
    with torch.no_grad():
        current = _completion_logprobs(model, batch)
    old, ref = current + batch["old_noise"], current + batch["ref_noise"]
    mask = batch["completion_mask"].float()
    inputs = {k: batch[k] for k in ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask", "advantages")} | {
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }

    theirs = trainer._compute_loss(model, inputs)
    theirs.backward()
    g_theirs = _grads(model)

    ours = losses.policy_gradient_loss(
        _completion_logprobs(model, batch),
        old,
        batch["advantages"],
        mask,
        aggregation=config["loss_type"],
        level=config.get("importance_sampling_level", "token"),
        epsilon_low=trainer.epsilon_low,
        epsilon_high=trainer.epsilon_high,
        delta=config.get("delta"),
        beta=config.get("beta", 0.0),
        ref_logprobs=ref,
        kl_bias_correction=config.get("use_bias_correction_kl", True),
        max_completion_length=COMPLETION + 2,
        num_items=mask.sum(),
    )
    ours.backward()
    _assert_same(theirs, ours, g_theirs, _grads(model))


def test_rloo_loss_equals_rloo_trainer(tokenizer, make_tiny, tmp_path):
    from datasets import Dataset
    from trl import RLOOConfig, RLOOTrainer

    args = RLOOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        num_generations=2,
        per_device_train_batch_size=BATCH,
        max_completion_length=COMPLETION,
        temperature=1.0,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.3,
    )
    trainer = RLOOTrainer(
        model=make_tiny(len(tokenizer)),
        reward_funcs=lambda completions, **_: [0.0] * len(completions),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["a", "b", "c", "d"]}),
        processing_class=tokenizer,
    )
    model = trainer.model
    model.train()
    batch = _batch(len(tokenizer))
    mask = batch["completion_mask"].float()
    with torch.no_grad():
        current = _completion_logprobs(model, batch)
    # A small shift of the behaviour policy: summed over a sequence, ratios both inside and outside the clip.
    old = current + batch["old_noise"] * 0.2
    old_logps = (old * mask).sum(1)
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.75])
    advantages = losses.rloo_advantages(rewards, group_size=2)
    inputs = {k: batch[k] for k in ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask")} | {
        "old_logps": old_logps,
        "advantages": advantages,
    }
    theirs = trainer._compute_loss(model, inputs)
    theirs.backward()
    g_theirs = _grads(model)
    ours = losses.rloo_loss(
        _completion_logprobs(model, batch), old, advantages, mask, epsilon_low=0.2, epsilon_high=0.3
    )
    ours.backward()
    _assert_same(theirs, ours, g_theirs, _grads(model))


def test_rloo_advantages_equal_rloo_trainer(tokenizer, make_tiny, tmp_path):
    """TRL computes RLOO's advantages inside ``_generate_and_score_completions``: it is run here with the trainer's
    ``_generate`` replaced by fixed completions (the one stand-in of this file: generation is not what is checked)
    and rewards a reward function hands back (fixed numbers)."""
    from datasets import Dataset
    from trl import RLOOConfig, RLOOTrainer

    rewards = [1.0, 0.0, 0.5, 0.25, 0.0, 0.0]
    seen: list[int] = []

    def generate(prompts):  # type: ignore[no-untyped-def]
        n = len(prompts)
        return [[1, 2, 3]] * n, [[4 + i, 5, 2] for i in range(n)], [f"c{i}" for i in range(n)]

    def reward(completions, **_):  # type: ignore[no-untyped-def]
        seen.append(len(completions))
        return rewards[: len(completions)]

    for normalize in (False, True):
        args = RLOOConfig(
            output_dir=str(tmp_path),
            use_cpu=True,
            bf16=False,
            gradient_checkpointing=False,
            report_to="none",
            save_strategy="no",
            num_generations=3,
            per_device_train_batch_size=6,
            max_completion_length=4,
            beta=0.0,
            normalize_advantages=normalize,
        )
        trainer = RLOOTrainer(
            model=make_tiny(len(tokenizer)),
            reward_funcs=reward,
            args=args,
            train_dataset=Dataset.from_dict({"prompt": ["a", "b"]}),
            processing_class=tokenizer,
        )
        trainer._generate = generate
        rows = [{"prompt": p} for p in ("a", "a", "a", "b", "b", "b")]
        out = trainer._generate_and_score_completions(rows)
        ours = losses.rloo_advantages(torch.tensor(rewards), group_size=3, normalize=normalize)
        assert torch.allclose(out["advantages"].float(), ours, atol=TOLERANCE, rtol=0), (out["advantages"], ours)
    assert seen == [6, 6]


def test_dpo_sigmoid_loss_equals_dpo_trainer(tokenizer, make_tiny, tmp_path):
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    args = DPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        per_device_train_batch_size=2,
        beta=0.3,
        loss_type=["sigmoid"],
        precompute_ref_log_probs=True,
    )
    dataset = Dataset.from_dict({"prompt": ["Hi", "Yo"], "chosen": [" there", " man"], "rejected": [" no", " x"]})
    trainer = DPOTrainer(model=make_tiny(len(tokenizer)), args=args, train_dataset=dataset, processing_class=tokenizer)
    model = trainer.model
    model.train()
    g = torch.Generator().manual_seed(3)
    pairs, length = 2, 9
    input_ids = torch.randint(0, len(tokenizer), (2 * pairs, length), generator=g)  # [chosen..., rejected...]
    completion_mask = torch.zeros(2 * pairs, length, dtype=torch.long)
    for row, (start, end) in enumerate([(4, 9), (3, 7), (4, 8), (5, 9)]):
        completion_mask[row, start:end] = 1
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, 7:] = 0
    attention_mask[2, 8:] = 0
    ref_chosen, ref_rejected = torch.tensor([-20.0, -31.0]), torch.tensor([-25.0, -18.0])
    inputs = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "completion_mask": completion_mask,
        "ref_chosen_logps": ref_chosen,
        "ref_rejected_logps": ref_rejected,
    }
    theirs = trainer._compute_loss(model, inputs, return_outputs=False)
    theirs.backward()
    g_theirs = _grads(model)

    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
    per_token = losses.token_logprobs(logits, input_ids[:, 1:])
    logps = losses.sequence_logprobs(per_token, completion_mask[:, 1:].float())
    ours = losses.dpo_sigmoid_loss(logps[:pairs], logps[pairs:], ref_chosen, ref_rejected, beta=0.3)
    ours.backward()
    _assert_same(theirs, ours, g_theirs, _grads(model))


def test_nll_loss_equals_sft_trainer(tokenizer, make_tiny, tmp_path):
    """RFT is supervised fine-tuning on each group's best member: TRL's SFTTrainer's completion-only loss."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        save_strategy="no",
        per_device_train_batch_size=2,
    )
    trainer = SFTTrainer(
        model=make_tiny(len(tokenizer)),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["Hi"], "completion": [" there"]}),
        processing_class=tokenizer,
    )
    model = trainer.model
    model.train()
    g = torch.Generator().manual_seed(4)
    input_ids = torch.randint(0, len(tokenizer), (3, 8), generator=g)
    completion_mask = torch.zeros_like(input_ids)
    for row, start in enumerate([3, 5, 2]):
        completion_mask[row, start:] = 1
    labels = input_ids.masked_fill(completion_mask == 0, -100)
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}
    theirs = trainer.compute_loss(model, inputs)
    theirs.backward()
    g_theirs = _grads(model)

    logits = model(input_ids=input_ids).logits[:, :-1]
    ours = losses.nll_loss(losses.token_logprobs(logits, input_ids[:, 1:]), completion_mask[:, 1:].float())
    ours.backward()
    _assert_same(theirs, ours, g_theirs, _grads(model))


def test_aggregations_differ_where_they_should():
    """The four aggregations are not the same number on ragged sequences (a mix-up would pass the others)."""
    per_token = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    assert losses.aggregate(per_token, mask, "grpo").item() == pytest.approx((2.0 + 4.0) / 2)
    assert losses.aggregate(per_token, mask, "bnpo").item() == pytest.approx(10.0 / 4)
    assert losses.aggregate(per_token, mask, "dapo", num_items=8).item() == pytest.approx(10.0 / 8)
    assert losses.aggregate(per_token, mask, "dr_grpo", max_completion_length=5).item() == pytest.approx(10.0 / 10)
    with pytest.raises(ValueError, match="aggregation must be one of"):
        losses.aggregate(per_token, mask, "mean")  # type: ignore[arg-type]
