"""`check` on the in-memory `arith` fake: core's tests install no real adapter (every adapter depends on core).

The adapters below over- or under-claim on purpose, since no real environment is broken in exactly that way.
"""

import re
import time

import pytest

from nenyax.core.contract.trajectory import Tier
from nenyax.core.errors import UsageError
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.measure import CHECKS, TierOutcome, check
from nenyax_testsupport.fakes import AdapterPlugin


def _registry(factory="nenyax_testsupport.fakes:ArithAdapter"):
    return Registry.from_plugins(("fake", AdapterPlugin(factory=factory)))


def _outcomes(report):
    return {r.id: r.outcome for r in report.results}


def test_a_sound_environment_is_audited():
    started = time.perf_counter()
    report = check("arith:add?size=8", registry=_registry())
    elapsed = time.perf_counter() - started
    assert report.tier is Tier.AUDITED
    assert [r.id for r in report.results] == [c.id for c in CHECKS]
    assert set(_outcomes(report).values()) == {TierOutcome.PASSED}
    assert all(r.evidence for r in report.results)
    # Each check is timed on its own: every one took some time, and together no more than the whole run.
    assert all(r.seconds > 0 for r in report.results)
    assert sum(r.seconds for r in report.results) <= elapsed
    assert {r.openenv for r in report.results} >= {"runtime.startup", "semantic.floor_gap"}


