"""The judge conformance kit: core's ``return`` judge and a sound fake pass it, and each of its checks
catches a judge broken its way (fakes in `nenyax_testsupport.kit_fakes`, one flaw each).

The datasets judges (``exact``, ``numeric``, ``math``) pass the same kit in their distribution's tests.
"""

from __future__ import annotations

import textwrap

import pytest

from nenyax.core.hookspecs import PluginSpec, hookimpl
from nenyax.core.plugins.registry import Registry
from nenyax.testing import CHECKS, Report, Subject, Verdict

pytest_plugins = ["pytester"]

FAKES = {
    "gold": "GoldJudge",
    "barescore": "BareScoreJudge",
    "alwaysright": "AlwaysRightJudge",
    "unchecked": "UncheckedReferenceJudge",
    "noisy": "NoisyJudge",
    "uncheckedsettings": "UncheckedSettingsTrajectoryJudge",
    "zeroforunreadable": "ZeroForUnreadableModelJudge",
}


class Plugin:
    @hookimpl
    def nenyax_register_judges(self):
        fakes = [
            PluginSpec(kind="judge", name=name, factory=f"nenyax_testsupport.kit_fakes:{attr}", summary="a fake")
            for name, attr in FAKES.items()
        ]
        return [
            *fakes,
            PluginSpec(kind="judge", name="return", factory="nenyax.core.builtin_plugins.return_judge:ReturnJudge"),
            PluginSpec(kind="judge", name="llm", factory="nenyax.core.builtin_plugins.llm_judge:LLMJudge"),
            PluginSpec(
                kind="judge", name="llm-group", factory="nenyax.core.builtin_plugins.llm_group_judge:LLMGroupJudge"
            ),
        ]


def outcomes(name, options=None):
    subject = Subject.from_registry("judge", name, Registry.from_plugins(("fakes", Plugin())), options)
    return {o.check.id: o for o in Report.of(CHECKS["judge"], subject).outcomes}


def test_the_kit_is_the_common_checks_and_the_judge_s_own():
    ids = [c.id for c in CHECKS["judge"]]
    assert ids[-7:] == [
        "judge/returns-judgments",
        "judge/right-beats-wrong",
        "judge/bad-reference-is-clear",
        "judge/is-deterministic",
        "judge/constant-not-rewarded",
        "judge/judges-the-group",
        "judge/unreadable-verdict-classified",
    ]
    assert "judge/factory-returns-judge" in ids  # a declared capability with its methods: proven there


def test_a_sound_answer_judge_passes_every_check():
    found = outcomes("gold")
    skipped = {cid for cid, o in found.items() if o.verdict is Verdict.SKIPPED}
    # An in-memory registry, and a fake outside nenyax/ (nenyax_testsupport): no source tree to read.
    assert skipped == {
        "judge/entry-point-named-after-distribution",
        "judge/no-namespace-init",
        "judge/constant-not-rewarded",  # an answer judge: right-beats-wrong asks it the same
        "judge/judges-the-group",
        "judge/unreadable-verdict-classified",
    }
    assert {cid: o.verdict for cid, o in found.items() if cid not in skipped} == dict.fromkeys(
        set(found) - skipped, Verdict.PASSED
    ), {cid: (o.reason, o.findings) for cid, o in found.items()}


def test_core_s_return_judge_passes_and_skips_the_answer_check_it_does_not_claim():
    found = outcomes("return")
    assert found["judge/right-beats-wrong"].verdict is Verdict.SKIPPED
    assert found["judge/right-beats-wrong"].reason == "the judge does not declare 'answer'"
    for check in ("judge/returns-judgments", "judge/bad-reference-is-clear", "judge/is-deterministic"):
        assert found[check].verdict is Verdict.PASSED, (found[check].reason, found[check].findings)


def test_core_s_llm_judge_passes_its_kit_against_a_scripted_model():
    # The judging model is a scripted OpenAI-compatible server on loopback (no real model can be made to answer
    # the same on cue); the embedded model judges in tests/test_judges.py at the root.
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    with serving_in_thread(ScriptedModelServer(calculator)) as server:
        options = {"rubric": "The answer is right.", "model": "openai:scripted", "base_url": server.base_url}
        found = outcomes("llm", options)
    assert found["judge/right-beats-wrong"].verdict is Verdict.SKIPPED  # it judges episodes, not answers
    for check in (
        "judge/returns-judgments",
        "judge/bad-reference-is-clear",
        "judge/is-deterministic",
        "judge/constant-not-rewarded",
        "judge/unreadable-verdict-classified",
    ):
        assert found[check].verdict is Verdict.PASSED, (found[check].reason, found[check].findings)


def calculator(messages):
    """A judging model that does the sum it is shown: PASS where the answer is right."""
    import re

    asked = messages[-1]["content"]
    task, answer = re.search(r"Task:\n(.*?)\n\nAnswer:\n(.*?)\n\n", asked, re.S).groups()
    left, sign, right = re.search(r"(-?\d+)\s*([+-])\s*(-?\d+)", task).groups()
    value = int(left) + int(right) if sign == "+" else int(left) - int(right)
    return f"VERDICT: {'PASS' if answer.strip() == str(value) else 'FAIL'}"


