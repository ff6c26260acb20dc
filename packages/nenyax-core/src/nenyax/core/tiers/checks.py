"""The environment checks behind `nenyax check`, one function each, in the order they run.

Each check (a `TierCheck` of the one check framework, `nenyax.core.contract.checking`) has a stable id
(``<tier>/<what>``). It returns its evidence (a sentence), raises `Skip` when it cannot run (which blocks
its tier) or `Fail` with what it tried and what it saw.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import attrs

from nenyax.core.contract import serde
from nenyax.core.contract.checking import Fail, Skip
from nenyax.core.contract.events import NO_OBSERVERS, Observers
from nenyax.core.contract.fidelity import token_fidelity
from nenyax.core.contract.manifest import Manifest, Mode
from nenyax.core.contract.trajectory import Status, Tier, Trajectory
from nenyax.core.engine.answers import CONSTANT_ANSWERS, extract_answer
from nenyax.core.engine.environment import Environment, StepEnvironment
from nenyax.core.engine.loader import load
from nenyax.core.engine.policies import CallablePolicy
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.engine.summary import interval
from nenyax.core.errors import InfraFailure, UsageError, with_article
from nenyax.core.plugins.registry import Registry
from nenyax.core.tiers.elsewhere import other_hash_seed, replay_elsewhere
from nenyax.core.tiers.report import Floor, TierCheck
from nenyax.core.tiers.views import fingerprint, first_view, preview, replay_view

MAX_CONSTANT_LENGTH = 40
"""Gold answers longer than this are not tried as constants (nobody answers a paragraph to everything)."""
MAX_GOLD_CONSTANTS = 10
"""The most common short gold answers of the sampled tasks tried as constants."""
FRESH_PROCESS_TASKS = 5
"""Sampled tasks replayed in the fresh interpreter (hash-dependent generation need not show on every task)."""
REPLAY_TASKS = 3
"""Tasks the seed check plays twice: an environment that only sometimes differs (a wrapped Crafter in 2 runs
of 5 on one task) is caught on one of several far more often."""
MAX_LISTED_TASKS = 10_000
"""Tasks sampled from (the first this many task ids; more are listed as "at least")."""
FLOOR_TASKS = 100
"""Step mode: the tasks the floor's cheap policies play (an episode of a constant costs microseconds), many
more than the reference's sample, so the floor is not flattered by the luck of a small sample."""

EPISODES_AT_ONCE = 4
"""A native loop's episodes the floor plays at once: each mostly waits (on a harness process, a server, a
model), so a verifiers `check` of 4 tasks spends 30 s on its floor instead of 46 (figures: README of
nenyax-adapters-verifiers). Step mode computes rather than waits, and a harness's sandboxes stay one at a time."""

DEFAULT_MARGIN = 0.3
"""How far, by default, the reference's mean score must be above the floor (the best cheap policy's)."""

CheckFn = Callable[["Context"], Awaitable[str]]
"""A check: reads and fills the shared context, returns its evidence."""


