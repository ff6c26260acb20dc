"""TRL's real GRPOTrainer (CPU, the embedded SmolLM2-135M) through `NenyaxSpec` on a step environment
(reasoning-gym) and a rollout one (the verifiers demo, verifiers' own loop calling the recording proxy)."""

from __future__ import annotations

import pytest
from support import recording, trainer_for, trains_two_steps_on_the_record

from nenyax.core import read_trajectories
from nenyax.core.errors import InfraFailure, UsageError
from nenyax.trainers.trl import NenyaxSpec

STEP = "reasoning_gym:basic_arithmetic?size=8"
ROLLOUT = "verifiers:nenyax.adapters.verifiers.demo:load_environment"


def test_grpo_takes_two_steps_on_a_step_environment_with_the_ids_it_recorded(model_folder, tmp_path):
    trains_two_steps_on_the_record(STEP, "step", model_folder, tmp_path)


def test_grpo_takes_two_steps_on_a_rollout_environment_with_the_ids_it_recorded(model_folder, tmp_path):
    trains_two_steps_on_the_record(ROLLOUT, "rollout", model_folder, tmp_path)


def test_an_infrastructure_failure_is_masked_out_and_counted_never_a_reward_of_zero(model_folder, tmp_path):
    spec = NenyaxSpec(STEP, runs=tmp_path / "runs")
    handed = recording(spec)
    failed = []
    make_endpoint = spec.endpoint

    def first_call_fails(trainer):
        # The model server going away under the batch's first call: an infrastructure failure.
        endpoint = make_endpoint(trainer)
        provider = spec._provider
        complete = provider.complete

        async def failing(request):
            if not failed:
                failed.append(request)
                raise InfraFailure("The model server went away.")
            return await complete(request)

        provider.complete = failing
        return endpoint

    spec.endpoint = first_call_fails
    trainer = trainer_for(spec, model_folder, tmp_path, max_steps=1)
    trainer.train()
    (out,) = handed
    assert out["nenyax_status"].count("infra_error") == 1
    lost = out["nenyax_status"].index("infra_error")
    assert out["nenyax_score"][lost] is None  # no reward, not 0
    assert not any(out["env_mask"][lost])  # nothing of it is trained on
    assert all(score is not None for i, score in enumerate(out["nenyax_score"]) if i != lost)
    (logged,) = [entry for entry in trainer.state.log_history if "nenyax/untrainable" in entry]
    assert logged["nenyax/untrainable"] == 1.0
    assert logged["nenyax/status/infra_error"] == 1.0
    assert spec.counts["status/infra_error"] == 1


def test_a_tokenizer_without_a_chat_template_is_one_sentence_before_any_step(model_folder, tmp_path):
    spec = NenyaxSpec(STEP, runs=tmp_path / "runs")
    trainer = trainer_for(spec, model_folder, tmp_path, max_steps=1)
    trainer.processing_class.chat_template = None
    with pytest.raises(UsageError, match="no chat template") as refused:
        trainer.train()
    assert str(refused.value).count(".") == 1  # one sentence
    assert trainer.state.global_step == 0
    assert not (spec.run_dir / "trajectories.jsonl").exists() or not (spec.run_dir / "trajectories.jsonl").read_text()


def test_judges_put_on_the_spec_make_the_reward(model_folder, tmp_path):
    # A judge of style alone, composed as the score: TRL's reward is its verdict, the native one kept beside it.
    judge = "nenyax_testsupport.fakes:short_reply"
    spec = NenyaxSpec(STEP, runs=tmp_path / "runs", judges=[judge], score="short_reply")
    handed = recording(spec)
    trainer = trainer_for(spec, model_folder, tmp_path, max_steps=1)
    trainer.train()
    (out,) = handed
    recorded = {t.id: t for t in read_trajectories(spec.run_dir / "trajectories.jsonl")}
    assert len(recorded) == len(out["nenyax_score"])
    for trajectory in recorded.values():
        native, short = trajectory.verdicts
        assert (native.label, short.label) == ("native", "short_reply")
        assert trajectory.judgment.score == short.judgment.score
    assert sorted(out["nenyax_score"]) == sorted(t.judgment.score for t in recorded.values())


def test_a_group_judge_scores_trl_s_copies_of_a_prompt_against_each_other(model_folder, tmp_path):
    # The group judge's model is a scripted server on loopback (no real model names the best answer on cue):
    # the answer first in alphabetical order wins. TRL's copies of one prompt are one group, judged once.
    import re

    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    def smallest_wins(messages):
        answers = re.findall(r"Answer (\d+):\n(.*?)\n\n", messages[-1]["content"], re.S)
        return f"BEST: {min(answers, key=lambda found: found[1])[0]}"

    with serving_in_thread(ScriptedModelServer(smallest_wins)) as server:
        judge = (
            f"llm-group?rubric=The first answer in alphabetical order wins.&model=openai:s&base_url={server.base_url}"
        )
        spec = NenyaxSpec(STEP, runs=tmp_path / "runs", judges=[judge], score="llm-group")
        handed = recording(spec)
        trainer = trainer_for(spec, model_folder, tmp_path, max_steps=1)
        trainer.train()
        asked = server.requests
    (out,) = handed
    recorded = list(read_trajectories(spec.run_dir / "trajectories.jsonl"))
    groups: dict[str, list] = {}
    for trajectory in recorded:
        groups.setdefault(trajectory.group_id, []).append(trajectory)
    assert asked == len(groups) > 0  # one call per group of copies, never one per episode
    for group in groups.values():
        judged = [t for t in group if t.judgment is not None and "llm-group" in t.judgment.components]
        assert len(judged) == len(group) > 1
        assert sorted(t.judgment.score for t in judged) == [0.0] * (len(group) - 1) + [1.0]
    assert sorted(out["nenyax_score"]) == sorted(t.judgment.score for t in recorded)
