"""TRL's real GRPOTrainer (CPU, the embedded SmolLM2-135M) through `NenyaxSpec` on a task: a shipped harbor
example played by harbor's terminus-2 in the bwrap sandbox, every call it made through the recording proxy."""

from __future__ import annotations

from support import trains_two_steps_on_the_record

from nenyax.adapters.harbor.adapter import example_task

# One turn: the base model does not speak terminus-2's JSON, so its first reply ends the trial.
TASK = example_task("hello-file") + "?max_turns=1"
# terminus-2's prompt is some 800 tokens: groups of two keep two steps short. Its replies may be long: terminus-2
# answers a reply cut at the token limit by asking again within the same turn, the whole exchange appended (a
# 16-token limit made some 20 calls of a growing prompt, a minute per episode); the base model ends most replies
# within 192 tokens, and the turn with them.
SMALLER = {"per_device_train_batch_size": 2, "num_generations": 2, "max_completion_length": 192}


def test_grpo_takes_two_steps_on_a_harbor_task_with_the_ids_it_recorded(model_folder, tmp_path):
    trains_two_steps_on_the_record(TASK, "task", model_folder, tmp_path, **SMALLER)
