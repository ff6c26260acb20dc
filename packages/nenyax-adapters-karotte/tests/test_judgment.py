"""A karotte transcript read as a judgment, or as the failure it records: never a failure read as a score."""

import pytest
from support import write_transcript

from nenyax.adapters.karotte.judgment import result
from nenyax.core import Status

pytestmark = pytest.mark.karotte


def _events(*scores, status="passed", error=None, metadata=None):
    from karotte.schemas.chat import Message
    from karotte.schemas.scoring import Scoring
    from karotte.schemas.transcript import (
        ErrorEvent,
        MessageAddedEvent,
        ScoringEvent,
        StepStartedEvent,
        TaskCompletedEvent,
        TaskStartedEvent,
    )

    events = [TaskStartedEvent(run_id="t", task_id="x", n_steps=max(len(scores), 1))]
    for i, score in enumerate(scores):
        events.append(StepStartedEvent(step=i))
        events.append(MessageAddedEvent(message=Message(role="assistant", content=f"answer {i}")))
        events.append(ScoringEvent(scoring=Scoring(score, metadata or {}, score >= 0.5)))
    if error is not None:
        kind, trace = error
        events.append(ErrorEvent(exception_type=kind, message="it broke", traceback=trace))
    events.append(TaskCompletedEvent(status=status))
    return events


def test_a_run_that_passed_every_step_with_full_marks_passes(tmp_path):
    done = result(write_transcript(tmp_path / "t.json", *_events(1.0, 1.0)), "", 0)
    assert done.status is Status.OK
    assert done.judgment.score == 1.0
    assert done.judgment.passed is True
    assert done.judgment.components["step0"] == 1.0
    assert done.judgment.components["step1"] == 1.0
    assert [m["content"] for m in done.messages] == ["answer 0", "answer 1"]


def test_a_step_that_went_on_at_a_score_of_zero_is_not_passed(tmp_path):
    # karotte calls this run "passed" (its judge let it go on); Nenyax's passed means full marks as well.
    from karotte.schemas.scoring import Scoring
    from karotte.schemas.transcript import ScoringEvent, TaskCompletedEvent, TaskStartedEvent

    events = [TaskStartedEvent(run_id="t", task_id="x", n_steps=1), ScoringEvent(scoring=Scoring(0.0, {}, True))]
    done = result(write_transcript(tmp_path / "t.json", *events, TaskCompletedEvent(status="passed")), "", 0)
    assert done.status is Status.OK
    assert done.judgment.score == 0.0
    assert done.judgment.passed is False


def test_the_run_score_is_the_last_step_scored(tmp_path):
    done = result(write_transcript(tmp_path / "t.json", *_events(1.0, 0.25, status="failed")), "", 0)
    assert done.judgment.score == 0.25
    assert done.judgment.passed is False


@pytest.mark.parametrize("key", ["CalledProcessError", "FileNotFoundError", "json_read_error"])
def test_an_executable_judge_that_crashed_is_a_verifier_error_not_a_zero(tmp_path, key):
    events = _events(0.0, status="failed", metadata={key: "Command '[python, score.py]' returned 1"})
    done = result(write_transcript(tmp_path / "t.json", *events), "", 0)
    assert done.status is Status.VERIFIER_ERROR
    assert done.judgment is None
    assert key in done.error


def test_an_error_raised_while_scoring_is_a_verifier_error(tmp_path):
    trace = 'File "/root/.venv/lib/python3.13/site-packages/karotte/step.py", line 90, in score\n    return x\n'
    events = _events(status="error", error=("ValueError", trace))
    done = result(write_transcript(tmp_path / "t.json", *events), "", 1)
    assert done.status is Status.VERIFIER_ERROR
    assert "ValueError: it broke" in done.error


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("TurnLimitReachedError", Status.POLICY_ERROR),
        ("EmptyTurnLimitReachedError", Status.POLICY_ERROR),
        ("StepTimeLimitReachedError", Status.TIMEOUT),
        ("RuntimeError", Status.ENV_ERROR),
    ],
)
def test_karottes_own_errors_get_their_status(tmp_path, kind, status):
    events = _events(status="error", error=(kind, 'File "agents/message_loop.py", line 93, in run_step\n'))
    done = result(write_transcript(tmp_path / "t.json", *events), "", 1)
    assert done.status is status
    assert done.judgment is None
    assert kind in done.error


def test_no_transcript_is_an_infrastructure_failure_with_the_logs_last_words(tmp_path):
    done = result(tmp_path / "missing.json", "Error: short-name resolution failed for amazonlinux", 125)
    assert done.status is Status.INFRA_ERROR
    assert done.judgment is None
    assert "amazonlinux" in done.error
