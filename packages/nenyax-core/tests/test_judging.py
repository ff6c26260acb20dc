"""Judges put on an environment, and a recorded run judged again (`nenyax.core.engine.judging`, `rejudging`).

The run is played on the in-memory `arith` fake by its reference; the `llm` judge's model is a scripted
OpenAI-compatible server on loopback (`ScriptedModelServer`: no real model can be told to misbehave on cue;
the embedded model judges in the CLI's and the integration suite's tests). Its verdict depends on the answer
it is shown: PASS for an even sum, FAIL for an odd one, so it disagrees with the native verifier (which
passes every reference answer) on a known set of episodes.
"""

import asyncio
import re
import tempfile
from pathlib import Path

import attrs
import pytest

from nenyax.core import JudgeUse, Judgment, Scoring, Status, UsageError, evaluate, judge_uses, load, load_run
from nenyax.core.contract.checking import Verdict
from nenyax.core.contract.trajectory import Tier
from nenyax.core.engine.rejudging import agreement, rejudge_run
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.measure import check
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer, serving_in_thread
from nenyax_testsupport.fakes import AdapterPlugin


@pytest.fixture
def played(tmp_path):
    """A run of six reference episodes (each judged 1.0 by the format's own verifier)."""
    env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    evaluate(env, "reference", tasks=6, samples=1, out=tmp_path / "run")
    return tmp_path / "run"


def _answer(messages):
    return int(re.findall(r"Answer:\n(-?\d+)", messages[-1]["content"])[0])


def parity(messages):
    """The scripted judge: reasons, then PASS for an even answer, FAIL for an odd one."""
    answer = _answer(messages)
    return f"The answer is {answer}.\nVERDICT: {'PASS' if answer % 2 == 0 else 'FAIL'}"


def test_a_run_judged_again_replays_nothing_and_keeps_every_verdict(played, tmp_path):
    async def main():
        async with ScriptedModelServer(parity) as server:
            # The default registry has no `arith` adapter: loading the environment would fail, judging does not.
            return await rejudge_run(played, tmp_path / "judged", _uses(server)), server.last_body

    done, body = asyncio.run(main())
    source, judged = load_run(played), load_run(tmp_path / "judged")
    assert [t.id for t in judged.trajectories] == [t.id for t in source.trajectories]
    for before, after in zip(source.trajectories, judged.trajectories, strict=True):
        # The episode itself is the recorded one: only its judgment and verdicts are new.
        assert attrs.evolve(after, judgment=before.judgment, verdicts=()) == before
        native, llm = after.verdicts
        assert (native.label, native.judgment) == ("native", before.judgment)
        answer = int(before.steps[-1].action)
        assert llm.judgment.passed is (answer % 2 == 0)
        assert after.judgment.score == before.judgment.score  # --score native: the format's own score
        assert after.judgment.components["llm"] == float(answer % 2 == 0)
        assert after.judgment.components["native"] == before.judgment.score
        (call,) = llm.model_calls  # the judge's call, apart from the policy's
        assert "VERDICT" in call.response["content"]
        assert after.model_calls == before.model_calls
    assert judged.config.settings["judges"] == [done.trajectories[0].verdicts[1].judge]
    assert judged.config.settings["score"] == "native"
    assert judged.summary == done.summary
    assert body["temperature"] == 0.0
    assert isinstance(body["seed"], int)  # sampling seeded from the episode: judging again says the same


def test_agreement_with_the_native_verdict_is_counted_and_kappa_computed(played, tmp_path):
    done = asyncio.run(_in_server(parity, lambda s: rejudge_run(played, tmp_path / "j", _uses(s))))
    evens = sum(int(t.steps[-1].action) % 2 == 0 for t in done.trajectories)
    found = agreement(done.trajectories, "native", "llm")
    assert found.episodes == 6
    assert found.confusion == {"pass/pass": evens, "pass/fail": 6 - evens, "fail/pass": 0, "fail/fail": 0}
    assert found.agreed == evens
    assert found.kappa in (None, 0.0)  # the native verifier passes everything: no agreement beyond chance
    assert len(found.disagreements) == 6 - evens
    with pytest.raises(UsageError, match="No episode holds verdicts of both 'native' and 'style'"):
        agreement(done.trajectories, "native", "style")


