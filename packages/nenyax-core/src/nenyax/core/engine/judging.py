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

A group judge (the ``group`` capability: core's ``llm-group``) judges the finished episodes of one task
together, relative to each other. A run holds each finished episode, judged by the others, until its whole
group has finished (`GroupBarrier`), then the group judge's verdicts come after the others' and each score
is composed; a lone episode is a group of one.

A judge that raises, times out or gives a verdict it cannot read makes the episode ``verifier_error``: no
score (never 0), every verdict and model call kept. Only an episode the format judged ``ok`` is judged
again: a policy's error keeps its 0, a failure its missing score.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import urllib.parse
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from nenyax.core.contract.failures import describe
from nenyax.core.contract.trajectory import JudgeVerdict, Judgment, ModelCall, Status, Trajectory
from nenyax.core.errors import UsageError, VerifierFailure, did_you_mean

T = TypeVar("T")

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
    trajectory: Trajectory,
    judges: Sequence[tuple[JudgeUse, Any]],
    scoring: Scoring,
    reference: Any = None,
    *,
    compose: bool = True,
) -> Trajectory:
    """`trajectory` judged again by `judges` (each a `JudgeUse` and the judge it built), its score as
    `scoring` composes it; an episode the format did not judge ``ok`` is returned as it is. Without
    `compose` the verdicts are kept and the judgment stays the format's (group judges are still to come)."""
    native = native_judgment(trajectory)
    if native is None or trajectory.status is not Status.OK:
        return trajectory
    seen = attrs.evolve(trajectory, judgment=native, verdicts=())  # what every judge reads
    verdicts = [JudgeVerdict(label=NATIVE, judge=native.judge, judgment=native)]
    for use, judge in judges:
        calls: list[ModelCall] = []
        judgment, failure = await _decided(use, "judge", _ask(judge, seen, reference, calls))
        if failure is None:
            verdicts.append(JudgeVerdict(label=use.label, judge=use.text, judgment=judgment, model_calls=tuple(calls)))
            continue
        verdicts.append(JudgeVerdict(label=use.label, judge=use.text, error=failure, model_calls=tuple(calls)))
        return attrs.evolve(
            trajectory, status=Status.VERIFIER_ERROR, judgment=None, error=failure, verdicts=tuple(verdicts)
        )
    if not compose:
        return attrs.evolve(trajectory, judgment=native, verdicts=tuple(verdicts))
    judged = {verdict.label: verdict.judgment for verdict in verdicts if verdict.judgment is not None}
    return attrs.evolve(trajectory, judgment=scoring.compose(judged), verdicts=tuple(verdicts))


async def apply_group_judges(
    group: Sequence[Trajectory], judges: Sequence[tuple[JudgeUse, Any]], scoring: Scoring, reference: Any = None
) -> list[Trajectory]:
    """The finished episodes of one task (each already through `apply_judges` without composing) judged
    together by the group `judges`, each episode's score then composed by `scoring`. Only the episodes still
    ``ok`` are the group; a group judge that fails makes each of them ``verifier_error``. A group judge's model
    calls are kept on the group's first episode (one call judged them all)."""
    out = list(group)
    members = [i for i, t in enumerate(group) if t.status is Status.OK and native_judgment(t) is not None]
    if not members:
        return out
    seen = [attrs.evolve(group[i], judgment=native_judgment(group[i]), verdicts=()) for i in members]
    added: dict[int, list[JudgeVerdict]] = {i: [] for i in members}
    for use, judge in judges:
        calls: list[ModelCall] = []
        judgments, failure = await _decided(use, "group judge", _ask_group(judge, seen, reference, calls))
        if failure is None:
            assert judgments is not None
            for place, (i, judgment) in enumerate(zip(members, judgments, strict=True)):
                kept = tuple(calls) if place == 0 else ()
                added[i].append(JudgeVerdict(label=use.label, judge=use.text, judgment=judgment, model_calls=kept))
            continue
        for place, i in enumerate(members):
            kept = tuple(calls) if place == 0 else ()
            failed = JudgeVerdict(label=use.label, judge=use.text, error=failure, model_calls=kept)
            out[i] = attrs.evolve(
                out[i],
                status=Status.VERIFIER_ERROR,
                judgment=None,
                error=failure,
                verdicts=(*out[i].verdicts, *added[i], failed),
            )
        return out
    for i in members:
        verdicts = (*out[i].verdicts, *added[i])
        judged = {verdict.label: verdict.judgment for verdict in verdicts if verdict.judgment is not None}
        out[i] = attrs.evolve(out[i], judgment=scoring.compose(judged), verdicts=verdicts)
    return out


async def _decided(use: JudgeUse, what: str, asking: Awaitable[T]) -> tuple[T | None, str | None]:
    """What `asking` (a judge's verdict) gave within the use's timeout, or the one sentence why it gave none:
    whatever a judge raises is the verifier's failure, never a score."""
    try:
        async with asyncio.timeout(use.timeout):
            return await asking, None
    except TimeoutError:
        return None, f"The {what} {use.label!r} did not decide within {use.timeout:g} s."
    except Exception as exc:  # noqa: BLE001 - see the docstring
        return None, f"The {what} {use.label!r} failed: {describe(exc)}"