def test_a_wrong_oracle_fails_the_audit():
    report = check("arith:add?size=8", registry=_registry("nenyax_testsupport.fakes:WrongReferenceAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is TierOutcome.FAILED


def test_a_skipped_check_blocks_its_tier(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax_testsupport.fakes:NoOracleAdapter"))
    assert report.tier is Tier.TRAINABLE
    assert _outcomes(report)["audited/reference-beats-null"] is TierOutcome.SKIPPED
    report = check("arith:add", registry=_registry("nenyax_testsupport.fakes:UnseededAdapter"))
    assert report.tier is Tier.EVALUABLE
    assert _outcomes(report)["trainable/seed-recreates"] is TierOutcome.SKIPPED


def test_an_environment_that_replays_only_some_tasks_the_same_is_not_trainable():
    # One task replayed the same is no evidence: the check replays several, and names the episode's own seed.
    report = check("arith:add?size=8", registry=_registry("nenyax_testsupport.fakes:MostlyStableAdapter"))
    assert report.tier is Tier.EVALUABLE
    [seeded] = [r for r in report.results if r.id == "trainable/seed-recreates"]
    assert seeded.outcome is TierOutcome.FAILED
    assert re.search(
        r"Two episodes of add/0/\d+ \(episode seed \d+\) started from different observations", seeded.evidence
    )


def test_a_server_that_cannot_be_reached_skips_connectable_with_the_reason(monkeypatch):
    report = check("arith:add", registry=_registry("nenyax_testsupport.fakes:UnreachableAdapter"))
    assert report.tier is Tier.NONE
    assert not report.failed
    loads = report.results[0]
    assert loads.id == "connectable/loads"
    assert loads.outcome is TierOutcome.SKIPPED
    assert "http://127.0.0.1:9 (connection refused)" in loads.evidence


def test_user_mistakes_raise_instead_of_reporting():
    with pytest.raises(UsageError):
        check("arith:nothing", registry=_registry())
    with pytest.raises(UsageError):
        check("not a uri", registry=_registry())
    with pytest.raises(UsageError, match="at least 1"):
        check("arith:add", samples=0, registry=_registry())


@pytest.mark.parametrize(
    "factory",
    [
        "nenyax_testsupport.fakes:WrongReferenceAdapter",
        "nenyax_testsupport.fakes:TupleObservationAdapter",
        "nenyax_testsupport.fakes:UnstableManifestAdapter",
        "nenyax_testsupport.fakes:NoOracleAdapter",
        "nenyax_testsupport.fakes:UnseededAdapter",
        "nenyax_testsupport.fakes:UnreachableAdapter",
    ],
)
def test_every_check_that_does_not_pass_says_what_it_tried_and_saw(factory):
    report = check("arith:add?size=6", samples=4, registry=_registry(factory))
    stopped = [r for r in report.results if r.outcome is not TierOutcome.PASSED]
    assert stopped, f"{factory} was meant to fall short somewhere"
    for result in stopped:
        text = result.evidence
        assert text[0].isupper(), (result.id, text)
        assert text.endswith((".", ")")), (result.id, text)
        assert "\n" not in text, (result.id, text)
        assert len(text.split()) >= 5, (result.id, text)
        assert "AssertionError" not in text, (result.id, text)
    failed = [r for r in stopped if r.outcome is TierOutcome.FAILED]
    for result in failed:  # a failure names what it looked at: a task, or the values it compared
        assert "add/" in result.evidence or any(ch.isdigit() for ch in result.evidence), (result.id, result.evidence)


def test_a_manifest_that_changes_between_processes_is_not_trainable():
    report = check(
        "arith:add?size=6", samples=4, registry=_registry("nenyax_testsupport.fakes:UnstableManifestAdapter")
    )
    fresh = next(r for r in report.results if r.id == "trainable/fresh-process")
    assert fresh.outcome is TierOutcome.FAILED
    assert "manifest digest differs" in fresh.evidence
    assert report.tier is Tier.EVALUABLE


def test_every_episode_a_check_plays_reaches_its_observers():
    class Ends:
        def __init__(self):
            self.seen = []

        def on_episode_ended(self, event):
            self.seen.append(event.trajectory)

    ends = Ends()
    report = check("arith:add?size=5", registry=_registry(), observers=[ends])
    seen = ends.seen
    assert report.tier is Tier.AUDITED
    by_player = {}
    for traj in seen:
        by_player.setdefault(traj.policy.name, []).append(traj)
    # The reference played each sampled task once (episodes several checks compare are played once).
    assert sorted(t.task_id for t in by_player["reference"]) == sorted({t.task_id for t in by_player["reference"]})
    assert len(by_player["reference"]) == report.samples == 5
    # The deliberate failures are recorded with their status, named for what they were.
    assert by_player["check probe: a raising policy"][0].status.value == "policy_error"
    assert by_player["check probe: an infrastructure outage"][0].status.value == "infra_error"
    assert any(name.startswith("check probe: a constant answer") for name in by_player)


# An arith whose wrong answers still earn partial credit: every cheap policy scores `PARTIAL`, the reference 1.
# No real environment has a floor at a chosen height, which is what pinning the margin needs. The right
# answer is a sentence longer than the audit tries as a constant, so no constant scores above the floor.
PARTIAL_CREDIT = """
from nenyax.core.contract.trajectory import Judgment, Step
from nenyax_testsupport.fakes import ArithAdapter, ArithEnvironment, ArithSession

PARTIAL = {partial}


class PartialSession(ArithSession):
    def reference_action(self):
        return f"{{self.a}} plus {{self.b}} makes {{self.a + self.b}}, added up carefully, digit by digit."

    def act(self, action):
        self.answer = str(action)
        reward = 1.0 if self.answer == self.reference_action() else 0.0
        return Step(observation=self.observation, action=action, reward=reward, terminated=True)

    def judge(self, steps):
        score = 1.0 if steps and steps[-1].reward == 1.0 else PARTIAL
        return Judgment(score=score, passed=score == 1.0, judge="arith:partial")


class PartialEnvironment(ArithEnvironment):
    def session(self, task=None, seed=None):
        base = super().session(task, seed)
        return PartialSession(self, base.task_id)


class PartialAdapter(ArithAdapter):
    def load(self, uri, context=None):
        base = super().load(uri, context)
        return PartialEnvironment(uri.raw, size=base.size, seed=base.seed)
"""


def _partial_credit_registry(tmp_path, monkeypatch, partial):
    module = f"nenyax_partial_credit_{str(partial).replace('.', '_')}"
    (tmp_path / f"{module}.py").write_text(PARTIAL_CREDIT.format(partial=partial))
    monkeypatch.syspath_prepend(str(tmp_path))
    return _registry(f"{module}:PartialAdapter")


def _audit(report):
    return {r.id: r for r in report.results if r.id.startswith("audited/")}


def test_a_reference_a_little_above_the_floor_is_not_audited(tmp_path, monkeypatch):
    registry = _partial_credit_registry(tmp_path, monkeypatch, 0.9)
    report = check("arith:add?size=6", samples=6, margin=0.3, registry=registry)
    audit = _audit(report)
    # The reference beats the null policy on every task (1 > 0.9), but by 0.1 where 0.3 is required.
    assert audit["audited/reference-beats-null"].outcome is TierOutcome.PASSED
    floor_check = audit["audited/reference-beats-floor"]
    assert floor_check.outcome is TierOutcome.FAILED
    assert "a margin of 0.10 where 0.30 is required" in floor_check.evidence
    assert report.tier < Tier.AUDITED
    floor = report.floor
    assert (floor.score, floor.reference, floor.required, floor.tasks) == (0.9, 1.0, 0.3, 6)
    assert floor.margin == pytest.approx(0.1)


def test_a_margin_exactly_the_one_required_is_audited_and_the_default_is_0_3(tmp_path, monkeypatch):
    registry = _partial_credit_registry(tmp_path, monkeypatch, 0.5)
    exact = check("arith:add?size=6", samples=6, margin=0.5, registry=registry)
    assert _audit(exact)["audited/reference-beats-floor"].outcome is TierOutcome.PASSED
    assert exact.floor.margin == 0.5
    assert exact.floor.required == 0.5
    assert "a margin of 0.50 (0.50 required)" in _audit(exact)["audited/reference-beats-floor"].evidence
    above = check("arith:add?size=6", samples=6, margin=0.51, registry=registry)
    assert _audit(above)["audited/reference-beats-floor"].outcome is TierOutcome.FAILED
    default = check("arith:add?size=6", samples=6, registry=_partial_credit_registry(tmp_path, monkeypatch, 0.75))
    assert default.floor.required == 0.3
    assert default.floor.margin == 0.25
    assert _audit(default)["audited/reference-beats-floor"].outcome is TierOutcome.FAILED


def test_a_record_that_does_not_read_back_equal_names_the_first_difference_shortened():
    report = check(
        "arith:add?size=6", samples=4, registry=_registry("nenyax_testsupport.fakes:TupleObservationAdapter")
    )
    recorded = next(r for r in report.results if r.id == "trainable/model-path-recorded")
    assert recorded.outcome is TierOutcome.FAILED
    text = recorded.evidence
    head = "A trajectory of add/0/3 written to JSONL does not read back equal: its step 0 was "
    assert text.startswith(head + "Step(observation=(79, 15), action=''")
    wrote, _, read = text[len(head) :].partition(" and reads back as ")
    assert read.startswith("Step(observation=[79, 15], action=''")
    # Each value is cut to 100 characters, its end marked.
    assert len(wrote) == 100
    assert wrote.endswith("...")
    assert len(read) == 101
    assert read.endswith("....")


def test_the_first_difference_is_a_field_by_name_or_the_record_itself():
    import attrs

    from nenyax.core.tiers.checks import _first_difference, _short
    from nenyax_testsupport.fakes import ArithEnvironment

    traj = ArithEnvironment("arith:add?size=2", size=2, seed=0).rollout("reference")
    assert _first_difference(traj, attrs.evolve(traj, seed=5)) == ("seed", traj.seed, 5)
    assert _first_difference(traj, None) == ("record", "one trajectory", "nothing")
    assert _first_difference(traj, traj) == ("record", traj, traj)
    assert _first_difference(traj, attrs.evolve(traj, steps=())) == ("step 0", traj.steps[0], None)
    # The repr, up to 100 characters; longer ones keep 97 and end in "...".
    assert _short("x" * 98) == "'" + "x" * 98 + "'"
    assert _short("x" * 99) == "'" + "x" * 96 + "..."


# A stochastic arith on which the empty answer is also right on every even-numbered task: the null policy ties
# the reference there and loses elsewhere, which is what the sign test of a stochastic environment counts.
TIES = """
from nenyax.core.contract.manifest import Capabilities
from nenyax.core.contract.trajectory import Judgment
from nenyax_testsupport.fakes import ArithAdapter, ArithEnvironment, ArithSession


class TieSession(ArithSession):
    def judge(self, steps):
        even = int(self.task_id.rpartition("/")[2]) % 2 == 0
        right = steps[-1].reward == 1.0 or (even and self.answer == "")
        return Judgment(score=1.0 if right else 0.0, passed=right, judge="arith:ties")


class TieEnvironment(ArithEnvironment):
    def session(self, task=None, seed=None):
        return TieSession(self, super().session(task, seed).task_id)


class TieAdapter(ArithAdapter):
    def load(self, uri, context=None):
        caps = Capabilities(seeded=True, stable_task_ids=True, reference_policy=True, max_turns=1, stochastic=True)
        return TieEnvironment(uri.raw, size=6, seed=0, capabilities=caps)
"""


def test_a_stochastic_environment_is_judged_by_its_wins_and_a_sign_test(tmp_path, monkeypatch):
    (tmp_path / "nenyax_ties.py").write_text(TIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = check("arith:add", samples=6, registry=_registry("nenyax_ties:TieAdapter"))
    null = next(r for r in report.results if r.id == "audited/reference-beats-null")
    assert null.outcome is TierOutcome.PASSED
    # 3 wins, 3 ties, no loss: p = P(at least 3 heads in 3 fair flips) = 1/8.
    assert null.evidence == (
        "Stochastic: the reference was never below the null policy over 6 of 6 tasks and beat it on 3 "
        "(sign test p=0.125: not yet confident; sample more tasks)."
    )


def test_progress_is_told_each_check_before_it_runs_and_once_at_the_end():
    seen = []
    check("arith:add?size=4", samples=2, registry=_registry(), progress=lambda *args: seen.append(args))
    total = len(CHECKS)
    assert seen == [(c[0], i, total) for i, c in enumerate(CHECKS)] + [("", total, total)]


# Environments broken in ways no real one is on demand: no tasks at all, and task ids that raise.
EMPTY = """
from nenyax_testsupport.fakes import ArithAdapter, ArithEnvironment


class Empty(ArithEnvironment):
    def task_ids(self, split=None, limit=None):
        return []


class Raising(ArithEnvironment):
    def task_ids(self, split=None, limit=None):
        raise RuntimeError("  the index file is gone  ")


class EmptyAdapter(ArithAdapter):
    def load(self, uri, context=None):
        return Empty(uri.raw, size=3, seed=0)


class RaisingAdapter(ArithAdapter):
    def load(self, uri, context=None):
        return Raising(uri.raw, size=3, seed=0)
"""


def test_no_tasks_skips_what_needs_them_and_a_check_that_raises_says_what(tmp_path, monkeypatch):
    (tmp_path / "nenyax_empty.py").write_text(EMPTY)
    monkeypatch.syspath_prepend(str(tmp_path))
    empty = check("arith:add", registry=_registry("nenyax_empty:EmptyAdapter"))
    outcomes = {r.id: (r.outcome, r.evidence) for r in empty.results}
    assert outcomes["connectable/episode-starts"] == (TierOutcome.SKIPPED, "The environment lists no tasks to sample.")
    assert empty.tier is Tier.NONE
    raising = check("arith:add", registry=_registry("nenyax_empty:RaisingAdapter"))
    manifest = next(r for r in raising.results if r.id == "connectable/manifest-valid")
    assert (manifest.outcome, manifest.evidence) == (
        TierOutcome.FAILED,
        "The check raised RuntimeError: the index file is gone.",  # stripped, and ended as a sentence
    )


def test_a_rollout_environment_whose_gold_answer_is_one_constant_is_not_audited():
    """The floor probes the reference's most common answer in rollout mode too (its last reply there,
    since a rollout has no steps): answering every model call with it scores what the reference does."""
    from nenyax_testsupport.native_fakes import NativeAdapters

    registry = Registry.from_plugins(("native", NativeAdapters()))
    varied = check("toolmath:mul?size=4", samples=4, registry=registry)
    assert varied.tier is Tier.AUDITED
    same = check("toolmath:mul?size=4&same=true", samples=4, registry=registry)
    floor = _audit(same)["audited/reference-beats-floor"]
    assert floor.outcome is TierOutcome.FAILED
    assert same.floor.probe.startswith("a constant answer")
    assert same.floor.score == 1.0
    assert same.tier is Tier.TRAINABLE


def test_a_native_loop_s_floor_plays_episodes_at_once_where_sessions_may_run_concurrently(monkeypatch):
    """Each episode of a native loop mostly waits (a harness process, a server): the floor plays
    `EPISODES_AT_ONCE` of them at a time, and measures the same floor as one at a time."""
    from nenyax.core.tiers.checks import EPISODES_AT_ONCE
    from nenyax_testsupport.native_fakes import NativeAdapters, ToolMathEnvironment

    made = []
    make = ToolMathEnvironment.__init__

    def keep(self, *args, **kwargs):
        make(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(ToolMathEnvironment, "__init__", keep)
    registry = Registry.from_plugins(("native", NativeAdapters()))
    at_once = check("toolmath:mul?size=4&same=true", samples=4, registry=registry)
    assert max(env.most_active for env in made) == EPISODES_AT_ONCE
    made.clear()
    one_by_one = check("toolmath:mul?size=4&same=true&concurrent=false", samples=4, registry=registry)
    assert max(env.most_active for env in made) == 1
    assert at_once.floor == one_by_one.floor
    assert at_once.floor.probe.startswith("a constant answer")
    assert at_once.tier is one_by_one.tier is Tier.TRAINABLE


def test_the_floor_is_measured_on_many_more_tasks_than_the_sample():
    report = check(
        "arith:add?size=400", samples=5, registry=_registry("nenyax_testsupport.fakes:ZeroHeavyArithAdapter")
    )
    floor = report.floor
    assert floor.probe == "a constant answer '0'"
    assert (floor.tasks, floor.floor_tasks) == (5, 100)
    assert 0.35 < floor.score < 0.65  # half the tasks ask 0 + 0; five tasks could have said 0.2 or 0.8
    assert floor.score < floor.upper < floor.score + 0.15  # its 95% upper bound, over 100 tasks
    assert floor.margin == pytest.approx(1.0 - floor.score)
    evidence = next(r.evidence for r in report.results if r.id == "audited/reference-beats-floor")
    assert f"over 100 tasks (at most {floor.upper:.2f}, 95% upper bound)" in evidence


def _result(report, check_id):
    return next(r for r in report.results if r.id == check_id)


def test_a_single_turn_claim_broken_in_steps_fails_and_says_by_how_many():
    # checks._episode_completes: "STEP(S)"
    report = check("arith:add", samples=2, registry=_registry("nenyax_testsupport.fakes:NotMultiTurnAdapter"))
    completes = _result(report, "evaluable/episode-completes")
    assert completes.outcome is TierOutcome.FAILED
    pattern = r"The null episode of add/0/\d took 2 step\(s\), but the environment claims not multi_turn\."
    assert re.fullmatch(pattern, completes.evidence), completes.evidence
    assert report.tier is Tier.CONNECTABLE


def test_a_passing_episode_names_the_policy_that_played():
    # checks._name: str(None) for a policy named by a string
    report = check("arith:add?size=8", registry=_registry())
    assert re.match(r"A null episode of add/0/\d ", _result(report, "evaluable/episode-completes").evidence)


def test_a_fresh_interpreter_that_plays_other_steps_fails_with_both_scores():
    # checks._fresh_process: there["SCORE"] (the message itself raised, and the check errored)
    report = check(
        "arith:add?elsewhere=differ", samples=2, registry=_registry("nenyax_testsupport.fakes:ProcessBoundAdapter")
    )
    fresh = _result(report, "trainable/fresh-process")
    assert fresh.outcome is TierOutcome.FAILED
    assert re.search(r"the reference policy on add/0/\d \(seed 0\) played other steps", fresh.evidence)
    assert "scoring 0 there" in fresh.evidence
    assert "scoring 0 here" in fresh.evidence


def test_an_environment_that_fails_to_load_elsewhere_fails_the_fresh_process_check():
    # checks._fresh_process: `or sources` (any error would have been skipped as "plugins of this process only")
    uri = f"arith:add?elsewhere=fail&home={hash('nenyax')}"
    report = check(uri, samples=2, registry=_registry("nenyax_testsupport.fakes:ProcessBoundAdapter"))
    fresh = _result(report, "trainable/fresh-process")
    assert fresh.outcome is TierOutcome.FAILED
    assert f"loading {uri} and replaying add/0/" in fresh.evidence
    assert "this environment's state lives in the process that made it" in fresh.evidence


def test_a_trajectory_recording_another_digest_than_its_environment_s_fails():
    # checks._model_path_recorded: `digest != ... and uri != ...` (a wrong digest alone must fail)
    report = check("arith:add", samples=2, registry=_registry("nenyax_testsupport.fakes:DriftingDigestAdapter"))
    recorded = _result(report, "trainable/model-path-recorded")
    assert recorded.outcome is TierOutcome.FAILED
    assert "not the environment's 'arith:add'" in recorded.evidence


# ---------------------------------------------------------------- check --judge: the tier under put-on judges


def test_under_a_judge_as_strict_as_the_verifier_the_tier_is_the_same_and_says_so():
    report = check(
        "arith:add?size=8", registry=_registry(), samples=6, judges=["nenyax_testsupport.fakes:passed_natively"]
    )
    assert report.tier is Tier.AUDITED
    assert report.judges == ("nenyax_testsupport.fakes:passed_natively",)
    assert report.score == "passed_natively"  # one judge, no --score: its verdict is the score


def test_a_judge_a_constant_answer_satisfies_fails_the_audit_named_and_its_verdict_replays_elsewhere():
    judge = "nenyax_testsupport.fakes:answer_is_even"
    report = check("arith:add?size=8", registry=_registry(), samples=6, judges=[judge])
    floor = _result(report, "audited/reference-beats-floor")
    assert floor.outcome is TierOutcome.FAILED
    assert f"Not discriminating under --judge {judge} (score: answer_is_even)" in floor.evidence
    assert report.floor.score == 1.0  # an even constant: every episode passes under this judge
    # The fresh interpreter built the same judge: its scores (0 or 1 by parity, not the verifier's 1) match.
    assert _result(report, "trainable/fresh-process").outcome is TierOutcome.PASSED
    # Under the composed score the format's verdict gates the judge's: a constant no longer passes.
    gated = check(
        "arith:add?size=8", registry=_registry(), samples=6, judges=[judge], score="gate?on=native&then=answer_is_even"
    )
    assert gated.score == "gate?on=native&then=answer_is_even"
    assert gated.floor.score < report.floor.score


def test_a_judge_check_refuses_mistakes_before_any_episode():
    with pytest.raises(UsageError, match="No judge named 'lmm'"):
        check("arith:add", registry=_registry(), judges=["lmm"])
    with pytest.raises(UsageError, match="say how the score is composed with --score"):
        check(
            "arith:add",
            registry=_registry(),
            judges=["nenyax_testsupport.fakes:answer_is_even", "nenyax_testsupport.fakes:short_reply"],
        )


def test_under_a_group_judge_every_episode_is_alone_so_no_audit_is_earned():
    # check plays episodes one at a time: each is a group of one, which llm-group scores 1 without asking its
    # model (nothing listens at this address), so the floor is 1 and the audit fails, named. The CLI refuses it.
    judge = "llm-group?rubric=x&model=openai:unused&base_url=http://127.0.0.1:9/v1"
    report = check("arith:add?size=8", registry=_registry(), samples=4, judges=[judge])
    floor = _result(report, "audited/reference-beats-floor")
    assert floor.outcome is TierOutcome.FAILED
    assert floor.evidence.startswith(f"Not discriminating under --judge {judge} (score: llm-group)")
    assert report.tier is Tier.TRAINABLE
