"""`nenyax judge RUN`: a run of the `arith` fake judged again by the `llm` judge, its model a scripted
OpenAI-compatible server on loopback (no real model can be made to disagree on cue; the embedded model
judges in tests/ at the root)."""

import json
import os
import re

from nenyax.core import Status, load_run
from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread
from nenyax_testsupport.cli import run_nenyax


def nenyax(site, *args):
    """The CLI with the `arith` fake's distribution on the path (the site first)."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    return run_nenyax(*args, env={"PYTHONPATH": path, "NENYAX_STRICT_PLUGINS": "0"}, timeout=300)


def parity(messages):
    """PASS for an even answer, FAIL for an odd one."""
    answer = int(re.findall(r"Answer:\n(-?\d+)", messages[-1]["content"])[0])
    return f"VERDICT: {'PASS' if answer % 2 == 0 else 'FAIL'}"


def _judge(server):
    return f"llm?rubric=Even answers pass.&model=openai:scripted&base_url={server.base_url}&as=parity"


def test_judge_writes_a_new_run_and_reports_agreement_with_the_native_verdict(site, tmp_path):
    played = nenyax(
        site, "eval", "arith:add?size=6", "--policy", "reference", "--tasks", "6", "--out", str(tmp_path / "r")
    )
    assert played.returncode == 0, played.stderr
    with serving_in_thread(ScriptedModelServer(parity)) as server:
        done = nenyax(
            site, "judge", str(tmp_path / "r"), "--judge", _judge(server), "--out", str(tmp_path / "j"),
            "--against", "native", "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    run = load_run(tmp_path / "j")
    evens = sum(int(t.steps[-1].action) % 2 == 0 for t in run.trajectories)
    (found,) = report["agreement"]
    assert (found["first"], found["second"], found["episodes"], found["agreed"]) == ("native", "parity", 6, evens)
    assert found["confusion"]["pass/fail"] == 6 - evens
    assert report["mean"] == 1.0  # --score native: the format's own score
    assert {t.status for t in run.trajectories} == {Status.OK}
    assert [v.label for v in run.trajectories[0].verdicts] == ["native", "parity"]
    # The same episodes: nothing was played again.
    assert [t.id for t in run.trajectories] == [t.id for t in load_run(tmp_path / "r").trajectories]
    page = nenyax(site, "view", str(tmp_path / "j"), "--json")
    assert page.returncode == 0, page.stderr


def test_judge_mistakes_are_one_sentence(site, tmp_path):
    played = nenyax(site, "eval", "arith:add?size=2", "--policy", "reference", "--out", str(tmp_path / "r"))
    assert played.returncode == 0, played.stderr
    for args, sentence in (
        (("--judge", "lmm?rubric=x"), "Did you mean 'llm'?"),
        (("--judge", "llm"), "needs its rubric"),
        (("--judge", "llm?rubric=x", "--against", "tone"), "--against 'tone' is no verdict"),
        (("--judge", "llm?rubric=x", "--score", "best"), "--score 'best' is not one of"),
    ):
        done = nenyax(site, "judge", str(tmp_path / "r"), "--out", str(tmp_path / "j"), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert sentence in done.stderr
        assert "Traceback" not in done.stderr
        assert not (tmp_path / "j").exists()
    gone = nenyax(site, "judge", str(tmp_path / "nowhere"), "--judge", "llm?rubric=x", "--out", str(tmp_path / "j"))
    assert gone.returncode == 2
    assert "is not a run directory" in gone.stderr


def test_eval_with_a_judge_records_both_verdicts_and_resumes_with_them(site, tmp_path):
    with serving_in_thread(ScriptedModelServer(parity)) as server:
        done = nenyax(
            site, "eval", "arith:add?size=4", "--policy", "reference", "--judge", _judge(server),
            "--score", "parity", "--json", "--out", str(tmp_path / "r"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        run = load_run(tmp_path / "r")
        evens = [int(t.steps[-1].action) % 2 == 0 for t in run.trajectories]
        assert json.loads(done.stdout)["mean"] == sum(evens) / 4  # --score parity: the judge's score
        assert all([v.label for v in t.verdicts] == ["native", "parity"] for t in run.trajectories)
        assert run.config.settings["judges"] == [_judge(server)]
        # A resumed run keeps its judges (run.toml); another --score is a different run.
        other = nenyax(site, "eval", "--resume", str(tmp_path / "r"), "--score", "native")
        assert other.returncode == 2
        assert "score" in other.stderr


def test_try_with_a_judge_shows_both_verdicts_and_saves_them(site, tmp_path):
    with serving_in_thread(ScriptedModelServer(parity)) as server:
        done = nenyax(
            site, "try", "arith:add?size=2", "--policy", "reference", "--task", "add/0/1", "--judge", _judge(server),
            "--save", str(tmp_path / "r"), "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert [v["label"] for v in record["verdicts"]] == ["native", "parity"]
    assert set(record["judgment"]["components"]) >= {"native", "parity"}
    assert load_run(tmp_path / "r").config.settings["judges"] == [_judge(server)]
    typo = nenyax(site, "try", "arith:add", "--policy", "reference", "--judge", "llm?rubric=x&tone=y")
    assert typo.returncode == 2
    assert "tone" in typo.stderr


def test_check_under_a_judge_reports_the_tier_it_reaches_there_and_keeps_no_tier_for_list(site, tmp_path):
    judge = "nenyax_testsupport.fakes:answer_is_even"
    checks = tmp_path / "checks"
    run = nenyax_in(site, checks, "check", "arith:add?size=8", "--samples", "4", "--judge", judge, "-q")
    assert run.returncode == 1, run.stderr  # a check failed: the audit, under this judge
    out = " ".join(run.stdout.split())
    assert f"Judged by: {judge} (score: answer_is_even)" in out
    assert f"Not discriminating under --judge {judge}" in out
    assert "Tier: trainable" in out
    assert not checks.exists() or not any(checks.iterdir())  # `nenyax list` keeps the format's own tier only
    saved = nenyax_in(site, checks, "check", "arith:add?size=8", "--samples", "4", "--judge", judge, "--json",
                      "--save", str(tmp_path / "c"))  # fmt: skip
    report = json.loads(saved.stdout)
    assert (report["judges"], report["score"], report["tier"]) == ([judge], "answer_is_even", "trainable")
    recorded = load_run(tmp_path / "c")
    assert recorded.config.settings["judges"] == [judge]
    assert all([v.label for v in t.verdicts][:2] == ["native", "answer_is_even"] for t in recorded.trajectories
               if t.status is Status.OK)  # fmt: skip
    for args, sentence in (
        (("--judge", "lmm"), "Did you mean 'llm'?"),
        (("--judge", judge, "--judge", "nenyax_testsupport.fakes:short_reply"), "say how the score is composed"),
    ):
        done = nenyax_in(site, checks, "check", "arith:add", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert sentence in done.stderr
        assert "Traceback" not in done.stderr


def nenyax_in(site, checks, *args):
    """The CLI with its kept tiers (`nenyax list`'s) in `checks`."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "NENYAX_STRICT_PLUGINS": "0", "NENYAX_CHECKS_DIR": str(checks)}
    return run_nenyax(*args, env=env, timeout=300)


def test_the_replay_shows_each_verdict_apart(site, tmp_path):
    with serving_in_thread(ScriptedModelServer(parity)) as server:
        shown = nenyax(
            site, "try", "arith:add?size=2", "--policy", "reference", "--task", "add/0/1", "--judge", _judge(server),
            "--html", str(tmp_path / "replay.html"),
        )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    lines = [" ".join(line.split()) for line in shown.stdout.splitlines()]
    (native,) = [line for line in lines if line.startswith("native score")]
    (parity_line,) = [line for line in lines if line.startswith("parity score")]
    assert native == "native score 1 passed"  # the reference's answer is right
    answer = int(next(lines[i + 1] for i, line in enumerate(lines) if line == "action"))
    assert parity_line == ("parity score 1 passed" if answer % 2 == 0 else "parity score 0 not passed")
    assert any(
        line.startswith("llm?rubric=Even answers pass.") and line.endswith("1 judge model call(s)") for line in lines
    )
    page = (tmp_path / "replay.html").read_text()
    assert '<ul id="verdicts">' in page
    assert "<b>parity</b>" in page


def test_eval_with_a_group_judge_scores_each_group_s_episodes_against_each_other(site, tmp_path):
    def smallest_wins(messages):
        answers = re.findall(r"Answer (\d+):\n(.*?)\n\n", messages[-1]["content"], re.S)
        return f"BEST: {min(answers, key=lambda found: found[1])[0]}"

    with serving_in_thread(ScriptedModelServer(smallest_wins)) as server:
        judge = f"llm-group?rubric=First in alphabetical order wins.&model=openai:s&base_url={server.base_url}"
        done = nenyax(
            site, "eval", "arith:add?size=4", "--policy", "random", "--tasks", "2", "--samples", "3",
            "--judge", judge, "--score", "llm-group", "--out", str(tmp_path / "r"), "--json",
        )  # fmt: skip
        refused = nenyax(site, "check", "arith:add", "--judge", judge)
    assert done.returncode == 0, done.stderr
    groups: dict[str, list[float]] = {}
    for trajectory in load_run(tmp_path / "r").trajectories:
        groups.setdefault(trajectory.group_id, []).append(trajectory.judgment.score)
    assert sorted(sorted(scores) for scores in groups.values()) == [[0.0, 0.0, 1.0]] * 2
    assert json.loads(done.stdout)["mean"] == 1 / 3
    assert refused.returncode == 2
    assert "check plays its episodes one at a time" in refused.stderr
    assert "Traceback" not in refused.stderr
