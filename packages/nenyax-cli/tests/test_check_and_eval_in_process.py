"""`nenyax check` and `nenyax eval` run in this process (click's test runner), on core's in-memory fakes.

The other CLI tests start the real command in a subprocess; these call the same click application here,
so what they pin is also seen by mutation testing (mutmut observes only code run in the test's process;
tests/README.md, "Mutation testing"). The fakes are installed as distributions on `sys.path`, the way
the subprocess tests install them on PYTHONPATH; the registry is rebuilt around each test.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from nenyax.cli.main import cli
from nenyax.cli.tier_meanings import PROMISES
from nenyax.core import evaluate, load_run, serde
from nenyax.core.contract.schema import SCHEMA_VERSION
from nenyax.core.contract.trajectory import Tier
from nenyax.core.plugins.registry import default_registry
from nenyax.core.tiers import elsewhere
from nenyax.core.tiers.cached import recall
from nenyax.core.tiers.checks import CHECKS
from nenyax_testsupport.distributions import write_distribution

PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_testsupport.fakes:{factory}", summary="fake")
"""


@pytest.fixture
def installed(tmp_path_factory, monkeypatch):
    """``installed(factory)``: a CLI runner with core's `arith` fake built by `factory` installed (on sys.path)."""
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", "0")
    for name in ("NENYAX_MODEL", "NENYAX_POLICY", "NENYAX_TASKS", "NENYAX_SAMPLES", "NENYAX_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    def install(factory: str = "ArithAdapter"):
        module = f"nenyax_arith_plugin_{factory.lower()}"  # one module per factory: imported once per process
        site = write_distribution(
            tmp_path_factory.mktemp("site"),
            "nenyax-arith",
            "1.0",
            {"arith": module},
            {module: PLUGIN.format(factory=factory)},
        )
        monkeypatch.syspath_prepend(str(site))
        default_registry.cache_clear()
        # The fresh interpreter `check` replays in lives as long as this process, with the plugins it first saw:
        # a test that installs another fake needs a new one, as a new `nenyax check` process would start.
        elsewhere._close_workers()
        elsewhere._workers.clear()

        def run(*args: str):
            return CliRunner().invoke(cli, list(args), catch_exceptions=False)

        return run

    yield install
    default_registry.cache_clear()
    elsewhere._close_workers()
    elsewhere._workers.clear()


@pytest.fixture
def nenyax(installed):
    """The CLI with the well-behaved `arith` fake installed."""
    return installed()


def _records(run_dir):
    return [json.loads(line) for line in (run_dir / "trajectories.jsonl").read_text().splitlines()]


# ---------------------------------------------------------------- check


def test_check_json_passes_every_check_exits_0_and_remembers_the_tier(nenyax):
    done = nenyax("check", "arith:add?size=25", "--json", "--margin", "0.5", "--seed", "2")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["tier"] == "audited"
    assert report["samples"] == 20
    assert report["seed"] == 2
    assert [(r["id"], r["outcome"]) for r in report["results"]] == [(c.id, "passed") for c in CHECKS]
    assert report["floor"]["required"] == 0.5
    assert report["floor"]["tasks"] == 20
    cached = recall("arith:add?size=25")
    assert cached is not None
    assert (cached.tier, cached.samples, cached.seed) == (Tier.AUDITED, 20, 2)
    # A check laxer than the defaults measures less: it is not what `nenyax list` shows.
    assert nenyax("check", "arith:add?size=7", "--json", "--samples", "3").exit_code == 0
    assert recall("arith:add?size=7") is None


def test_check_table_names_every_check_the_floor_and_the_tier(nenyax):
    done = nenyax("check", "arith:add?size=5", "--samples", "5")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    # The tier, then what it promises (the tier's own sentence), end the report; 5 tasks are said to be few.
    assert lines[-2:] == ["Tier: audited, on 5 tasks only: so few prove little", f"  {PROMISES[Tier.AUDITED]}"]
    [header] = [line for line in lines if "outcome" in line]
    assert header.split() == ["check", "outcome", "time", "evidence"]
    assert "nenyax check arith:add?size=5" in done.stdout  # the table's title
    assert all(any(c.id in line for line in lines) for c in CHECKS)
    floor = next(line for line in lines if line.startswith("Floor: "))
    assert "against the reference's 1.00 over 5 tasks (margin " in floor
    assert floor.endswith(", 0.30 required).")
    # Ten tasks or more: the tier alone.
    ten = nenyax("check", "arith:add?size=12", "--samples", "10").stdout.splitlines()
    assert ten[-2] == "Tier: audited"


def test_check_of_an_environment_that_reaches_no_tier_exits_1(installed):
    # Nothing failed (the server cannot be reached: connectable is skipped), but nothing was measured either.
    nenyax = installed("UnreachableAdapter")
    done = nenyax("check", "arith:add", "--json")
    report = json.loads(done.stdout)
    assert report["tier"] == "none"
    assert {r["outcome"] for r in report["results"]} == {"skipped"}
    assert done.exit_code == 1
    table = nenyax("check", "arith:add")
    assert table.exit_code == 1
    assert "Tier: none (not even connectable)" in table.stdout


def test_check_exits_1_when_a_check_fails_and_require_decides_instead(installed):
    nenyax = installed("WrongReferenceAdapter")
    failed = nenyax("check", "arith:add", "--json", "--samples", "3")
    assert json.loads(failed.stdout)["tier"] == "trainable"
    assert failed.exit_code == 1
    assert nenyax("check", "arith:add", "--require", "trainable", "--samples", "3").exit_code == 0
    assert nenyax("check", "arith:add", "--require", "audited", "--samples", "3").exit_code == 1
    assert installed()("check", "arith:add", "--require", "audited", "--samples", "3").exit_code == 0
    assert installed("UnreachableAdapter")("check", "arith:add", "--require", "connectable").exit_code == 1


def test_check_says_when_it_sampled_fewer_tasks_than_asked(nenyax):
    done = nenyax("check", "arith:add?size=3", "--samples", "50", "--json")
    assert done.exit_code == 0
    assert json.loads(done.stdout)["samples"] == 3
    assert done.stderr == "Note: --samples 50 is more than the environment's 3 task(s); all 3 were sampled.\n"
    assert "Note:" not in nenyax("check", "arith:add?size=3", "--samples", "3", "--json").stderr


def test_check_save_records_the_run_and_every_episode_it_played(nenyax, tmp_path):
    run = tmp_path / "checked"
    done = nenyax("check", "arith:add?size=4", "--samples", "2", "--seed", "3", "--margin", "0.4", "--save", str(run))
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == f"Episodes saved to {run}/ (open them with `nenyax view {run}`)"
    saved = load_run(run)
    assert saved.config.settings == {
        "uri": "arith:add?size=4",
        "command": "check",
        "samples": 2,
        "seed": 3,
        "margin": 0.4,
    }
    assert saved.config.manifest_digest is not None
    assert saved.trajectories
    report = json.loads((run / "check.json").read_text())
    assert report["tier"] == "audited"
    assert report["seed"] == 3


def test_check_save_of_a_uri_that_does_not_load_leaves_no_directory(nenyax, tmp_path):
    run = tmp_path / "never"
    done = nenyax("check", "arith:nothing", "--save", str(run))
    assert done.exit_code == 2
    assert "there is no 'nothing'" in done.stderr
    assert not run.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert nenyax("check", "arith:nothing", "--save", str(kept)).exit_code == 2
    assert kept.is_dir()
    assert not any(kept.iterdir())


def test_check_without_a_uri_or_with_a_used_save_directory_is_one_sentence(nenyax, tmp_path):
    done = nenyax("check")
    assert done.exit_code == 2
    assert done.stderr == "Error: Name the environment to check, e.g. `nenyax check reasoning_gym:basic_arithmetic`.\n"
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    refused = nenyax("check", "arith:add", "--save", str(used))
    assert refused.exit_code == 2
    assert "--save" in refused.stderr
    assert (used / "x").read_text() == "x"


def test_a_check_config_is_read_back_and_options_override_it(nenyax, tmp_path):
    run = tmp_path / "first"
    assert nenyax("check", "arith:add?size=4", "--samples", "2", "--quiet", "--save", str(run)).exit_code == 0
    again = nenyax("check", "--config", str(run / "run.toml"), "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["samples"] == 2
    more = nenyax("check", "--config", str(run / "run.toml"), "--samples", "3", "--json")
    assert json.loads(more.stdout)["samples"] == 3


# ---------------------------------------------------------------- eval


def test_eval_json_summary_and_run_directory(nenyax, tmp_path):
    run = tmp_path / "r"
    done = nenyax("eval", "arith:add?size=4", "--policy", "reference", "-k", "2", "--json", "--out", str(run))
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["run_dir"] == str(run)
    assert summary["episodes"] == 8
    assert summary["tasks"] == 4
    assert summary["mean"] == 1.0
    assert summary["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert summary["resumed"] == 0
    assert json.loads((run / "summary.json").read_text())["episodes"] == 8
    config = load_run(run).config
    assert config.settings == {
        "uri": "arith:add?size=4",
        "command": "eval",
        "schema_version": str(SCHEMA_VERSION),
        "samples": 2,
        "concurrency": 16,
        "pass_threshold": 1.0,
        "policy": {"use": "reference"},
    }
    assert config.recorded["task_count"] == 4
    records = _records(run)
    assert sorted(r["task_id"] for r in records) == sorted(f"add/0/{i}" for i in range(4) for _ in range(2))
    # The two samples of a task are one group; tasks are never in the same group.
    groups = {}
    for r in records:
        groups.setdefault(r["task_id"], set()).add(r["group_id"])
    assert all(len(ids) == 1 and None not in ids for ids in groups.values())
    assert len({next(iter(ids)) for ids in groups.values()}) == 4


def test_eval_with_one_sample_groups_nothing_and_prints_a_table(nenyax, tmp_path):
    run = tmp_path / "r"
    done = nenyax("eval", "arith:add?size=6", "--policy", "null", "--tasks", "3", "--out", str(run))
    assert done.exit_code == 0, done.output
    assert done.stderr.startswith(f"arith:add?size=6: 3 task(s) x 1 sample(s) -> {run}\n")
    assert "policy null" in done.stdout
    assert "resuming" not in done.stderr
    records = _records(run)
    assert [r["group_id"] for r in records] == [None, None, None]
    assert sorted(r["task_id"] for r in records) == ["add/0/0", "add/0/1", "add/0/2"]
    assert json.loads((run / "summary.json").read_text())["mean"] == 0.0


def test_eval_task_ids_concurrency_threshold_and_timeout_are_the_run(nenyax, tmp_path):
    run = tmp_path / "r"
    args = ["--task-ids", "add/0/1,add/0/3", "--task-ids", "add/0/2", "--concurrency", "2", "--timeout", "30"]
    done = nenyax("eval", "arith:add?size=4", "--policy", "null", *args, "--pass-threshold", "0", "--json",
                  "--out", str(run))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert sorted(r["task_id"] for r in _records(run)) == ["add/0/1", "add/0/2", "add/0/3"]
    settings = load_run(run).config.settings
    assert settings["task_ids"] == ["add/0/1", "add/0/3", "add/0/2"]
    assert "tasks" not in settings
    assert (settings["concurrency"], settings["timeout"], settings["pass_threshold"]) == (2, 30.0, 0.0)
    summary = json.loads(done.stdout)
    # The null policy's empty answers score 0 and fail (arith's judge says `passed` itself, whatever the threshold).
    assert summary["pass_threshold"] == 0.0
    assert summary["mean"] == 0.0
    assert summary["pass_at_k"] == {"1": 0.0}


def test_eval_resume_plays_only_the_missing_episodes_each_in_its_tasks_group(nenyax, tmp_path):
    run = tmp_path / "r"
    first = nenyax("eval", "arith:add?size=3", "--policy", "reference", "-k", "3", "--out", str(run), "--quiet")
    assert first.exit_code == 0, first.output
    (run / "summary.json").unlink()
    records = _records(run)
    by_task = {}
    for r in records:
        by_task.setdefault(r["task_id"], []).append(r)
    # As if killed: one task keeps one episode, one keeps two, one has none recorded yet.
    kept = by_task["add/0/0"][:1] + by_task["add/0/1"][:2]
    (run / "trajectories.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    done = nenyax("eval", "--resume", str(run), "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["episodes"] == 9
    assert summary["resumed"] == 3
    assert summary["tasks"] == 3
    after = _records(run)
    assert after[:3] == kept  # what was recorded stays as it was
    groups = {}
    for r in after:
        groups.setdefault(r["task_id"], set()).add(r["group_id"])
    # A resumed episode joins the group its task already has; a task with nothing recorded gets a new one.
    assert groups["add/0/0"] == {by_task["add/0/0"][0]["group_id"]}
    assert groups["add/0/1"] == {by_task["add/0/1"][0]["group_id"]}
    assert len(groups["add/0/2"]) == 1
    assert None not in groups["add/0/2"]
    assert len({next(iter(ids)) for ids in groups.values()}) == 3
    assert sorted(r["task_id"] for r in after) == sorted(f"add/0/{i}" for i in range(3) for _ in range(3))
    text = nenyax("eval", "--resume", str(run))
    assert text.exit_code == 0
    assert "resuming: 9 episode(s) already recorded, 0 to play" in text.stderr


def test_eval_resume_refuses_changes_and_out(nenyax, tmp_path):
    run = tmp_path / "r"
    assert nenyax("eval", "arith:add?size=2", "--policy", "null", "--out", str(run), "-q").exit_code == 0
    changed = nenyax("eval", "--resume", str(run), "--samples", "2")
    assert changed.exit_code == 2
    assert f"--resume finishes the run {run}/run.toml describes; it differs in samples." in changed.stderr
    policy = nenyax("eval", "--resume", str(run), "--policy", "reference")
    assert policy.exit_code == 2
    assert "it differs in policy" in policy.stderr
    out = nenyax("eval", "--resume", str(run), "--out", str(tmp_path / "other"))
    assert out.exit_code == 2
    assert "--resume finishes a run in its own directory; drop --out." in out.stderr
    assert nenyax("eval", "--resume", str(run), "--concurrency", "3", "--json").exit_code == 0  # free to change


def test_eval_resume_refuses_a_run_of_another_command(nenyax, tmp_path):
    run = tmp_path / "checked"
    assert nenyax("check", "arith:add?size=3", "--samples", "3", "--save", str(run)).exit_code == 0
    done = nenyax("eval", "--resume", str(run))
    assert done.exit_code == 2
    assert f"{run} was written by `nenyax check --save`; only a run of `nenyax eval` can be resumed." in done.stderr
    (run / "run.toml").write_text((run / "run.toml").read_text().replace('command = "check"', 'command = "odd"'))
    odd = nenyax("eval", "--resume", str(run))
    assert odd.exit_code == 2
    assert "names command = 'odd'; it is not a run nenyax wrote" in odd.stderr


def test_eval_mistakes_are_one_sentence(nenyax, tmp_path):
    done = nenyax("eval")
    assert done.exit_code == 2
    assert (
        done.stderr == "Error: Name the environment to evaluate, e.g. `nenyax eval reasoning_gym:basic_arithmetic`.\n"
    )
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    refused = nenyax("eval", "arith:add", "--policy", "null", "--out", str(used))
    assert refused.exit_code == 2
    assert f"finish that run with --resume {used}" in refused.stderr


def test_eval_resume_names_every_setting_that_changed(nenyax, tmp_path):
    run = tmp_path / "r"
    assert nenyax("eval", "arith:add?size=2", "--policy", "null", "--out", str(run), "-q").exit_code == 0
    both = nenyax("eval", "--resume", str(run), "--samples", "2", "--pass-threshold", "0.5")
    assert both.exit_code == 2
    assert "it differs in pass_threshold, samples. Drop those options" in both.stderr
    added = nenyax("eval", "--resume", str(run), "--tasks", "1")  # a setting the run did not have
    assert added.exit_code == 2
    assert "it differs in tasks." in added.stderr


def test_eval_of_a_model_names_it_and_its_timeout_reaches_every_episode(nenyax, tmp_path):
    """The scripted server stands in for a chat model (no real one answers on cue, slowly)."""
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    with serving_in_thread(ScriptedModelServer(lambda messages: "<answer>2</answer>", latency=0.5)) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url, "--max-tokens", "8"]
        run = tmp_path / "model"
        done = nenyax("eval", "arith:add?size=2", *model, "--temperature", "0", "--out", str(run))
        assert done.exit_code == 0, done.output
        assert "openai:scripted" in done.stdout
        assert server.last_body["max_tokens"] == 8
        assert server.last_body["temperature"] == 0
        provider = load_run(run).config.settings["provider"]
        assert (provider["use"], provider["model"], provider["base_url"]) == ("openai", "scripted", server.base_url)
        assert (provider["max_tokens"], provider["temperature"]) == (8, 0.0)
        assert {r["status"] for r in _records(run)} == {"ok"}
        assert {r["policy"]["name"] for r in _records(run)} == {"openai:scripted"}
        late = tmp_path / "late"
        timed = nenyax("eval", "arith:add?size=2", *model, "--timeout", "0.1", "--json", "--out", str(late))
        assert timed.exit_code == 0, timed.output
        summary = json.loads(timed.stdout)
        assert summary["statuses"]["timeout"] == 2
        assert summary["scored"] == 0
        assert summary["mean"] is None


def test_the_command_lines_policy_or_model_wins_over_the_config_files(nenyax, tmp_path):
    """The scripted server stands in for a chat model."""
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    with serving_in_thread(ScriptedModelServer(lambda messages: "<answer>2</answer>")) as server:
        by_policy = tmp_path / "policy.toml"
        by_policy.write_text('uri = "arith:add?size=2"\n[policy]\nuse = "reference"\n')
        model = ["--model", "openai:scripted", "--base-url", server.base_url]
        run = tmp_path / "model-wins"
        assert nenyax("eval", "--config", str(by_policy), *model, "--out", str(run), "-q").exit_code == 0
        settings = load_run(run).config.settings
        assert "policy" not in settings
        assert settings["provider"]["model"] == "scripted"
        by_model = tmp_path / "model.toml"
        by_model.write_text(
            f'uri = "arith:add?size=2"\n[provider]\nuse = "openai"\nmodel = "scripted"\nbase_url = "{server.base_url}"\n'
        )
        run = tmp_path / "policy-wins"
        assert (
            nenyax("eval", "--config", str(by_model), "--policy", "reference", "--out", str(run), "-q").exit_code == 0
        )
        settings = load_run(run).config.settings
        assert settings["policy"] == {"use": "reference"}
        assert "provider" not in settings
        assert {r["policy"]["kind"] for r in _records(run)} == {"reference"}


def test_eval_sends_the_models_params_and_names_a_key_variable_that_holds_none(nenyax, tmp_path, monkeypatch):
    """The scripted server stands in for a chat model: the test reads the body each request sent."""
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    monkeypatch.delenv("NENYAX_TEST_NO_SUCH_KEY", raising=False)
    with serving_in_thread(ScriptedModelServer(lambda messages: "<answer>2</answer>")) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url, "--tasks", "1"]
        run = tmp_path / "params"
        done = nenyax("eval", "arith:add", *model, "--param", "top_p=0.5", "--param", "seed=3", "--out", str(run))
        assert done.exit_code == 0, done.output
        assert server.last_body["top_p"] == 0.5
        assert server.last_body["seed"] == 3
        keyless = nenyax("eval", "arith:add", *model, "--api-key-env", "NENYAX_TEST_NO_SUCH_KEY", "--out",
                         str(tmp_path / "keyless"))  # fmt: skip
        assert keyless.exit_code == 2
        assert "The environment variable NENYAX_TEST_NO_SUCH_KEY holds no API key" in keyless.stderr
        monkeypatch.setenv("NENYAX_TEST_NO_SUCH_KEY", "sk-test")
        keyed = tmp_path / "keyed"
        args = ["--api-key-env", "NENYAX_TEST_NO_SUCH_KEY", "--out", str(keyed)]
        assert nenyax("eval", "arith:add", *model, *args).exit_code == 0
        assert load_run(keyed).config.settings["provider"]["api_key_env"] == "NENYAX_TEST_NO_SUCH_KEY"
        assert "sk-test" not in (keyed / "run.toml").read_text()


def test_eval_resume_of_an_old_run_and_a_setting_the_run_lacks(nenyax, tmp_path):
    run = tmp_path / "r"
    assert nenyax("eval", "arith:add?size=2", "--policy", "null", "--out", str(run), "-q").exit_code == 0
    narrowed = nenyax("eval", "--resume", str(run), "--task-ids", "add/0/0")
    assert narrowed.exit_code == 2
    assert "it differs in task_ids." in narrowed.stderr
    # A run written before run.toml named its command is eval's.
    toml = run / "run.toml"
    toml.write_text(toml.read_text().replace('command = "eval"\n', ""))
    (run / "summary.json").unlink()
    done = nenyax("eval", "--resume", str(run), "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["episodes"] == 2


def _played(run):
    return sorted((t.task_id, t.sample, t.status.value, t.judgment.score) for t in run.trajectories)


def _figures(summary):
    return {k: v for k, v in serde.to_data(summary).items() if k not in ("wall_s", "episodes_per_s")}


def test_eval_and_evaluate_write_the_same_run_directory_resume_included(nenyax, tmp_path):
    """`nenyax eval` is a shell over `nenyax.core.evaluate`: the same settings give the same run directory."""
    by_cli, by_python = tmp_path / "cli", tmp_path / "python"
    args = ("arith:add?size=6", "--policy", "reference", "--tasks", "3", "--samples", "2")
    assert nenyax("eval", *args, "--out", str(by_cli), "--json").exit_code == 0

    async def in_a_notebook_cell(**settings):  # a running event loop, as in Jupyter
        return evaluate(**settings)

    asyncio.run(in_a_notebook_cell(env="arith:add?size=6", policy="reference", tasks=3, samples=2, out=by_python))
    cli_run, python_run = load_run(by_cli), load_run(by_python)
    assert cli_run.config.settings == python_run.config.settings
    assert _played(cli_run) == _played(python_run) == [(f"add/0/{i}", k, "ok", 1.0) for i in range(3) for k in range(2)]
    assert _figures(cli_run.summary) == _figures(python_run.summary)
    # Both killed after two episodes (the third cut off mid-line), then resumed, one by each.
    for run_dir in (by_cli, by_python):
        lines = (run_dir / "trajectories.jsonl").read_bytes().splitlines()
        (run_dir / "trajectories.jsonl").write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:30])
        (run_dir / "summary.json").unlink()
    resumed = nenyax("eval", "--resume", str(by_cli), "--json")
    assert resumed.exit_code == 0, resumed.output
    asyncio.run(in_a_notebook_cell(resume=by_python))
    cli_run, python_run = load_run(by_cli), load_run(by_python)
    assert _played(cli_run) == _played(python_run) == [(f"add/0/{i}", k, "ok", 1.0) for i in range(3) for k in range(2)]
    assert _figures(cli_run.summary) == _figures(python_run.summary)
    assert cli_run.summary.resumed == python_run.summary.resumed == 2
