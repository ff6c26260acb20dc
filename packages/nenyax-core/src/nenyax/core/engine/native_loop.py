"""Rollout- and task-mode episodes: the environment's own loop runs, Nenyax's recording proxy answers.

The proxy route is the episode's boundary: every model call the native loop makes lands there, is
answered by the policy, and is recorded. How the episode ended is decided here, once for both modes:
a model call that failed wins over whatever the native loop made of it (an infrastructure failure
is never scored; a failing policy is ``policy_error`` scored 0).
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from typing import TYPE_CHECKING, Any, TypeAlias

from nenyax.core.contract.chat import ChatRequest
from nenyax.core.contract.failures import ABORT, describe
from nenyax.core.contract.manifest import Mode
from nenyax.core.contract.trajectory import Judgment, ModelCall, Status, Timing, Trajectory
from nenyax.core.engine.answers import garbage_answer
from nenyax.core.engine.native_episode import NativeEpisode, NativeResult
from nenyax.core.engine.policies import NullPolicy, Policy, RandomPolicy, ReferencePolicy, Turn
from nenyax.core.errors import (
    EnvironmentFailure,
    EpisodeInterrupted,
    InfraFailure,
    PolicyFailure,
    UnsupportedPolicyError,
    VerifierFailure,
)
from nenyax.core.models.endpoint import Endpoint
from nenyax.core.models.proxy import RecordingProxy, Responder
from nenyax.core.models.recorder import EpisodeRecorder

if TYPE_CHECKING:
    from nenyax.core.engine.environment import RolloutEnvironment, TaskEnvironment

    NativeEnvironment: TypeAlias = RolloutEnvironment | TaskEnvironment

PROXY_API_KEY = "nenyax-proxy"
"""The key native loops are given: the proxy accepts any key, and this one opens nothing elsewhere."""

_BUILTIN_AGENTS = {ReferencePolicy: "reference", NullPolicy: "null", RandomPolicy: "random"}


def _in_process_call(request: ChatRequest, reply: Any, name: str) -> ModelCall:
    if isinstance(reply, dict):  # a whole assistant message: content and/or tool calls
        message = {"role": "assistant", **{k: v for k, v in reply.items() if k != "role"}}
    elif isinstance(reply, str):
        message = {"role": "assistant", "content": reply}
    else:
        msg = f"A policy answering model calls must return text or an assistant message, not {type(reply).__name__}."
        raise PolicyFailure(msg)
    return ModelCall(
        messages=request.messages,
        response=message,
        provider="in-process",
        model=name,
        params=dict(request.params),
        tools=request.tools,
        finish_reason="tool_calls" if message.get("tool_calls") else "stop",
    )


def responder(
    env: NativeEnvironment, pol: Policy, task_id: str | None, rng_seed: str, recorder: EpisodeRecorder
) -> Responder:
    """How the proxy answers this episode's model calls with `pol` (`recorder` is the episode's)."""
    if isinstance(pol, Endpoint):
        return pol.send  # forwarded: the provider records token ids and logprobs
    if isinstance(pol, ReferencePolicy):
        reply = getattr(env, "reference_reply", None)
        if reply is None and env.manifest.mode is not Mode.TASK:
            # Refused before the episode: raised inside the proxy, it would read as the model server failing.
            msg = f"{env.uri} has no reference reply to answer its loop's model calls with."
            raise UnsupportedPolicyError(msg)

        async def answer(request: ChatRequest) -> ModelCall:
            # Task mode's reference is the harness's own solution agent, which makes no model calls.
            if reply is None:
                msg = f"{env.uri} runs its reference as the harness's own agent; it answers no model calls."
                raise UnsupportedPolicyError(msg)
            return _in_process_call(request, reply(task_id, list(request.messages)), "reference")

        return answer
    if isinstance(pol, NullPolicy | RandomPolicy):
        name = pol.info.name
        rng = random.Random(rng_seed)

        async def constant(request: ChatRequest) -> ModelCall:
            text = "" if isinstance(pol, NullPolicy) else garbage_answer(rng)
            return _in_process_call(request, text, name)

        return constant
    return _PolicyResponder(pol, rng_seed, recorder)


class _PolicyResponder:
    """Any other policy (a learner's, a Python function) answering the loop's requests.

    It sees the whole request (`Turn.request`: messages, tools, parameters). A policy that makes model
    calls of its own makes them through the episode's recorder, so every one is in the trajectory, and
    the last is the loop's answer; one that makes none is recorded as an in-process call.
    """

    records_itself = True
    """The proxy does not record what this returns: the calls are in the episode's record already."""

    def __init__(self, pol: Policy, rng_seed: str, recorder: EpisodeRecorder) -> None:
        self.pol, self.rng_seed, self.recorder = pol, rng_seed, recorder
        self.turns = 0

    async def __call__(self, request: ChatRequest) -> ModelCall:
        messages = list(request.messages)
        turn = Turn(
            session=None,  # type: ignore[arg-type]
            observation=messages,
            messages=messages,
            index=self.turns,
            rng_seed=self.rng_seed,
            recorder=self.recorder,
            request=request,
        )
        self.turns += 1
        made = len(self.recorder.model_calls)
        started, clock = time.time(), time.perf_counter()
        reply = await self.pol.act(turn)
        if len(self.recorder.model_calls) > made:  # its own model calls, recorded as they were made
            return self.recorder.model_calls[-1]
        call = _in_process_call(request, reply, self.pol.info.name)
        return self.recorder.add(request, call, started=started, duration_s=time.perf_counter() - clock)


def _failure(exc: BaseException) -> Status:
    if isinstance(exc, InfraFailure):
        return Status.INFRA_ERROR
    if isinstance(exc, VerifierFailure):
        return Status.VERIFIER_ERROR
    if isinstance(exc, PolicyFailure):
        return Status.POLICY_ERROR
    if isinstance(exc, EnvironmentFailure):
        return Status.ENV_ERROR
    return Status.ENV_ERROR


async def run_native_episode(
    env: NativeEnvironment,
    pol: Policy,
    *,
    task: str | None,
    seed: int | None,
    group_id: str | None,
    sample: int,
    timeout: float | None,
    proxy: RecordingProxy | None = None,
    recorder: EpisodeRecorder | None = None,
    started: float | None = None,
) -> Trajectory:
    """Play one rollout- or task-mode episode on `proxy` (a private one when None).

    `recorder` holds the episode's trajectory id (the proxy route's) and its observers; `started` is
    when the episode started (now when None).
    """
    recorder = recorder if recorder is not None else EpisodeRecorder()
    started = time.time() if started is None else started
    if proxy is None:
        async with RecordingProxy() as own:
            return await run_native_episode(
                env,
                pol,
                task=task,
                seed=seed,
                group_id=group_id,
                sample=sample,
                timeout=timeout,
                proxy=own,
                recorder=recorder,
                started=started,
            )
    if task is None:
        ids = env.task_ids(limit=1)
        task = ids[0] if ids else None
    agent = "model"
    if env.manifest.mode is Mode.TASK:
        agent = _BUILTIN_AGENTS.get(type(pol), "model")
    rng_seed = f"{task}:{seed}:{sample}"
    recorder.sampling_seed = rng_seed  # a model's sampling is seeded from the episode too
    model = pol.model if isinstance(pol, Endpoint) else "nenyax"
    status, error, judgment, result = Status.OK, None, None, None
    answer = responder(env, pol, task, rng_seed, recorder)
    async with proxy.episode(responder=answer, policy=pol, model=model, recorder=recorder) as route:
        episode = NativeEpisode(
            task_id=task,
            seed=seed,
            sample=sample,
            base_url=route.base_url,
            api_key=PROXY_API_KEY,
            model=model,
            agent=agent,
            scores_prompts=isinstance(pol, Endpoint) and hasattr(pol.provider, "complete_text"),
        )
        try:
            async with asyncio.timeout(timeout):
                result = await _run_loop(env, episode)
        except ABORT:
            raise
        except TimeoutError:
            status, error = Status.TIMEOUT, f"The episode did not finish within {timeout} s."
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Ctrl-C: keep every call the loop made; the trajectory rides on the interrupt to whoever writes it.
            status, error = Status.INTERRUPTED, "The run was interrupted (Ctrl-C) before the episode ended."
        except Exception as exc:  # noqa: BLE001 - whatever the environment raises is its failure, recorded
            status, error = _failure(exc), describe(exc)
    if result is not None:
        status, error, judgment = result.status, result.error, result.judgment
        if status is Status.OK and judgment is None:
            status, error = Status.VERIFIER_ERROR, error or "The environment finished without a judgment."
    if route.failures and status is not Status.INTERRUPTED:  # the model call failed first: that is why
        status, error = route.failures[0]
    if status is Status.POLICY_ERROR:
        judgment = Judgment(score=0.0, passed=False, feedback=error or "", judge="nenyax:policy_error")
    elif status is not Status.OK:
        judgment = None  # never a made-up score for a failure that was not the policy's
    ended = time.time()
    recorder.finish_tools(result.messages if result is not None else (), ended)
    trajectory = Trajectory(
        env_uri=env.uri,
        manifest_digest=env.digest,
        mode=env.manifest.mode,
        task_id=task,
        seed=seed,
        policy=pol.info,
        status=status,
        judgment=judgment,
        steps=result.steps if result is not None else (),
        model_calls=tuple(recorder.model_calls),
        tool_calls=tuple(sorted(recorder.tool_calls, key=lambda call: call.started)),
        messages=result.messages if result is not None else (),
        timing=Timing(started=started, ended=ended),
        error=error,
        group_id=group_id,
        sample=sample,
        agent=agent,
        info=dict(result.info) if result is not None else {},  # the environment's alone: nothing merged in
        id=recorder.id,
        token_faithful=recorder.token_faithful(pol),
    )
    if status is Status.INTERRUPTED:
        raise EpisodeInterrupted(trajectory)
    return trajectory


async def _run_loop(env: NativeEnvironment, episode: NativeEpisode) -> NativeResult:
    """The environment's loop: awaited when it is a coroutine; a synchronous one (lm-eval's harness)
    runs on a worker thread, so the proxy answering its calls on this event loop is never blocked."""

    def run() -> Any:
        return env.run(episode)

    if inspect.iscoroutinefunction(env.run):
        result = run()
    else:  # a timed-out thread cannot be stopped: it runs on, its calls refused once the route closes
        result = await asyncio.to_thread(run)
    if isinstance(result, NativeResult):
        return result
    done: NativeResult = await result  # a coroutine (or a plain function that returned one)
    return done
