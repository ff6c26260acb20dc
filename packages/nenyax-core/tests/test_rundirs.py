"""Run directories, the run summary and the job runner behind `nenyax eval`, on the in-memory `arith` fake.

nenyax-core is tested alone (no adapter can be installed with it), so the episodes come from
`nenyax_testsupport.fakes`; the CLI's and the integration suite's tests run the same code on reasoning-gym.
"""

import logging
import math
from itertools import combinations

import attrs
import orjson
import pytest

from nenyax.core import load_run
from nenyax.core.contract import serde
from nenyax.core.contract.trajectory import Judgment, Status
from nenyax.core.engine.rundirs import (
    TRAJECTORIES,
    create_run,
    nenyax_versions,
    read_config,
    read_summary,
    record_manifest,
    write_summary,
)
from nenyax.core.engine.runner import Job, run_jobs
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.engine.summary import Tally, pass_at_k, summarize
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import UsageError
from nenyax_testsupport.fakes import ArithEnvironment


@pytest.fixture
def env():
    return ArithEnvironment("arith:add?size=6", size=6, seed=0)


def _brute_pass_at_k(n, c, k):
    # The definition: the share of k-subsets of the n samples holding at least one pass.
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 0, 1), (4, 1, 1), (4, 1, 2), (4, 2, 3), (5, 3, 5), (10, 1, 4)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k):
    assert math.isclose(pass_at_k(n, c, k), _brute_pass_at_k(n, c, k))


def test_samples_share_a_group_and_record_their_index(env):
    trajs = env.rollouts("reference", 2, n=3)
    assert sorted((t.task_id, t.sample) for t in trajs) == sorted(
        (task, k) for task in env.task_ids(limit=2) for k in range(3)
    )
    assert all(t.info == {} for t in trajs)  # a typed field, never the environment's info
    for task in env.task_ids(limit=2):
        assert len({t.group_id for t in trajs if t.task_id == task}) == 1


def test_run_jobs_plays_exactly_the_jobs_given(env, tmp_path):
    task = env.task_ids(limit=1)[0]
    jobs = [Job(task, "g", 1), Job(task, "g", 3)]
    trajs = run_sync(run_jobs(env, env_policy("reference"), jobs, sink=tmp_path / "t.jsonl"))
    assert [(t.sample, t.group_id) for t in trajs] == [(1, "g"), (3, "g")]
    assert len((tmp_path / "t.jsonl").read_bytes().splitlines()) == 2


def test_run_jobs_without_keeping_hands_every_episode_to_the_sink_and_the_observers(env, tmp_path):
    jobs = [Job(task, None, 0) for task in env.task_ids(limit=5)]
    seen = []

    class Ends:
        def on_episode_ended(self, event):
            seen.append(event.trajectory)

    kept = run_sync(
        run_jobs(env, env_policy("reference"), jobs, sink=tmp_path / "t.jsonl", observers=[Ends()], keep=False)
    )
    assert kept == []  # nothing held: a long eval's memory stays flat
    assert sorted(t.task_id for t in seen) == sorted(j.task for j in jobs)
    assert len((tmp_path / "t.jsonl").read_bytes().splitlines()) == 5


