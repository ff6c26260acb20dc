"""`nenyax check`: run an environment and record the highest tier it actually reaches.

Each check has a stable id (``<tier>/<what>``), an outcome, evidence and a time. A check that
cannot run is *skipped*, and a skipped or failed check blocks its tier and every tier above it.
"""

from __future__ import annotations

import enum
import math
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import attrs

from nenyax.core import serde
from nenyax.core._sync import run_sync
from nenyax.core.environment import Environment, StepEnvironment
from nenyax.core.errors import InfraFailure, UsageError
from nenyax.core.loader import load
from nenyax.core.manifest import Manifest
from nenyax.core.policies import CallablePolicy
from nenyax.core.registry import Registry
from nenyax.core.runs import Sink, read_trajectories
from nenyax.core.trajectory import Status, Tier, Trajectory


class Outcome(enum.Enum):
    """What happened to one check."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@attrs.frozen(kw_only=True)
class CheckResult:
    """One check's outcome and the evidence for it."""

    id: str
    """Stable id, ``<tier>/<what>``."""
    tier: Tier
    outcome: Outcome
    evidence: str
    """What was observed, in a sentence or two."""
    seconds: float
    openenv: str | None = None
    """The matching OpenEnv environment-validation check id, where one exists."""


@attrs.frozen(kw_only=True)
class CheckReport:
    """Every check run on one environment and the tier it reached."""

    uri: str
    tier: Tier
    results: tuple[CheckResult, ...]
    manifest: Manifest | None = None
    samples: int = 0
    seed: int = 0
    schema_version: int = 1

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        """Checks that ran and failed."""
        return tuple(r for r in self.results if r.outcome is Outcome.FAILED)


class _Skip(Exception):
    """Raised inside a check that cannot run; its message is the evidence."""


class _Fail(Exception):
    """Raised inside a check that ran and found a problem; its message is the evidence."""


CheckFn = Callable[["_Context"], Awaitable[str]]


@attrs.define
class _Context:
    uri: str
    samples: int
    seed: int
    registry: Registry | None
    env: Environment | None = None
    tasks: list[str] = attrs.Factory(list)
    cache: dict[str, list[Trajectory]] = attrs.Factory(dict)

    def need_env(self) -> Environment:
        if self.env is None:
            raise _Skip("The environment did not load.")
        return self.env

    def need_tasks(self) -> list[str]:
        self.need_env()
        if not self.tasks:
            raise _Skip("The environment lists no tasks to sample.")
        return self.tasks

    def claim(self, capability: str) -> None:
        if not getattr(self.need_env().manifest.capabilities, capability):
            raise _Skip(f"The environment does not claim `{capability}`.")

    async def play(self, policy: str, task: str) -> Trajectory:
        """Episodes of the built-in policies are cached: several checks compare the same ones."""
        key = f"{policy}\0{task}"
        if key not in self.cache:
            self.cache[key] = [await self.need_env().arollout(policy, task=task, seed=self.seed)]
        return self.cache[key][0]


def _score(traj: Trajectory, what: str) -> float:
    if traj.status is not Status.OK or traj.judgment is None:
        raise _Fail(f"The {what} episode of task {traj.task_id} ended {traj.status.value}: {traj.error}.")
    return traj.judgment.score


# ---------------------------------------------------------------- connectable


async def _loads(ctx: _Context) -> str:
    try:
        ctx.env = load(ctx.uri, registry=ctx.registry)
    except UsageError:
        raise
    except InfraFailure as exc:  # the server is down or unreachable: nothing was measured, so skip
        raise _Skip(str(exc)) from exc
    except Exception as exc:
        raise _Fail(f"Loading raised {type(exc).__name__}: {exc}") from exc
    return f"Loaded as {type(ctx.env).__name__} ({ctx.env.manifest.mode.value} mode)."


async def _manifest_valid(ctx: _Context) -> str:
    env = ctx.need_env()
    manifest = env.manifest
    # Sample tasks first, so the later checks still run (and report) if the manifest is faulty.
    ids = env.task_ids(limit=1000)
    ctx.tasks = random.Random(ctx.seed).sample(ids, min(ctx.samples, len(ids)))
    again = serde.loads(serde.dumps(manifest), Manifest)
    if again != manifest:
        raise _Fail("The manifest does not survive a JSON round trip unchanged.")
    if manifest.uri != ctx.uri:
        raise _Fail(f"The manifest's uri {manifest.uri!r} differs from the URI loaded ({ctx.uri!r}).")
    for split in manifest.splits:
        if split.count is not None and split.count < 0:
            raise _Fail(f"Split {split.name!r} has a negative task count.")
    if len(set(ids)) != len(ids):
        raise _Fail("Task ids are not unique.")
    version = f"{manifest.format} {manifest.format_version}"
    return f"Valid {version} manifest, digest {manifest.digest[:19]}, {len(ids)} task ids listed."