@attrs.define
class Context:
    """What the checks of one run share: the loaded environment, the sampled tasks, the episodes played."""

    uri: str
    samples: int
    seed: int
    registry: Registry | None
    margin: float = DEFAULT_MARGIN
    env: Environment | None = None
    tasks: list[str] = attrs.Factory(list)
    floor_tasks: list[str] = attrs.Factory(list)
    """The sampled tasks, then more drawn from the listed ones, up to `FLOOR_TASKS` (step mode's floor)."""
    task_count: int = 0
    cache: dict[str, list[Trajectory]] = attrs.Factory(dict)
    floor: Floor | None = None
    observers: Observers = NO_OBSERVERS
    """Observe every episode a check plays here (not those of the fresh-process replay)."""
    model: Any = None
    """The model of ``check --model``: it plays where the environment offers no built-in policy."""
    judging: Any = None
    """The judges of ``check --judge`` (a `Judging`): every episode is scored as they compose it, so the tier
    is the one reached under them."""

    def need_env(self) -> Environment:
        if self.env is None:
            raise Skip("The environment did not load.")
        return self.env

    def need_tasks(self) -> list[str]:
        self.need_env()
        if not self.tasks:
            raise Skip("The environment lists no tasks to sample.")
        return self.tasks

    def claim(self, capability: str) -> None:
        if not getattr(self.need_env().manifest.capabilities, capability):
            raise Skip(f"The environment does not claim `{capability}`.")

    async def rollout(self, policy: str | Any, task: str) -> Trajectory:
        """One episode of `task` with the run's seed, published to the run's observers."""
        return await self.need_env().arollout(
            policy, task=task, seed=self.seed, observers=self.observers, judges=self.judging or ()
        )

    async def play(self, policy: str | Any, task: str, key: str | None = None) -> Trajectory:
        """Episodes of the built-in policies (and probes, by `key`) are cached: several checks compare them."""
        key = f"{key or policy}\0{task}"
        if key not in self.cache:
            self.cache[key] = [await self.rollout(policy, task)]
        return self.cache[key][0]

    async def play_all(self, plays: list[tuple[str | Any, str, str | None]]) -> list[Trajectory]:
        """`play` of each ``(policy, task, key)``, in that order; a native loop's (rollout mode) up to
        `EPISODES_AT_ONCE` at a time where the environment allows concurrent sessions."""
        env = self.need_env()
        if env.manifest.mode is not Mode.ROLLOUT or not env.manifest.capabilities.concurrent_sessions:
            return [await self.play(policy, task, key) for policy, task, key in plays]
        gate = asyncio.Semaphore(EPISODES_AT_ONCE)

        async def one(policy: str | Any, task: str, key: str | None) -> Trajectory:
            async with gate:
                return await self.play(policy, task, key)

        async with asyncio.TaskGroup() as group:  # one failing episode cancels the rest, as the loop would
            running = [group.create_task(one(*play)) for play in plays]
        return [done.result() for done in running]


def _score(traj: Trajectory, what: str) -> float:
    if traj.status is not Status.OK or traj.judgment is None:
        error = str(traj.error or "no error was recorded").rstrip(".")
        raise Fail(f"The {what} episode of task {traj.task_id} ended {traj.status.value}: {error}.")
    return traj.judgment.score


# ---------------------------------------------------------------- connectable


async def _loads(ctx: Context) -> str:
    try:
        ctx.env = load(ctx.uri, registry=ctx.registry)
    except UsageError:
        raise
    except InfraFailure as exc:
        # A server that cannot be reached says nothing about the environment: not measured, not failed.
        raise Skip(f"Could not connect: {exc}") from exc
    except Exception as exc:
        raise Fail(f"Loading raised {type(exc).__name__}: {exc}") from exc
    return f"Loaded as {type(ctx.env).__name__} ({ctx.env.manifest.mode.value} mode)."


async def _manifest_valid(ctx: Context) -> str:
    env = ctx.need_env()
    manifest = env.manifest
    # Sample tasks first, so the later checks still run (and report) if the manifest is faulty.
    ids = env.task_ids(limit=MAX_LISTED_TASKS)
    ctx.task_count = len(ids)
    ctx.tasks = random.Random(ctx.seed).sample(ids, min(ctx.samples, len(ids)))
    sampled = set(ctx.tasks)
    more = [i for i in random.Random(f"floor:{ctx.seed}").sample(ids, min(FLOOR_TASKS, len(ids))) if i not in sampled]
    ctx.floor_tasks = [*ctx.tasks, *more][: max(FLOOR_TASKS, len(ctx.tasks))]
    again = serde.loads(serde.dumps(manifest), Manifest)
    if again != manifest:
        raise Fail("The manifest does not survive a JSON round trip unchanged.")
    if manifest.uri != ctx.uri:
        raise Fail(f"The manifest's uri {manifest.uri!r} differs from the URI loaded ({ctx.uri!r}).")
    for split in manifest.splits:
        if split.count is not None and split.count < 0:
            raise Fail(f"Split {split.name!r} has a negative task count.")
    if len(set(ids)) != len(ids):
        raise Fail("Task ids are not unique.")
    caps = manifest.capabilities
    if caps.tools != bool(manifest.tools):
        listed = ", ".join(manifest.tools) or "none"
        raise Fail(f"The manifest claims tools={caps.tools} but lists these tools: {listed}.")
    if caps.max_turns is not None and caps.max_turns < 1:
        raise Fail(f"The manifest claims max_turns={caps.max_turns}; an episode takes at least one turn.")
    version = f"{manifest.format} {manifest.format_version}"
    evidence = f"Valid {version} manifest, digest {env.digest[:19]}, {len(ids)} task ids listed."
    # Rows whose gold answer is unusable are left out of the tasks (and so of the audit): say so, naming one.
    bad = getattr(env, "bad_rows", ())
    if bad:
        evidence += f" {len(bad)} row(s) left out for bad gold answers, e.g.: {bad[0].sentence}"
    return evidence