def test_a_tally_in_any_order_gives_the_figures_worked_out_by_hand(env):
    trajs = env.rollouts("reference", 3, n=2)
    failed_task = trajs[1].task_id
    trajs[1] = attrs.evolve(trajs[1], judgment=Judgment(score=0.0, passed=False))
    for order in (trajs, list(reversed(trajs))):  # episodes finish in any order
        tally = Tally()
        for traj in order:
            tally.add(traj)
        summary = tally.summary(samples=2, wall_s=2.0, resumed=2)
        # Scores 1, 0, 1, 1, 1, 1: mean 5/6; squared deviations 5 * (1/6)**2 + (5/6)**2 = 5/6 over 5 degrees.
        assert (summary.episodes, summary.scored, summary.tasks, summary.samples) == (6, 6, 3, 2)
        assert summary.mean == pytest.approx(5 / 6)
        assert summary.stdev == pytest.approx(math.sqrt(1 / 6))
        # Pass/fail scores: the Wilson interval of 5 of 6 (as published calculators give it).
        assert summary.ci95 == pytest.approx((0.43650, 0.96995), abs=1e-5)
        assert summary.ci_method == "wilson"
        # pass@1: one task passed 1 of 2 (1/2), two passed both; pass@2: every task passed at least once.
        assert summary.pass_at_k == pytest.approx({"1": (0.5 + 1 + 1) / 3, "2": 1.0})
        assert summary.statuses == {s.value: (6 if s is Status.OK else 0) for s in Status}
        assert (summary.tokens_in, summary.tokens_out) == (0, 0)  # a policy, not a model: no tokens
        assert summary.wall_s == 2.0
        assert summary.resumed == 2
        assert summary.episodes_per_s == 2.0
        assert summary.pass_threshold == 1.0
    assert sum(t.task_id == failed_task for t in trajs) == 2


def env_policy(name):
    from nenyax.core import as_policy

    return as_policy(name)


def test_summary_scores_judged_episodes_and_counts_failures(env):
    good = env.rollouts("reference", 3, n=2)
    infra = attrs.evolve(good[0], status=Status.INFRA_ERROR, judgment=None, error="server down")
    half = attrs.evolve(good[1], judgment=Judgment(score=0.0, passed=False))
    summary = summarize([infra, half, *good[2:]], samples=2, wall_s=2.0)
    assert summary.episodes == 6
    assert summary.scored == 5
    assert summary.statuses["infra_error"] == 1
    assert summary.statuses["ok"] == 5
    assert math.isclose(summary.mean, 4 / 5)
    low, high = summary.ci95
    assert low < summary.mean < high
    # the first task keeps one scored sample, failed (pass@2 skips it); the other two passed both
    assert math.isclose(summary.pass_at_k["1"], (0.0 + 1.0 + 1.0) / 3)
    assert math.isclose(summary.pass_at_k["2"], (1.0 + 1.0) / 2)
    assert summary.episodes_per_s == 3.0


def test_run_directory_round_trips(env, tmp_path):
    run_path = tmp_path / "run"
    settings = {"uri": env.uri, "samples": 2, "provider": {"use": "openai", "model": "m", "api_key_env": "MY_KEY"}}
    create_run(run_path, settings, env.manifest)
    trajs = env.rollouts("reference", 2, n=2, sink=run_path / TRAJECTORIES)
    write_summary(run_path, summarize(trajs, samples=2, wall_s=1.0))
    run = load_run(run_path)
    assert run.config.uri == env.uri
    assert run.config.settings["provider"]["api_key_env"] == "MY_KEY"
    assert run.config.manifest_digest == env.digest
    assert run.config.versions == nenyax_versions()
    assert "nenyax-core" in run.config.versions
    assert [t.id for t in run.trajectories] == [t.id for t in trajs]
    assert run.summary.mean == 1.0
    assert run.summary.pass_at_k == {"1": 1.0, "2": 1.0}
    assert read_config(run_path / "run.toml").settings == settings


def test_a_secret_is_never_written(env, tmp_path):
    with pytest.raises(UsageError, match="api_key_env"):
        create_run(tmp_path / "r", {"uri": env.uri, "provider": {"api_key": "sk-live"}}, env.manifest)
    assert not (tmp_path / "r").exists()


