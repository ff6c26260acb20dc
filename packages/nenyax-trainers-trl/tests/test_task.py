"""TRL's real GRPOTrainer (CPU, the embedded SmolLM2-135M) through `NenyaxSpec` on a task: a shipped harbor
example played by harbor's terminus-2 in the bwrap sandbox, every call it made through the recording proxy."""

from __future__ import annotations

import pytest
from support import trains_two_steps_on_the_record

from nenyax.adapters.harbor.adapter import example_task

# One turn: the base model does not speak terminus-2's JSON, so its first reply ends the trial.
TASK = example_task("hello-file") + "?max_turns=1"
# terminus-2's prompt is some 800 tokens, and on this CPU a reply of 192 tokens takes half a minute however many
# episodes share the batch: one group of two episodes is generated once, and the two optimizer steps take one
# episode each (the step and rollout tests see the weights change between generations). Replies may
# be long: terminus-2 answers a reply cut at the token limit by asking again within the same turn, the whole
# exchange appended (a 16-token limit made some 20 calls of a growing prompt, a minute per episode); the base
# model ends most replies within 192 tokens, and the turn with them.
SMALLER = {
    "per_device_train_batch_size": 1,
    "num_generations": 2,
    "steps_per_generation": 2,
    "max_completion_length": 192,
}


@pytest.mark.timeout(480)  # some 150 s beside the other tests here; a slower machine under load, twice that
def test_grpo_takes_two_steps_on_a_harbor_task_with_the_ids_it_recorded(model_folder, tmp_path):
    trains_two_steps_on_the_record(TASK, "task", model_folder, tmp_path, **SMALLER)
