"""Token samples a trainer takes: merged (calls end to end, forked where a prompt does not extend the
sequence) and step-wise, from trajectories the real engine recorded (tests/fixtures/export/README.md)."""

from __future__ import annotations

from pathlib import Path

import attrs

from nenyax.core.contract import rows, samples
from nenyax.core.contract.trajectory import Status
from nenyax.core.engine.sinks import read_trajectories

FIXTURES = Path(__file__).parent / "fixtures" / "export"


def _recorded():
    return list(read_trajectories(FIXTURES / "basic_arithmetic.jsonl"))


def _three_turns():
    """A recorded episode grown to three calls: the second extends the first (the environment's tokens 7, 8
    between), the third re-renders the history (its first token differs), so it forks."""
    traj = _recorded()[0]
    first = traj.model_calls[0]
    second = attrs.evolve(
        first,
        prompt_token_ids=(*first.prompt_token_ids, *first.completion_token_ids, 7, 8),
        completion_token_ids=(9, 10),
        logprobs=(-0.5, -0.25),
    )
    rerendered = [*second.prompt_token_ids, 9, 10, 11]
    rerendered[0] += 1
    third = attrs.evolve(second, prompt_token_ids=tuple(rerendered), completion_token_ids=(12,), logprobs=(-1.0,))
    return attrs.evolve(traj, model_calls=(first, second, third)), first


def test_a_merged_sample_interleaves_the_environment_s_tokens_masked_0_and_forks_where_a_prompt_is_re_rendered():
    traj, first = _three_turns()
    made, forks = samples.merged_samples(traj)
    assert forks.at == (2,)
    assert forks.sentence(traj) == (
        f"The episode of task {traj.task_id} forked into 2 samples: the prompt of model call 3 (of 3) does not "
        "extend the tokens before it."
    )
    whole, forked = made
    done = list(first.completion_token_ids)
    assert whole.prompt_ids == first.prompt_token_ids
    assert list(whole.completion_ids) == [*done, 7, 8, 9, 10]
    assert list(whole.loss_mask) == [1] * len(done) + [0, 0, 1, 1]
    assert list(whole.logprobs) == [*first.logprobs, 0.0, 0.0, -0.5, -0.25]
    assert whole.calls == (0, 1)
    assert (forked.prompt_ids, forked.completion_ids, forked.loss_mask, forked.calls) == (
        traj.model_calls[2].prompt_token_ids,
        (12,),
        (1,),
        (2,),
    )
    assert whole.reward == forked.reward == traj.judgment.score
    assert whole.trainable
    assert (whole.trajectory_id, whole.task_id) == (traj.id, traj.task_id)
    assert samples.Forks().sentence(traj) is None


def test_step_samples_are_one_per_call_with_its_own_prompt():
    traj, _first = _three_turns()
    made = samples.step_samples(traj)
    assert [s.calls for s in made] == [(0,), (1,), (2,)]
    for sample, call in zip(made, traj.model_calls, strict=True):
        assert sample.prompt_ids == call.prompt_token_ids
        assert sample.completion_ids == call.completion_token_ids
        assert sample.logprobs == call.logprobs
        assert sample.loss_mask == (1,) * len(call.completion_token_ids)


def test_an_infrastructure_failure_has_no_reward_never_0_and_a_policy_error_keeps_its_score():
    traj = _recorded()[0]
    for status in (Status.INFRA_ERROR, Status.ENV_ERROR, Status.VERIFIER_ERROR, Status.TIMEOUT):
        failed = attrs.evolve(traj, status=status)
        for sample in [*samples.merged_samples(failed)[0], *samples.step_samples(failed)]:
            assert sample.reward is None
            assert sample.trainable is False
    refused = samples.step_samples(attrs.evolve(traj, status=Status.POLICY_ERROR))[0]
    assert refused.trainable
    assert refused.reward == traj.judgment.score


def test_a_call_without_token_ids_makes_no_sample_and_is_named():
    traj, _first = _three_turns()
    text_only = attrs.evolve(traj.model_calls[1], prompt_token_ids=None)
    partial = attrs.evolve(traj, model_calls=(traj.model_calls[0], text_only))
    assert samples.unrecorded(partial) == [1]
    assert [s.calls for s in samples.step_samples(partial)] == [(0,)]
    assert [s.calls for s in samples.merged_samples(partial)[0]] == [(0,)]
    assert rows.sft_tokens_row(partial) is None  # pre-tokenized SFT wants every call exact


def test_merged_and_steps_rows_have_the_schema_s_columns_for_every_exporter():
    recorded = _recorded()
    for shape in ("merged", "steps"):
        made = list(rows.rows(recorded, shape))
        assert len(made) == len(recorded)  # one single-call episode each
        for row, traj in zip(made, recorded, strict=True):
            assert tuple(row) == rows.schema(shape).names
            call = traj.model_calls[0]
            assert row["prompt_ids"] == list(call.prompt_token_ids)
            assert row["completion_ids"] == list(call.completion_token_ids)
            assert row["logprobs"] == list(call.logprobs)
            assert row["reward"] == traj.score


def test_a_call_without_logprobs_still_makes_a_sample_that_says_it_has_none():
    traj, _first = _three_turns()
    no_logprobs = attrs.evolve(traj.model_calls[1], logprobs=None)
    partial = attrs.evolve(traj, model_calls=(traj.model_calls[0], no_logprobs))
    (merged,), _forks = samples.merged_samples(partial)
    assert merged.calls == (0, 1)
    assert merged.logprobs is None
    first, second = samples.step_samples(partial)
    assert first.logprobs == traj.model_calls[0].logprobs
    assert second.logprobs is None