def test_an_llm_judge_whose_model_passes_everything_fails_the_constant_check():
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    with serving_in_thread(ScriptedModelServer(lambda messages: "Fine.\nVERDICT: PASS")) as server:
        options = {"rubric": "The answer is right.", "model": "openai:scripted", "base_url": server.base_url}
        found = outcomes("llm", options)
    caught = found["judge/constant-not-rewarded"]
    assert caught.verdict is Verdict.FAILED
    assert "The constant answer '4' to 'What is 3 + 5?' (wrong) passed" in caught.findings[0].message
    assert [cid for cid, o in found.items() if not o.ok()] == ["judge/constant-not-rewarded"]


@pytest.mark.parametrize(
    ("name", "check_id", "says"),
    [
        ("barescore", "judge/returns-judgments", "judge('4', '4') returned float 1.0; a judge returns"),
        ("alwaysright", "judge/right-beats-wrong", "judge('5', '4') scored 1, not below the gold answer's 1."),
        ("unchecked", "judge/bad-reference-is-clear", "judge('4', None) raised TypeError"),
        ("uncheckedsettings", "judge/bad-reference-is-clear", "judge_trajectory(<a finished episode>, '4') raised"),
        ("noisy", "judge/is-deterministic", "judge('4', '4') judged twice gave"),
        ("zeroforunreadable", "judge/unreadable-verdict-classified", "A reply without a verdict ("),
    ],
)
def test_each_check_catches_the_flaw_it_is_for_and_only_that_one(name, check_id, says):
    found = outcomes(name)
    caught = found[check_id]
    assert caught.verdict is Verdict.FAILED, (caught.verdict, caught.reason)
    assert any(says in f.message for f in caught.findings), [f.message for f in caught.findings]
    assert [cid for cid, o in found.items() if not o.ok()] == [check_id]  # no other check fails, none crashes


def test_a_judge_that_cannot_use_a_text_gold_is_skipped_there_saying_why():
    found = outcomes("uncheckedsettings")  # a trajectory judge: no answer questions at all
    assert found["judge/right-beats-wrong"].reason == "the judge does not declare 'answer'"
    assert found["judge/returns-judgments"].verdict is Verdict.PASSED  # the episode without a reference: decided


def test_an_error_that_is_not_one_sentence_is_caught(monkeypatch):
    from nenyax_testsupport import kit_fakes

    def mumbles(self, answer, reference):
        if not isinstance(reference, str) or not reference:
            raise kit_fakes.VerifierFailure("cannot read that")  # no full stop: not a sentence
        return kit_fakes.GoldJudge.judge(self, answer, reference)

    monkeypatch.setattr(kit_fakes.GoldJudge, "judge", mumbles)
    caught = outcomes("gold")["judge/bad-reference-is-clear"]
    assert caught.verdict is Verdict.FAILED
    assert "judge('4', None) raised VerifierFailure 'cannot read that', which is not one sentence." in [
        f.message for f in caught.findings
    ]


def test_the_pytest_suite_fails_on_a_broken_judge_with_the_check_s_id(pytester):
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest
            from nenyax.core.plugins.registry import Registry
            from nenyax.testing import Subject, conformance_suite
            from nenyax_testsupport.fakes import KindPlugin

            class TestNoisy(conformance_suite("judge")):
                plugin = "noisy"

                @pytest.fixture
                def subject(self):
                    plugin = KindPlugin("judge", "noisy", "nenyax_testsupport.kit_fakes:NoisyJudge")
                    return Subject.from_registry("judge", "noisy", Registry.from_plugins(("fake", plugin)))
            """
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    # Skipped: the entry-point check (an in-memory registry), no-namespace-init (a fake outside nenyax/), and
    # the trajectory, group and model checks (an answer judge); failed: the one flaw.
    result.assert_outcomes(passed=len(CHECKS["judge"]) - 6, failed=1, skipped=5)
    result.stdout.fnmatch_lines(["*TestNoisy.test_conformance?judge/is-deterministic?*"])
    result.stdout.fnmatch_lines(["*judge/is-deterministic: judge('4', '4') judged twice gave*"])


def group_calculator(messages):
    """A judging model comparing a group: the first answer that is the sum it is shown is the best."""
    import re

    asked = messages[-1]["content"]
    left, sign, right = re.search(r"Task:\n.*?(-?\d+)\s*([+-])\s*(-?\d+)", asked, re.S).groups()
    value = str(int(left) + int(right) if sign == "+" else int(left) - int(right))
    answers = re.findall(r"Answer (\d+):\n(.*?)\n\n", asked, re.S)
    return f"BEST: {next((n for n, text in answers if text.strip() == value), answers[0][0])}"


def test_core_s_llm_group_judge_passes_its_kit_against_a_scripted_model():
    from nenyax.testing.model_server import ScriptedModelServer, serving_in_thread

    with serving_in_thread(ScriptedModelServer(group_calculator)) as server:
        options = {"rubric": "The answer is right.", "model": "openai:scripted", "base_url": server.base_url}
        found = outcomes("llm-group", options)
        # One that always names the first answer ranks the wrong "4" above the right "8": caught.
        with serving_in_thread(ScriptedModelServer(lambda messages: "BEST: 1")) as first:
            lazy = outcomes("llm-group", {**options, "base_url": first.base_url})
    assert found["judge/judges-the-group"].verdict is Verdict.PASSED, found["judge/judges-the-group"].findings
    assert [cid for cid, o in found.items() if not o.ok()] == []
    caught = lazy["judge/judges-the-group"]
    assert caught.verdict is Verdict.FAILED
    assert "In the group, '4' scored 1, not below the right answer's 0." in [f.message for f in caught.findings]
