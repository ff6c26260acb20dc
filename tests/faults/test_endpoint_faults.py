"""Endpoint faults on 20% of calls, 1,000 episodes in each mode: every episode recorded once, with the right status.

The faults (429 with Retry-After, 500, a reset connection, a reply slower than the client's timeout, a
body cut in half) come from `ScriptedModelServer`, a scripted OpenAI-compatible server on loopback:
no real model server can be made to fail on cue. Everything between it and the record is real: the
`openai` provider with its retries, the recording proxy a native loop talks to with the official
`openai` client, the rollout engine and its JSONL sink.

Step mode plays a real format (reasoning-gym's `basic_arithmetic`). Rollout and task mode play core's
doubles (`nenyax_testsupport.native_fakes`): a native tool loop on the official `openai` client, and a
graded shell task run in `LocalProcessSandbox`. The real formats of those modes each have their own
session and a server or sandbox per episode (verifiers, NeMo Gym; harbor needs Python 3.12 and a
sandbox), which makes 1,000 faulted episodes of them minutes each; the seam under test, the proxy
between a native loop and the provider, is the same for all of them.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from nenyax.core import Endpoint, Registry, Status, load, read_trajectories
from nenyax.testing.model_server import FAULTS, FaultPlan, ScriptedModelServer
from nenyax_testsupport.native_fakes import NativeAdapters, ShellTaskEnvironment, operands, solving_reply

EPISODES = 1000
# One retry: a call fails for good on two faults in a row (about 4% of calls), so both statuses occur.
# "slow" (4 s) outlasts the timeout; the timeout itself is generous because the scripted server, the
# proxy and 64 native loops share this process's one event loop (at 0.5 s, a busy loop timed out calls
# the server had answered in time: right statuses, but not the faults this test means to count).
PROVIDER_OPTIONS = {"max_retries": 1, "backoff": 0.01, "timeout": 2.0}
PLAN = FaultPlan(rate=0.2, seed=7, slow_seconds=4.0)


async def faulted(env, policy_tasks, *, n: int, sink, concurrency: int = 64):
    async with ScriptedModelServer(solving_reply, faults=PLAN) as server:
        endpoint = Endpoint("openai:scripted", base_url=server.base_url, provider_options=PROVIDER_OPTIONS)
        try:
            trajectories = await env.arollouts(endpoint, policy_tasks, n=n, concurrency=concurrency, sink=sink)
        finally:
            await endpoint.aclose()
        return trajectories, server.injected


def assert_nothing_lost_and_nothing_misscored(trajectories, sink, injected, *, expected_ids):
    """The invariants of the fault suite, whatever the mode."""
    assert set(injected) == set(FAULTS), injected  # every kind of fault was served
    assert sum(injected.values()) >= 0.15 * EPISODES
    recorded = list(read_trajectories(sink))
    assert len(trajectories) == len(recorded) == EPISODES
    assert sorted(t.id for t in recorded) == sorted(t.id for t in trajectories)
    assert len({t.id for t in recorded}) == EPISODES  # each episode exactly once
    assert Counter((t.task_id, t.sample) for t in recorded) == expected_ids
    statuses = Counter(t.status for t in recorded)
    assert set(statuses) == {Status.OK, Status.INFRA_ERROR}, statuses
    for t in recorded:
        if t.status is Status.INFRA_ERROR:
            assert t.judgment is None, t.id  # an infrastructure failure is never scored
            assert t.score is None
            assert t.error
        else:
            assert t.judgment is not None, t.id
            assert t.model_calls, t.id
    return recorded, statuses


def test_step_mode_reasoning_gym(tmp_path):
    env = load("reasoning_gym:basic_arithmetic?size=1000&seed=3")
    sink = tmp_path / "step.jsonl"
    trajectories, injected = asyncio.run(faulted(env, EPISODES, n=1, sink=sink, concurrency=128))
    expected = Counter((task, 0) for task in env.task_ids(limit=EPISODES))
    recorded, statuses = assert_nothing_lost_and_nothing_misscored(trajectories, sink, injected, expected_ids=expected)
    # A call that failed twice is what ended each unscored episode, in so many words.
    assert all("kept failing" in t.error for t in recorded if t.status is Status.INFRA_ERROR)
    assert statuses[Status.INFRA_ERROR] < 0.15 * EPISODES


def test_rollout_mode_native_loop_through_the_recording_proxy(tmp_path):
    registry = Registry.from_plugins(("native", NativeAdapters()))
    env = load(f"toolmath:mul?size={EPISODES}", registry=registry)
    sink = tmp_path / "rollout.jsonl"
    trajectories, injected = asyncio.run(faulted(env, EPISODES, n=1, sink=sink))
    expected = Counter((task, 0) for task in env.task_ids(limit=EPISODES))
    recorded, statuses = assert_nothing_lost_and_nothing_misscored(trajectories, sink, injected, expected_ids=expected)
    for t in recorded:
        if t.status is Status.OK:
            # The proxy retried behind the loop's back: what reached it was the right answer, scored so.
            a, b = operands(t.task_id)
            assert t.model_calls[-1].response["content"] == str(a * b)
            assert t.score == 1.0
    assert statuses[Status.OK] > 0.75 * EPISODES


def test_task_mode_graded_shell_task_in_a_sandbox(tmp_path):
    registry = Registry.from_plugins(("native", NativeAdapters()))
    env = load(f"shelltask:hello?root={tmp_path / 'tasks'}", registry=registry)
    assert isinstance(env, ShellTaskEnvironment)
    sink = tmp_path / "task.jsonl"
    samples = EPISODES // len(env.task_ids())
    trajectories, injected = asyncio.run(faulted(env, None, n=samples, sink=sink, concurrency=16))
    expected = Counter((task, sample) for task in env.task_ids() for sample in range(samples))
    recorded, statuses = assert_nothing_lost_and_nothing_misscored(trajectories, sink, injected, expected_ids=expected)
    # The graded ones were graded by the task's own test: the scripted agent solves every task.
    assert {t.score for t in recorded if t.status is Status.OK} == {1.0}
    assert statuses[Status.OK] > 0.75 * EPISODES
