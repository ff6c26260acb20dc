"""The step-mode episode loop: ``session()``, then the policy and ``act()`` until done, then the judgment."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from nenyax.core.contract.events import StepTaken
from nenyax.core.contract.failures import ABORT, describe
from nenyax.core.contract.trajectory import Judgment, Status, Step, Timing, ToolCall, Trajectory
from nenyax.core.engine.policies import NEVER_SUSPEND, Policy, Turn
from nenyax.core.engine.session import Session
from nenyax.core.engine.sync import run_sync
from nenyax.core.errors import (
    EpisodeInterrupted,
    InfraFailure,
    PolicyFailure,
    RetryablePolicyFailure,
    VerifierFailure,
    with_article,
)
from nenyax.core.models.recorder import EpisodeRecorder

if TYPE_CHECKING:
    from nenyax.core.engine.environment import StepEnvironment

DEFAULT_MAX_TURNS = 1000
"""Safety bound for environments that do not declare ``max_turns``."""


def _kind(value: Any) -> str:
    return "None" if value is None else with_article(type(value).__name__)


def _names(expected: type | tuple[type, ...]) -> str:
    types = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(with_article(t.__name__) for t in types)


@attrs.define
class _Episode:
    """Mutable record of an episode in progress; whatever it holds survives any failure."""

    recorder: EpisodeRecorder
    """The episode's id, model calls and tool calls."""
    steps: list[Step] = attrs.Factory(list)
    messages: list[dict[str, Any]] = attrs.Factory(list)
    status: Status = Status.OK
    error: str | None = None
    final_observation: Any = None

    def fail(self, status: Status, exc: BaseException | str) -> None:
        self.status = status
        self.error = exc if isinstance(exc, str) else describe(exc)


YIELD_EVERY_S = 0.05
"""How long a step loop on an event loop may run without handing it control (Ctrl-C lands then)."""


