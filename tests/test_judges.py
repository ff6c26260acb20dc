"""Judge it your way, offline, through the real CLI: the embedded model judges reasoning-gym episodes it played,
beside reasoning-gym's own verifier, and `nenyax judge` judges the recorded run again and says how the two agree.

A 135M model does not write "VERDICT: PASS" when asked; the `llm` judge asks the embedded provider to decode
its verdict among the two lines (``guided_choice``), so every verdict is readable.
"""

import json
from pathlib import Path

import attrs

from nenyax.core import Status, load_run
from nenyax_testsupport.cli import run_nenyax as nenyax

RUBRIC = "llm?rubric=The answer is a single number that correctly solves the task."


def test_the_embedded_model_judges_beside_the_verifier_and_a_run_is_judged_again_without_replay(tmp_path):
    played = nenyax(
        "eval", "reasoning_gym:basic_arithmetic", "--tasks", "4", "--max-tokens", "32", "--judge", RUBRIC,
        "--out", str(tmp_path / "r"), "--json",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    run = load_run(tmp_path / "r")
    assert {t.status for t in run.trajectories} == {Status.OK}
    for trajectory in run.trajectories:
        native, llm = trajectory.verdicts
        assert native.label == "native"
        assert native.judgment.judge == "reasoning_gym:basic_arithmetic"
        assert llm.judgment.feedback in ("VERDICT: PASS", "VERDICT: FAIL")
        assert trajectory.judgment.components["llm"] == llm.judgment.score
        assert trajectory.judgment.score == native.judgment.score  # --score native, the default
        (call,) = llm.model_calls  # the judge's own call, not the policy's
        assert call.params["guided_choice"] == ["VERDICT: PASS", "VERDICT: FAIL"]
        assert len(trajectory.model_calls) == 1
    page = nenyax("view", str(tmp_path / "r"), "--json")
    assert page.returncode == 0, page.stderr
    shown = Path(json.loads(page.stdout)["page"]).read_text()
    assert "native: answered " in shown  # both verdicts, on each episode's line
    assert "llm: VERDICT: " in shown

    judged = nenyax(
        "judge", str(tmp_path / "r"), "--judge", RUBRIC + "&as=again", "--out", str(tmp_path / "j"),
        "--against", "native", "--json",
    )  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    (found,) = json.loads(judged.stdout)["agreement"]
    again = load_run(tmp_path / "j")
    words = [(t.verdicts[0].judgment.passed, t.verdicts[1].judgment.passed) for t in again.trajectories]
    assert found["episodes"] == 4
    assert found["agreed"] == sum(native == mine for native, mine in words)
    # The same episodes, nothing replayed; judging again at temperature 0 with the episode's seed says the same.
    for before, after in zip(run.trajectories, again.trajectories, strict=True):
        assert attrs.evolve(after, judgment=before.judgment, verdicts=before.verdicts) == before
        assert after.verdicts[1].judgment.passed == before.verdicts[1].judgment.passed