def test_a_judge_that_fails_is_verifier_error_with_its_reply_kept_never_a_score(played, tmp_path):
    unreadable = asyncio.run(
        _in_server(lambda m: "Looks fine to me.", lambda s: rejudge_run(played, tmp_path / "a", _uses(s)))
    )
    for trajectory in unreadable.trajectories:
        assert trajectory.status is Status.VERIFIER_ERROR
        assert trajectory.judgment is None  # no score, never 0
        assert "has no VERDICT: PASS or VERDICT: FAIL" in trajectory.error
        (call,) = trajectory.verdicts[1].model_calls  # the reply it could not read, kept
        assert call.response["content"] == "Looks fine to me."
    assert unreadable.summary.statuses["verifier_error"] == 6
    assert unreadable.summary.mean is None

    down = asyncio.run(
        _in_server(
            parity,
            lambda s: rejudge_run(played, tmp_path / "b", _uses(s, "&max_retries=1")),
            faults=FaultPlan(rate=1.0, kinds=("500",)),
        )
    )
    assert {t.status for t in down.trajectories} == {Status.VERIFIER_ERROR}
    assert all(t.judgment is None for t in down.trajectories)
    assert all("The judge 'llm' failed" in t.error and "HTTP 500" in t.error for t in down.trajectories)

    slow = asyncio.run(
        _in_server(parity, lambda s: rejudge_run(played, tmp_path / "c", _uses(s, "&timeout=0.2")), latency=2.0)
    )
    assert {t.error for t in slow.trajectories} == {"The judge 'llm' did not decide within 0.2 s."}


def test_the_score_is_composed_as_stated():
    native = Judgment(score=1.0, passed=True, components={"exact": 1.0}, judge="arith")
    style = Judgment(score=0.4, passed=False, judge="llm")
    verdicts = {"native": native, "style": style}
    labels = ["style"]
    assert Scoring.parse("native", labels).compose(verdicts).score == 1.0
    assert Scoring.parse("style", labels).compose(verdicts).score == 0.4
    assert Scoring.parse("sum?native=1&style=0.5", labels).compose(verdicts).score == pytest.approx(1.2)
    gated = Scoring.parse("gate?on=native&then=style", labels).compose(verdicts)
    assert (gated.score, gated.passed) == (0.4, False)
    closed = Scoring.parse("gate?on=style&then=native", labels).compose(verdicts)
    assert (closed.score, closed.passed) == (0.0, False)
    composed = Scoring.parse("native", labels).compose(verdicts)
    assert composed.components == {"exact": 1.0, "native": 1.0, "style": 0.4}
    for bad, said in (
        ("sum?native=1&tone=2", "names 'tone', which is no judge's label"),
        ("gate?on=native", "is not one of"),
        ("best", "is not one of"),
        ("sum?native=x", "is not a number"),
    ):
        with pytest.raises(UsageError, match=re.escape(said)):
            Scoring.parse(bad, labels)


def test_a_judge_asked_for_wrongly_is_one_sentence():
    use = JudgeUse.parse("llm?rubric=Be brief.&as=style&timeout=30")
    assert (use.name, dict(use.options), use.label, use.timeout) == ("llm", {"rubric": "Be brief."}, "style", 30.0)
    for bad, said in (
        ("?rubric=x", "names no judge"),
        ("llm?as=native", "is the format's own verdict"),
        ("llm?timeout=soon", "is not a number of seconds"),
    ):
        with pytest.raises(UsageError, match=re.escape(said)):
            JudgeUse.parse(bad)
    with pytest.raises(UsageError, match="Two judges are labelled 'llm'"):
        judge_uses(["llm?rubric=a", "llm?rubric=b"])


