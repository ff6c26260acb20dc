"""`evaluate` and `EvalSettings`: the one run service behind `nenyax eval`, on the in-memory `arith` fake.

The CLI's tests check that `nenyax eval` writes the same run directory as this function for the same
settings (packages/nenyax-cli/tests/test_eval_service.py).
"""

import asyncio

import attrs
import orjson
import pytest

from nenyax.core import (
    EvalSettings,
    LearnerSettings,
    ModelSettings,
    PolicySettings,
    SettingsDiffer,
    TrainSettings,
    UsageError,
    evaluate,
    load,
    load_run,
)
from nenyax.core.contract.schema import SCHEMA_VERSION
from nenyax.core.engine.rundirs import TRAJECTORIES, read_config
from nenyax.core.plugins.registry import Registry
from nenyax_testsupport.fakes import AdapterPlugin, add_up


@pytest.fixture
def env():
    return load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))


def _played(run):
    return sorted((t.task_id, t.sample, t.status.value, t.judgment.score) for t in run.trajectories)


def test_evaluate_writes_a_run_directory_with_its_settings_and_summary(env, tmp_path):
    result = evaluate(env, "reference", tasks=4, samples=2, out=tmp_path / "run")
    run = load_run(tmp_path / "run")
    assert result.run_dir == tmp_path / "run"
    assert result.summary == run.summary
    assert run.summary.episodes == 8
    assert run.summary.mean == 1.0
    assert run.summary.pass_at_k == {"1": 1.0, "2": 1.0}
    assert run.config.settings == {
        "uri": "arith:add?size=6",
        "command": "eval",
        "schema_version": str(SCHEMA_VERSION),
        "tasks": 4,
        "samples": 2,
        "concurrency": 16,
        "pass_threshold": 1.0,
        "policy": {"use": "reference"},
    }
    assert _played(run) == [(f"add/0/{i}", k, "ok", 1.0) for i in range(4) for k in range(2)]
    # Each task's samples form one group.
    assert len({t.group_id for t in run.trajectories}) == 4


def test_evaluate_works_inside_a_running_event_loop(env, tmp_path):
    async def in_a_notebook_cell():
        return evaluate(env, "reference", tasks=3, out=tmp_path / "run")

    result = asyncio.run(in_a_notebook_cell())
    assert result.summary.episodes == 3
    assert load_run(tmp_path / "run").summary.mean == 1.0


def test_resume_plays_only_the_missing_episodes_each_exactly_once(env, tmp_path):
    run_dir = tmp_path / "run"
    evaluate(env, "reference", tasks=5, samples=2, out=run_dir)
    lines = (run_dir / TRAJECTORIES).read_bytes().splitlines()
    # A killed run: four episodes recorded, the fifth cut off mid-line, no summary.
    (run_dir / TRAJECTORIES).write_bytes(b"\n".join(lines[:4]) + b"\n" + lines[4][:40])
    (run_dir / "summary.json").unlink()
    kept = [orjson.loads(line)["id"] for line in lines[:4]]
    result = evaluate(env, resume=run_dir)
    run = load_run(run_dir)
    assert result.summary.resumed == 4
    assert result.summary.episodes == 10
    assert _played(run) == [(f"add/0/{i}", k, "ok", 1.0) for i in range(5) for k in range(2)]
    assert [t.id for t in run.trajectories[:4]] == kept
    # The resumed samples joined the groups their tasks already had.
    assert len({t.group_id for t in run.trajectories}) == 5
    # A finished run resumed again plays nothing.
    again = evaluate(env, resume=run_dir)
    assert again.summary.episodes == 10
    assert again.summary.resumed == 10


def test_resume_refuses_other_settings_but_takes_another_concurrency(env, tmp_path):
    run_dir = tmp_path / "run"
    evaluate(env, "reference", tasks=2, out=run_dir)
    with pytest.raises(SettingsDiffer) as info:
        evaluate(env, "reference", tasks=2, samples=3, resume=run_dir)
    assert info.value.changed == ("samples",)
    with pytest.raises(SettingsDiffer, match="differs in policy"):
        evaluate(env, "null", tasks=2, resume=run_dir)
    assert evaluate(env, resume=run_dir, concurrency=1).settings.concurrency == 1


def test_a_python_policy_is_recorded_by_name_and_needed_again_to_resume(env, tmp_path):
    run_dir = tmp_path / "run"
    result = evaluate(env, add_up, tasks=2, out=run_dir)
    assert result.settings.policy == PolicySettings(use="python:nenyax_testsupport.fakes.add_up")
    assert result.summary.mean == 1.0
    with pytest.raises(UsageError, match="pass it again as policy="):
        evaluate(env, resume=run_dir)
    assert evaluate(env, add_up, resume=run_dir).summary.episodes == 2


