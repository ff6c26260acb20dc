"""Judges put on an environment, beside its own verifier, and how the episode's score is composed from them.

A judge is asked for as ``NAME[?option=value&...]`` (``--judge llm?rubric=...``): any `judge` plugin with
the ``trajectory`` capability, built with its options. Two options are the engine's, not the judge's:
``as`` labels its verdict (default: its name) and ``timeout`` bounds it in seconds.

Every judge reads the finished episode (its native judgment included) and gives a verdict; each verdict is
kept (`JudgeVerdict`, the native one first, under ``native``) and is a component of the episode's judgment,
whose score `Scoring` composes, stated once in the same grammar:

* ``native`` (the default): the format's own score; the judges' verdicts are components beside it;
* ``LABEL``: that judge's score;
* ``sum?native=1&style=0.5``: the weighted sum of the labelled scores;
* ``gate?on=native&then=style``: ``then``'s score where ``on`` passed, else 0 ("the answer must be right
  before its style counts").

A judge that raises, times out or gives a verdict it cannot read makes the episode ``verifier_error``: no
score (never 0), every verdict and model call kept. Only an episode the format judged ``ok`` is judged
again: a policy's error keeps its 0, a failure its missing score.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from nenyax.core.contract.failures import describe
from nenyax.core.contract.trajectory import JudgeVerdict, Judgment, ModelCall, Status, Trajectory
from nenyax.core.errors import UsageError, VerifierFailure, did_you_mean

NATIVE = "native"
"""The label of the format's own verdict."""

_ENGINE_OPTIONS = ("as", "timeout")


@attrs.frozen
class JudgeUse:
    """One judge as asked for: its plugin name, its own options, the label of its verdict, its time limit."""

    text: str
    name: str
    options: Mapping[str, str]
    label: str
    timeout: float | None = None

    @classmethod
    def parse(cls, text: str) -> JudgeUse:
        """``NAME[?option=value&...]``; a mistake is one sentence."""
        name, _, query = text.partition("?")
        name = name.strip()
        if not name:
            msg = f"--judge {text!r} names no judge: write NAME or NAME?option=value (e.g. llm?rubric=...)."
            raise UsageError(msg)
        try:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            msg = f"--judge {text!r}: its options are not option=value pairs joined by '&'."
            raise UsageError(msg) from None
        options = dict(pairs)
        label = options.pop("as", name.rpartition(":")[2] or name)  # a Python judge: its function's name
        if label == NATIVE:
            msg = f"--judge {text!r}: {NATIVE!r} is the format's own verdict; label the judge otherwise (as=...)."
            raise UsageError(msg)
        timeout = _seconds(text, options.pop("timeout", None))
        return cls(text=text, name=name, options=options, label=label, timeout=timeout)