async def _ask_group(
    judge: Any, trajectories: list[Trajectory], reference: Any, calls: list[ModelCall]
) -> list[Judgment]:
    """The group judge's verdicts, one `Judgment` per episode (its async method where it has one)."""
    ask = getattr(judge, "ajudge_group", None)
    found = await ask(trajectories, reference, calls) if ask is not None else judge.judge_group(trajectories, reference)
    judgments = list(found) if isinstance(found, Sequence) else []
    if len(judgments) != len(trajectories) or not all(isinstance(j, Judgment) for j in judgments):
        msg = f"it returned {found!r:.80}, not one Judgment for each of the group's {len(trajectories)} episodes."
        raise VerifierFailure(msg)
    return judgments


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
    group_judges: list[tuple[JudgeUse, Any]] = attrs.Factory(list)
    """The judges of a whole group (``group`` capability), applied once a group's episodes have all finished."""

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
        judges, group = [], []
        for use in uses:
            judge = (
                python_judge(use) if ":" in use.name else interfaces.create(registry, "judge", use.name, use.options)
            )
            have = interfaces.declared(judge) or _methods(judge)  # a Python class may declare nothing
            if "group" in have:
                group.append((use, judge))
            elif "trajectory" in have:
                judges.append((use, judge))
            else:
                msg = (
                    f"The judge {use.name!r} judges answers only; --judge needs one that judges an episode or a group."
                )
                raise UsageError(msg)
        return cls(judges=judges, scoring=scoring, texts=tuple(texts), score=score, group_judges=group)

    async def apply_each(self, trajectory: Trajectory) -> Trajectory:
        """The finished episode judged by the judges of one episode; composed unless group judges are to come."""
        return await apply_judges(trajectory, self.judges, self.scoring, compose=not self.group_judges)

    async def apply_group(self, group: Sequence[Trajectory]) -> list[Trajectory]:
        """The episodes of one task, each through `apply_each`, judged together by the group judges and composed."""
        if not self.group_judges:
            return list(group)
        return await apply_group_judges(group, self.group_judges, self.scoring)

    async def apply(self, trajectory: Trajectory) -> Trajectory:
        """The finished episode, judged by every judge and scored as stated (a group judge sees it alone: a run
        that plays groups holds them with `grouped`)."""
        return (await self.apply_group([await self.apply_each(trajectory)]))[0]

    def grouped(self, sizes: Mapping[str, int]) -> Judging | GroupBarrier:
        """What judges one run's episodes: with group judges, a `GroupBarrier` over the run's groups (`sizes`: the
        episodes of each group id); else these judges as they are."""
        return GroupBarrier(self, dict(sizes)) if self.group_judges else self

    async def aclose(self) -> None:
        """Let each judge that holds connections (a judging model's) close them."""
        for _use, judge in [*self.judges, *self.group_judges]:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()


def _methods(judge: Any) -> frozenset[str]:
    """The capabilities a judge that declares none has by its methods."""
    found = {"group" for m in ("judge_group", "ajudge_group") if callable(getattr(judge, m, None))}
    found |= {"trajectory" for m in ("judge_trajectory", "ajudge_trajectory") if callable(getattr(judge, m, None))}
    return frozenset(found)


class GroupBarrier:
    """One run's judging when group judges are on: each finished episode waits, judged on its own, until every
    episode of its group has finished; then the group is judged together and each gets its own back.

    A run plays its groups' episodes with enough workers that a waiting episode never keeps a member of its own
    group from starting (`nenyax.core.engine.runner.AsyncioPool`). A run that stops early (a user mistake, an
    interrupt) calls `flush`: the groups then incomplete are judged as they stand, and later episodes alone."""

    def __init__(self, judging: Judging, sizes: dict[str, int]) -> None:
        self.judging, self.sizes = judging, sizes
        self.largest = max(sizes.values(), default=1)
        self._waiting: dict[str, list[tuple[Trajectory, asyncio.Future[Trajectory]]]] = {}
        self._flushed = False

    async def apply(self, trajectory: Trajectory) -> Trajectory:
        """`trajectory` judged, once its whole group has finished."""
        judged = await self.judging.apply_each(trajectory)
        key = trajectory.group_id
        if key is None or self.sizes.get(key, 1) <= 1 or self._flushed:
            return (await self.judging.apply_group([judged]))[0]
        waiting: asyncio.Future[Trajectory] = asyncio.get_running_loop().create_future()
        bucket = self._waiting.setdefault(key, [])
        bucket.append((judged, waiting))
        if len(bucket) >= self.sizes[key]:
            await self._judge(key)
        return await waiting

    async def _judge(self, key: str) -> None:
        bucket = self._waiting.pop(key, [])
        try:
            done = await self.judging.apply_group([judged for judged, _ in bucket])
        except BaseException as exc:
            for _judged, waiting in bucket:
                if not waiting.done():
                    waiting.set_exception(exc)
            raise
        for (_judged, waiting), result in zip(bucket, done, strict=True):
            if not waiting.done():
                waiting.set_result(result)

    def grouped(self, sizes: Mapping[str, int]) -> GroupBarrier:
        """Already one run's: itself (its groups are the ones it was made for)."""
        return self

    async def flush(self) -> None:
        """Judge the groups still incomplete as they stand (the run stopped before they finished)."""
        self._flushed = True
        for key in list(self._waiting):
            await self._judge(key)

    async def aclose(self) -> None:
        """Nothing of its own: the judges are the `Judging`'s, closed by whoever built them."""


def judging_of(
    judges: Sequence[str] | Judging | GroupBarrier, score: str | None
) -> tuple[Judging | GroupBarrier | None, bool]:
    """The judging `judges` asks for, and whether it was built here (so is closed here): judges already built
    (`Judging.build`, or a run's `GroupBarrier`) are used as they are, their scoring with them."""
    if isinstance(judges, Judging | GroupBarrier):
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
        if not any(callable(getattr(judge, m, None)) for m in ("judge_trajectory", "judge_group", "ajudge_group")):
            msg = (
                f"--judge {use.text!r}: {use.name} has no judge_trajectory(trajectory, reference) method "
                "(nor judge_group(trajectories, reference))."
            )
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
