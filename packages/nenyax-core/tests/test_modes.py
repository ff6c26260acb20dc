"""Rollout and task mode end to end: native loops on the official openai client, through the recording proxy."""

from __future__ import annotations

import asyncio

import attrs
import pytest

from nenyax.core import Endpoint, InfraFailure, Mode, Registry, Status, Tier, check, load
from nenyax.testing.model_server import ScriptedModelServer
from nenyax_testsupport.native_fakes import NativeAdapters, ToolMathEnvironment, operands


@pytest.fixture
def registry():
    return Registry.from_plugins(("native", NativeAdapters()))


@pytest.fixture
def shelltask(tmp_path):
    return f"shelltask:hello?root={tmp_path / 'tasks'}"


def test_reference_drives_a_multi_turn_tool_call_and_every_call_is_recorded(registry):
    env = load("toolmath:mul", registry=registry)
    traj = env.rollout("reference", task="mul/1")
    a, b = operands("mul/1")
    assert traj.mode is Mode.ROLLOUT
    assert traj.status is Status.OK
    assert traj.score == 1.0
    first, second = traj.model_calls
    assert first.response["tool_calls"][0]["function"]["name"] == "multiply"
    assert first.tools[0]["function"]["name"] == "multiply"
    # The second request carries the tool's result: the loop ran the call the policy made.
    assert second.messages[-1] == {"role": "tool", "tool_call_id": "call_0", "content": str(a * b)}
    assert second.response["content"] == str(a * b)


def test_a_function_of_the_messages_can_call_tools_too(registry):
    env = load("toolmath:mul", registry=registry)

    def agent(messages):
        if messages[-1]["role"] == "tool":
            return messages[-1]["content"]
        a, b = (int(w) for w in messages[-1]["content"].rstrip("?").split() if w.isdigit())
        call = {"name": "multiply", "arguments": f'{{"a": {a}, "b": {b}}}'}
        return {"tool_calls": [{"id": "c1", "type": "function", "function": call}]}

    traj = env.rollout(agent, task="mul/2")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert len(traj.model_calls) == 2
    assert traj.policy.kind == "callable"


def test_an_endpoint_is_forwarded_and_its_token_ids_and_logprobs_recorded(registry):
    async def run():
        a, b = operands("mul/0")
        async with ScriptedModelServer(reply=lambda messages: str(a * b)) as server:
            endpoint = Endpoint("openai:scripted", base_url=server.base_url)
            env = load("toolmath:mul", registry=registry)
            return await env.arollout(endpoint, task="mul/0")

    traj = asyncio.run(run())
    assert traj.status is Status.OK
    assert traj.score == 1.0
    (call,) = traj.model_calls
    assert call.provider == "openai"
    assert traj.policy.name == "openai:scripted"
    assert bytes(call.completion_token_ids) == call.response["content"].encode()
    assert call.logprobs == (-0.5,) * len(call.completion_token_ids)


def test_a_failing_policy_is_scored_0_and_a_failing_server_never_scored(registry):
    env = load("toolmath:mul", registry=registry)

    def broken(messages):
        raise RuntimeError("deliberate")

    def outage(messages):
        raise InfraFailure("the model server is gone")

    failed = env.rollout(broken, task="mul/0")
    assert failed.status is Status.POLICY_ERROR
    assert failed.score == 0.0
    assert "deliberate" in failed.error
    down = env.rollout(outage, task="mul/0")
    assert down.status is Status.INFRA_ERROR
    assert down.judgment is None
    assert "gone" in down.error


def test_a_native_loop_that_hangs_times_out(registry):
    env = load("toolmath:mul", registry=registry)

    async def slow(messages):
        await asyncio.sleep(30)

    traj = env.rollout(slow, task="mul/0", timeout=0.2)
    assert traj.status is Status.TIMEOUT
    assert traj.judgment is None


def test_groups_share_task_and_policy(registry):
    env = load("toolmath:mul", registry=registry)
    groups = env.groups("random", tasks=2, n=3)
    assert [g.task_id for g in groups] == ["mul/0", "mul/1"]
    for group in groups:
        assert len(group.trajectories) == 3
        assert {t.task_id for t in group.trajectories} == {group.task_id}
        assert group.policy.name == "random"
        assert len({t.group_id for t in group.trajectories}) == 1


def test_concurrent_sessions_is_honoured():
    async def slow_reply(messages):
        await asyncio.sleep(0.01)
        return "0"

    free = ToolMathEnvironment("toolmath:mul", size=6, concurrent=True)
    free.rollouts(slow_reply, tasks=6, concurrency=6)
    serial = ToolMathEnvironment("toolmath:mul", size=6, concurrent=False)
    serial.rollouts(slow_reply, tasks=6, concurrency=6)
    assert serial.most_active == 1
    assert free.most_active > 1


def test_check_reaches_audited_in_rollout_mode(registry):
    report = check("toolmath:mul", registry=registry, samples=3)
    outcomes = {r.id: r.outcome.value for r in report.results}
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.results if r.outcome.value != "passed"]
    assert set(outcomes.values()) == {"passed"}
    completes = next(r for r in report.results if r.id == "evaluable/episode-completes")
    assert "model call(s)" in completes.evidence


def test_task_mode_runs_the_harness_agents_in_a_sandbox(registry, shelltask):
    env = load(shelltask, registry=registry)
    solved = env.rollout("reference", task="world")
    idle = env.rollout("null", task="world")
    assert solved.mode is Mode.TASK
    assert solved.score == 1.0
    assert solved.agent == "reference"
    assert idle.score == 0.0
    assert idle.status is Status.OK
    assert idle.agent == "null"
    assert solved.info["image"].startswith("sha256:")
    model = env.rollout(lambda messages: "echo world > answer.txt", task="world")
    assert model.agent == "model"
    assert model.score == 1.0
    assert len(model.model_calls) == 1


def test_check_reaches_audited_in_task_mode(registry, shelltask):
    report = check(shelltask, registry=registry, samples=3)
    assert report.tier is Tier.AUDITED, [r.evidence for r in report.results if r.outcome.value != "passed"]


class _InfoNamingSample(ToolMathEnvironment):
    """toolmath, whose own info happens to use the words Nenyax once kept there."""

    async def run(self, episode):
        result = await super().run(episode)
        return attrs.evolve(result, info={"sample": 99, "agent": "its harness"})


def test_a_native_environment_s_info_is_its_own_and_never_overwrites_the_sample():
    env = _InfoNamingSample("toolmath:mul")
    trajs = env.rollouts("reference", ["mul/0"], n=2)
    assert sorted(t.sample for t in trajs) == [0, 1]
    assert {t.agent for t in trajs} == {"model"}
    assert all(t.info == {"sample": 99, "agent": "its harness"} for t in trajs)