def _drive(coro: Any) -> Any:
    """Run a coroutine that never suspends (a built-in policy's act) to its result, without a loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    msg = "A built-in policy waited on I/O."
    raise RuntimeError(msg)


async def _in_daemon_thread(fn: Any, arg: Any) -> Any:
    """Call ``fn(arg)`` on a daemon thread, so a timeout or Ctrl-C can abandon it.

    Used only while a timer runs (a timeout, or Ctrl-C via asyncio.run's cancellation): a synchronous
    policy or step on the loop's thread would block both. Not `asyncio.to_thread`: the default
    executor's threads are joined at shutdown, so a call that never returns would hold the process.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            future.set_result(value) if ok else future.set_exception(value)

    def work() -> None:
        try:
            value = fn(arg)
        except BaseException as exc:  # noqa: BLE001 - handed to the episode, which records it as the policy's failure
            if not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(settle, False, exc)
            return
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the episode was abandoned
                loop.call_soon_threadsafe(settle, True, value)

    threading.Thread(target=work, name="nenyax-policy", daemon=True).start()
    return await future


def _publishing(steps: list[Step], recorder: EpisodeRecorder) -> Callable[[Step], None]:
    """``steps.append`` that also publishes each step to the observers of steps."""
    observers = recorder.observers

    def add(step: Step) -> None:
        steps.append(step)
        observers.publish(observers.step, StepTaken(trajectory_id=recorder.id, index=len(steps) - 1, step=step))

    return add


async def _act(session: Session, action: Any, direct_step: bool, abandonable: bool) -> Step:
    """Apply `action`: on a daemon thread while a timer runs (a synchronous session), else as the session does."""
    if direct_step and abandonable:
        return await _in_daemon_thread(session.act, action)  # type: ignore[no-any-return]
    return session.act(action) if direct_step else await session.aact(action)


async def _tool_step(
    session: Session, action: Any, tool: tuple[str, Any], episode: _Episode, direct_step: bool, abandonable: bool
) -> Step:
    """Apply a tool-call action, recording the call (its result, or the error `act` raised)."""
    name, arguments = tool
    index = len(episode.steps)
    started, clock = time.time(), time.perf_counter()
    try:
        step = await _act(session, action, direct_step, abandonable)
    except BaseException as exc:
        took = time.perf_counter() - clock
        call = ToolCall(
            name=name, arguments=arguments, error=describe(exc), started=started, duration_s=took, step=index
        )
        episode.recorder.tool_call(call)
        raise
    took = time.perf_counter() - clock
    result = session.tool_result(step)
    episode.recorder.tool_call(
        ToolCall(name=name, arguments=arguments, result=result, started=started, duration_s=took, step=index)
    )
    return step


async def _play(
    session: Session,
    policy: Policy,
    episode: _Episode,
    rng_seed: str,
    max_turns: int,
    abandonable: bool = False,
    tools: bool = False,
) -> None:
    speaks_text = policy.speaks_text
    # The per-step path is hot (a CartPole step costs the env ~7 us): a plain function is called
    # directly and a session that does no I/O is stepped without a coroutine.
    direct_policy = getattr(policy, "sync_fn", None)
    direct_step = type(session).aact is Session.aact
    # One Turn per episode, updated in place: policies must not keep it past their act() call.
    recorder = episode.recorder
    turn = Turn(
        session=session, observation=None, messages=episode.messages, index=0, rng_seed=rng_seed, recorder=recorder
    )
    steps = episode.steps
    # Every recorded turn goes through `add`: the list's own append when nobody observes steps.
    add = _publishing(steps, recorder) if recorder.observers.step else steps.append
    # On an event loop, give it control now and then even when nothing here suspends (a synchronous
    # session and policy): that is where Ctrl-C's cancellation and other episodes' timers land.
    # Never on the loop-less path, which must not suspend; a time check per step costs ~50 ns.
    try:
        asyncio.get_running_loop()
        yield_every: float | None = YIELD_EVERY_S
    except RuntimeError:
        yield_every = None
    last_yield = time.monotonic()
    retried = 0  # retried replies are recorded turns but not env steps, so max_turns does not count them
    while not session.done and len(steps) - retried < max_turns:
        if yield_every is not None and time.monotonic() - last_yield > yield_every:
            await asyncio.sleep(0)
            last_yield = time.monotonic()
        observation = turn.observation = session.observation
        turn.index = len(steps)
        if speaks_text:
            try:
                episode.messages.extend(session.render())
            except ABORT:
                raise
            except Exception as exc:  # noqa: BLE001 - the adapter's text codec failed: the environment's fault
                episode.fail(Status.ENV_ERROR, exc)
                return
        try:
            if abandonable and direct_policy is not None:  # a timer runs: the call must be abandonable
                out = await _in_daemon_thread(direct_policy, observation)
                if hasattr(out, "__await__"):
                    out = await out
            elif abandonable and isinstance(policy, NEVER_SUSPEND):  # sync work inside an async act()
                out = await _in_daemon_thread(_drive, policy.act(turn))
            elif direct_policy is not None:
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
        except Exception as exc:  # noqa: BLE001 - whatever the policy raises is the policy's failure
            episode.fail(Status.POLICY_ERROR, exc)
            return
        text = None
        action = out
        if speaks_text and not isinstance(out, str):  # a model policy's reply is text, or it is broken
            episode.fail(Status.POLICY_ERROR, f"The policy returned {_kind(out)} where a text reply was expected.")
            return
        if speaks_text:
            text = out
            episode.messages.append({"role": "assistant", "content": text})
            try:
                action = session.parse_action(text)
            except RetryablePolicyFailure as exc:  # recorded as a turn; the session asks again with the error
                recorded = session.recorded_observation(observation)
                add(Step(observation=recorded, action=None, text=text, info={"error": str(exc), "retry": True}))
                retried += 1
                continue
            except PolicyFailure as exc:
                recorded = session.recorded_observation(observation)
                add(Step(observation=recorded, action=None, text=text, info={"error": str(exc)}))
                episode.fail(Status.POLICY_ERROR, exc)
                return
            except ABORT:
                raise
            except Exception as exc:  # noqa: BLE001 - a parser that crashes is the adapter's bug, not the model's
                recorded = session.recorded_observation(observation)
                add(Step(observation=recorded, action=None, text=text, info={"error": describe(exc)}))
                episode.fail(Status.ENV_ERROR, exc)
                return
        expected = session.action_type
        if expected is not None and not isinstance(action, expected):
            msg = f"The policy returned {_kind(action)} where the environment takes {_names(expected)}."
            add(
                Step(observation=session.recorded_observation(observation), action=None, text=text, info={"error": msg})
            )
            episode.fail(Status.POLICY_ERROR, msg)
            return
        try:
            tool = session.tool_call(action) if tools else None
            if tool is not None:
                step = await _tool_step(session, action, tool, episode, direct_step, abandonable)
            elif direct_step and not abandonable:
                step = session.act(action)  # the hot path: no coroutine per step
            else:
                step = await _act(session, action, direct_step, abandonable)
        except ABORT:
            raise
        except PolicyFailure as exc:  # the environment rejected the action as invalid
            recorded = session.recorded_observation(observation)
            add(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.POLICY_ERROR, exc)
            return
        except VerifierFailure as exc:  # environments that score inside act(): keep the action, no score
            recorded = session.recorded_observation(observation)
            add(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.VERIFIER_ERROR, exc)
            return
        except InfraFailure as exc:  # an environment behind a network or sandbox lost it
            recorded = session.recorded_observation(observation)
            add(Step(observation=recorded, action=action, text=text, info={"error": str(exc)}))
            episode.fail(Status.INFRA_ERROR, exc)
            return
        except Exception as exc:  # noqa: BLE001 - whatever the environment's step raises is its failure
            episode.fail(Status.ENV_ERROR, exc)
            return
        add(step if text is None else attrs.evolve(step, text=text))
    if steps:
        # What the last step led to (each step holds the observation it was chosen from); an adapter that
        # cannot show it loses only this, never the episode.
        with contextlib.suppress(Exception):
            episode.final_observation = session.recorded_observation(session.observation)


def _judge(session: Session, episode: _Episode) -> Judgment | None:
    if episode.status is Status.POLICY_ERROR:
        return Judgment(score=0.0, passed=False, feedback=episode.error or "", judge="nenyax:policy_error")
    if episode.status is not Status.OK:
        return None  # never a made-up score for a failure that was not the policy's
    try:
        return session.judge(tuple(episode.steps))
    except Exception as exc:  # noqa: BLE001 - whatever the judge raises is the verifier's failure, never a score
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
    except Exception as exc:  # noqa: BLE001 - whatever the judge raises is the verifier's failure, never a score
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
    recorder: EpisodeRecorder | None = None,
    started: float | None = None,
) -> Trajectory:
    """Play one step-mode episode; failures become a status on the trajectory, never an exception.

    Only user mistakes (an unknown task id, a policy the environment cannot serve, a model server
    that rejects the API key) raise, and the session is closed first. `timeout` bounds the whole
    episode: with it, synchronous policies and steps run on a daemon thread that is abandoned when
    time is up (the session is still closed). Ctrl-C raises `EpisodeInterrupted` carrying the
    trajectory recorded so far (status ``interrupted``). `recorder` holds the episode's id (made when
    it started) and its observers; `started` is when it started (now when None).
    """
    episode = _Episode(recorder=recorder if recorder is not None else EpisodeRecorder())
    started = time.time() if started is None else started
    session: Session | None = opened
    judgment: Judgment | None = None
    if session is None:
        try:
            session = await env.asession(task=task, seed=seed)
        except ABORT:
            raise
        except InfraFailure as exc:  # e.g. the environment's server cannot be reached or is at capacity
            episode.fail(Status.INFRA_ERROR, exc)
        except Exception as exc:  # noqa: BLE001 - whatever opening raises is the environment's failure
            episode.fail(Status.ENV_ERROR, exc)
    if session is not None:
        rng_seed = f"{session.task_id}:{session.seed}:{sample}"
        episode.recorder.sampling_seed = rng_seed  # a model's sampling is seeded from the episode too
        capabilities = env.manifest.capabilities
        max_turns = capabilities.max_turns or DEFAULT_MAX_TURNS
        tools = capabilities.tools
        try:
            if timeout is None:  # no timer: the synchronous path runs this coroutine without a loop
                await _play(session, pol, episode, rng_seed, max_turns, tools=tools)
            else:
                async with asyncio.timeout(timeout):
                    await _play(session, pol, episode, rng_seed, max_turns, abandonable=True, tools=tools)
        except TimeoutError:
            episode.fail(Status.TIMEOUT, f"The episode did not finish within {timeout:g} s.")
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Ctrl-C: asyncio.run cancels the task (or, with no loop, the interrupt lands here).
            # Keep what was played; the trajectory rides on the interrupt to whoever writes it.
            episode.fail(Status.INTERRUPTED, "The run was interrupted (Ctrl-C) before the episode ended.")
        finally:
            try:
                await session.aclose()
            except Exception as exc:  # noqa: BLE001 - a failed close does not undo a judged episode, but is recorded
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
        model_calls=tuple(episode.recorder.model_calls),
        tool_calls=tuple(episode.recorder.tool_calls),
        messages=tuple(episode.messages),
        final_observation=episode.final_observation,
        timing=Timing(started=started, ended=time.time()),
        error=episode.error,
        group_id=group_id,
        sample=sample,
        id=episode.recorder.id,
        token_faithful=episode.recorder.token_faithful(pol),
    )
    if episode.status is Status.INTERRUPTED:
        raise EpisodeInterrupted(trajectory)
    if session is not None and session.trajectory_judge is not None:
        return _judge_trajectory(session, episode, trajectory)
    return trajectory


def run_step_episode_now(
    env: StepEnvironment,
    pol: Policy,
    *,
    task: str | None = None,
    seed: int | None = None,
    recorder: EpisodeRecorder | None = None,
    started: float | None = None,
) -> Trajectory | None:
    """The same episode without an event loop, when its session turns out to be synchronous.

    The caller guarantees the policy never suspends. The session is opened here, synchronously; a
    session with async hooks is then played on an event loop after all (still opened only once).
    Returns None when the session could not be opened: the caller's path records that failure.
    """
    try:
        session = env.session(task=task, seed=seed)
    except Exception:  # noqa: BLE001 - the async path opens it again and records the failure
        return None
    coro = run_step_episode(env, pol, task=task, seed=seed, opened=session, recorder=recorder, started=started)
    if type(session).aact is not Session.aact or type(session).aclose is not Session.aclose:
        return run_sync(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()  # it suspended after all: never half-run an episode
    msg = f"An episode of {env.uri} waited on I/O although its session declares no async hooks."
    raise RuntimeError(msg)