def test_an_unknown_judge_or_option_is_refused_before_anything_is_judged(played, tmp_path):
    with pytest.raises(UsageError, match="Did you mean 'llm'"):
        asyncio.run(rejudge_run(played, tmp_path / "x", ["lmm?rubric=a"]))
    with pytest.raises(UsageError, match="rubric"):
        asyncio.run(rejudge_run(played, tmp_path / "y", ["llm?rubrik=a"]))
    with pytest.raises(UsageError, match="needs its rubric"):
        asyncio.run(rejudge_run(played, tmp_path / "z", ["llm"]))
    assert not (tmp_path / "x").exists()
    assert not (tmp_path / "y").exists()


def _uses(server, extra=""):
    return [f"llm?rubric=Even answers pass.&model=openai:scripted&base_url={server.base_url}{extra}"]


async def _in_server(reply, judging, **options):
    async with ScriptedModelServer(reply, **options) as server:
        return await judging(server)


def test_an_evaluation_with_judges_records_each_verdict_and_the_composed_score(tmp_path):
    env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))

    async def main():
        async with ScriptedModelServer(parity) as server:
            return await asyncio.to_thread(
                evaluate,
                env,
                "reference",
                tasks=6,
                judges=_uses(server),
                score="gate?on=native&then=llm",
                out=tmp_path / "run",
            )

    result = asyncio.run(main())
    run = load_run(tmp_path / "run")
    evens = [int(t.steps[-1].action) % 2 == 0 for t in run.trajectories]
    assert [t.judgment.score for t in run.trajectories] == [float(e) for e in evens]  # the gate opened: llm's
    assert all([v.label for v in t.verdicts] == ["native", "llm"] for t in run.trajectories)
    assert result.summary.mean == pytest.approx(sum(evens) / 6)
    assert run.config.settings["judges"] == _uses_text(run)
    assert run.config.settings["score"] == "gate?on=native&then=llm"


