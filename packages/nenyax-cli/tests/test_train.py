"""``nenyax train``: a learner picked by name, the run directory, keep or revert, --resume and --config.

The environment is core's ``arith`` fake and the learner core's `SkillLearner` (no model), both installed
as a distribution written to disk, as a user's would be: nenyax-cli's tests install no real adapter or
model. The real learners on a real environment and model are tested in their own distributions and in
tests/test_train_embedded.py.
"""

from __future__ import annotations

import json
import tomllib

import pytest
from click.testing import CliRunner

from nenyax.cli.main import cli
from nenyax.core.plugins.registry import default_registry
from nenyax_testsupport.distributions import write_distribution

PLUGIN = """
from nenyax.core.hookspecs import PluginSpec, hookimpl


@hookimpl
def nenyax_register_adapters():
    return PluginSpec(kind="adapter", name="arith", factory="nenyax_testsupport.fakes:ArithAdapter", summary="fake")


@hookimpl
def nenyax_register_learners():
    return PluginSpec(kind="learner", name="skill", factory="nenyax_testsupport.fakes:SkillLearner", summary="fake")
"""

SMALL = ["--rounds", "2", "--group-size", "2", "--tasks-per-round", "3", "--heldout", "20", "-q"]


@pytest.fixture
def nenyax(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("NENYAX_STRICT_PLUGINS", "0")
    site = write_distribution(
        tmp_path_factory.mktemp("site"),
        "nenyax-arith-skill",
        "1.0",
        {"arith": "nenyax_arith_skill"},
        {"nenyax_arith_skill": PLUGIN},
    )
    monkeypatch.syspath_prepend(str(site))
    default_registry.cache_clear()

    def run(*args: str):
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    yield run
    default_registry.cache_clear()


def _rounds(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_train_writes_every_round_and_the_plot(nenyax, tmp_path):
    out = tmp_path / "run"
    done = nenyax("train", "arith:add?size=60", "--learner", "skill", "--option", "step=4", *SMALL, "--out", str(out))
    assert done.exit_code == 0, done.output
    rounds = _rounds(out)
    assert [(r["round"], r["kept"]) for r in rounds] == [(0, True), (1, True), (2, True)]
    assert rounds[2]["heldout_score"] > rounds[1]["heldout_score"] > rounds[0]["heldout_score"]
    assert (out / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["round-0000", "round-0001", "round-0002"]
    run_toml = (out / "run.toml").read_text()
    assert 'command = "train"' in run_toml
    assert 'use = "skill"' in run_toml
    assert "step = 4" in run_toml
    assert "round 2: train" in done.stderr
    assert "kept" in done.stderr
    assert f"held-out {rounds[0]['heldout_score']:.3f} -> {rounds[2]['heldout_score']:.3f}" in done.stdout


def test_a_harmful_round_is_reported_reverted(nenyax, tmp_path):
    out = tmp_path / "run"
    done = nenyax("train", "arith:add?size=60", "-l", "skill", "--option", "step=-1", *SMALL, "--out", str(out))
    assert done.exit_code == 0, done.output
    assert [r["kept"] for r in _rounds(out)] == [True, False, False]  # skill 0 cannot fall: a tie, reverted
    assert "reverted" in done.stderr
    assert "2 round(s) reverted" in done.stdout


def test_resume_continues_after_the_last_finished_round(nenyax, tmp_path):
    out = tmp_path / "run"
    killed = CliRunner().invoke(
        cli,
        ["train", "arith:add?size=60", "-l", "skill", "--option", "fail_on_round=2", *SMALL, "--out", str(out)],
    )
    assert killed.exit_code != 0
    assert "nenyax train --resume" in killed.stderr
    assert [r["round"] for r in _rounds(out)] == [0, 1]
    # The killed run's option made every learner built from its run.toml fail in its second update: a
    # resumed learner has made no update yet, so it fails in round 3, which this run does not reach.
    done = nenyax("train", "--resume", str(out), "-q")
    assert done.exit_code == 0, done.output
    assert [r["round"] for r in _rounds(out)] == [0, 1, 2]
    assert "resuming after round 1" in done.stderr


def test_resume_refuses_changed_settings(nenyax, tmp_path):
    out = tmp_path / "run"
    assert nenyax("train", "arith:add?size=60", "-l", "skill", *SMALL, "--out", str(out)).exit_code == 0
    done = nenyax("train", "--resume", str(out), "--heldout", "5")
    assert done.exit_code == 2
    assert "it differs in heldout" in done.stderr


def test_a_config_names_the_learner_and_its_options(nenyax, tmp_path):
    config = tmp_path / "train.toml"
    config.write_text(
        'uri = "arith:add?size=60"\nrounds = 1\ngroup_size = 2\ntasks_per_round = 2\nheldout = 10\n'
        '[learner]\nuse = "skill"\nstep = 5\n'
    )
    out = tmp_path / "run"
    done = nenyax("train", "--config", str(config), "--out", str(out), "-q")
    assert done.exit_code == 0, done.output
    rounds = _rounds(out)
    assert len(rounds) == 2
    # Skill 5 (the config's step) answers the held-out tasks whose index mod 10 is below 5.
    held = [json.loads(line)["task_id"] for line in (out / "heldout.jsonl").read_text().splitlines()[:10]]
    assert rounds[1]["heldout_score"] == sum(int(t.rsplit("/", 1)[1]) % 10 < 5 for t in held) / 10


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (["arith:add?size=60", "--learner", "skil"], "Did you mean 'skill'"),
        (["arith:add?size=60"], "Name the learner with --learner"),
        (["arith:add?size=5", "-l", "skill", "--heldout", "5"], "training needs the 5 held-out ones"),
        (["arith:add?size=60", "-l", "skill", "--option", "speed=3"], "takes no option 'speed'"),
        (["arith:add?size=60", "-l", "skill", "--option", "step"], "Write --option as KEY=VALUE"),
    ],
)
def test_bad_input_is_one_sentence(nenyax, tmp_path, args, sentence):
    done = nenyax("train", *args, "--out", str(tmp_path / "run"), "-q")
    assert done.exit_code == 2
    assert sentence in done.stderr
    assert "Traceback" not in done.output


def test_json_prints_every_round(nenyax, tmp_path):
    out = tmp_path / "run"
    done = nenyax("train", "arith:add?size=60", "-l", "skill", *SMALL, "--out", str(out), "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["run_dir"] == str(out)
    assert data["rounds"] == _rounds(out)


def test_a_judge_decides_what_is_kept_and_the_run_remembers_it(nenyax, tmp_path):
    # The judge passes exactly what the verifier fails; scored by it, a learner the verifier would keep is reverted.
    out = tmp_path / "run"
    judge = ["--judge", "nenyax_testsupport.fakes:answered_wrong", "--score", "answered_wrong"]
    done = nenyax("train", "arith:add?size=60", "-l", "skill", "--option", "step=3", *SMALL, *judge, "--out", str(out))
    assert done.exit_code == 0, done.output
    rounds = _rounds(out)
    assert rounds[0]["heldout_score"] == 1.0
    assert [r["kept"] for r in rounds] == [True, False, False]
    config = tomllib.loads((out / "run.toml").read_text())
    assert (config["judges"], config["score"]) == (["nenyax_testsupport.fakes:answered_wrong"], "answered_wrong")
    again = nenyax("train", "--resume", str(out), "--score", "native")
    assert again.exit_code == 2
    assert "differs in score" in again.output
