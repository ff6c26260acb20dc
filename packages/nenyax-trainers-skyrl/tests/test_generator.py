"""SkyRL's `GeneratorInterface` through `NenyaxGenerator`, the embedded SmolLM2 behind `nenyax serve-model` as
the inference engine: a step environment (reasoning-gym) and a rollout one (the verifiers demo, verifiers'
own loop), each prompt repeated as SkyRL's `n_samples_per_prompt` does; SkyRL gets exactly the recorded ids."""

from __future__ import annotations

import asyncio

import pytest
import skyrl_gym

import nenyax.trainers.skyrl as bridge
from nenyax.core import PolicyInfo, merged_samples, read_trajectories
from nenyax.core.errors import InfraFailure, UsageError

STEP = "reasoning_gym:basic_arithmetic?size=2"
ROLLOUT = "verifiers:nenyax.adapters.verifiers.demo:load_environment"
SAMPLES_PER_PROMPT = 2


def validate_generator_output(num_prompts, out):
    """SkyRL's own check of a generated batch (imported here: skyrl, ray and torch are imported by the tests
    that need them, while the engine starts, not by a worker that only collects this file)."""
    from skyrl.train.utils.trainer_utils import validate_generator_output as validate

    validate(num_prompts, out)


def batch(uri: str, limit: int):
    """The rows of `uri` as SkyRL's trainer hands them to its generator: each repeated, one TrajectoryID each."""
    from skyrl.train.generators.base import GeneratorInput, TrajectoryID

    rows = bridge.skyrl_rows(uri, limit=limit)
    repeated = [(i, r, row) for i, row in enumerate(rows) for r in range(SAMPLES_PER_PROMPT)]
    return GeneratorInput(
        prompts=[row["prompt"] for _, _, row in repeated],
        env_classes=[row["env_class"] for _, _, row in repeated],
        env_extras=[row["env_extras"] for _, _, row in repeated],
        sampling_params={"temperature": 1.0, "max_tokens": 12, "logprobs": 0},
        trajectory_ids=[TrajectoryID(instance_id=f"p{i}", repetition_id=r) for i, r, _ in repeated],
        batch_metadata=None,
    )


def generates_the_recorded_ids(uri: str, engine_url: str, tokenizer, tmp_path, *, prompts: int) -> None:
    from skyrl.train.generators.base import GeneratorInterface

    generator = bridge.NenyaxGenerator(base_url=engine_url, runs=tmp_path / "runs")
    assert isinstance(generator, GeneratorInterface)
    assert generator.model == "local:smollm2-135m"  # the name the engine's /v1/models gives
    given = batch(uri, limit=prompts)
    out = asyncio.run(generator.generate(given))
    n = len(given["prompts"])
    validate_generator_output(n, out)  # SkyRL's own check, as its trainer runs it on every generated batch
    assert out["trajectory_ids"] == given["trajectory_ids"]
    for key in ("prompt_token_ids", "response_ids", "rewards", "loss_masks", "stop_reasons", "rollout_logprobs"):
        assert len(out[key]) == n, key
    (run_dir,) = generator.run_dirs.values()
    recorded = {t.id: t for t in read_trajectories(run_dir / "trajectories.jsonl")}
    assert set(recorded) == {t.id for t in generator.trajectories}
    for i, trajectory in enumerate(generator.trajectories):
        trajectory = recorded[trajectory.id]  # what was streamed to the run directory
        assert trajectory.status.value == "ok", trajectory.error
        assert trajectory.model_calls
        assert all(c.completion_token_ids for c in trajectory.model_calls)
        (sample,), forks = merged_samples(trajectory)
        assert not forks.count
        assert out["prompt_token_ids"][i] == list(trajectory.model_calls[0].prompt_token_ids)
        assert out["response_ids"][i] == list(sample.completion_ids)  # the recorded ids, never re-tokenized
        assert out["loss_masks"][i] == list(sample.loss_mask)
        assert sum(out["loss_masks"][i]) > 0
        assert len(out["rollout_logprobs"][i]) == len(out["response_ids"][i]) == len(out["loss_masks"][i])
        assert out["rewards"][i] == trajectory.judgment.score
        assert out["stop_reasons"][i] in ("stop", "length")
        first = trajectory.model_calls[0]
        # The first reply's ids are the model's own sampled tokens: they decode to the text the episode played.
        reply = tokenizer.decode(out["response_ids"][i][: len(first.completion_token_ids)], skip_special_tokens=True)
        assert reply.strip() == (first.response.get("content") or "").strip()
        assert trajectory.group_id == f"skyrl:{given['trajectory_ids'][i].instance_id}"
    assert out["rollout_metrics"]["nenyax/status/ok"] == n


def test_a_step_environment_s_episodes_reach_skyrl_as_recorded(engine_url, tokenizer, tmp_path):
    generates_the_recorded_ids(STEP, engine_url, tokenizer, tmp_path, prompts=2)


def test_a_rollout_environment_s_episodes_reach_skyrl_as_recorded(engine_url, tokenizer, tmp_path):
    generates_the_recorded_ids(ROLLOUT, engine_url, tokenizer, tmp_path, prompts=1)


def test_skyrl_s_text_env_refuses_a_rollout_environment_in_one_sentence_naming_the_generator():
    # Here, beside the generator's rollout test: the verifiers demo is loaded once per process.
    row = bridge.skyrl_rows(ROLLOUT, limit=1)[0]
    with pytest.raises(UsageError, match="NenyaxGenerator") as refused:
        skyrl_gym.make("nenyax", extras=row["env_extras"])
    assert str(refused.value).count(". ") == 0
    assert str(refused.value).endswith(".")


class Broken:
    """A policy whose model server went away under it."""

    speaks_text = True
    info = PolicyInfo(kind="callable", name="broken")

    async def act(self, turn):
        raise InfraFailure("The model server went away.")


def test_an_infrastructure_failure_masks_its_group_never_a_reward_of_zero(engine_url, tmp_path):
    generator = bridge.NenyaxGenerator(base_url=engine_url, runs=tmp_path / "runs")
    play = generator._episode

    async def episode(endpoint, extras, tid):
        broken = tid.instance_id == "p1" and tid.repetition_id == 0
        return await play(Broken() if broken else endpoint, extras, tid)

    generator._episode = episode
    given = batch(STEP, limit=2)
    out = asyncio.run(generator.generate(given))
    statuses = [t.status.value for t in generator.trajectories]
    assert statuses == ["ok", "ok", "infra_error", "ok"]
    # The failed episode's whole group is out (its copy that played fine too), as HarborGenerator masks a prompt.
    assert out["loss_masks"][2:] == [[0], [0]]
    assert out["stop_reasons"][2:] == ["error", "error"]
    assert all(any(m) for m in out["loss_masks"][:2])
    assert out["rollout_metrics"]["nenyax/status/infra_error"] == 1
    assert out["rollout_metrics"]["generate/num_masked_instances"] == 1
    validate_generator_output(len(given["prompts"]), out)
