"""`nenyax eval` and `nenyax try --trace ...`, as a user runs them, against a real OTLP/HTTP receiver on loopback,
and against a collector that is down: the run is the same, and the loss is said once."""

import json
import tomllib

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from nenyax.tracers.otlp.delivery import CountingExporter

URI = "reasoning_gym:basic_arithmetic"


def test_an_eval_run_sends_one_agent_span_per_episode_with_its_judgment(receiver, tmp_path, cli, span_attributes):
    nenyax, attributes = cli, span_attributes
    seen, base = receiver
    run = tmp_path / "run"
    done = nenyax(
        "eval", URI, "--policy", "reference", "--tasks", "3", "--out", str(run), "-q", "--trace", "otlp",
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": base},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traces lost" not in done.stderr
    trajectories = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    spans = [span for span, _ in seen.spans]
    assert sorted(span.name for span in spans) == [f"invoke_agent {URI}"] * 3
    by_id = {attributes(span)["gen_ai.conversation.id"]: span for span in spans}
    assert set(by_id) == {t["id"] for t in trajectories}
    for traj in trajectories:
        span = by_id[traj["id"]]
        attrs = attributes(span)
        assert attrs["gen_ai.operation.name"] == "invoke_agent"
        assert attrs["nenyax.judgment.score"] == traj["judgment"]["score"] == 1.0
        assert attrs["nenyax.task.id"] == traj["task_id"]
        [event] = span.events
        assert event.name == "gen_ai.evaluation.result"
        assert {kv.key for kv in event.attributes} >= {"gen_ai.evaluation.name", "gen_ai.evaluation.score.value"}
        assert span.start_time_unix_nano == int(traj["timing"]["started"] * 1e9)
    assert {resource["service.name"] for _, resource in seen.spans} == {"nenyax"}
    settings = tomllib.loads((run / "run.toml").read_text())
    assert "trace" not in settings  # where spans went is no part of the run's record (a resume may trace elsewhere)


def test_episodes_played_on_worker_processes_are_traced_from_this_one(receiver, tmp_path, cli, span_attributes):
    seen, base = receiver
    run = tmp_path / "run"
    done = cli(
        "eval", URI, "--policy", "reference", "--tasks", "2", "--backend", "process", "--workers", "1",
        "--out", str(run), "-q", "--trace", "otlp", env={"OTEL_EXPORTER_OTLP_ENDPOINT": base},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = {json.loads(line)["id"] for line in (run / "trajectories.jsonl").read_text().splitlines()}
    assert {span_attributes(span)["gen_ai.conversation.id"] for span, _ in seen.spans} == ids
    assert len(seen.spans) == 2


def test_a_collector_that_is_down_loses_the_traces_not_the_run_and_says_so_once(closed_port, tmp_path, cli):
    nenyax = cli
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port}", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "3"}
    plain = nenyax("eval", URI, "--policy", "reference", "--tasks", "4", "--out", str(tmp_path / "a"), "-q")
    traced = nenyax(
        "eval", URI, "--policy", "reference", "--tasks", "4", "--out", str(tmp_path / "b"), "-q", "--trace", "otlp",
        env=env,
    )  # fmt: skip
    assert traced.returncode == plain.returncode == 0, traced.stderr
    assert (tmp_path / "b" / "trajectories.jsonl").read_text().count("\n") == 4
    lost = [line for line in traced.stderr.splitlines() if "Traces lost" in line]
    assert lost == [
        f"Warning: Traces lost: 4 of 4 span(s) could not be sent to http://127.0.0.1:{closed_port}/v1/traces "
        "([Errno 111] Connection refused); the run itself is complete."
    ]
    assert "Failed to export" not in traced.stderr
    assert "Transient error" not in traced.stderr
    assert traced.stderr.count("\n") == plain.stderr.count("\n") + 1  # that one line, nothing per span


def test_try_traces_too_and_keeps_its_exit_code_when_the_collector_is_down(receiver, closed_port, cli):
    nenyax = cli
    seen, base = receiver
    done = nenyax("try", URI, "--policy", "reference", "--trace", "otlp", env={"OTEL_EXPORTER_OTLP_ENDPOINT": base})
    assert done.returncode == 0, done.stderr
    assert [span.name for span, _ in seen.spans] == [f"invoke_agent {URI}"]
    down = nenyax(
        "try", URI, "--policy", "null",
        env={"NENYAX_TRACE": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{closed_port}",
             "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1"},
    )  # fmt: skip
    plain = nenyax("try", URI, "--policy", "null")
    assert down.returncode == plain.returncode == 0, down.stderr  # scored 0, judged: tracing changes nothing
    assert sum("Traces lost: 1 of 1 span(s)" in line for line in down.stderr.splitlines()) == 1


def test_an_unknown_tracer_or_a_missing_key_is_refused_before_any_episode(tmp_path, cli):
    nenyax = cli
    unknown = nenyax(
        "eval", URI, "--policy", "reference", "--tasks", "1", "--out", str(tmp_path / "a"), "--trace", "phoenx"
    )
    assert unknown.returncode == 2
    assert "No tracer named 'phoenx' is installed" in unknown.stderr
    assert "phoenix" in unknown.stderr
    assert not (tmp_path / "a").exists()
    missing = nenyax("try", URI, "--policy", "reference", "--trace", "langfuse")
    assert missing.returncode == 2
    assert "The langfuse tracer needs LANGFUSE_PUBLIC_KEY: set that environment variable" in missing.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr


class Refusing(SpanExporter):
    """A collector that refuses every batch (a fake: stands for any backend answering an error)."""

    def __init__(self):
        self.calls = 0

    def export(self, spans):
        self.calls += 1
        return SpanExportResult.FAILURE

    def shutdown(self):
        pass


def test_after_a_lost_batch_the_exporter_pauses_instead_of_waiting_out_every_batch():
    inner = Refusing()
    counting = CountingExporter(inner, "http://collector/v1/traces", pause_s=60)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(counting))
    tracer = provider.get_tracer("test")
    for k in range(5):
        tracer.start_span(f"s{k}").end()
    provider.shutdown()
    assert inner.calls == 1  # tried once; the four after it counted lost at once
    delivery = counting.delivery()
    assert (delivery.sent, delivery.lost) == (0, 5)
    assert delivery.note.startswith("Traces lost: 5 of 5 span(s) could not be sent to http://collector/v1/traces")
