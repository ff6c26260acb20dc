"""`try --save DIR` and `check --save DIR` write run directories (the layout `eval` writes), and `check`
remembers the tier it measured; on core's in-memory `arith` fake, installed as a distribution on disk.

tests/test_list.py shows the remembered tier in `nenyax list` on a real adapter (the fake cannot list).
"""

import json
import os
import subprocess
import sys

import orjson

from nenyax.core import load_run
from nenyax.core.contract.trajectory import Status, Tier
from nenyax.core.tiers.cached import recall
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread


def nenyax(site, tmp_path, *args):
    checks = str(tmp_path / "checks")
    env = {**os.environ, "PYTHONPATH": str(site), "NENYAX_STRICT_PLUGINS": "0", "NENYAX_CHECKS_DIR": checks}
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_try_save_to_a_folder_writes_a_run_directory_view_reads(site, tmp_path):
    run = tmp_path / "runs" / "one"
    done = nenyax(site, tmp_path, "try", "arith:add", "--policy", "reference", "--save", str(run))
    assert done.returncode == 0, done.stderr
    assert f"nenyax view {run}" in done.stdout
    saved = load_run(run)
    [traj] = saved.trajectories
    assert traj.policy.kind == "reference"
    assert traj.status is Status.OK
    assert saved.summary is not None
    assert saved.summary.episodes == 1
    assert saved.summary.mean == traj.score
    assert saved.config.settings["command"] == "try"
    assert saved.config.settings["policy"] == {"use": "reference"}
    assert saved.config.recorded["played_task"] == traj.task_id
    assert saved.config.manifest_digest == traj.manifest_digest
    page = tmp_path / "view.html"
    viewed = nenyax(site, tmp_path, "view", str(run), "--out", str(page))
    assert viewed.returncode == 0, viewed.stderr
    assert traj.task_id in page.read_text()


def test_try_save_never_writes_over_a_run(site, tmp_path):
    run = tmp_path / "one"
    assert nenyax(site, tmp_path, "try", "arith:add", "--policy", "reference", "--save", str(run)).returncode == 0
    before = (run / "trajectories.jsonl").read_bytes()
    again = nenyax(site, tmp_path, "try", "arith:add", "--policy", "null", "--save", str(run))
    assert again.returncode == 2
    assert "already holds files" in again.stderr
    assert "Traceback" not in again.stderr
    assert again.stdout == ""  # refused before the episode
    assert (run / "trajectories.jsonl").read_bytes() == before


def test_try_save_to_a_jsonl_file_appends(site, tmp_path):
    log = tmp_path / "episodes.jsonl"
    for policy in ("reference", "null"):
        assert nenyax(site, tmp_path, "try", "arith:add", "--policy", policy, "--save", str(log)).returncode == 0
    assert [json.loads(line)["policy"]["kind"] for line in log.read_text().splitlines()] == ["reference", "null"]


def test_check_save_records_every_episode_the_checks_play(site, tmp_path):
    run = tmp_path / "checked"
    done = nenyax(site, tmp_path, "check", "arith:add?size=6", "--save", str(run), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    saved = load_run(run)
    # No summary: a mean over the reference's, the null policy's and the probes' episodes measures nothing.
    assert saved.summary is None
    assert orjson.loads((run / "check.json").read_bytes())["tier"] == report["tier"] == Tier.AUDITED.label
    players = {t.policy.name for t in saved.trajectories}
    assert {"reference", "null", "check probe: a raising policy", "check probe: an infrastructure outage"} <= players
    assert any(name.startswith("check probe: a constant answer") for name in players)
    statuses = {t.status for t in saved.trajectories}
    assert {Status.OK, Status.POLICY_ERROR, Status.INFRA_ERROR} <= statuses
    # The reference played every sampled task.
    played = {t.task_id for t in saved.trajectories if t.policy.name == "reference"}
    assert len(played) == report["samples"] == 6
    assert saved.config.manifest_digest == saved.trajectories[0].manifest_digest
    assert saved.config.settings == {
        "uri": "arith:add?size=6",
        "command": "check",
        "samples": 20,
        "seed": 0,
        "margin": 0.3,
    }


def test_check_remembers_the_tier_it_measured_unless_the_check_was_weaker(site, tmp_path, monkeypatch):
    assert nenyax(site, tmp_path, "check", "arith:add?size=6", "--quiet").returncode == 0
    monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path / "checks"))
    cached = recall("arith:add?size=6")
    # All 6 tasks were sampled (20 asked for, the environment has 6).
    assert cached is not None
    assert cached.tier is Tier.AUDITED
    assert cached.samples == 6
    # This process lacks the fake distribution the check ran with: other versions, so not current here.
    assert cached.current is False
    # A weaker check (fewer samples or a lower margin) is no evidence for the listing: nothing kept.
    # Both pass here (the floor is measured over every task in step mode, the sample is the reference's).
    for weaker, code in ((["--samples", "1"], 0), (["--margin", "0"], 0)):
        assert nenyax(site, tmp_path, "check", "arith:add?size=7", *weaker, "--quiet").returncode == code
        assert recall("arith:add?size=7") is None