def test_a_used_directory_is_refused_and_a_missing_one_is_not_a_run(env, tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(UsageError, match="already holds files; name a new directory"):
        create_run(tmp_path / "used", {"uri": env.uri}, env.manifest)
    with pytest.raises(UsageError, match="or finish it with --resume"):  # the command says what it offers instead
        create_run(tmp_path / "used", {"uri": env.uri}, env.manifest, if_taken="or finish it with --resume")
    with pytest.raises(UsageError, match="not a run directory"):
        load_run(tmp_path / "nothing")


def test_an_unfinished_run_has_no_summary_and_drops_a_cut_line(env, tmp_path):
    create_run(tmp_path / "r", {"uri": env.uri}, env.manifest)
    with JsonlSink(tmp_path / "r" / TRAJECTORIES) as sink:
        sink.write(env.rollout("reference"))
    with (tmp_path / "r" / TRAJECTORIES).open("ab") as f:
        f.write(b'{"env_uri": "arith:add", "cut')  # a write killed half way
    run = load_run(tmp_path / "r")
    assert run.summary is None
    assert len(run.trajectories) == 1


def test_the_reader_says_how_many_bytes_of_a_cut_off_line_it_left(env, tmp_path, caplog):
    path = tmp_path / TRAJECTORIES
    with JsonlSink(path) as sink:
        sink.write(env.rollout("reference"))
    whole = serde.dumps(env.rollout("null"))
    cut = (whole * 3)[:-5]  # over 1,000 bytes of a line no reader can parse: a writer killed mid-line
    with path.open("ab") as f:
        f.write(cut)
    recorded = read_trajectories(path)
    assert recorded.cut_off == 0  # nothing is known before it is read
    with caplog.at_level(logging.WARNING, logger="nenyax"):
        assert [t.policy.kind for t in recorded] == ["reference"]
    assert recorded.cut_off == len(cut) > 1000
    assert recorded.cut_off_note.startswith(f"left {len(cut):,} bytes of a cut-off last line in {path}")
    assert [r.getMessage() for r in caplog.records] == [recorded.cut_off_note]
    quiet = read_trajectories(path, warn=False)
    caplog.clear()
    assert len(list(quiet)) == 1
    assert quiet.cut_off == len(cut)
    assert not caplog.records
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(whole + b"\n")
    done = read_trajectories(clean)
    assert len(list(done)) == 1
    assert done.cut_off == 0
    assert done.cut_off_note is None


def test_a_whole_last_record_that_lost_only_its_newline_is_kept_by_reader_and_sink(env, tmp_path):
    path = tmp_path / TRAJECTORIES
    path.write_bytes(serde.dumps(env.rollout("reference")) + b"\n" + serde.dumps(env.rollout("null")))
    assert [t.policy.kind for t in read_trajectories(path)] == ["reference", "null"]
    with JsonlSink(path) as sink:  # the sink gives it its newline back rather than dropping a whole episode
        sink.write(env.rollout("random"))
    assert [t.policy.kind for t in read_trajectories(path)] == ["reference", "null", "random"]


def test_the_summary_is_written_and_read_by_serde_and_keeps_a_newer_version_s_fields(env, tmp_path):
    summary = summarize(env.rollouts("reference", 3), wall_s=1.5)
    write_summary(tmp_path, summary)
    data = orjson.loads((tmp_path / "summary.json").read_bytes())
    assert data == orjson.loads(serde.dumps(summary))
    assert data["schema_version"] == "1.5"
    assert read_summary(tmp_path) == summary
    (tmp_path / "summary.json").write_bytes(orjson.dumps({**data, "schema_version": "1.6", "cost": 2}))
    newer = read_summary(tmp_path)
    assert attrs.evolve(newer, schema_version=summary.schema_version) == summary
    assert newer.unknown_fields == {"cost": 2}
    write_summary(tmp_path, newer)
    assert orjson.loads((tmp_path / "summary.json").read_bytes())["cost"] == 2


def test_a_run_started_before_its_environment_loaded_records_the_manifest_later(env, tmp_path):
    config = create_run(tmp_path / "r", {"uri": env.uri, "command": "check"}, None)
    assert config.manifest_digest is None
    assert read_config(tmp_path / "r").manifest_digest is None
    record_manifest(tmp_path / "r", env.manifest)
    again = read_config(tmp_path / "r")
    assert again.manifest_digest == serde.digest(env.manifest)
    assert again.recorded["format"] == env.manifest.format
    assert again.settings == {"uri": env.uri, "command": "check"}
    assert again.versions == nenyax_versions()
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["run.toml"]  # no partial file left behind


def test_a_default_run_path_is_the_time_and_the_uri_made_a_name_and_never_an_old_one(tmp_path, monkeypatch):
    import re

    from nenyax.core.engine import rundirs

    path = rundirs.default_run_path(tmp_path, "reasoning_gym:basic_arithmetic?size=5&seed=1")
    assert path.parent == tmp_path
    assert re.fullmatch(r"\d{8}-\d{6}-reasoning_gym-basic_arithmetic-size-5-seed-1", path.name), path.name
    long = rundirs.default_run_path(tmp_path, "x:" + "a" * 80)
    assert long.name.endswith("-x-" + "a" * 58)  # the URI part ("x-aaa...") is cut at 60 characters
    assert rundirs.default_run_path(tmp_path, "gym:Cart/?").name.endswith("-gym-Cart")  # no trailing dash
    # The same second twice: a suffix, counted up past every one taken (the clock is held so it always is).
    monkeypatch.setattr(rundirs.time, "strftime", lambda _format: "20261205-163216")
    first = rundirs.default_run_path(tmp_path, "reasoning_gym:basic_arithmetic?size=5&seed=1")
    first.mkdir()
    second = rundirs.default_run_path(tmp_path, "reasoning_gym:basic_arithmetic?size=5&seed=1")
    assert second.name == f"{first.name}~2"
    second.mkdir()
    assert rundirs.default_run_path(tmp_path, "reasoning_gym:basic_arithmetic?size=5&seed=1").name == f"{first.name}~3"


@pytest.mark.parametrize("key", ["api_key", "token", "password", "secret"])
def test_no_secret_of_any_name_or_depth_is_written(env, tmp_path, key):
    with pytest.raises(UsageError, match=rf"never holds a secret \(provider\.extra\.{key}\); name its environment"):
        create_run(tmp_path / "r", {"uri": env.uri, "provider": {"extra": {key: "x"}}}, env.manifest)
    with pytest.raises(UsageError, match=rf"never holds a secret \({key}\)"):
        create_run(tmp_path / "r", {"uri": env.uri, key: "x"}, env.manifest)
    assert not (tmp_path / "r").exists()


def test_a_run_toml_is_read_whatever_its_recorded_table_and_mistakes_are_one_sentence(env, tmp_path):
    deep = tmp_path / "a" / "b" / "run"
    config = create_run(deep, {"uri": env.uri, "note": "naïve café"}, env.manifest, extra={"task_count": 6})
    assert read_config(deep).settings == {"uri": env.uri, "note": "naïve café"}
    assert config.recorded["task_count"] == 6
    assert config.recorded["format"] == "arith"
    handwritten = tmp_path / "mine.toml"
    handwritten.write_text('uri = "arith:add"\n')
    assert read_config(handwritten).recorded == {}
    handwritten.write_text('uri = "arith:add"\nrecorded = "not a table"\n')
    assert read_config(handwritten).recorded == {}
    assert read_config(handwritten).settings == {"uri": "arith:add"}
    handwritten.write_text("uri = \n")
    with pytest.raises(UsageError, match=r"mine\.toml is not valid TOML \(.*\); fix the file or write a new one\."):
        read_config(handwritten)
    with pytest.raises(UsageError, match=r"nowhere\.toml does not exist; name a run directory or a run\.toml\."):
        read_config(tmp_path / "nowhere.toml")
    assert load_run(deep).trajectories == ()
    assert load_run(deep).summary is None


def test_an_empty_folder_the_user_made_becomes_the_run(env, tmp_path):
    (tmp_path / "mine").mkdir()
    create_run(tmp_path / "mine", {"uri": env.uri}, env.manifest)
    assert read_config(tmp_path / "mine").settings == {"uri": env.uri}
