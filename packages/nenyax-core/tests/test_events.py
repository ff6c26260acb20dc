"""The episode's identity and its event stream, on real components: the openai client against the recording
proxy, `Endpoint` against the scripted model server, the JSONL sink on disk.

The environments are core's doubles (`nenyax_testsupport.fakes`, `nenyax_testsupport.native_fakes`): core is
tested alone, so no real adapter can be installed here (the ORS and NeMo Gym adapters test their own
tool calls against real servers).
"""

import asyncio
import json
import logging

import openai
import orjson
import pytest

from nenyax.core import Endpoint, ModelCall, Status, UsageError
from nenyax.core.contract.events import (
    EpisodeEnded,
    EpisodeStarted,
    ModelCallEnded,
    ModelCallStarted,
    Observer,
    StepTaken,
    ToolCalled,
)
from nenyax.core.engine.sinks import JsonlSink, read_trajectories
from nenyax.core.models.proxy import RecordingProxy
from nenyax.core.models.recorder import UNANSWERED, EpisodeRecorder
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer
from nenyax_testsupport.fakes import ArithEnvironment, ToolArithEnvironment
from nenyax_testsupport.native_fakes import ToolMathEnvironment, operands

EVENTS = (EpisodeStarted, EpisodeEnded, ModelCallStarted, ModelCallEnded, StepTaken, ToolCalled)
SHORT = {
    EpisodeStarted: "start",
    EpisodeEnded: "end",
    ModelCallStarted: "call",
    ModelCallEnded: "reply",
    StepTaken: "step",
    ToolCalled: "tool",
}


class Everything(Observer):
    """Keeps every event it is given, in order."""

    def __init__(self):
        self.events = []

    def on_episode_started(self, event):
        self.events.append(event)

    def on_episode_ended(self, event):
        self.events.append(event)

    def on_model_call_started(self, event):
        self.events.append(event)

    def on_model_call_ended(self, event):
        self.events.append(event)

    def on_step(self, event):
        self.events.append(event)

    def on_tool_call(self, event):
        self.events.append(event)

    def kinds(self, trajectory_id=None):
        return [SHORT[type(e)] for e in self.events if trajectory_id in (None, e.trajectory_id)]


