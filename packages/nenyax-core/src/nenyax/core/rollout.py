"""The generic episode loops: one step-mode episode, and many episodes with bounded concurrency."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core.environment import Session
from nenyax.core.errors import InfraFailure, PluginLoadError, PolicyFailure, UsageError, VerifierFailure
from nenyax.core.policies import Turn, as_policy
from nenyax.core.runs import Sink, open_sink
from nenyax.core.trajectory import Judgment, ModelCall, Status, Step, Timing, Trajectory, new_id

if TYPE_CHECKING:
    from nenyax.core.environment import Environment, StepEnvironment

DEFAULT_MAX_TURNS = 1000
"""Safety bound for environments that do not declare ``max_turns``."""


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@attrs.define
class _Episode:
    """Mutable record of an episode in progress; whatever it holds survives any failure."""

    steps: list[Step] = attrs.Factory(list)
    messages: list[dict[str, Any]] = attrs.Factory(list)
    calls: list[ModelCall] = attrs.Factory(list)
    status: Status = Status.OK
    error: str | None = None

    def fail(self, status: Status, exc: BaseException | str) -> None:
        self.status = status
        self.error = exc if isinstance(exc, str) else _describe(exc)


# Errors that are nobody's episode: the user's configuration is wrong, so the run stops and says so.
_ABORT = (UsageError, PluginLoadError)


async def _play(session: Session, policy: Any, episode: _Episode, rng: random.Random, max_turns: int) -> None:
    speaks_text = policy.speaks_text
    # The per-step path is hot (a CartPole step costs the env ~7 us): a plain function is called
    # directly and a session that does no I/O is stepped without a coroutine.
    direct_policy = getattr(policy, "sync_fn", None)
    direct_step = type(session).aact is Session.aact
    # One Turn per episode, updated in place: policies must not keep it past their act() call.
    turn = Turn(session=session, observation=None, messages=episode.messages, index=0, rng=rng, calls=episode.calls)
    steps = episode.steps
    while not session.done and len(steps) < max_turns:
        observation = turn.observation = session.observation
        turn.index = len(steps)
        if speaks_text:
            try:
                episode.messages.extend(session.render())
            except _ABORT:
                raise
            except Exception as exc:  # the adapter's text codec failed: the environment's fault
                episode.fail(Status.ENV_ERROR, exc)
                return
        try:
            if direct_policy is not None:
                out = direct_policy(observation)
                if hasattr(out, "__await__"):  # a plain function may still return an awaitable
                    out = await out
            else:
                out = await policy.act(turn)
        except _ABORT:  # e.g. the reference policy on an environment without an oracle
            raise
        except InfraFailure as exc:
            episode.fail(Status.INFRA_ERROR, exc)
            return
        except Exception as exc:  # whatever the policy raises is the policy's failure
            episode.fail(Status.POLICY_ERROR, exc)
            return
        text = None
        action = out
        if speaks_text:
            text = out
            episode.messages.append({"role": "assistant", "content": text})
            try:
                action = session.parse_action(text)
            except PolicyFailure as exc:
                steps.append(Step(observation=observation, action=None, text=text, info={"error": str(exc)}))
                episode.fail(Status.POLICY_ERROR, exc)
                return
            except _ABORT:
                raise
            except Exception as exc:  # a parser that crashes is the adapter's bug, not the model's
                steps.append(Step(observation=observation, action=None, text=text, info={"error": _describe(exc)}))
                episode.fail(Status.ENV_ERROR, exc)
                return
        try:
            step = session.act(action) if direct_step else await session.aact(action)
        except _ABORT:
            raise
        except PolicyFailure as exc:  # the environment rejected the action as invalid
            steps.append(Step(observation=observation, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.POLICY_ERROR, exc)
            return
        except VerifierFailure as exc:  # environments that score inside act(): keep the action, no score
            steps.append(Step(observation=observation, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.VERIFIER_ERROR, exc)
            return
        except InfraFailure as exc:  # an environment behind a network or sandbox lost it
            steps.append(Step(observation=observation, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.INFRA_ERROR, exc)
            return
        except Exception as exc:
            episode.fail(Status.ENV_ERROR, exc)
            return
        steps.append(step if text is None else attrs.evolve(step, text=text))


def _judge(session: Session, episode: _Episode) -> Judgment | None:
    if episode.status is Status.POLICY_ERROR:
        return Judgment(score=0.0, passed=False, feedback=episode.error or "", judge="nenyax:policy_error")
    if episode.status is not Status.OK:
        return None  # never a made-up score for a failure that was not the policy's
    try:
        return session.judge(tuple(episode.steps))
    except Exception as exc:
        episode.fail(Status.VERIFIER_ERROR, exc)
        return None


async def run_step_episode(
    env: StepEnvironment,
    policy: Any,
    *,
    task: str | None = None,
    seed: int | None = None,
    group_id: str | None = None,
    sample: int = 0,
    timeout: float | None = None,
) -> Trajectory:
    """Play one step-mode episode; failures become a status on the trajectory, never an exception.

    Only user mistakes (an unknown task id, a policy the environment cannot serve, a model server
    that rejects the API key) raise, and the session is closed first. `timeout` bounds the episode's
    awaits (model calls, async environments); a synchronous step cannot be interrupted.
    """
    pol = as_policy(policy)
    episode = _Episode()
    started = time.time()
    session: Session | None = None
    judgment: Judgment | None = None
    try:
        session = await env.asession(task=task, seed=seed)
    except _ABORT:
        raise
    except InfraFailure as exc:  # a server behind the environment was lost before the episode began
        episode.fail(Status.INFRA_ERROR, exc)
    except Exception as exc:
        episode.fail(Status.ENV_ERROR, exc)
    if session is not None:
        rng = random.Random(f"{session.task_id}:{session.seed}:{sample}")
        max_turns = env.manifest.capabilities.max_turns or DEFAULT_MAX_TURNS
        try:
            async with asyncio.timeout(timeout):
                await _play(session, pol, episode, rng, max_turns)
        except TimeoutError:
            episode.fail(Status.TIMEOUT, f"The episode did not finish within {timeout} s.")
        finally:
            try:
                await session.aclose()
            except Exception as exc:  # a failed close does not undo a judged episode, but is recorded
                if episode.status is Status.OK:
                    episode.error = f"close failed: {_describe(exc)}"
        judgment = _judge(session, episode)
    return Trajectory(
        env_uri=env.uri,
        manifest_digest=env.manifest.digest,
        mode=env.manifest.mode,
        task_id=session.task_id if session is not None else task,
        seed=session.seed if session is not None else seed,
        policy=pol.info,
        status=episode.status,
        judgment=judgment,
        steps=tuple(episode.steps),
        model_calls=tuple(episode.calls),
        messages=tuple(episode.messages),
        timing=Timing(started=started, ended=time.time()),
        error=episode.error,
        group_id=group_id,
    )


async def run_many(
    env: Environment,
    policy: Any,
    tasks: Sequence[str] | int | None,
    *,
    n: int = 1,
    concurrency: int = 16,
    sink: Sink | str | Path | None = None,
    timeout: float | None = None,
) -> list[Trajectory]:
    """Run `n` episodes per task, at most `concurrency` at once, writing each to `sink` as it finishes.

    If one episode raises (a user mistake), the others finish and are written before it is re-raised.
    """
    if n < 1 or concurrency < 1:
        msg = f"n and concurrency must be at least 1 (got n={n}, concurrency={concurrency})."
        raise UsageError(msg)
    if isinstance(tasks, int) and tasks < 0:
        msg = f"tasks must be a task count of at least 0 or a list of task ids, got {tasks}."
        raise UsageError(msg)
    ids = env.task_ids(limit=tasks) if tasks is None or isinstance(tasks, int) else list(tasks)
    pol = as_policy(policy)
    out_sink = open_sink(sink)
    jobs: list[tuple[str, str | None, int]] = []
    for task in ids:
        group_id = new_id() if n > 1 else None
        jobs.extend((task, group_id, k) for k in range(n))
    results: list[Trajectory | None] = [None] * len(jobs)
    pending = iter(enumerate(jobs))
    failed: list[BaseException] = []

    # A fixed pool of workers pulling from one iterator: no semaphore with thousands of waiters
    # (whose bookkeeping is O(waiters) per acquire in asyncio), and memory bounded by `concurrency`.
    async def worker() -> None:
        for index, (task, group_id, sample) in pending:
            if failed:
                return  # stop taking new episodes; the ones under way still finish and are written
            try:
                traj = await env.arollout(pol, task=task, group_id=group_id, sample=sample, timeout=timeout)
            except BaseException as exc:
                failed.append(exc)
                return
            if out_sink is not None:
                out_sink.write(traj)
            results[index] = traj

    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)))))
    finally:
        if out_sink is not None and not isinstance(sink, Sink):
            out_sink.close()
    if failed:
        raise failed[0]
    return [t for t in results if t is not None]
