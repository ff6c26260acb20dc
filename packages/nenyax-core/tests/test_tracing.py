"""The GenAI spans core emits from the event stream, read back from the OpenTelemetry SDK's in-memory exporter.

Real components: the SDK's own provider and exporter, the recording proxy, `Endpoint` against the scripted
model server over HTTP. The environments are core's doubles (`nenyax_testsupport.fakes`, `native_fakes`): core
is tested alone, so no adapter is installed here. A real backend receiving these spans over OTLP is tested
in `packages/nenyax-tracers-otlp` (a local Phoenix server).
"""

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from nenyax.core import Endpoint, Status
from nenyax.core.contract import genai_attributes as ga
from nenyax.core.contract.events import Observers, observers_of
from nenyax.core.engine.executors import publish_played_elsewhere
from nenyax.core.engine.tracing import GenAISpans, capture_content_from_env
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer
from nenyax_testsupport.fakes import ArithEnvironment, ToolArithEnvironment
from nenyax_testsupport.native_fakes import ToolMathEnvironment, operands


@pytest.fixture
def spans():
    """A provider of the test's own (never the global one) and what it exported."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def by_name(finished):
    return {span.name: span for span in finished}


def test_a_native_episode_is_an_agent_span_with_its_chat_and_tool_spans_as_children(spans, monkeypatch):
    monkeypatch.delenv(ga.CAPTURE_CONTENT_ENV, raising=False)
    provider, exporter = spans
    traj = ToolMathEnvironment("toolmath:mul").rollout("reference", task="mul/1", observers=[GenAISpans(provider)])
    assert traj.status is Status.OK
    finished = exporter.get_finished_spans()
    assert sorted(s.name for s in finished) == [
        "chat reference",
        "chat reference",
        "execute_tool multiply",
        "invoke_agent toolmath:mul",
    ]
    root = by_name(finished)["invoke_agent toolmath:mul"]
    assert root.parent is None
    assert root.kind is SpanKind.INTERNAL
    for child in finished:
        if child is not root:
            assert child.parent.span_id == root.context.span_id
            assert child.context.trace_id == root.context.trace_id
        assert child.attributes[ga.CONVERSATION_ID] == traj.id
    assert root.attributes[ga.OPERATION_NAME] == "invoke_agent"
    assert root.attributes[ga.AGENT_NAME] == "toolmath:mul"
    assert root.attributes[ga.STATUS] == "ok"
    assert root.attributes[ga.SCORE] == traj.judgment.score == 1.0
    assert root.status.status_code is StatusCode.UNSET
    # The recorded times, not the moment the observer ran.
    assert root.start_time == int(traj.timing.started * 1e9)
    assert root.end_time == int(traj.timing.ended * 1e9)
    chats = sorted((s for s in finished if s.name == "chat reference"), key=lambda s: s.start_time)
    for span, call in zip(chats, traj.model_calls, strict=True):
        assert span.kind is SpanKind.CLIENT
        assert span.attributes[ga.OPERATION_NAME] == "chat"
        assert span.attributes[ga.MODEL_CALL_ID] == call.id
        assert span.start_time == int(call.started * 1e9)
        assert span.end_time == int((call.started + call.duration_s) * 1e9)
    [tool_call] = traj.tool_calls
    tool = by_name(finished)["execute_tool multiply"]
    assert tool.attributes[ga.TOOL_NAME] == "multiply"
    assert tool.attributes[ga.TOOL_CALL_ID] == tool_call.id == "call_0"
    assert tool.attributes[ga.OPERATION_NAME] == "execute_tool"
    assert tool.start_time == int(tool_call.started * 1e9)
    # Content stays out unless asked for.
    for span in finished:
        assert not {ga.INPUT_MESSAGES, ga.OUTPUT_MESSAGES, ga.TOOL_CALL_ARGUMENTS, ga.TOOL_CALL_RESULT} & set(
            span.attributes
        )


def test_a_model_call_carries_provider_model_usage_parameters_and_finish_reason_and_the_judgment_an_event(spans):
    provider, exporter = spans

    async def run():
        async with ScriptedModelServer(reply=lambda messages: "7") as server:
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, temperature=0.3, max_tokens=16)
            traj = await ArithEnvironment("arith:add?size=2", size=2, seed=0).arollout(
                endpoint, observers=[GenAISpans(provider, capture_content=False)]
            )
            await endpoint.aclose()
            return traj

    traj = asyncio.run(run())
    [call] = traj.model_calls
    finished = by_name(exporter.get_finished_spans())
    assert set(finished) == {"chat scripted", "invoke_agent arith:add"}  # the query string is not in the name
    chat, root = finished["chat scripted"], finished["invoke_agent arith:add"]
    assert chat.attributes[ga.PROVIDER_NAME] == "openai"
    assert chat.attributes[ga.REQUEST_MODEL] == chat.attributes[ga.RESPONSE_MODEL] == "scripted"
    assert chat.attributes[ga.USAGE_INPUT_TOKENS] == call.usage["prompt_tokens"] == 3
    assert chat.attributes[ga.USAGE_OUTPUT_TOKENS] == call.usage["completion_tokens"]
    assert chat.attributes[ga.RESPONSE_FINISH_REASONS] == (call.finish_reason,)
    assert chat.attributes[ga.REQUEST_TEMPERATURE] == 0.3
    assert chat.attributes[ga.REQUEST_MAX_TOKENS] == 16
    assert root.attributes[ga.ENV_URI] == "arith:add?size=2"
    assert root.attributes[ga.PROVIDER_NAME] == "openai"
    assert root.attributes[ga.REQUEST_MODEL] == "scripted"
    assert root.attributes[ga.USAGE_INPUT_TOKENS] == 3
    assert root.attributes[ga.TASK_ID] == traj.task_id
    [event] = root.events
    assert event.name == "gen_ai.evaluation.result"
    assert event.attributes[ga.EVALUATION_SCORE_VALUE] == traj.judgment.score
    assert event.attributes[ga.EVALUATION_NAME] == (traj.judgment.judge or "judgment")
    assert event.attributes[ga.EVALUATION_SCORE_LABEL] == ("pass" if traj.judgment.passed else "fail")
    assert root.attributes[ga.SCORE] == traj.judgment.score
    assert root.attributes[ga.STATUS] == traj.status.value


def test_a_failed_call_and_a_failed_episode_are_error_spans_with_no_judgment(spans):
    provider, exporter = spans

    async def run():
        async with ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("500",))) as server:
            options = {"max_retries": 0}
            endpoint = Endpoint("openai:scripted", base_url=server.base_url, provider_options=options)
            traj = await ArithEnvironment("arith:add", size=2, seed=0).arollout(
                endpoint, observers=[GenAISpans(provider)]
            )
            await endpoint.aclose()
            return traj

    traj = asyncio.run(run())
    assert traj.status is Status.INFRA_ERROR
    finished = by_name(exporter.get_finished_spans())
    chat, root = finished["chat scripted"], finished["invoke_agent arith:add"]
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.status.description.startswith("InfraFailure: ")
    assert chat.attributes[ga.ERROR_TYPE] == "_OTHER"
    assert chat.parent.span_id == root.context.span_id
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes[ga.ERROR_TYPE] == "infra_error"
    assert root.events == ()  # an infrastructure failure is never scored, on a span neither
    assert ga.SCORE not in root.attributes


def test_a_failed_tool_call_is_an_error_span(spans):
    provider, exporter = spans
    env = ToolArithEnvironment()
    traj = env.rollout(
        lambda observation: {"name": "mul", "arguments": {}}, task="add/0/1", observers=[GenAISpans(provider)]
    )
    assert traj.status is Status.POLICY_ERROR
    finished = by_name(exporter.get_finished_spans())
    tool = finished["execute_tool mul"]
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes[ga.STEP] == 0
    root = next(s for s in finished.values() if s.name.startswith("invoke_agent"))
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes[ga.SCORE] == 0.0  # a policy error is judged: scored 0, and says so
    [event] = root.events
    assert event.attributes[ga.EVALUATION_SCORE_VALUE] == 0.0


@pytest.mark.parametrize(("value", "on"), [("true", True), ("SPAN_ONLY", True), ("", False), ("false", False)])
def test_content_capture_follows_the_opentelemetry_variable(value, on):
    assert capture_content_from_env({ga.CAPTURE_CONTENT_ENV: value}) is on
    assert capture_content_from_env({}) is False


def test_message_content_is_recorded_as_json_strings_only_when_asked(spans, monkeypatch):
    monkeypatch.setenv(ga.CAPTURE_CONTENT_ENV, "true")
    provider, exporter = spans
    traj = ToolMathEnvironment("toolmath:mul").rollout("reference", task="mul/1", observers=[GenAISpans(provider)])
    a, b = operands("mul/1")
    finished = exporter.get_finished_spans()
    first = min((s for s in finished if s.name == "chat reference"), key=lambda s: s.start_time)
    inputs = json.loads(first.attributes[ga.INPUT_MESSAGES])
    assert inputs[-1]["role"] == "user"
    assert inputs[-1]["parts"][0]["type"] == "text"
    assert str(a) in inputs[-1]["parts"][0]["content"]
    [output] = json.loads(first.attributes[ga.OUTPUT_MESSAGES])
    [asked] = [p for p in output["parts"] if p["type"] == "tool_call"]
    assert (asked["name"], asked["arguments"], asked["id"]) == ("multiply", {"a": a, "b": b}, "call_0")
    assert [t["function"]["name"] for t in json.loads(first.attributes[ga.TOOL_DEFINITIONS])] == ["multiply"]
    tool = by_name(finished)["execute_tool multiply"]
    assert json.loads(tool.attributes[ga.TOOL_CALL_ARGUMENTS]) == {"a": a, "b": b}
    assert json.loads(tool.attributes[ga.TOOL_CALL_RESULT]) == str(a * b)
    second = max((s for s in finished if s.name == "chat reference"), key=lambda s: s.start_time)
    answered = json.loads(second.attributes[ga.INPUT_MESSAGES])
    assert {"type": "tool_call_response", "id": "call_0", "response": str(a * b)} in answered[-1]["parts"]
    assert traj.status is Status.OK


def test_an_episode_played_elsewhere_gets_the_same_spans_from_its_record(spans):
    """What a worker process sends back (its start and end only) traces like an episode played here."""
    provider, exporter = spans
    live = ToolMathEnvironment("toolmath:mul").rollout("reference", task="mul/2", observers=[GenAISpans(provider)])
    here = sorted((s.name, s.start_time, s.end_time) for s in exporter.get_finished_spans())
    exporter.clear()
    publish_played_elsewhere(observers_of([GenAISpans(provider)]), live)
    elsewhere = exporter.get_finished_spans()
    assert sorted((s.name, s.start_time, s.end_time) for s in elsewhere) == here
    root = by_name(elsewhere)["invoke_agent toolmath:mul"]
    assert all(s.parent.span_id == root.context.span_id for s in elsewhere if s is not root)
    assert isinstance(observers_of([GenAISpans(provider)]), Observers)


def test_without_a_provider_spans_go_to_the_global_one_and_without_the_sdk_nothing_fails(tmp_path):
    """Two fresh interpreters: one with an application's global provider, one where the SDK cannot be imported.

    Core never sets the global provider itself: in the second, after a run, it is still the API's proxy."""
    application = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from nenyax.core.engine.tracing import GenAISpans
        from nenyax_testsupport.native_fakes import ToolMathEnvironment

        spans = GenAISpans()  # made before the application sets its provider: it still receives the spans
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        ToolMathEnvironment("toolmath:mul").rollout("reference", task="mul/0", observers=[spans])
        print(sorted(s.name for s in exporter.get_finished_spans()))
        """
    )
    done = subprocess.run([sys.executable, "-c", application], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip()
        == "['chat reference', 'chat reference', 'execute_tool multiply', 'invoke_agent toolmath:mul']"
    )
    no_sdk = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry.sdk"] = None  # as if only opentelemetry-api were installed
        from opentelemetry import trace
        from nenyax.core.engine.tracing import GenAISpans
        from nenyax_testsupport.native_fakes import ToolMathEnvironment

        traj = ToolMathEnvironment("toolmath:mul").rollout("reference", task="mul/0", observers=[GenAISpans()])
        try:
            import opentelemetry.sdk.trace
        except ImportError:
            print("no sdk")
        print(traj.status.value, type(trace.get_tracer_provider()).__name__)
        """
    )
    done = subprocess.run([sys.executable, "-c", no_sdk], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["no sdk", "ok ProxyTracerProvider"]
    assert "raised" not in done.stderr  # the observer never failed (it would be reported on nenyax.events)


def test_core_never_sets_the_global_provider(spans):
    provider, _ = spans
    ArithEnvironment("arith:add", size=1, seed=0).rollout("reference", observers=[GenAISpans(provider)])
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
