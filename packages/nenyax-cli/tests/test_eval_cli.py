"""`nenyax eval`'s command line on core's in-memory `arith` fake, installed as a distribution on disk.

nenyax-cli's tests install no real adapter (the CLI depends on core alone); tests/test_eval.py runs
the same command on reasoning-gym, kill -9 and --resume included.
"""

import json
import os
import subprocess
import sys

import pytest

from nenyax.core import load_run
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread


def nenyax(site, *args, extra_env=None):
    # The site first, then whatever the caller's path put first (a worktree's sources over the installed ones).
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "NENYAX_STRICT_PLUGINS": "0", **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_eval_prints_the_summary_as_json_and_records_it(site, tmp_path):
    done = nenyax(
        site, "eval", "arith:add?size=4", "--policy", "reference", "-k", "2", "--json", "--out", str(tmp_path / "r")
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["episodes"] == 8
    assert summary["mean"] == 1.0
    assert summary["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["episodes"] == 8
    assert len((tmp_path / "r" / "trajectories.jsonl").read_text().splitlines()) == 8


def test_task_ids_pick_the_tasks(site, tmp_path):
    done = nenyax(
        site,
        "eval",
        "arith:add?size=4",
        "--policy",
        "null",
        "--task-ids",
        "add/0/1,add/0/3",
        "--json",
        "--out",
        str(tmp_path / "r"),
    )
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "r" / "trajectories.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == ["add/0/1", "add/0/3"]
    assert json.loads(done.stdout)["mean"] == 0.0


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        ((), "Name the environment to evaluate"),
        (("arith:add", "--policy", "null", "--model", "openai:m"), "either --policy or a model (--model), not both"),
        (("--resume", "nowhere"), "does not exist"),
    ],
)
def test_mistakes_are_one_sentence(site, tmp_path, args, sentence):
    done = nenyax(site, "eval", *args)
    assert done.returncode == 2
    assert sentence in done.stderr
    assert "Traceback" not in done.stderr


def test_a_used_out_directory_is_refused(site, tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "keep.txt").write_text("x")
    done = nenyax(site, "eval", "arith:add", "--policy", "null", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "--resume" in done.stderr
    assert (tmp_path / "r" / "keep.txt").exists()


def test_list_says_when_an_adapter_cannot_list(site):
    done = nenyax(site, "list", "arith", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"arith": None}  # the fake has no listing(): said, not guessed
    assert "arith: cannot list" in nenyax(site, "list", "arith").stdout


def test_param_and_constrain_reach_the_model_are_recorded_and_a_config_replays_them(site, tmp_path):
    """The scripted server stands in for a model: the test reads the request body each call sent."""
    with serving_in_thread(ScriptedModelServer(lambda messages: "2")) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url]
        first = tmp_path / "first"
        args = ["eval", "arith:add", *model, "--tasks", "2", "--param", "top_p=0.5", "--param", "seed=3"]
        done = nenyax(site, *args, "--out", str(first), "--json")
        assert done.returncode == 0, done.stderr
        assert server.last_body["top_p"] == 0.5
        assert server.last_body["seed"] == 3
        provider = load_run(first).config.settings["provider"]
        assert provider["params"] == {"top_p": 0.5, "seed": 3}
        assert "constrain" not in provider
        server.last_body = None
        again = nenyax(site, "eval", "--config", str(first / "run.toml"), "--out", str(tmp_path / "again"), "--json")
        assert again.returncode == 0, again.stderr
        assert server.last_body["top_p"] == 0.5
        assert server.last_body["seed"] == 3
        assert load_run(tmp_path / "again").config.settings == load_run(first).config.settings
        held = tmp_path / "constrained"
        assert (
            nenyax(site, "eval", "arith:add", *model, "--tasks", "1", "--constrain", "--out", str(held)).returncode == 0
        )
        assert load_run(held).config.settings["provider"]["constrain"] is True
        replayed = tmp_path / "constrained-again"
        assert nenyax(site, "eval", "--config", str(held / "run.toml"), "--out", str(replayed)).returncode == 0
        assert load_run(replayed).config.settings == load_run(held).config.settings
    mixed = nenyax(site, "eval", "arith:add", "--policy", "null", "--param", "top_p=0.5", "--out", str(tmp_path / "x"))
    assert mixed.returncode == 2
    assert "not both" in mixed.stderr
    assert "Traceback" not in mixed.stderr
    typo = nenyax(site, "eval", "arith:add", "--param", "top_q=1", "--out", str(tmp_path / "y"))
    assert typo.returncode == 2
    assert "Did you mean top_p" in typo.stderr


