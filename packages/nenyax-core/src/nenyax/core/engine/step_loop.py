"""The step-mode episode loop: ``session()``, then the policy and ``act()`` until done, then the judgment."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core.contract.trajectory import Judgment, ModelCall, Status, Step, Timing, Trajectory
from nenyax.core.engine.policies import Policy, Turn
from nenyax.core.engine.session import Session
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import (
    InfraFailure,
    PluginLoadError,
    PolicyFailure,
    RetryablePolicyFailure,
    UsageError,
    VerifierFailure,
)

if TYPE_CHECKING:
    from nenyax.core.engine.environment import StepEnvironment

DEFAULT_MAX_TURNS = 1000
"""Safety bound for environments that do not declare ``max_turns``."""


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, for a trajectory's error sentence."""
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
        self.error = exc if isinstance(exc, str) else describe(exc)


# Errors that are nobody's episode: the user's configuration is wrong, so the run stops and says so.
ABORT = (UsageError, PluginLoadError)


async def _play(session: Session, policy: Policy, episode: _Episode, rng_seed: str, max_turns: int) -> None:
    speaks_text = policy.speaks_text
    # The per-step path is hot (a CartPole step costs the env ~7 us): a plain function is called
    # directly and a session that does no I/O is stepped without a coroutine.
    direct_policy = getattr(policy, "sync_fn", None)
    direct_step = type(session).aact is Session.aact
    # One Turn per episode, updated in place: policies must not keep it past their act() call.
    turn = Turn(
        session=session, observation=None, messages=episode.messages, index=0, rng_seed=rng_seed, calls=episode.calls
    )
    steps = episode.steps
    retried = 0  # retried replies are recorded turns but not env steps, so max_turns does not count them
    while not session.done and len(steps) - retried < max_turns:
        observation = turn.observation = session.observation
        turn.index = len(steps)
        if speaks_text:
            try:
                episode.messages.extend(session.render())
            except ABORT:
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
        except ABORT:  # e.g. the reference policy on an environment without an oracle
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
            except RetryablePolicyFailure as exc:  # recorded as a turn; the session asks again with the error
                recorded = session.recorded_observation(observation)
                steps.append(
                    Step(observation=recorded, action=None, text=text, info={"error": str(exc), "retry": True})
                )
                retried += 1
                continue
            except PolicyFailure as exc:
                recorded = session.recorded_observation(observation)
                steps.append(Step(observation=recorded, action=None, text=text, info={"error": str(exc)}))
                episode.fail(Status.POLICY_ERROR, exc)
                return
            except ABORT:
                raise
            except Exception as exc:  # a parser that crashes is the adapter's bug, not the model's
                recorded = session.recorded_observation(observation)
                steps.append(Step(observation=recorded, action=None, text=text, info={"error": describe(exc)}))
                episode.fail(Status.ENV_ERROR, exc)
                return
        try:
            step = session.act(action) if direct_step else await session.aact(action)
        except ABORT:
            raise
        except PolicyFailure as exc:  # the environment rejected the action as invalid
            recorded = session.recorded_observation(observation)
            steps.append(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.POLICY_ERROR, exc)
            return
        except VerifierFailure as exc:  # environments that score inside act(): keep the action, no score
            recorded = session.recorded_observation(observation)
            steps.append(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.VERIFIER_ERROR, exc)
            return
        except InfraFailure as exc:  # an environment behind a network or sandbox lost it
            recorded = session.recorded_observation(observation)
            steps.append(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
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


def _judge_trajectory(session: Session, episode: _Episode, trajectory: Trajectory) -> Trajectory:
    """Judge the whole finished trajectory with the session's trajectory judge."""
    if episode.status is Status.POLICY_ERROR:
        judgment = Judgment(score=0.0, passed=False, feedback=episode.error or "", judge="nenyax:policy_error")
        return attrs.evolve(trajectory, judgment=judgment)
    if episode.status is not Status.OK:
        return trajectory
    try:
        judgment = session.trajectory_judge.judge_trajectory(trajectory, session.judge_reference)
    except Exception as exc:
        return attrs.evolve(trajectory, status=Status.VERIFIER_ERROR, error=describe(exc))
    return attrs.evolve(trajectory, judgment=judgment)


async def run_step_episode(
    env: StepEnvironment,
    pol: Policy,
    *,
    task: str | None = None,
    seed: int | None = None,
    group_id: str | None = None,
    sample: int = 0,
    timeout: float | None = None,
    opened: Session | None = None,
) -> Trajectory:
    """Play one step-mode episode; failures become a status on the trajectory, never an exception.

    Only user mistakes (an unknown task id, a policy the environment cannot serve, a model server
    that rejects the API key) raise, and the session is closed first. `timeout` bounds the episode's
    awaits (model calls, async environments); a synchronous step cannot be interrupted.
    """
    episode = _Episode()
    started = time.time()
    session: Session | None = opened
    judgment: Judgment | None = None
    if session is None:
        try:
            session = await env.asession(task=task, seed=seed)
        except ABORT:
            raise
        except InfraFailure as exc:  # e.g. the environment's server cannot be reached or is at capacity
            episode.fail(Status.INFRA_ERROR, exc)
        except Exception as exc:
            episode.fail(Status.ENV_ERROR, exc)
    if session is not None:
        rng_seed = f"{session.task_id}:{session.seed}:{sample}"
        max_turns = env.manifest.capabilities.max_turns or DEFAULT_MAX_TURNS
        try:
            if timeout is None:  # no timer: the synchronous path runs this coroutine without a loop
                await _play(session, pol, episode, rng_seed, max_turns)
            else:
                async with asyncio.timeout(timeout):
                    await _play(session, pol, episode, rng_seed, max_turns)
        except TimeoutError:
            episode.fail(Status.TIMEOUT, f"The episode did not finish within {timeout} s.")
        finally:
            try:
                await session.aclose()
            except Exception as exc:  # a failed close does not undo a judged episode, but is recorded
                if episode.status is Status.OK:
                    episode.error = f"close failed: {describe(exc)}"
        if session.trajectory_judge is None:
            judgment = _judge(session, episode)
    trajectory = Trajectory(
        env_uri=env.uri,
        manifest_digest=env.digest,
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
        info={"sample": sample},  # which repeat of the task this is: what `eval --resume` skips by
    )
    if session is not None and session.trajectory_judge is not None:
        return _judge_trajectory(session, episode, trajectory)
    return trajectory


def run_step_episode_now(
    env: StepEnvironment, pol: Policy, *, task: str | None = None, seed: int | None = None
) -> Trajectory | None:
    """The same episode without an event loop, when its session turns out to be synchronous.

    The caller guarantees the policy never suspends. The session is opened here, synchronously; a
    session with async hooks is then played on an event loop after all (still opened only once).
    Returns None when the session could not be opened: the caller's path records that failure.
    """
    try:
        session = env.session(task=task, seed=seed)
    except Exception:
        return None
    coro = run_step_episode(env, pol, task=task, seed=seed, opened=session)
    if type(session).aact is not Session.aact or type(session).aclose is not Session.aclose:
        return run_sync(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()  # it suspended after all: never half-run an episode
    msg = f"An episode of {env.uri} waited on I/O although its session declares no async hooks."
    raise RuntimeError(msg)
