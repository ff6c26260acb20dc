"""The conformance checks of `judge` plugins beyond the common ones (`nenyax.testing.checks.common`).

The common checks already prove that a judge declares a capability and has its methods; these ask it
real questions, for each capability it declares. An ``answer`` judge is asked about answers to a gold
answer given as text (``"4"``: the reference `AnswerJudge` names first, what question/answer formats
pass); a ``trajectory`` judge about a small finished, unjudged episode. Both are also given references
no judge can use. What they hold a judge to is what its interface promises: a `Judgment` for what it
decides and a `VerifierFailure` sentence for what it cannot, never an arbitrary exception; garbage
scoring low; the same verdict for the same input; a constant answer rewarded only where it is right (a
``trajectory`` judge); and, for a judge that asks a model (``model``), a reply stating no verdict classified
as a `VerifierFailure`, never a score.

A judge whose references are not text golds (a format's entries) says so with a `VerifierFailure` for
``"4"``, and the check comparing right and wrong answers is skipped, saying why.

Each yields one sentence per problem found.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Judgment, PolicyInfo, Status, Step, Trajectory
from nenyax.core.errors import NenyaxError, VerifierFailure
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
        raise Skip("the judge declares neither 'answer' nor 'trajectory' (a group judge: see judge/judges-the-group)")
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


CONSTANT = "4"
"""The answer a constant policy gives to every question."""
ASKED = (("What is 2 + 2?", True), ("What is 3 + 5?", False), ("What is 9 - 4?", False))
"""The questions the constant answers, and whether it is right for each."""


def answered(question: str, answer: str, right: bool) -> Trajectory:
    """A finished, unjudged one-step episode: `question` answered `answer`, rewarded 1 where `right` (so a
    judge of the rewards is right too), else 0."""
    return attrs.evolve(
        sample_trajectory(),
        task_id=question,
        steps=(Step(observation=question, action=answer, reward=float(right), terminated=True),),
        final_observation=None,
    )


def constant_not_rewarded(subject: Subject) -> Iterator[str]:
    """One answer (``"4"``) given to every question passes where it is right and nowhere else: a judge that a
    constant answer satisfies (an LLM judge that passes whatever it is shown) lets a cheap policy score."""
    judge = subject.instance()
    verdicts = [
        (q, right, _ask(_bind(judge.judge_trajectory, answered(q, CONSTANT, right), None))) for q, right in ASKED
    ]
    decided = [(q, right, got) for q, right, got in verdicts if isinstance(got, Judgment)]
    if not decided:
        raise Skip("it decided none of the constant answer's episodes (see judge/returns-judgments)")
    rights = [got.score for _q, right, got in decided if right]
    for question, right, got in decided:
        said = f"The constant answer {CONSTANT!r} to {question!r}"
        if right and got.passed is False:
            yield f"{said} (right) did not pass."
        if not right and got.passed:
            yield f"{said} (wrong) passed: a policy answering {CONSTANT!r} to everything would score."
        if not right and rights and got.score >= rights[0]:
            yield f"{said} (wrong) scored {got.score:g}, not below the right one's {rights[0]:g}."


GROUP_QUESTION = "What is 3 + 5?"
GROUP_ANSWERS = ("4", "8", "I do not know")
"""One task's group: a wrong number, the right one, and garbage (the right one second, so order counts)."""


def judges_the_group(subject: Subject) -> Iterator[str]:
    """A group of one task's episodes gets one `Judgment` per episode, in their order, the right answer scoring
    above each wrong one; judged twice, the same verdicts."""
    judge = subject.instance()
    group = [answered(GROUP_QUESTION, answer, answer == "8") for answer in GROUP_ANSWERS]
    first, again = (_ask(_bind(judge.judge_group, group, None)) for _ in range(2))
    if isinstance(first, NenyaxError):
        raise Skip(f"it did not decide the kit's group ({type(first).__name__}: {first})")
    got = list(first) if isinstance(first, list | tuple) else []
    if len(got) != len(group) or not all(isinstance(j, Judgment) for j in got):
        yield f"judge_group(<{len(group)} episodes>, None) returned {first!r:.80}; it returns one Judgment each."
        return
    right = got[1].score
    for answer, judgment in zip(GROUP_ANSWERS, got, strict=True):
        if answer != "8" and judgment.score >= right:
            yield f"In the group, {answer!r} scored {judgment.score:g}, not below the right answer's {right:g}."
    if not isinstance(again, list | tuple) or [_verdict(j) for j in again] != [_verdict(j) for j in got]:
        yield "The same group judged twice got other verdicts."


UNREADABLE = "I would rather not say."
"""What the kit's judging model replies: no verdict in any form."""


def unreadable_verdict_classified(subject: Subject) -> Iterator[str]:
    """A judging model's reply that states no verdict is a one-sentence `VerifierFailure` with the reply kept
    among the calls, never a score. The kit serves that model itself, on loopback, and builds the judge
    pointed at it (``model=openai:kit``, ``base_url=...``, beside the options given)."""
    from nenyax.testing.model_server import ScriptedModelServer

    async def scenario() -> list[str]:
        async with ScriptedModelServer(lambda _messages: UNREADABLE) as server:
            options = {**subject.options, "model": "openai:kit", "base_url": server.base_url}
            judge = subject.registry.create("judge", subject.name, **options)
            calls: list[Any] = []
            try:
                got = await judge.ajudge_trajectory(sample_trajectory(), None, calls)
            except VerifierFailure as exc:
                problems = [] if _one_sentence(str(exc)) else [f"Its VerifierFailure {str(exc)!r} is not one sentence."]
                replies = [c.response.get("content") for c in calls]
                if UNREADABLE not in replies:
                    problems.append(f"The unreadable reply was not kept among the calls (they hold {replies!r:.80}).")
                return problems
            except Exception as exc:  # noqa: BLE001 - anything but a VerifierFailure is the finding
                return [f"A reply without a verdict raised {type(exc).__name__} ({exc}); it is a VerifierFailure."]
            finally:
                close = getattr(judge, "aclose", None)
                if close is not None:
                    await close()
            return [f"A reply without a verdict ({UNREADABLE!r}) was judged {got!r:.80}; it is a VerifierFailure."]

    yield from asyncio.run(scenario())


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
    Check(
        id="judge/constant-not-rewarded",
        summary="one answer to everything passes only where right",
        run=constant_not_rewarded,
        requires=("trajectory",),
    ),
    Check(
        id="judge/judges-the-group",
        summary="one verdict per episode of a group, the right one best",
        run=judges_the_group,
        requires=("group",),
    ),
    Check(
        id="judge/unreadable-verdict-classified",
        summary="a model reply without a verdict is a VerifierFailure",
        run=unreadable_verdict_classified,
        requires=("model",),
    ),
)
"""The judge kind's own checks, in the order they run (after `common_checks("judge")`)."""
