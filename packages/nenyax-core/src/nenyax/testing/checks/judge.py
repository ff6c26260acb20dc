"""The conformance checks of `judge` plugins beyond the common ones (`nenyax.testing.checks.common`).

The common checks already prove that a judge declares a capability and has its methods; these ask it
real questions, for each capability it declares. An ``answer`` judge is asked about answers to a gold
answer given as text (``"4"``: the reference `AnswerJudge` names first, what question/answer formats
pass); a ``trajectory`` judge about a small finished, unjudged episode. Both are also given references
no judge can use. What they hold a judge to is what its interface promises: a `Judgment` for what it
decides and a `VerifierFailure` sentence for what it cannot, never an arbitrary exception; garbage
scoring low; and the same verdict for the same input.

A judge whose references are not text golds (a format's entries) says so with a `VerifierFailure` for
``"4"``, and the check comparing right and wrong answers is skipped, saying why.

Each yields one sentence per problem found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Judgment, PolicyInfo, Status, Step, Trajectory
from nenyax.core.errors import NenyaxError
from nenyax.core.plugins.interfaces import declared
from nenyax.testing.report import Check, Skip
from nenyax.testing.subject import Subject

GOLD = "4"
"""The gold answer the answer questions are about; the answer ``"4"`` is the right one."""
WRONG = ("5", "", "I do not know")
"""Answers to `GOLD` that are wrong: another number, nothing, and garbage."""
UNUSABLE: tuple[Any, ...] = (None, "", [], {"answer": None})
"""References a judge may not be able to use: it judges them, or says in a sentence why it cannot."""

Question = tuple[str, Callable[[], Any]]
"""How a question reads in a finding, and the call that asks it."""


def sample_trajectory() -> Trajectory:
    """A finished, unjudged step episode: two steps of reward 0.5, the second terminal."""
    steps = (
        Step(observation="2+2?", action="4", reward=0.5),
        Step(observation="and 4+4?", action="8", reward=0.5, terminated=True),
    )
    return Trajectory(
        env_uri="kit:add",
        manifest_digest="d",
        mode=Mode.STEP,
        task_id="t",
        seed=0,
        policy=PolicyInfo(kind="callable", name="kit"),
        status=Status.OK,
        judgment=None,
        steps=steps,
        final_observation="done",
    )


def _questions(
    subject: Subject, answers: tuple[str, ...], references: tuple[Any, ...], episode_references: tuple[Any, ...]
) -> list[Question]:
    """Each of `answers` against each of `references`, and the sample episode against each of
    `episode_references`, for the capabilities the judge declares."""
    judge = subject.instance()
    have = declared(judge)
    if not have & {"answer", "trajectory"}:
        raise Skip("the judge declares neither 'answer' nor 'trajectory' (see judge/factory-returns-judge)")
    asked: list[Question] = []
    if "answer" in have:
        asked += [(f"judge({a!r}, {r!r})", _bind(judge.judge, a, r)) for r in references for a in answers]
    if "trajectory" in have:
        episode = sample_trajectory()
        asked += [
            (f"judge_trajectory(<a finished episode>, {r!r})", _bind(judge.judge_trajectory, episode, r))
            for r in episode_references
        ]
    return asked


def _decidable(subject: Subject) -> list[Question]:
    """The questions every judge of its capabilities can decide: answers to `GOLD`, the episode without a reference."""
    return _questions(subject, (GOLD, *WRONG), (GOLD,), (None,))


def _bind(method: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: method(*args)


def _ask(question: Callable[[], Any]) -> Any:
    """What the judge returned, or the `NenyaxError` it raised (how a judge says it cannot decide)."""
    try:
        return question()
    except NenyaxError as exc:
        return exc


def _one_sentence(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text.strip() and text.rstrip().endswith((".", "?", ")"))


def returns_judgments(subject: Subject) -> Iterator[str]:
    """Every answer to the gold answer, and the finished episode, gets a `Judgment` (or a `VerifierFailure`)."""
    for label, question in _decidable(subject):
        got = _ask(question)
        if not isinstance(got, Judgment | NenyaxError):
            yield f"{label} returned {type(got).__name__} {got!r:.60}; a judge returns a nenyax.core.Judgment."


def right_beats_wrong(subject: Subject) -> Iterator[str]:
    """The gold answer itself passes, and each wrong answer gets a `Judgment` scoring below it, not passed."""
    judge = subject.instance()
    right = _ask(lambda: judge.judge(GOLD, GOLD))
    if isinstance(right, NenyaxError):
        raise Skip(
            f"it does not decide answers to the text gold answer {GOLD!r} ({type(right).__name__}: {right}); "
            "its references are of another kind"
        )
    if not isinstance(right, Judgment):
        raise Skip(f"judge({GOLD!r}, {GOLD!r}) gave no Judgment (see judge/returns-judgments)")
    if right.passed is False:
        yield f"judge({GOLD!r}, {GOLD!r}) did not pass: the gold answer itself is right."
    for answer in WRONG:
        got = _ask(_bind(judge.judge, answer, GOLD))
        label = f"judge({answer!r}, {GOLD!r})"
        if isinstance(got, NenyaxError):
            yield f"{label} raised {type(got).__name__} ({got}); a wrong answer scores low, it is not undecidable."
        elif not isinstance(got, Judgment):
            continue  # judge/returns-judgments says so
        elif got.score >= right.score:
            yield f"{label} scored {got.score:g}, not below the gold answer's {right.score:g}."
        elif got.passed:
            yield f"{label} passed; a wrong answer must not."


def bad_reference_is_clear(subject: Subject) -> Iterator[str]:
    """A reference the judge cannot use gets a `Judgment` or a one-sentence `VerifierFailure`, never another
    exception (a raw TypeError or KeyError would end the episode as a crash instead of ``verifier_error``)."""
    for label, question in _questions(subject, (GOLD,), (GOLD, *UNUSABLE), (GOLD, *UNUSABLE)):
        try:
            question()
        except NenyaxError as exc:
            if not _one_sentence(str(exc)):
                yield f"{label} raised {type(exc).__name__} {str(exc)!r}, which is not one sentence."
        except Exception as exc:  # noqa: BLE001 - anything but a NenyaxError is the finding
            yield (
                f"{label} raised {type(exc).__name__} ({exc}); a reference the judge cannot use is a "
                "nenyax.core.VerifierFailure saying why."
            )


def _verdict(judgment: Judgment) -> tuple[Any, ...]:
    # The feedback is left out: it is prose for people, and may say how long judging took.
    return (judgment.score, judgment.passed, judgment.components, judgment.judge)


def is_deterministic(subject: Subject) -> Iterator[str]:
    """The same answer and reference (or the same episode), judged twice, gets the same verdict."""
    decided = 0
    for label, question in _decidable(subject):
        first, again = _ask(question), _ask(question)
        if isinstance(first, Judgment) and isinstance(again, Judgment):
            decided += 1
            if _verdict(first) != _verdict(again):
                said = f"{_verdict(first)} then {_verdict(again)}"
                yield f"{label} judged twice gave {said} (score, passed, components, judge)."
        elif isinstance(first, Judgment) != isinstance(again, Judgment):
            yield f"{label} judged twice was decided once and not the other time ({first!r:.60}, then {again!r:.60})."
    if not decided:
        raise Skip("it decided none of the kit's questions, so there is nothing to compare")


JUDGE_CHECKS: tuple[Check, ...] = (
    Check(id="judge/returns-judgments", summary="what it decides is a Judgment", run=returns_judgments),
    Check(
        id="judge/right-beats-wrong",
        summary="the gold answer scores above wrong ones",
        run=right_beats_wrong,
        requires=("answer",),
    ),
    Check(
        id="judge/bad-reference-is-clear",
        summary="an unusable reference is one clear sentence",
        run=bad_reference_is_clear,
    ),
    Check(id="judge/is-deterministic", summary="the same input gets the same verdict", run=is_deterministic),
)
"""The judge kind's own checks, in the order they run (after `common_checks("judge")`)."""