class Watched(ToolMathEnvironment):
    """The toolmath loop, keeping the base URL each episode was handed (the proxy route)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.urls = []

    async def run(self, episode):
        self.urls.append(episode.base_url)
        return await super().run(episode)


def test_the_trajectory_id_is_the_same_at_the_start_in_the_proxy_route_in_the_sink_and_in_the_record(tmp_path):
    env = Watched("toolmath:mul", size=3)
    seen = Everything()
    trajs = env.rollouts("reference", 3, sink=tmp_path / "t.jsonl", observers=[seen])
    started = [e.trajectory_id for e in seen.events if isinstance(e, EpisodeStarted)]
    lines = [orjson.loads(line)["id"] for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    routes = sorted(url.split("/e/")[1].removesuffix("/v1") for url in env.urls)
    ids = sorted(t.id for t in trajs)
    assert len(set(ids)) == 3
    assert sorted(started) == ids
    assert sorted(lines) == ids
    assert routes == ids
    for traj in trajs:  # every event of an episode carries its id, and it ends once
        assert seen.kinds(traj.id) == ["start", "call", "reply", "tool", "call", "reply", "end"]


def test_a_step_episode_has_its_id_at_its_start_too(tmp_path):
    env = ArithEnvironment("arith:add?size=2", size=2, seed=0)
    seen = Everything()
    [traj] = env.rollouts("reference", 1, sink=tmp_path / "t.jsonl", observers=[seen])
    assert [type(e) for e in seen.events] == [EpisodeStarted, StepTaken, EpisodeEnded]
    assert (
        {e.trajectory_id for e in seen.events} == {traj.id} == {t.id for t in read_trajectories(tmp_path / "t.jsonl")}
    )
    assert seen.events[0].task_id == "add/0/0"
    assert seen.events[0].started == traj.timing.started


def test_every_model_call_has_an_id_a_start_and_a_duration_in_both_modes():
    async def run():
        a, b = operands("mul/0")
        async with ScriptedModelServer(reply=lambda messages: str(a * b), latency=0.02) as server:
            endpoint = Endpoint("openai:scripted", base_url=server.base_url)
            seen = Everything()
            native = await ToolMathEnvironment("toolmath:mul").arollout(endpoint, task="mul/0", observers=[seen])
            step = await ArithEnvironment("arith:add", size=2, seed=0).arollout(endpoint, observers=[seen])
            await endpoint.aclose()
            return native, step, seen

    native, step, seen = asyncio.run(run())
    for traj in (native, step):
        [call] = traj.model_calls
        assert len(call.id) == 32
        assert traj.timing.started <= call.started <= traj.timing.ended
        assert 0.02 <= call.duration_s <= traj.timing.seconds
        sent, back = (
            e for e in seen.events if e.trajectory_id == traj.id and type(e) in (ModelCallStarted, ModelCallEnded)
        )
        assert sent.call_id == back.call_id == call.id
        assert back.call == call
        assert sent.started == call.started
    assert native.model_calls[0].id != step.model_calls[0].id


def test_a_failed_model_call_ends_with_its_error():
    async def run():
        async with ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("500",))) as server:
            options = {"max_retries": 0}  # every answer is a 500: the call fails as infrastructure
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, provider_options=options)
            seen = Everything()
            traj = await ArithEnvironment("arith:add", size=2, seed=0).arollout(endpoint, observers=[seen])
            await endpoint.aclose()
            return traj, seen

    traj, seen = asyncio.run(run())
    assert traj.status is Status.INFRA_ERROR
    assert traj.model_calls == ()
    sent, failed = (e for e in seen.events if isinstance(e, ModelCallStarted | ModelCallEnded))
    assert failed.call is None
    assert failed.call_id == sent.call_id
    assert failed.error.startswith("InfraFailure: ")


def test_a_step_mode_tool_action_is_a_tool_call_with_its_name_arguments_and_result():
    env = ToolArithEnvironment()
    traj = env.rollout("reference", task="add/0/1")
    a, b = env.operands("add/0/1")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    [call] = traj.tool_calls
    assert (call.name, call.arguments, call.result, call.error, call.step) == (
        "add",
        {"a": a, "b": b},
        f"add returned {a + b}",
        None,
        0,
    )
    assert traj.timing.started <= call.started <= traj.timing.ended
    assert call.duration_s >= 0
    # A call the tool refuses is recorded with the error that ended the episode.
    refused = env.rollout(lambda observation: {"name": "mul", "arguments": {}}, task="add/0/1")
    [bad] = refused.tool_calls
    assert refused.status is Status.POLICY_ERROR
    assert bad.result is None
    assert bad.name == "mul"
    assert bad.error == f"PolicyFailure: {refused.error.split(': ', 1)[1]}"


def test_an_environment_without_tools_is_never_asked_about_them():
    class Asked(ArithEnvironment):
        def session(self, task=None, seed=None):
            session = super().session(task, seed)
            session.tool_call = lambda action: pytest.fail("tool_call asked of an environment without tools")
            return session

    traj = Asked("arith:add", size=1, seed=0).rollout("reference")
    assert traj.status is Status.OK
    assert traj.tool_calls == ()


def test_a_native_loops_tool_messages_are_tool_calls_matched_to_the_reply_that_asked():
    env = ToolMathEnvironment("toolmath:mul")
    seen = Everything()
    traj = env.rollout("reference", task="mul/1", observers=[seen])
    a, b = operands("mul/1")
    asked, answered = traj.model_calls
    [call] = traj.tool_calls
    assert (call.id, call.name, call.arguments, call.result, call.error) == (
        "call_0",
        "multiply",
        {"a": a, "b": b},
        str(a * b),
        None,
    )
    assert call.model_call_id == asked.id
    assert call.started == asked.started + asked.duration_s
    assert call.started + call.duration_s == answered.started  # seen when the request carrying it came
    [event] = (e for e in seen.events if isinstance(e, ToolCalled))
    assert event.tool_call == call


def test_tool_calls_answered_only_in_the_final_transcript_are_recorded_too():
    def always_a_tool(messages):  # never answers: the loop stops after its 4 turns
        turn = sum(m["role"] == "tool" for m in messages)
        call = {"name": "multiply", "arguments": json.dumps({"a": turn, "b": 2})}
        return {"tool_calls": [{"id": f"t{turn}", "type": "function", "function": call}]}

    traj = ToolMathEnvironment("toolmath:mul").rollout(always_a_tool, task="mul/0")
    assert [(c.id, c.arguments, c.result) for c in traj.tool_calls] == [
        (f"t{k}", {"a": k, "b": 2}, str(2 * k)) for k in range(4)
    ]
    assert [c.model_call_id for c in traj.tool_calls] == [c.id for c in traj.model_calls]


def test_a_tool_call_never_answered_is_recorded_with_an_error():
    async def run():
        recorder = EpisodeRecorder()

        async def ask(request):
            call = {"name": "multiply", "arguments": "not json"}
            tool_calls = [{"id": "lost", "type": "function", "function": call}]
            return ModelCall(messages=request.messages, response={"role": "assistant", "tool_calls": tool_calls})

        async with RecordingProxy() as proxy, proxy.episode(responder=ask, recorder=recorder) as route:
            assert route.id == recorder.id
            assert route.base_url.endswith(f"/e/{recorder.id}/v1")
            client = openai.AsyncOpenAI(base_url=route.base_url, api_key="unused", max_retries=0)
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "2*3?"}])
            await client.close()
        recorder.finish_tools(
            [{"role": "user", "content": "no tool message here"}], ended=recorder.model_calls[0].started + 5
        )
        return recorder

    recorder = asyncio.run(run())
    [call] = recorder.tool_calls
    assert (call.id, call.name, call.arguments, call.result, call.error) == (
        "lost",
        "multiply",
        "not json",
        None,
        UNANSWERED,
    )


def test_the_observer_sees_a_step_episode_in_order():
    def reply(messages):  # call the tool first, then answer with what it returned
        last = messages[-1]["content"]
        if last.startswith("add returned"):
            return last.rsplit(" ", 1)[-1]
        a, b = (int(w.rstrip("?")) for w in last.split() if w.rstrip("?").isdigit())
        return json.dumps({"name": "add", "arguments": {"a": a, "b": b}})

    async def run():
        async with ScriptedModelServer(reply=reply) as server:
            endpoint = Endpoint("openai:scripted", base_url=server.base_url)
            seen = Everything()
            traj = await ToolArithEnvironment().arollout(endpoint, task="add/0/2", observers=[seen])
            await endpoint.aclose()
            return traj, seen

    traj, seen = asyncio.run(run())
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert seen.kinds() == ["start", "call", "reply", "tool", "step", "call", "reply", "step", "end"]
    steps = [e for e in seen.events if isinstance(e, StepTaken)]
    assert [(e.index, e.step) for e in steps] == list(enumerate(traj.steps))
    assert seen.events[-1].trajectory == traj


def test_a_synchronous_rollout_without_a_loop_publishes_the_same_events():
    seen = Everything()
    traj = ArithEnvironment("arith:add", size=2, seed=0).rollout(lambda observation: "0", observers=[seen])
    assert seen.kinds(traj.id) == ["start", "step", "end"]
    assert seen.events[-1].trajectory is traj


def test_an_observer_that_raises_loses_no_episode_and_is_reported_once(tmp_path, caplog):
    class Broken(Observer):
        def on_episode_started(self, event):
            raise RuntimeError("broken observer")

        def on_step(self, event):
            raise RuntimeError("broken observer")

        def on_episode_ended(self, event):
            raise RuntimeError("broken observer")

        def __repr__(self):
            return "<Broken>"

    after = Everything()
    env = ArithEnvironment("arith:add?size=3", size=3, seed=0)
    with caplog.at_level(logging.DEBUG, logger="nenyax.events"):
        trajs = env.rollouts("reference", 3, sink=tmp_path / "t.jsonl", observers=[Broken(), after])
    assert [t.status for t in trajs] == [Status.OK] * 3
    assert sorted(t.id for t in read_trajectories(tmp_path / "t.jsonl")) == sorted(t.id for t in trajs)
    assert after.kinds().count("end") == 3  # the observer after the broken one still saw everything
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    [warning] = warnings  # nine failures, one warning: a broken observer does not flood the log
    assert "<Broken>" in warning.getMessage()
    assert warning.exc_info[0] is RuntimeError
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 8


def test_the_sink_writes_each_episode_exactly_once_even_when_also_passed_as_an_observer(tmp_path):
    env = Watched("toolmath:mul", size=4)
    with JsonlSink(tmp_path / "t.jsonl") as sink:
        trajs = env.rollouts("reference", 4, n=2, sink=sink, observers=[sink])
    lines = [orjson.loads(line)["id"] for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    assert len(lines) == 8
    assert sorted(lines) == sorted(t.id for t in trajs)


def test_an_essential_observer_that_fails_stops_the_run(tmp_path):
    class Disk(Observer):
        essential = True

        def on_episode_ended(self, event):
            raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        ArithEnvironment("arith:add", size=2, seed=0).rollouts("reference", 2, observers=[Disk()])


@pytest.mark.parametrize("observers", [[print], "sink.jsonl", 3])
def test_what_is_not_an_observer_is_refused_in_one_sentence(observers):
    env = ArithEnvironment("arith:add", size=2, seed=0)
    with pytest.raises(UsageError, match=r"observer"):
        env.rollouts("reference", 1, observers=observers)
    with pytest.raises(UsageError, match=r"observer"):
        env.rollout("reference", observers=observers)


def test_an_interrupted_episode_ends_once_and_is_written():
    env = ArithEnvironment("arith:add", size=2, seed=0)
    seen = Everything()

    def ctrl_c(observation):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        env.rollout(ctrl_c, observers=[seen])
    assert seen.kinds() == ["start", "end"]
    assert seen.events[-1].trajectory.status is Status.INTERRUPTED