def _seconds(text: str, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        msg = f"--judge {text!r}: timeout={value!r} is not a number of seconds above 0."
        raise UsageError(msg)
    return seconds


def judge_uses(texts: Iterable[str]) -> list[JudgeUse]:
    """Each ``--judge``, parsed; two with one label is one sentence."""
    uses = [JudgeUse.parse(text) for text in texts]
    seen: set[str] = set()
    for use in uses:
        if use.label in seen:
            msg = f"Two judges are labelled {use.label!r}; give one another label with as=..."
            raise UsageError(msg)
        seen.add(use.label)
    return uses


@attrs.frozen
class Scoring:
    """How the episode's score is composed from the verdicts (see the module docstring)."""

    text: str = NATIVE
    kind: str = NATIVE
    weights: Mapping[str, float] = attrs.field(factory=dict)
    on: str | None = None
    then: str | None = None

    @classmethod
    def parse(cls, text: str, labels: Sequence[str]) -> Scoring:
        """``native``, ``LABEL``, ``sum?LABEL=WEIGHT&...`` or ``gate?on=LABEL&then=LABEL``, over `labels`
        (the judges' labels; ``native`` is always one)."""
        known = [NATIVE, *labels]
        head, _, query = text.partition("?")
        options = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        if head in known and not query:
            return cls(text=text, kind=NATIVE if head == NATIVE else "judge", on=head)
        if head == "sum" and options:
            weights = {label: _weight(text, label, value) for label, value in options.items()}
            for label in weights:
                _known(text, label, known)
            return cls(text=text, kind="sum", weights=weights)
        if head == "gate" and set(options) == {"on", "then"}:
            _known(text, options["on"], known)
            _known(text, options["then"], known)
            return cls(text=text, kind="gate", on=options["on"], then=options["then"])
        msg = (
            f"--score {text!r} is not one of: native, a judge's label ({', '.join(labels) or 'no judge given'}), "
            "sum?LABEL=WEIGHT&..., gate?on=LABEL&then=LABEL."
        )
        raise UsageError(msg)

    def compose(self, verdicts: Mapping[str, Judgment]) -> Judgment:
        """The episode's judgment: the composed score, every verdict's score a component beside the native
        components, and the feedback of each."""
        native = verdicts[NATIVE]
        components = dict(native.components)
        components.update({label: judgment.score for label, judgment in verdicts.items()})
        if self.kind == NATIVE:
            score, passed = native.score, native.passed
        elif self.kind == "judge":
            assert self.on is not None
            score, passed = verdicts[self.on].score, verdicts[self.on].passed
        elif self.kind == "sum":
            score, passed = sum(w * verdicts[label].score for label, w in self.weights.items()), None
        else:
            assert self.on is not None
            assert self.then is not None
            gate, then = verdicts[self.on], verdicts[self.then]
            opened = _passed(gate)
            score = then.score if opened else 0.0
            passed = opened and _passed(then)
        feedback = "; ".join(f"{label}: {j.feedback}" for label, j in verdicts.items() if j.feedback)
        return Judgment(
            score=score,
            passed=passed,
            components=components,
            feedback=feedback,
            judge=f"{self.text} of " + ", ".join(f"{label} ({j.judge})" for label, j in verdicts.items()),
        )


def _passed(judgment: Judgment) -> bool:
    return judgment.passed if judgment.passed is not None else judgment.score >= 1.0


def _weight(text: str, label: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        msg = f"--score {text!r}: the weight of {label!r} ({value!r}) is not a number."
        raise UsageError(msg) from None


def _known(text: str, label: str, known: Sequence[str]) -> None:
    if label not in known:
        msg = f"--score {text!r} names {label!r}, which is no judge's label." + did_you_mean(label, known, "label")
        raise UsageError(msg)


def native_judgment(trajectory: Trajectory) -> Judgment | None:
    """The format's own verdict: kept among the verdicts where the episode was judged again, else its judgment."""
    for verdict in trajectory.verdicts:
        if verdict.label == NATIVE:
            return verdict.judgment
    return trajectory.judgment


async def apply_judges(
    trajectory: Trajectory, judges: Sequence[tuple[JudgeUse, Any]], scoring: Scoring, reference: Any = None
) -> Trajectory:
    """`trajectory` judged again by `judges` (each a `JudgeUse` and the judge it built), its score as
    `scoring` composes it; an episode the format did not judge ``ok`` is returned as it is."""
    native = native_judgment(trajectory)
    if native is None or trajectory.status is not Status.OK:
        return trajectory
    seen = attrs.evolve(trajectory, judgment=native, verdicts=())  # what every judge reads
    verdicts = [JudgeVerdict(label=NATIVE, judge=native.judge, judgment=native)]
    for use, judge in judges:
        calls: list[ModelCall] = []
        try:
            async with asyncio.timeout(use.timeout):
                judgment = await _ask(judge, seen, reference, calls)
        except TimeoutError:
            failure = f"The judge {use.label!r} did not decide within {use.timeout:g} s."
        except Exception as exc:  # noqa: BLE001 - whatever a judge raises is the verifier's failure, never a score
            failure = f"The judge {use.label!r} failed: {describe(exc)}"
        else:
            verdicts.append(JudgeVerdict(label=use.label, judge=use.text, judgment=judgment, model_calls=tuple(calls)))
            continue
        verdicts.append(JudgeVerdict(label=use.label, judge=use.text, error=failure, model_calls=tuple(calls)))
        return attrs.evolve(
            trajectory, status=Status.VERIFIER_ERROR, judgment=None, error=failure, verdicts=tuple(verdicts)
        )
    judged = {verdict.label: verdict.judgment for verdict in verdicts if verdict.judgment is not None}
    return attrs.evolve(trajectory, judgment=scoring.compose(judged), verdicts=tuple(verdicts))


async def _ask(judge: Any, trajectory: Trajectory, reference: Any, calls: list[ModelCall]) -> Judgment:
    """The judge's verdict: its async method where it has one (a judge that calls a model records each call
    in `calls`), else its synchronous one."""
    ask = getattr(judge, "ajudge_trajectory", None)
    judgment = (
        await ask(trajectory, reference, calls) if ask is not None else judge.judge_trajectory(trajectory, reference)
    )
    if not isinstance(judgment, Judgment):
        msg = f"it returned {type(judgment).__name__}, not a Judgment."
        raise VerifierFailure(msg)
    return judgment


@attrs.define
class Judging:
    """The judges a run puts on its environment, built, and the scoring: what each finished episode goes through
    before it is recorded (`apply`)."""

    judges: list[tuple[JudgeUse, Any]]
    scoring: Scoring
    texts: tuple[str, ...] = ()
    """What asked for the judges (each ``--judge``), so another process can build the same (`check`'s replay)."""
    score: str | None = None
    """What asked for the scoring (``--score``)."""

    @classmethod
    def build(cls, texts: Sequence[str], score: str | None = None, registry: Any = None) -> Judging | None:
        """The judging `texts` (each ``--judge``) and `score` (``--score``) ask for; None where they ask for none.

        Every mistake (an unknown judge or option, a scoring that names no judge) is one sentence, here,
        before any episode."""
        if not texts:
            if score not in (None, NATIVE):
                msg = f"--score {score!r} composes judges' verdicts: add them with --judge."
                raise UsageError(msg)
            return None
        from nenyax.core.plugins import interfaces
        from nenyax.core.plugins.registry import default_registry

        uses = judge_uses(texts)
        scoring = Scoring.parse(score or NATIVE, [use.label for use in uses])
        registry = registry or default_registry()
        judges = [
            (
                u,
                python_judge(u)
                if ":" in u.name
                else interfaces.create(registry, "judge", u.name, u.options, needs=("trajectory",)),
            )
            for u in uses
        ]
        return cls(judges=judges, scoring=scoring, texts=tuple(texts), score=score)

    async def apply(self, trajectory: Trajectory) -> Trajectory:
        """The finished episode, judged by every judge and scored as stated."""
        return await apply_judges(trajectory, self.judges, self.scoring)

    async def aclose(self) -> None:
        """Let each judge that holds connections (a judging model's) close them."""
        for _use, judge in self.judges:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()


def judging_of(judges: Sequence[str] | Judging, score: str | None) -> tuple[Judging | None, bool]:
    """The judging `judges` asks for, and whether it was built here (so is closed here): judges already built
    (`Judging.build`) are used as they are, their scoring with them."""
    if isinstance(judges, Judging):
        if score is not None:
            msg = "Judges built with Judging.build carry their scoring: pass score= to Judging.build, not beside them."
            raise UsageError(msg)
        return judges, False
    return Judging.build(judges, score), True


def python_judge(use: JudgeUse) -> Any:
    """A judge written in Python, named ``module:attribute``: a class (built with the options, like a plugin's
    factory) or a function of the finished trajectory returning a `Judgment`, a score or a bool (passed)."""
    module, _, attribute = use.name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        msg = f"--judge {use.text!r}: {use.name} cannot be imported ({type(exc).__name__}: {exc})."
        raise UsageError(msg) from None
    if inspect.isclass(found):
        judge = found(**use.options)
        if not callable(getattr(judge, "judge_trajectory", None)):
            msg = f"--judge {use.text!r}: {use.name} has no judge_trajectory(trajectory, reference) method."
            raise UsageError(msg)
        return judge
    if not callable(found):
        msg = f"--judge {use.text!r}: {use.name} is neither a judge class nor a function of the trajectory."
        raise UsageError(msg)
    if use.options:
        msg = f"--judge {use.text!r}: a function judge takes no options ({', '.join(use.options)})."
        raise UsageError(msg)
    return FunctionJudge(found, use.name)


class FunctionJudge:
    """A Python function of the finished trajectory as a trajectory judge (sync or async)."""

    def __init__(self, function: Any, name: str) -> None:
        self.function, self.name = function, name

    @property
    def capabilities(self) -> Any:
        """A trajectory judge."""
        from nenyax.core.plugins.judge import JudgeCapabilities

        return JudgeCapabilities(trajectory=True)

    async def ajudge_trajectory(self, trajectory: Trajectory, reference: Any, calls: list[ModelCall]) -> Judgment:
        """The function's verdict: a `Judgment` as it is, a bool as passed (1 or 0), a number as the score."""
        verdict = self.function(trajectory)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if isinstance(verdict, Judgment):
            return verdict
        if isinstance(verdict, bool):
            return Judgment(score=float(verdict), passed=verdict, judge=self.name)
        if isinstance(verdict, int | float):
            return Judgment(score=float(verdict), judge=self.name)
        msg = f"{self.name} returned {type(verdict).__name__}; a judge function returns a Judgment, a number or a bool."
        raise VerifierFailure(msg)