async def _episode_starts(ctx: Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    if isinstance(env, StepEnvironment):
        session = await env.asession(task=task, seed=ctx.seed)
        try:
            if session.done:
                raise Fail(f"A new session of {task} is already done.")
            kind = type(session.observation).__name__
        finally:
            await session.aclose()
        return f"Session of {task} opened with {with_article(kind)} observation."
    traj = await ctx.play(_playable_policy(ctx), task)
    if traj.status in (Status.ENV_ERROR, Status.INFRA_ERROR):
        raise Fail(f"An episode of {task} could not start: {traj.error}")
    return f"An episode of {task} started ({traj.status.value})."


# ---------------------------------------------------------------- evaluable


def _playable_policy(ctx: Context, *, model: bool = True) -> Any:
    """The policy that plays the plain episodes: a built-in one the environment claims, else (where `model`)
    the model of ``check --model`` (an environment only a model can play, such as a perplexity task).
    Replays need a built-in one: a model samples anew each time, and cannot travel to another process."""
    caps = ctx.need_env().manifest.capabilities
    # The null policy first: the plainest full episode. Garbage input is the audit's business.
    for name, ok in (("null", caps.null_policy), ("random", caps.random_policy), ("reference", caps.reference_policy)):
        if ok:
            return name
    if model and ctx.model is not None:
        return ctx.model
    raise Skip(
        "The environment offers no built-in policy (random, null or reference) to play an episode; "
        "`nenyax check URI --model M` plays it with a model."
    )


def _name(policy: Any) -> str:
    info = getattr(policy, "info", None)
    return str(info.name) if info is not None else str(policy)


async def _episode_completes(ctx: Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    player = _playable_policy(ctx)
    policy = _name(player)
    traj = await ctx.play(player, task)
    score = _score(traj, policy)
    if not math.isfinite(score):
        raise Fail(f"The judgment's score is {score}.")
    # The turn claims are checked on what the episode did: actions in step mode, model calls otherwise.
    caps = env.manifest.capabilities
    turns = len(traj.steps) if traj.mode is Mode.STEP else len(traj.model_calls)
    what = "step(s)" if traj.mode is Mode.STEP else "model call(s)"
    if not caps.multi_turn and turns > 1:
        raise Fail(f"The {policy} episode of {task} took {turns} {what}, but the environment claims not multi_turn.")
    if caps.max_turns is not None and turns > caps.max_turns:
        raise Fail(f"The {policy} episode of {task} took {turns} {what}, past the claimed max_turns {caps.max_turns}.")
    return f"A {policy} episode of {task} finished ok in {turns} {what} with score {score:g}."


# ---------------------------------------------------------------- trainable


async def _seed_recreates(ctx: Context) -> str:
    env = ctx.need_env()
    caps = env.manifest.capabilities
    if not (caps.seeded or caps.stable_task_ids):
        raise Skip("The environment claims neither `seeded` nor `stable_task_ids`.")
    tasks = ctx.need_tasks()[:REPLAY_TASKS]
    policy = _playable_policy(ctx, model=False)
    for task in tasks:
        # The first episode may be one another check played already; the second is always new.
        first = await ctx.play(policy, task)
        second = await ctx.rollout(policy, task)
        for traj in (first, second):
            _score(traj, policy)
        # The episode's own seed, as the environment was given it (the check's seed only chose the tasks).
        seeded = f"{task} (episode seed {first.seed})" if first.seed is not None else task
        if first_view(first) != first_view(second):
            raise Fail(
                f"Two episodes of {seeded} started from different observations "
                f"({preview(first)} then {preview(second)})."
            )
        if replay_view(first) != replay_view(second) or first.score != second.score:
            raise Fail(
                f"The same actions on {seeded} gave different steps or scores "
                f"(episode {fingerprint(replay_view(first))} scored {first.score:g}, "
                f"then {fingerprint(replay_view(second))} scored {second.score:g})."
            )
    return f"Two {policy} episodes of each of {len(tasks)} task(s) matched step for step."


async def _fresh_process(ctx: Context) -> str:
    env = ctx.need_env()
    caps = env.manifest.capabilities
    if not (caps.seeded or caps.stable_task_ids):
        raise Skip("The environment claims neither `seeded` nor `stable_task_ids`, so there is nothing to replay.")
    tasks = ctx.need_tasks()[:FRESH_PROCESS_TASKS]
    # The reference's actions show the task's hidden state too (its gold answer), not only its start.
    policy = "reference" if caps.reference_policy else _playable_policy(ctx, model=False)
    here = {task: await ctx.play(policy, task) for task in tasks}
    for traj in here.values():
        _score(traj, policy)
    if env.source is None:  # a plugin object that cannot be pickled lives only here
        raise Skip(f"The plugins of this check cannot travel to a fresh interpreter ({env.source_problem}).")
    sources = env.source.plugins
    hash_seed = other_hash_seed()
    request = {"source": env.source.to_data(), "policy": policy, "tasks": tasks, "seed": ctx.seed}
    if ctx.judging is not None:  # the score compared is the judged one: the judges are built there too
        request["judges"], request["score"] = list(ctx.judging.texts), ctx.judging.score
    try:
        answer = await replay_elsewhere(request, hash_seed)
    except RuntimeError as exc:
        raise Skip(f"No fresh interpreter could replay the tasks of {ctx.uri}: {exc}") from exc
    where = f"a fresh interpreter (PYTHONHASHSEED={hash_seed})"
    if "error" in answer:
        error = answer["error"]
        if error.startswith(("ModuleNotFoundError", "ImportError", "AttributeError", "PicklingError")) and sources:
            raise Skip(f"The plugins of this check live only in this process; {where} failed with {error}.")
        raise Fail(f"In {where}, loading {ctx.uri} and replaying {', '.join(tasks)} failed: {error}.")
    if answer["digest"] != env.digest:
        raise Fail(f"The manifest digest differs in {where}: {answer['digest'][:19]} there, {env.digest[:19]} here.")
    for task, traj in here.items():
        there = answer["episodes"][task]
        if there["first"] != fingerprint(first_view(traj)):
            raise Fail(
                f"In {where}, task {task} with seed {ctx.seed} starts from another observation: "
                f"{there['preview']} there, {preview(traj)} here."
            )
        if there["replay"] != fingerprint(replay_view(traj)) or there["score"] != traj.score:
            raise Fail(
                f"In {where}, the {policy} policy on {task} (seed {ctx.seed}) played other steps: episode "
                f"{there['replay']} scoring {there['score']:g} there, {fingerprint(replay_view(traj))} scoring "
                f"{traj.score:g} here."
            )
    return f"A{where[1:]} replayed {len(here)} {policy} episode(s) step for step, with the same manifest digest."


async def _model_path_recorded(ctx: Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    traj = await ctx.play(_playable_policy(ctx), task)
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        with JsonlSink(path) as sink:
            sink.write(traj)
        back = list(read_trajectories(path))
    if back != [traj]:
        field, wrote, read = _first_difference(traj, back[0] if back else None)
        raise Fail(
            f"A trajectory of {traj.task_id} written to JSONL does not read back equal: its {field} was "
            f"{_short(wrote)} and reads back as {_short(read)}."
        )
    if not traj.policy.kind or traj.manifest_digest != env.digest or traj.env_uri != env.uri:
        raise Fail(
            f"The trajectory of {traj.task_id} records policy {traj.policy.kind!r}, URI {traj.env_uri!r} and digest "
            f"{traj.manifest_digest[:19]}, not the environment's {env.uri!r} and {env.digest[:19]}."
        )
    if traj.task_id is None and traj.seed is None:
        raise Fail(f"A {traj.policy.kind} trajectory of {env.uri} records neither a task id nor a seed.")
    recorded = f"policy {traj.policy.kind!r}, task {traj.task_id}, seed {traj.seed}"
    return f"Recorded {recorded} and the manifest digest; the JSONL round trip is equal."


def _first_difference(wrote: Trajectory, read: Trajectory | None) -> tuple[str, Any, Any]:
    if read is None:
        return "record", "one trajectory", "nothing"
    for field in attrs.fields(Trajectory):
        a, b = getattr(wrote, field.name), getattr(read, field.name)
        if a != b:
            if field.name == "steps":
                index = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y) if a and b else 0
                return f"step {index}", a[index] if a else None, b[index] if b else None
            return field.name, a, b
    return "record", wrote, read


def _short(value: Any, width: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _raises(exc: Exception) -> Callable[[Any], Any]:
    def policy(_observation: Any) -> Any:
        raise exc

    return policy


async def _failures_classified(ctx: Context) -> str:
    task = ctx.need_tasks()[0]
    _playable_policy(ctx, model=False)  # the probes are in-process policies: one that only a model can play skips
    raising = CallablePolicy(_raises(RuntimeError("deliberate policy failure")), name="check probe: a raising policy")
    broken = await ctx.rollout(raising, task)
    if broken.status is not Status.POLICY_ERROR or broken.score != 0.0:
        raise Fail(
            f"A raising policy gave status {broken.status.value} and score {broken.score}, not policy_error scored 0."
        )
    outage = CallablePolicy(_raises(InfraFailure("deliberate outage")), name="check probe: an infrastructure outage")
    infra = await ctx.rollout(outage, task)
    if infra.status is not Status.INFRA_ERROR or infra.judgment is not None:
        raise Fail(
            f"An infrastructure failure gave status {infra.status.value} and judgment {infra.judgment}; "
            "it must be infra_error, unjudged."
        )
    return "A raising policy is policy_error scored 0; an infrastructure failure is infra_error with no score."


# ---------------------------------------------------------------- audited


def _sign_test(wins: int, losses: int) -> float:
    """One-sided sign test: the chance of at least `wins` wins in `wins + losses` fair coin flips."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n if n else 1.0


async def _reference_beats_null(ctx: Context) -> str:
    ctx.claim("reference_policy")
    ctx.claim("null_policy")
    stochastic = ctx.need_env().manifest.capabilities.stochastic
    refs, nulls = [], []
    for task in ctx.need_tasks():
        played = await ctx.play("reference", task)
        ref = _score(played, "reference")
        null = _score(await ctx.play("null", task), "null")
        if ref < null or (ref == null and not stochastic):
            # The judge's own words on the reference's reply often say why (an environment's hint included).
            feedback = played.judgment.feedback if played.judgment else ""
            said = f" Its judge said: {feedback.rstrip('.')}." if feedback else ""
            raise Fail(
                f"On {task} (seed {ctx.seed}) the reference scored {ref:g}, not above the null policy's {null:g}.{said}"
            )
        refs.append(ref)
        nulls.append(null)
    sampled = f"{len(refs)} of {_count(ctx)} tasks"
    if stochastic:
        wins = sum(r > n for r, n in zip(refs, nulls, strict=True))
        losses = sum(r < n for r, n in zip(refs, nulls, strict=True))
        p = _sign_test(wins, losses)
        if not sum(refs) > sum(nulls):
            raise Fail(f"The reference did not beat the null policy on average over {sampled} (sign test p={p:.3g}).")
        return (
            f"Stochastic: the reference was never below the null policy over {sampled} and beat it on {wins} "
            f"(sign test p={p:.3g}: {'confident' if p < 0.05 else 'not yet confident; sample more tasks'})."
        )
    return f"The reference beat the null policy on all {sampled} (mean {_mean(refs):.2f} against {_mean(nulls):.2f})."


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _count(ctx: Context) -> str:
    return f"at least {ctx.task_count}" if ctx.task_count >= MAX_LISTED_TASKS else str(ctx.task_count)


def _label(action: Any) -> str:
    """How a constant shows in a sentence: the answer inside answer tags, else the action itself."""
    text = extract_answer(action) if isinstance(action, str) else action
    return repr(text)


async def _probes(ctx: Context, env: Environment) -> list[tuple[str, Any]]:
    """The cheap policies the floor is the best of: the null and random policies, and constant actions."""
    probes: list[tuple[str, Any]] = []
    caps = env.manifest.capabilities
    if caps.null_policy:
        probes.append(("the null policy", "null"))
    if caps.random_policy:
        probes.append(("random garbage", "random"))
    if env.manifest.mode is Mode.TASK:
        return probes  # a harness runs agents, not answers: its floor is doing nothing, or garbage
    constants: list[Any] = []
    if isinstance(env, StepEnvironment):
        session = await env.asession(task=ctx.tasks[0], seed=ctx.seed)
        try:
            constants.extend(session.constant_actions() or ())
        finally:
            await session.aclose()
    else:
        constants.extend(CONSTANT_ANSWERS)
    golds = [gold for task in ctx.tasks if (gold := _gold(await ctx.play("reference", task))) is not None]
    short = [g for g in golds if isinstance(g, str) and len(extract_answer(g)) <= MAX_CONSTANT_LENGTH]
    common = Counter(short).most_common(MAX_GOLD_CONSTANTS)
    constants.extend(gold for gold, _count in common)
    seen: set[str] = set()
    for constant in constants:
        key = repr(constant)
        if key not in seen:
            seen.add(key)
            name = f"a constant {'answer' if isinstance(constant, str) else 'action'} {_label(constant)}"
            probes.append((name, CallablePolicy(_constant(constant), name=f"check probe: {name}")))
    return probes


def _gold(traj: Trajectory) -> Any:
    """What the reference answered: its first action (step mode), or its last reply's text (rollout mode,
    where the reference answers the loop's model calls), so a constant gold answer is probed in both."""
    if traj.steps:
        return traj.steps[0].action
    if traj.model_calls:
        content = traj.model_calls[-1].response.get("content")
        return content if isinstance(content, str) else None
    return None


def _constant(value: Any) -> Callable[[Any], Any]:
    def constant(_observation: Any) -> Any:
        return value

    return constant


async def _reference_beats_floor(ctx: Context) -> str:
    env = ctx.need_env()
    ctx.claim("reference_policy")
    tasks = ctx.need_tasks()
    refs = [_score(traj, "reference") for traj in await ctx.play_all([("reference", task, None) for task in tasks])]
    reference = _mean(refs)
    # Step mode's cheap policies play many more tasks; a native loop's or a harness's episode costs too much,
    # and so does any episode a put-on judge (often a model) must read.
    many = isinstance(env, StepEnvironment) and ctx.judging is None
    floor_tasks = ctx.floor_tasks or tasks if many else tasks
    best_name, best, upper = "", -math.inf, -math.inf  # upper: the 95% upper bound of the best floor
    probes = await _probes(ctx, env)
    played = iter(await ctx.play_all([(policy, task, name) for name, policy in probes for task in floor_tasks]))
    for name, _policy in probes:
        scores = []
        for task in floor_tasks:
            traj = next(played)
            if traj.status is Status.VERIFIER_ERROR:
                raise Fail(f"The verifier crashed on {name} for {task} instead of scoring it: {traj.error}")
            # A cheap policy the environment refuses (policy_error) is judged 0, as any failing policy is.
            scores.append(
                traj.judgment.score if traj.status is Status.POLICY_ERROR and traj.judgment else _score(traj, name)
            )
        if _mean(scores) > best:
            bounds, _method = interval(scores)
            best_name, best = name, _mean(scores)
            upper = bounds[1] if bounds is not None else best
    if best_name == "":
        raise Skip("The environment offers no cheap policy (null, random or constant) to measure a floor with.")
    # A margin is a share of the score range where the environment declares one; otherwise raw score units.
    # It is measured from the floor's mean over its (many) tasks; the floor's 95% upper bound is reported
    # beside it, so a reader sees how far the floor might really reach.
    score_range = env.manifest.score_range
    width = score_range[1] - score_range[0] if score_range and score_range[1] > score_range[0] else 1.0
    margin = (reference - best) / width
    ctx.floor = Floor(
        probe=best_name,
        score=best,
        reference=reference,
        margin=margin,
        required=ctx.margin,
        tasks=len(tasks),
        upper=upper,
        floor_tasks=len(floor_tasks),
    )
    said = (
        f"{best_name}, averaging {best:.2f} over {len(floor_tasks)} tasks (at most {upper:.2f}, 95% upper bound), "
        f"against the reference's {reference:.2f} over {len(tasks)} of {_count(ctx)} tasks"
    )
    units = "" if score_range else " (in raw score units: the environment declares no score range)"
    if margin < ctx.margin:
        required = f"{ctx.margin:.2f} is required"
        # Under a put-on judge, a cheap policy it rewards is that judge's failure: named, with the scoring.
        under = f" under {_judged_by(ctx.judging)}" if ctx.judging is not None else ""
        raise Fail(f"Not discriminating{under}: the floor is {said}, a margin of {margin:.2f}{units} where {required}.")
    return f"The floor is {said}: a margin of {margin:.2f}{units} ({ctx.margin:.2f} required)."


def _judged_by(judging: Any) -> str:
    """The judges and scoring of ``check --judge``, in words."""
    judges = " and ".join(f"--judge {text}" for text in judging.texts)
    return f"{judges} (score: {judging.score})"


def _check(check_id: str, tier: Tier, run: CheckFn, summary: str, openenv: str | None = None) -> TierCheck:
    return TierCheck(id=check_id, summary=summary, run=run, tier=tier, openenv=openenv)


CHECKS: tuple[TierCheck, ...] = (
    _check("connectable/loads", Tier.CONNECTABLE, _loads, "the URI loads", "runtime.startup"),
    _check("connectable/manifest-valid", Tier.CONNECTABLE, _manifest_valid, "the manifest is valid", "static.manifest"),
    _check("connectable/episode-starts", Tier.CONNECTABLE, _episode_starts, "an episode starts"),
    _check(
        "evaluable/episode-completes",
        Tier.EVALUABLE,
        _episode_completes,
        "an episode ends with a finite score, within the turns claimed",
        "runtime.reward_well_formed",
    ),
    _check(
        "trainable/seed-recreates",
        Tier.TRAINABLE,
        _seed_recreates,
        "the same seed plays the same episode",
        "runtime.episode_determinism",
    ),
    _check("trainable/fresh-process", Tier.TRAINABLE, _fresh_process, "a fresh interpreter replays the episodes"),
    _check(
        "trainable/model-path-recorded",
        Tier.TRAINABLE,
        _model_path_recorded,
        "a trajectory records what played it and survives JSONL",
        "runtime.trajectory_record",
    ),
    _check(
        "trainable/failures-classified",
        Tier.TRAINABLE,
        _failures_classified,
        "a policy's failure and an outage are told apart",
    ),
    _check(
        "audited/reference-beats-null",
        Tier.AUDITED,
        _reference_beats_null,
        "the reference scores above the null policy",
        "semantic.floor_gap",
    ),
    _check(
        "audited/reference-beats-floor",
        Tier.AUDITED,
        _reference_beats_floor,
        "the reference clears the best cheap policy by the margin",
        "semantic.canary_floor",
    ),
)
"""Every check in the order it runs (a `TierCheck` unpacks as ``(id, tier, run, openenv)`` for one minor version)."""


# ---------------------------------------------------------------- a model on the environment (``--model``)


async def token_fidelity_check(ctx: Context, model: Any) -> str:
    """One episode of the first sampled task with `model` (an `Endpoint`): are its token ids faithful?

    Passes when every call's completion ids decode to its text and each prompt extends the call before
    (`nenyax.core.contract.fidelity`); fails naming the first call where that breaks; is skipped when it
    cannot be known (the server returns no token ids, or no tokenizer is at hand to decode them).
    """
    task = ctx.need_tasks()[0]
    traj = await ctx.rollout(model, task)
    name = traj.policy.name
    if not traj.model_calls:
        raise Skip(f"The {traj.status.value} episode of task {traj.task_id} with {name} made no model calls.")
    verdict = token_fidelity(traj.model_calls, getattr(model, "detokenize", None))
    single = "" if verdict.calls > 1 else " (one call, so only its decoding was checked: the episode is single-turn)"
    where = f"An episode of task {traj.task_id} with {name} made {verdict.calls} call(s){single}"
    if verdict.faithful is None:
        raise Skip(f"{where}; token fidelity is not known: {verdict.reason}")
    if not verdict.faithful:
        raise Fail(f"{where}; {verdict.reason}")
    return f"{where}: {verdict.reason}"


async def _token_fidelity(ctx: Context) -> str:
    return await token_fidelity_check(ctx, ctx.model)


MODEL_CHECKS: tuple[TierCheck, ...] = (
    _check("trainable/token-fidelity", Tier.TRAINABLE, _token_fidelity, "the model's token ids are faithful"),
)
"""Checks of a model on the environment (``nenyax check --model``): reported beside the tier checks, never
part of the environment's tier (they measure the model and its chat template as much as the environment)."""