def test_settings_round_trip_through_run_toml(tmp_path):
    settings = EvalSettings(
        uri="arith:add",
        task_ids=("a", "b"),
        samples=3,
        timeout=2.5,
        provider=ModelSettings.named("openai:m", base_url="http://x/v1", temperature=0.0, params={"top_p": 0.5}),
    )
    table = settings.to_table()
    assert "tasks" not in table  # None is absent: TOML has no null
    assert table["provider"] == {
        "use": "openai",
        "model": "m",
        "base_url": "http://x/v1",
        "temperature": 0.0,
        "params": {"top_p": 0.5},
    }
    assert EvalSettings.from_table(table) == settings


def test_a_typo_in_a_run_toml_is_one_sentence_naming_the_key(tmp_path):
    with pytest.raises(UsageError, match=r"names 'sampels', which no run setting is; did you mean samples\?"):
        EvalSettings.from_table({"uri": "arith:add", "sampels": 2})
    with pytest.raises(UsageError, match=r"names \[provider\] 'temprature'"):
        EvalSettings.from_table({"uri": "arith:add", "provider": {"use": "openai", "model": "m", "temprature": 1}})
    with pytest.raises(UsageError, match="samples must be a whole number of at least 1"):
        EvalSettings.from_table({"uri": "arith:add", "samples": 0})


def test_a_newer_minor_version_keeps_what_it_does_not_know_and_a_newer_major_is_refused(env, tmp_path):
    newer = f"{SCHEMA_VERSION.major}.{SCHEMA_VERSION.minor + 1}"
    settings = EvalSettings.from_table({"uri": "arith:add", "schema_version": newer, "temperature_schedule": "cos"})
    assert settings.unknown_fields == {"temperature_schedule": "cos"}
    assert settings.to_table()["temperature_schedule"] == "cos"  # written back unchanged
    with pytest.raises(UsageError, match=r"reads 1\.x only"):
        EvalSettings.from_table({"uri": "arith:add", "schema_version": f"{SCHEMA_VERSION.major + 1}.0"})
    # A run written by the newer minor is resumed with its unknown settings kept in run.toml.
    run_dir = tmp_path / "run"
    evaluate(env, "reference", tasks=2, out=run_dir)
    text = (run_dir / "run.toml").read_text()
    (run_dir / "run.toml").write_text(
        text.replace(f'schema_version = "{SCHEMA_VERSION}"', f'schema_version = "{newer}"\nfuture = 1')
    )
    evaluate(env, resume=run_dir)
    assert read_config(run_dir).settings["future"] == 1


def test_mistakes_are_one_sentence_before_any_directory_is_made(env, tmp_path):
    with pytest.raises(UsageError, match="Unknown built-in policy 'refrence'"):
        evaluate(env, "refrence", out=tmp_path / "a")
    with pytest.raises(UsageError, match="Unknown backend"):
        evaluate(env, "reference", out=tmp_path / "b", backend="threads")
    with pytest.raises(UsageError, match="either by count"):
        evaluate(env, "reference", tasks=2, task_ids=["add/0/1"], out=tmp_path / "c")
    assert not any(tmp_path.iterdir())
    evaluate(env, "reference", tasks=1, out=tmp_path / "d")
    with pytest.raises(UsageError, match="already holds files"):
        evaluate(env, "reference", tasks=1, out=tmp_path / "d")


def test_a_check_run_is_not_resumed_as_an_evaluation(env, tmp_path):
    run_dir = tmp_path / "run"
    evaluate(env, "reference", tasks=1, out=run_dir)
    text = (run_dir / "run.toml").read_text().replace('command = "eval"', 'command = "check"')
    (run_dir / "run.toml").write_text(text)
    with pytest.raises(UsageError, match="only an evaluation can be resumed"):
        evaluate(env, resume=run_dir)


def test_settings_of_an_endpoint_build_the_same_endpoint():
    settings = ModelSettings.named("openai:m", base_url="http://x/v1", api_key_env="K", max_tokens=9, constrain=True)
    endpoint = settings.endpoint()
    assert ModelSettings.of(endpoint) == settings
    assert endpoint.params == {"max_tokens": 9}
    assert attrs.evolve(settings, model="n").name == "openai:n"


def test_train_settings_keep_the_learner_table_flat_and_refuse_typos():
    settings = TrainSettings(
        uri="arith:add", learner=LearnerSettings(use="grpo", options={"lr": 1e-5}), model="local:m", rounds=2
    )
    table = settings.to_table()
    assert table["learner"] == {"use": "grpo", "lr": 1e-5}
    assert table["command"] == "train"
    assert "timeout" not in table
    assert TrainSettings.from_table(table) == settings
    with pytest.raises(UsageError, match=r"names 'round', which no run setting is; did you mean rounds\?"):
        TrainSettings.from_table({**table, "round": 3})
    with pytest.raises(UsageError, match="group-size must be a whole number of at least 1"):
        TrainSettings.from_table({**table, "group_size": 0})