def test_a_score_without_judges_is_refused_before_the_run(tmp_path):
    env = load("arith:add?size=2", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    with pytest.raises(UsageError, match="composes judges' verdicts: add them with --judge"):
        evaluate(env, "reference", score="sum?native=1", out=tmp_path / "b")
    assert not (tmp_path / "b").exists()


@pytest.mark.timeout(120)
def test_episodes_played_by_worker_processes_are_judged_here_groups_whole(tmp_path):
    # Real worker processes play; the judges (a group judge's model on loopback included) judge in this process
    # as each trajectory comes back, before the sink writes it.
    env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    judges = ["nenyax_testsupport.fakes:answer_is_even"]

    async def main():
        async with ScriptedModelServer(smallest_wins) as server:
            return await asyncio.to_thread(
                evaluate,
                env,
                "random",
                tasks=3,
                samples=3,
                out=tmp_path / "run",
                judges=[*judges, _group_judge(server)],
                score="llm-group",
                backend="process",
                workers=2,
            ), server.requests

    _result, requests = asyncio.run(main())
    run = load_run(tmp_path / "run")
    assert len(run.trajectories) == 9
    assert requests == 3  # each group judged once, whole, though its episodes came back from two processes
    groups = {}
    for trajectory in run.trajectories:
        assert [v.label for v in trajectory.verdicts] == ["native", "answer_is_even", "llm-group"]
        groups.setdefault(trajectory.group_id, []).append(trajectory)
    for group in groups.values():
        answers = [t.steps[-1].action for t in group]
        assert [t.score for t in group] == [float(a == min(answers)) for a in answers]


def _uses_text(run):
    return [v.judge for v in run.trajectories[0].verdicts[1:]]


def test_one_rollout_from_python_takes_judges_too():
    env = load("arith:add?size=2", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    with serving_in_thread(ScriptedModelServer(parity)) as server:
        trajectory = env.rollout("reference", task="add/0/1", judges=_uses(server, "&as=parity"), score="parity")
    answer = int(trajectory.steps[-1].action)
    assert trajectory.judgment.score == float(answer % 2 == 0)
    assert [v.label for v in trajectory.verdicts] == ["native", "parity"]
    plain = env.rollout("reference", task="add/0/1")
    assert plain.verdicts == ()
    assert plain.judgment.score == 1.0


def test_a_judge_written_as_a_python_function_works_where_a_named_one_does(played, tmp_path):
    done = asyncio.run(rejudge_run(played, tmp_path / "j", ["nenyax_testsupport.fakes:answer_is_even"]))
    for trajectory in done.trajectories:
        _native, even = trajectory.verdicts
        assert even.label == "answer_is_even"
        assert even.judgment.passed is (int(trajectory.steps[-1].action) % 2 == 0)
    broken = asyncio.run(rejudge_run(played, tmp_path / "b", ["nenyax_testsupport.fakes:not_a_verdict"]))
    assert {t.status for t in broken.trajectories} == {Status.VERIFIER_ERROR}
    assert "returned str" in broken.trajectories[0].error
    with pytest.raises(UsageError, match="cannot be imported"):
        asyncio.run(rejudge_run(played, tmp_path / "x", ["nenyax_testsupport.fakes:nowhere"]))
    with pytest.raises(UsageError, match="a function judge takes no options"):
        asyncio.run(rejudge_run(played, tmp_path / "y", ["nenyax_testsupport.fakes:answer_is_even?x=1"]))


def test_check_under_an_llm_judge_a_constant_satisfies_fails_the_audit_named():
    def lenient(messages):  # the parity judge, failing an answer that is no number (the null policy's)
        found = re.findall(r"Answer:\n(-?\d+)", messages[-1]["content"])
        return f"VERDICT: {'PASS' if found and int(found[0]) % 2 == 0 else 'FAIL'}"

    registry = Registry.from_plugins(("arith", AdapterPlugin()))
    with serving_in_thread(ScriptedModelServer(lenient)) as server:
        (judge,) = _uses(server)
        report = check("arith:add?size=8", registry=registry, samples=4, judges=[judge])
    results = {r.id: r for r in report.results}
    assert report.tier is Tier.TRAINABLE  # the format's verifier reaches audited; this judge does not
    assert results["audited/reference-beats-floor"].evidence.startswith(f"Not discriminating under --judge {judge}")
    assert "a constant answer" in results["audited/reference-beats-floor"].evidence
    # The fresh interpreter built the llm judge too, and its verdicts, from the same server, matched.
    assert results["trainable/fresh-process"].outcome is Verdict.PASSED


# ---------------------------------------------------------------- group judges


def smallest_wins(messages):
    """A scripted group judge: the answer first in alphabetical order is the best."""
    answers = re.findall(r"Answer (\d+):\n(.*?)\n\n", messages[-1]["content"], re.S)
    return f"Compared {len(answers)}.\nBEST: {min(answers, key=lambda found: found[1])[0]}"


def _group_judge(server, extra=""):
    return f"llm-group?rubric=The first answer in alphabetical order wins.&model=openai:scripted&base_url={server.base_url}{extra}"


@pytest.mark.timeout(60)
def test_a_group_judge_sees_each_whole_group_once_and_scores_it_relatively():
    env = load("arith:add?size=6", registry=Registry.from_plugins(("arith", AdapterPlugin())))

    async def main():
        async with ScriptedModelServer(smallest_wins) as server:
            # concurrency=1: a finished episode waits for its group without keeping the others from playing.
            groups = await asyncio.to_thread(
                env.groups, "random", 2, n=3, concurrency=1, judges=[_group_judge(server)], score="llm-group"
            )
            return groups, server.requests

    groups, requests = asyncio.run(main())
    assert requests == 2  # one call per group, never one per episode
    for group in groups:
        answers = [t.steps[-1].action for t in group.trajectories]
        assert len(set(answers)) == 3  # the random policy's samples differ
        for trajectory in group.trajectories:
            assert [v.label for v in trajectory.verdicts] == ["native", "llm-group"]
            assert trajectory.score == float(trajectory.steps[-1].action == min(answers))  # --score llm-group
            assert trajectory.judgment.components["native"] == 0.0
        calls = [len(v.model_calls) for t in group.trajectories for v in t.verdicts]
        assert sum(calls) == 1  # the group's one call, kept once


def test_a_group_judge_that_fails_fails_its_whole_group_never_scoring_it():
    env = load("arith:add?size=4", registry=Registry.from_plugins(("arith", AdapterPlugin())))

    async def main():
        async with ScriptedModelServer(lambda m: "They all look good.") as server:
            return await asyncio.to_thread(env.groups, "random", 1, n=2, judges=[_group_judge(server)])

    (group,) = asyncio.run(main())
    for trajectory in group.trajectories:
        assert trajectory.status is Status.VERIFIER_ERROR
        assert trajectory.judgment is None
        assert "names no answer from BEST: 1 to BEST: 2" in trajectory.error
    (call,) = [c for t in group.trajectories for v in t.verdicts for c in v.model_calls]
    assert call.response["content"] == "They all look good."  # the unreadable reply, kept


def test_an_evaluation_with_a_group_judge_records_every_episode_once_judged():
    env = load("arith:add?size=4", registry=Registry.from_plugins(("arith", AdapterPlugin())))

    async def main(out):
        async with ScriptedModelServer(smallest_wins) as server:
            return await asyncio.to_thread(
                evaluate, env, "random", tasks=2, samples=4, out=out, judges=[_group_judge(server)], concurrency=2
            )

    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(Path(scratch) / "run"))
        run = load_run(Path(scratch) / "run")
        assert len(run.trajectories) == 8
        by_group = {}
        for trajectory in run.trajectories:
            by_group.setdefault(trajectory.group_id, []).append(trajectory.judgment.components["llm-group"])
        assert len(by_group) == 2  # every episode written once, judged with its whole group
        assert all(sorted(scores) == [0.0, 0.0, 0.0, 1.0] for scores in by_group.values())


def test_a_recorded_run_judged_again_by_a_group_judge_is_judged_by_its_recorded_groups(tmp_path):
    env = load("arith:add?size=4", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    evaluate(env, "random", tasks=2, samples=3, out=tmp_path / "played")

    async def main():
        async with ScriptedModelServer(smallest_wins) as server:
            done = await rejudge_run(
                tmp_path / "played", tmp_path / "judged", [_group_judge(server)], scoring="llm-group"
            )
            return done, server.requests

    done, requests = asyncio.run(main())
    assert requests == 2
    groups = {}
    for trajectory in done.trajectories:
        groups.setdefault(trajectory.group_id, []).append(trajectory)
    for group in groups.values():
        answers = [t.steps[-1].action for t in group]
        assert [t.score for t in group] == [float(a == min(answers)) for a in answers]


@pytest.mark.timeout(30)
def test_a_dealer_whose_trajectories_were_judged_at_once_finishes_its_run():
    # The race CI met on Python 3.13: a judge that never suspends finishes before the dealer waits on it, its
    # task's done callback still queued; waiting must yield to the loop, never spin on finished tasks.
    from nenyax.core.engine.executors import Dealer, Job, Plan
    from nenyax.core.engine.judging import Judging
    from nenyax.core.engine.policies import as_policy

    env = load("arith:add?size=2", registry=Registry.from_plugins(("arith", AdapterPlugin())))
    handed = []

    class AtOnce(Dealer):
        async def play(self):
            for index, task in enumerate(env.task_ids()):
                self.hand_over(index, env.rollout("reference", task=task))
            await asyncio.sleep(0)  # the judging tasks run to their end before this resumes

        async def interrupt(self):
            pass

        async def close(self):
            pass

        def unplayed(self):
            return 0

    judging = Judging.build(["nenyax_testsupport.fakes:answer_is_even"])
    plan = Plan(env=env, policy=as_policy("reference"), jobs=[Job(t, None, 0) for t in env.task_ids()], judging=judging)
    asyncio.run(AtOnce(plan, lambda index, trajectory: handed.append(trajectory)).run())
    assert len(handed) == 2
    assert all([v.label for v in t.verdicts] == ["native", "answer_is_even"] for t in handed)
