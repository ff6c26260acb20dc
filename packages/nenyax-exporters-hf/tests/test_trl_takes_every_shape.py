"""Each row shape, from each of the three exporters, loads in `datasets` and trains TRL for one step.

The trajectories are the ones nenyax-core's tests use, recorded by the real engine on the embedded model
(packages/nenyax-core/tests/fixtures/export/README.md). The model is a tiny one built from a config
(tests/conftest.py): real TRL trainers, real optimiser steps, no Hub.
"""

from __future__ import annotations

import math
from pathlib import Path

import datasets
import pytest

from nenyax.core import export
from nenyax.core.engine.rundirs import TRAJECTORIES

FIXTURES = Path(__file__).parents[2] / "nenyax-core" / "tests" / "fixtures" / "export"
FORMATS = ("jsonl", "parquet", "hf")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run directory holding the recorded reasoning_gym trajectories (token ids included)."""
    path = tmp_path_factory.mktemp("run")
    (path / TRAJECTORIES).write_bytes((FIXTURES / "basic_arithmetic.jsonl").read_bytes())
    return path


def _load(destination: str, to: str) -> datasets.Dataset:
    if to == "hf":
        return datasets.load_from_disk(destination)
    builder = "json" if to == "jsonl" else "parquet"
    return datasets.load_dataset(builder, data_files=destination, split="train")


def _args(config_cls, tmp_path, **extra):
    return config_cls(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        learning_rate=1e-3,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=True,
        dataloader_num_workers=0,
        **extra,
    )


def _trained(trainer) -> float:
    before = [p.detach().clone() for p in trainer.model.parameters()]
    result = trainer.train()
    assert result.global_step == 1
    assert math.isfinite(result.training_loss)
    changed = sum(not (a == b).all() for a, b in zip(before, trainer.model.parameters(), strict=True))
    assert changed > 0, "the step updated the weights"
    return result.training_loss


@pytest.mark.parametrize("to", FORMATS)
def test_sft_messages_train_one_sft_step(run, to, tmp_path, tiny_tokenizer, tiny_model):
    from trl import SFTConfig, SFTTrainer

    dataset = _load(export(run, to=to, rows="sft", out=tmp_path / f"sft.{to}").destination, to)
    assert dataset.num_rows == 8
    assert dataset[0]["messages"][-1]["role"] == "assistant"
    tok = tiny_tokenizer
    trainer = SFTTrainer(
        model=tiny_model(len(tok)),
        args=_args(SFTConfig, tmp_path, max_length=256),
        train_dataset=dataset.select_columns(["messages", "tools"]),
        processing_class=tok,
    )
    _trained(trainer)


@pytest.mark.parametrize("to", FORMATS)
def test_pre_tokenized_sft_trains_on_the_recorded_ids_without_retokenising(
    run, to, tmp_path, tiny_tokenizer, tiny_model
):
    from trl import SFTConfig, SFTTrainer

    out = export(run, to=to, rows="sft", tokenized=True, out=tmp_path / f"tok.{to}").destination
    dataset = _load(out, to)
    assert dataset.num_rows == 8
    ids = dataset[0]["input_ids"]
    assert sum(dataset[0]["assistant_masks"]) > 0
    tok = tiny_tokenizer
    vocab = max(len(tok), 1 + max(max(r) for r in dataset["input_ids"]))
    trainer = SFTTrainer(
        model=tiny_model(vocab),
        args=_args(SFTConfig, tmp_path, max_length=None),
        train_dataset=dataset.select_columns(["input_ids", "assistant_masks"]),
        processing_class=tok,
    )
    # TRL takes a dataset with input_ids as already tokenized: the ids it trains on are the recorded ones.
    assert trainer.train_dataset[0]["input_ids"] == ids
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(2)])
    mask = dataset[0]["assistant_masks"]
    labels = batch["labels"][0][: len(ids)].tolist()
    assert labels == [i if m else -100 for i, m in zip(ids, mask, strict=True)], "only sampled tokens are learned"
    _trained(trainer)


@pytest.mark.parametrize("to", FORMATS)
def test_dpo_rows_train_one_dpo_step(run, to, tmp_path, tiny_tokenizer, tiny_model):
    from trl import DPOConfig, DPOTrainer

    dataset = _load(export(run, to=to, rows="dpo", out=tmp_path / f"dpo.{to}").destination, to)
    assert dataset.num_rows == 1
    dataset = datasets.concatenate_datasets([dataset, dataset])  # a batch of two
    tok = tiny_tokenizer
    trainer = DPOTrainer(
        model=tiny_model(len(tok)),
        ref_model=tiny_model(len(tok)),  # a model built here has no path TRL could load the reference from
        args=_args(DPOConfig, tmp_path, max_length=256),
        train_dataset=dataset.select_columns(["prompt", "chosen", "rejected"]),
        processing_class=tok,
    )
    _trained(trainer)