def test_param_may_name_temperature_and_merges_key_by_key_over_a_config(site, tmp_path):
    """The scripted server stands in for a model: the test reads the request body each call sent."""
    with serving_in_thread(ScriptedModelServer(lambda messages: "2")) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url, "--tasks", "1"]
        first = tmp_path / "first"
        done = nenyax(site, "eval", "arith:add", *model, "--param", "temperature=0", "--param", "seed=3",
                      "--constrain", "--out", str(first))  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.last_body["temperature"] == 0
        assert server.last_body["seed"] == 3
        provider = load_run(first).config.settings["provider"]
        assert provider["temperature"] == 0
        assert provider["params"] == {"seed": 3}
        assert provider["constrain"] is True
        # A --param on top of the file's [provider.params] adds to it; --no-constrain turns the file's off.
        again = tmp_path / "again"
        args = ["--config", str(first / "run.toml"), "--param", "top_p=0.5", "--no-constrain", "--out", str(again)]
        assert nenyax(site, "eval", *args).returncode == 0
        assert server.last_body["seed"] == 3
        assert server.last_body["top_p"] == 0.5
        provider = load_run(again).config.settings["provider"]
        assert provider["params"] == {"seed": 3, "top_p": 0.5}
        assert "constrain" not in provider


@pytest.mark.parametrize(
    ("param", "sentence"),
    [("stop=null", "sends nothing"), ("top_p=inf", "finite numbers only"), ("top_p=nan", "finite numbers only")],
)
def test_a_param_that_cannot_round_trip_is_refused(site, tmp_path, param, sentence):
    done = nenyax(site, "eval", "arith:add", "--model", "openai:m", "--param", param, "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert sentence in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


def test_resume_refuses_a_directory_another_command_wrote(site, tmp_path):
    run = tmp_path / "tried"
    assert nenyax(site, "try", "arith:add", "--policy", "reference", "--save", str(run)).returncode == 0
    done = nenyax(site, "eval", "--resume", str(run))
    assert done.returncode == 2
    assert "written by `nenyax try --save`" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_config_names_a_known_command_or_none(site, tmp_path):
    odd = tmp_path / "odd.toml"
    odd.write_text('uri = "arith:add"\ncommand = 3\n')
    done = nenyax(site, "eval", "--config", str(odd))
    assert done.returncode == 2
    assert "command = 3" in done.stderr
    handwritten = tmp_path / "mine.toml"  # no command key: any command that takes its keys may read it
    handwritten.write_text('uri = "arith:add"\ntask = "add/0/1"\n[policy]\nuse = "reference"\n')
    played = nenyax(site, "try", "--config", str(handwritten), "--json")
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["task_id"] == "add/0/1"


def test_an_exported_base_url_does_not_turn_a_policy_run_into_a_model_run(site, tmp_path):
    run = tmp_path / "policy"
    assert nenyax(site, "eval", "arith:add", "--policy", "reference", "--tasks", "2", "--out", str(run)).returncode == 0
    (run / "summary.json").unlink()
    lines = (run / "trajectories.jsonl").read_text().splitlines(keepends=True)
    (run / "trajectories.jsonl").write_text(lines[0])  # as if killed after one episode
    env = {"NENYAX_BASE_URL": "http://127.0.0.1:9/v1", "NENYAX_API_KEY_ENV": "NOT_SET_HERE"}
    resumed = nenyax(site, "eval", "--resume", str(run), "--json", extra_env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["episodes"] == 2
    assert {t.policy.kind for t in load_run(run).trajectories} == {"reference"}


@pytest.mark.parametrize(
    ("param", "sentence"),
    [
        ('stop=[null,"x"]', "holds a null"),
        ("stop=[1e999]", "finite numbers only"),
        ("seed=99999999999999999999", "beyond 64 bits"),
    ],
)
def test_a_nested_value_no_request_can_carry_is_refused(site, tmp_path, param, sentence):
    done = nenyax(site, "eval", "arith:add", "--model", "openai:m", "--param", param, "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert sentence in done.stderr
    assert "Traceback" not in done.stderr


def test_a_config_with_an_infinite_param_is_refused_and_an_eval_run_names_its_command(site, tmp_path):
    config = tmp_path / "run.toml"
    config.write_text('uri = "arith:add"\n[provider]\nuse = "openai"\nmodel = "m"\n[provider.params]\ntop_p = inf\n')
    done = nenyax(site, "eval", "--config", str(config), "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "finite numbers only" in done.stderr
    assert "Traceback" not in done.stderr
    run = tmp_path / "evaluated"
    assert nenyax(site, "eval", "arith:add", "--policy", "null", "--tasks", "1", "--out", str(run)).returncode == 0
    wrong = nenyax(site, "try", "--config", str(run / "run.toml"))
    assert wrong.returncode == 2
    assert "written by `nenyax eval`" in wrong.stderr


def _played(run_dir):
    return sorted((t.task_id, t.sample, t.status.value, t.judgment, t.steps) for t in load_run(run_dir).trajectories)


def test_backend_process_records_the_same_run_as_in_process(site, tmp_path):
    args = ("eval", "arith:add?size=6", "--policy", "random", "-k", "2", "--json")
    here = nenyax(site, *args, "--out", str(tmp_path / "here"))
    there = nenyax(site, *args, "--out", str(tmp_path / "there"), "--backend", "process", "--workers", "2")
    assert here.returncode == 0, there.stderr
    assert there.returncode == 0, there.stderr
    assert _played(tmp_path / "there") == _played(tmp_path / "here")
    assert len(_played(tmp_path / "here")) == 12
    ids = [t.id for t in load_run(tmp_path / "there").trajectories]
    assert len(set(ids)) == len(ids) == 12  # each episode exactly once in trajectories.jsonl
    drop = ("wall_s", "episodes_per_s")
    mine, theirs = (json.loads(d.stdout) for d in (there, here))
    assert {k: v for k, v in mine.items() if k not in (*drop, "run_dir")} == {
        k: v for k, v in theirs.items() if k not in (*drop, "run_dir")
    }
    # Where episodes ran changes nothing they record, so run.toml does not say it.
    assert load_run(tmp_path / "there").config.settings == load_run(tmp_path / "here").config.settings
    assert "backend" not in (tmp_path / "there" / "run.toml").read_text()


def test_workers_without_the_process_backend_is_one_sentence(site, tmp_path):
    done = nenyax(site, "eval", "arith:add", "--policy", "null", "--workers", "2", "--out", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "add --backend process" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


def test_a_resumed_run_may_change_its_backend(site, tmp_path):
    run_dir = tmp_path / "r"
    first = nenyax(site, "eval", "arith:add?size=5", "--policy", "reference", "--out", str(run_dir))
    assert first.returncode == 0, first.stderr
    lines = (run_dir / "trajectories.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "trajectories.jsonl").write_text("".join(lines[:2]))  # as a killed run would have left it
    done = nenyax(site, "eval", "--resume", str(run_dir), "--backend", "process", "--workers", "2", "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(t.task_id for t in load_run(run_dir).trajectories) == [f"add/0/{i}" for i in range(5)]
    assert json.loads(done.stdout)["episodes"] == 5


def _pairs(run):
    return sorted((t.task_id, t.sample) for t in load_run(run).trajectories)


def test_resume_replays_the_episode_whose_line_a_killed_writer_cut_off(site, tmp_path):
    run = tmp_path / "r"
    args = ("arith:add?size=4", "--policy", "reference", "--tasks", "2", "-k", "2")
    assert nenyax(site, "eval", *args, "--out", str(run)).returncode == 0
    everything = _pairs(run)
    (run / "summary.json").unlink()
    jsonl = run / "trajectories.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    cut = lines[-1][: len(lines[-1]) // 2]
    jsonl.write_bytes(b"".join(lines[:-1]) + cut)  # killed half way through its last line
    resumed = nenyax(site, "eval", "--resume", str(run))
    assert resumed.returncode == 0, resumed.stderr
    assert f"left {len(cut):,} bytes of a cut-off last line in {jsonl}" in resumed.stderr
    assert "3 episode(s) already recorded, 1 to play" in resumed.stderr
    assert _pairs(run) == everything
    assert len(everything) == 4
    assert len(jsonl.read_bytes().splitlines()) == 4


def test_resume_reads_records_that_kept_the_sample_in_info(site, tmp_path):
    # Schema 1.0 (before `sample` was a field): the sample index sat in `info`, where `eval --resume` read it.
    run = tmp_path / "r"
    args = ("arith:add?size=4", "--policy", "reference", "--tasks", "2", "-k", "2")
    assert nenyax(site, "eval", *args, "--out", str(run)).returncode == 0
    (run / "summary.json").unlink()
    jsonl = run / "trajectories.jsonl"
    old = []
    for line in jsonl.read_text().splitlines()[:3]:
        record = json.loads(line)
        record["info"] = {"sample": record.pop("sample"), "agent": record.pop("agent")}
        old.append(json.dumps({**record, "schema_version": 1}))
    jsonl.write_text("\n".join(old) + "\n")
    resumed = nenyax(site, "eval", "--resume", str(run), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["episodes"] == 4
    assert json.loads(resumed.stdout)["resumed"] == 3
    assert len(set(_pairs(run))) == 4
    assert all(t.info == {} for t in load_run(run).trajectories)