async def _episode_starts(ctx: _Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    if isinstance(env, StepEnvironment):
        session = await env.asession(task=task, seed=ctx.seed)
        try:
            if session.done:
                raise _Fail(f"A new session of {task} is already done.")
            kind = type(session.observation).__name__
        finally:
            await session.aclose()
        return f"Session of {task} opened with a {kind} observation."
    traj = await ctx.play("null", task)
    if traj.status in (Status.ENV_ERROR, Status.INFRA_ERROR):
        raise _Fail(f"An episode of {task} could not start: {traj.error}")
    return f"An episode of {task} started ({traj.status.value})."


# ---------------------------------------------------------------- evaluable


def _playable_policy(env: Environment) -> str:
    caps = env.manifest.capabilities
    # The null policy first: the plainest full episode. Garbage input is the audit's business.
    for name, ok in (("null", caps.null_policy), ("random", caps.random_policy), ("reference", caps.reference_policy)):
        if ok:
            return name
    raise _Skip("The environment offers no built-in policy (random, null or reference) to play an episode.")


async def _episode_completes(ctx: _Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    policy = _playable_policy(env)
    traj = await ctx.play(policy, task)
    score = _score(traj, policy)
    if not math.isfinite(score):
        raise _Fail(f"The judgment's score is {score}.")
    return f"A {policy} episode of {task} finished ok in {len(traj.steps)} step(s) with score {score:g}."


# ---------------------------------------------------------------- trainable


def _replay_view(traj: Trajectory) -> bytes:
    # The steps as one canonical JSON document: through serde's Step hook (plain JSON passes
    # straight to orjson), not cattrs walking every number of every observation.
    return serde.canonical_json(traj.steps)


async def _seed_recreates(ctx: _Context) -> str:
    env = ctx.need_env()
    caps = env.manifest.capabilities
    if not (caps.seeded or caps.stable_task_ids):
        raise _Skip("The environment claims neither `seeded` nor `stable_task_ids`.")
    task = ctx.need_tasks()[0]
    policy = _playable_policy(env)
    first = await env.arollout(policy, task=task, seed=ctx.seed)
    second = await env.arollout(policy, task=task, seed=ctx.seed)
    for traj in (first, second):
        _score(traj, policy)
    if serde.canonical_json(first.steps[:1]) != serde.canonical_json(second.steps[:1]):
        raise _Fail(f"Two episodes of {task} with seed {ctx.seed} started from different observations.")
    if _replay_view(first) != _replay_view(second) or first.score != second.score:
        raise _Fail(f"The same actions on {task} with seed {ctx.seed} gave different steps or scores.")
    return f"Two {policy} episodes of {task} (seed {first.seed}) matched step for step, score {first.score:g}."


async def _model_path_recorded(ctx: _Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    traj = await ctx.play(_playable_policy(env), task)
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        with Sink(path) as sink:
            sink.write(traj)
        back = list(read_trajectories(path))
    if back != [traj]:
        raise _Fail("A trajectory written to JSONL does not read back equal.")
    if not traj.policy.kind or traj.manifest_digest != env.manifest.digest or traj.env_uri != env.uri:
        raise _Fail("The trajectory does not record its policy, environment URI and manifest digest.")
    if traj.task_id is None and traj.seed is None:
        raise _Fail("The trajectory records neither a task id nor a seed.")
    recorded = f"policy {traj.policy.kind!r}, task {traj.task_id}, seed {traj.seed}"
    return f"Recorded {recorded} and the manifest digest; the JSONL round trip is equal."


def _raises(exc: Exception) -> Callable[[Any], Any]:
    def policy(_observation: Any) -> Any:
        raise exc

    return policy


async def _failures_classified(ctx: _Context) -> str:
    env = ctx.need_env()
    task = ctx.need_tasks()[0]
    broken = await env.arollout(
        CallablePolicy(_raises(RuntimeError("deliberate policy failure"))), task=task, seed=ctx.seed
    )
    if broken.status is not Status.POLICY_ERROR or broken.score != 0.0:
        raise _Fail(
            f"A raising policy gave status {broken.status.value} and score {broken.score}, not policy_error scored 0."
        )
    infra = await env.arollout(CallablePolicy(_raises(InfraFailure("deliberate outage"))), task=task, seed=ctx.seed)
    if infra.status is not Status.INFRA_ERROR or infra.judgment is not None:
        raise _Fail(
            f"An infrastructure failure gave status {infra.status.value} and judgment {infra.judgment}; "
            "it must be infra_error, unjudged."
        )
    return "A raising policy is policy_error scored 0; an infrastructure failure is infra_error with no score."


# ---------------------------------------------------------------- audited


async def _reference_beats_null(ctx: _Context) -> str:
    ctx.claim("reference_policy")
    ctx.claim("null_policy")
    stochastic = ctx.need_env().manifest.capabilities.stochastic
    refs, nulls = [], []
    for task in ctx.need_tasks():
        ref = _score(await ctx.play("reference", task), "reference")
        null = _score(await ctx.play("null", task), "null")
        if ref < null or (ref == null and not stochastic):
            raise _Fail(f"On {task} the reference scored {ref:g}, not above the null policy's {null:g}.")
        refs.append(ref)
        nulls.append(null)
    pairs = ", ".join(f"{r:g}/{n:g}" for r, n in zip(refs, nulls, strict=True))
    if stochastic:
        if not sum(refs) > sum(nulls):
            raise _Fail(f"The reference did not beat the null policy on average (reference/null: {pairs}).")
        return f"Stochastic: reference never below null and above it on average (reference/null: {pairs})."
    return f"Reference beat null on all {len(refs)} sampled tasks (reference/null: {pairs})."


async def _garbage_below_reference(ctx: _Context) -> str:
    ctx.claim("reference_policy")
    ctx.claim("random_policy")
    refs, garbage = [], []
    for task in ctx.need_tasks():
        refs.append(_score(await ctx.play("reference", task), "reference"))
        junk = await ctx.play("random", task)
        if junk.status is Status.VERIFIER_ERROR:
            raise _Fail(f"The verifier crashed on a garbage answer to {task} instead of scoring it: {junk.error}")
        garbage.append(_score(junk, "random"))
    mean_ref, mean_garbage = sum(refs) / len(refs), sum(garbage) / len(garbage)
    if not mean_garbage < mean_ref:
        raise _Fail(
            f"Random (garbage) actions scored {mean_garbage:g} on average, as high as the reference's {mean_ref:g}."
        )
    return f"Random (garbage) actions averaged {mean_garbage:g}, below the reference's {mean_ref:g}."


CHECKS: tuple[tuple[str, Tier, CheckFn, str | None], ...] = (
    ("connectable/loads", Tier.CONNECTABLE, _loads, "runtime.startup"),
    ("connectable/manifest-valid", Tier.CONNECTABLE, _manifest_valid, "static.manifest"),
    ("connectable/episode-starts", Tier.CONNECTABLE, _episode_starts, None),
    ("evaluable/episode-completes", Tier.EVALUABLE, _episode_completes, "runtime.reward_well_formed"),
    ("trainable/seed-recreates", Tier.TRAINABLE, _seed_recreates, "runtime.episode_determinism"),
    ("trainable/model-path-recorded", Tier.TRAINABLE, _model_path_recorded, "runtime.trajectory_record"),
    ("trainable/failures-classified", Tier.TRAINABLE, _failures_classified, None),
    ("audited/reference-beats-null", Tier.AUDITED, _reference_beats_null, "semantic.floor_gap"),
    ("audited/garbage-below-reference", Tier.AUDITED, _garbage_below_reference, "semantic.canary_floor"),
)
"""Every check in the order it runs: (id, tier, function, OpenEnv validation id)."""


def reached_tier(results: tuple[CheckResult, ...]) -> Tier:
    """The highest tier whose checks, and all checks below it, passed."""
    reached = Tier.NONE
    for tier in sorted({r.tier for r in results}):
        if any(r.outcome is not Outcome.PASSED for r in results if r.tier == tier):
            break
        reached = tier
    return reached


async def acheck(uri: str, *, samples: int = 5, seed: int = 0, registry: Registry | None = None) -> CheckReport:
    """Run every check on `uri`; user mistakes (bad URI, unknown format) raise `UsageError`."""
    if samples < 1:
        msg = f"--samples must be at least 1, got {samples}."
        raise UsageError(msg)
    ctx = _Context(uri=uri, samples=samples, seed=seed, registry=registry)
    results = []
    try:
        for check_id, tier, fn, openenv in CHECKS:
            started = time.perf_counter()
            try:
                evidence, outcome = await fn(ctx), Outcome.PASSED
            except _Skip as exc:
                evidence, outcome = str(exc), Outcome.SKIPPED
            except _Fail as exc:
                evidence, outcome = str(exc), Outcome.FAILED
            except UsageError as exc:
                if check_id == "connectable/loads":
                    raise
                # The environment refused its own task ids or a policy it claims: the adapter's bug.
                evidence, outcome = f"The environment refused what it advertises: {exc}", Outcome.FAILED
            except Exception as exc:
                evidence, outcome = f"The check raised {type(exc).__name__}: {exc}", Outcome.FAILED
            results.append(
                CheckResult(
                    id=check_id,
                    tier=tier,
                    outcome=outcome,
                    evidence=evidence,
                    seconds=time.perf_counter() - started,
                    openenv=openenv,
                )
            )
    finally:
        if ctx.env is not None:
            ctx.env.close()
    done = tuple(results)
    return CheckReport(
        uri=uri,
        tier=reached_tier(done),
        results=done,
        manifest=ctx.env.manifest if ctx.env else None,
        samples=samples,
        seed=seed,
    )


def check(uri: str, *, samples: int = 5, seed: int = 0, registry: Registry | None = None) -> CheckReport:
    """Synchronous `acheck`."""
    return run_sync(acheck(uri, samples=samples, seed=seed, registry=registry))