def test_a_check_whose_environment_no_longer_loads_forgets_its_tier(site, tmp_path, monkeypatch):
    monkeypatch.setenv("NENYAX_CHECKS_DIR", str(tmp_path / "checks"))
    assert nenyax(site, tmp_path, "check", "arith:add", "--quiet").returncode == 0
    assert recall("arith:add") is not None
    # The adapter is gone (uninstalled): the URI no longer loads, and its old tier must not stand.
    nowhere = tmp_path / "no-plugins"
    nowhere.mkdir()
    gone = nenyax(nowhere, tmp_path, "check", "arith:add", "--quiet")
    assert gone.returncode == 2
    assert "Traceback" not in gone.stderr
    assert recall("arith:add") is None


def test_a_bad_uri_under_check_save_leaves_no_run_directory_behind(site, tmp_path):
    run = tmp_path / "checked"
    bad = nenyax(site, tmp_path, "check", "arith:nope", "--save", str(run))
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert not run.exists()  # so the corrected command can use the same name
    assert nenyax(site, tmp_path, "check", "arith:add", "--save", str(run), "--quiet").returncode == 0
    assert load_run(run).trajectories


def test_check_save_refuses_a_used_folder_before_checking(site, tmp_path):
    run = tmp_path / "used"
    run.mkdir()
    (run / "keep.txt").write_text("x")
    done = nenyax(site, tmp_path, "check", "arith:add", "--save", str(run))
    assert done.returncode == 2
    assert "already holds files" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in run.iterdir()) == ["keep.txt"]


def test_a_try_run_toml_replays_the_episode_with_the_same_model_settings(site, tmp_path):
    """The scripted server stands in for a model: the test reads the request body each call sent."""
    with serving_in_thread(ScriptedModelServer(lambda messages: "2")) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url, "--param", "top_p=0.5", "--constrain"]
        first = tmp_path / "first"
        args = ["try", "arith:add", *model, "--task", "add/0/3", "--max-tokens", "9", "--save", str(first)]
        assert nenyax(site, tmp_path, *args).returncode == 0  # the episode ends ok (judged, whatever its score)
        sent = dict(server.last_body)
        server.last_body = None
        again = tmp_path / "again"
        replayed = nenyax(site, tmp_path, "try", "--config", str(first / "run.toml"), "--save", str(again))
        assert replayed.returncode == 0, replayed.stderr
        assert server.last_body == sent
        assert sent["top_p"] == 0.5
        assert sent["max_tokens"] == 9
    assert load_run(again).config.settings == load_run(first).config.settings
    assert load_run(again).trajectories[0].task_id == "add/0/3"


def test_a_check_run_toml_replays_the_check(site, tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    assert nenyax(site, tmp_path, "check", "arith:add?size=5", "--samples", "3", "--save", str(first)).returncode == 0
    replayed = nenyax(site, tmp_path, "check", "--config", str(first / "run.toml"), "--save", str(again), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["samples"] == 3
    assert load_run(again).config.settings == load_run(first).config.settings


def test_a_run_toml_replays_only_with_the_command_that_wrote_it(site, tmp_path):
    run = tmp_path / "run"
    assert nenyax(site, tmp_path, "try", "arith:add", "--policy", "reference", "--save", str(run)).returncode == 0
    wrong = nenyax(site, tmp_path, "eval", "--config", str(run / "run.toml"))
    assert wrong.returncode == 2
    assert "Traceback" not in wrong.stderr
    assert f"written by `nenyax try`; replay it with `nenyax try --config {run / 'run.toml'}`" in wrong.stderr
    nothing = nenyax(site, tmp_path, "try")
    assert nothing.returncode == 2
    assert "Name the environment to play" in nothing.stderr


def test_a_policy_or_model_on_the_command_line_wins_over_the_files(site, tmp_path):
    """The scripted server stands in for a model: the test needs to see which player the episode had."""
    run = tmp_path / "reference"
    assert nenyax(site, tmp_path, "try", "arith:add", "--policy", "reference", "--save", str(run)).returncode == 0
    with serving_in_thread(ScriptedModelServer(lambda messages: "2")) as server:
        model = ["--model", "openai:scripted", "--base-url", server.base_url]
        done = nenyax(site, tmp_path, "try", "--config", str(run / "run.toml"), *model, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["policy"]["kind"] == "endpoint"
        assert server.last_body is not None
        modelled = tmp_path / "modelled"
        assert nenyax(site, tmp_path, "try", "arith:add", *model, "--save", str(modelled)).returncode == 0
    back = nenyax(site, tmp_path, "try", "--config", str(modelled / "run.toml"), "--policy", "null", "--json")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["policy"]["kind"] == "null"
