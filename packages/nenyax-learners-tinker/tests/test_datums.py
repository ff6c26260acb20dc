"""Recorded calls -> `tinker.Datum`: the real trajectories of the embedded model, the real tinker types.

No Tinker service is involved: these build the SDK's own `Datum`, `ModelInput` and `TensorData` objects
from trajectories the real engine recorded, and check every tensor against the recorded ids and logprobs.
"""

import attrs
import pytest
import tinker
import tinker_fake_sdk
from support import scored

from nenyax.core.engine.learning import group_advantages
from nenyax.core.errors import UsageError
from nenyax.learners.tinker.datums import LOSSES, batch, call_datum


def test_a_call_becomes_input_targets_masked_logprobs_and_advantages(endpoint_groups):
    trajectory = endpoint_groups[0].trajectories[0]
    call = trajectory.model_calls[0]
    prompt, completion = list(call.prompt_token_ids), list(call.completion_token_ids)
    assert len(prompt) > 10, "the embedded model recorded the prompt's ids"
    assert completion, "and the completion's"
    datum = call_datum(call, trajectory, 0.75, loss="importance_sampling")

    assert isinstance(datum, tinker.Datum)
    ids = prompt + completion
    assert datum.model_input.to_ints() == ids[:-1]
    inputs = {k: v.to_numpy().tolist() for k, v in datum.loss_fn_inputs.items()}
    assert set(inputs) == {"target_tokens", "logprobs", "advantages"}
    assert inputs["target_tokens"] == ids[1:]
    masked = len(prompt) - 1
    # Prompt targets: advantage 0 and logprob 0; completion targets: the sampler's logprob and the advantage.
    assert inputs["advantages"] == [0.0] * masked + [0.75] * len(completion)
    assert inputs["logprobs"][:masked] == [0.0] * masked
    assert inputs["logprobs"][masked:] == pytest.approx(list(call.logprobs), abs=1e-6)
    assert datum.loss_fn_inputs["target_tokens"].dtype == "int64"
    assert datum.loss_fn_inputs["logprobs"].dtype == "float32"
    tinker_fake_sdk.check_rl_datum(datum)


def test_gspo_marks_the_completion_for_its_sequence_ratio(endpoint_groups):
    trajectory = endpoint_groups[1].trajectories[2]
    call = trajectory.model_calls[0]
    datum = call_datum(call, trajectory, -1.0, loss="gspo")
    mask = datum.loss_fn_inputs["sequence_ratio_mask"].to_numpy().tolist()
    masked = len(call.prompt_token_ids) - 1
    assert mask == [0.0] * masked + [1.0] * len(call.completion_token_ids)
    for loss in ("importance_sampling", "ppo", "cispo"):
        assert "sequence_ratio_mask" not in call_datum(call, trajectory, 1.0, loss=loss).loss_fn_inputs


@pytest.mark.parametrize("loss", LOSSES)
def test_a_batch_carries_each_members_group_advantage(endpoint_groups, loss):
    groups = [scored(endpoint_groups[0], [1.0, 0.0, 0.0]), scored(endpoint_groups[1], [0.0, 0.25, 1.0])]
    made = batch(groups, loss=loss)
    assert len(made.data) == 6
    assert made.calls_without_signal == 0
    assert made.completion_tokens == sum(
        len(t.model_calls[0].completion_token_ids) for g in groups for t in g.trajectories
    )
    expected = [a for g in groups for a in group_advantages(g)]
    for datum, trajectory, advantage in zip(
        made.data, [t for g in groups for t in g.trajectories], expected, strict=True
    ):
        tinker_fake_sdk.check_rl_datum(datum)
        call = trajectory.model_calls[0]
        assert datum.model_input.to_ints() == list(call.prompt_token_ids + call.completion_token_ids)[:-1]
        tail = datum.loss_fn_inputs["advantages"].to_numpy()[len(call.prompt_token_ids) - 1 :]
        assert tail.tolist() == pytest.approx([advantage] * len(call.completion_token_ids), rel=1e-6)
    assert expected[0] > 0 > expected[1]  # the best member is pushed up, the others down


def test_scale_none_only_centres(endpoint_groups):
    group = scored(endpoint_groups[0], [1.0, 0.0, 0.0])
    datum = batch([group], loss="importance_sampling", scale="none").data[0]
    assert datum.loss_fn_inputs["advantages"].to_numpy().max() == pytest.approx(2 / 3, rel=1e-6)


def test_a_group_whose_members_scored_alike_sends_nothing(endpoint_groups):
    made = batch([scored(endpoint_groups[0], [0.0, 0.0, 0.0])], loss="importance_sampling")
    assert made.data == ()
    assert made.calls_without_signal == 3


def test_a_call_without_token_ids_is_refused_in_one_sentence(endpoint_groups):
    group = scored(endpoint_groups[0], [1.0, 0.0, 0.0])
    first = group.trajectories[0]
    stripped = attrs.evolve(first, model_calls=(attrs.evolve(first.model_calls[0], prompt_token_ids=None),))
    group = attrs.evolve(group, trajectories=(stripped, *group.trajectories[1:]))
    with pytest.raises(UsageError, match="without token ids and logprobs") as info:
        batch([group], loss="ppo")
    assert "\n" not in str(info.value)
