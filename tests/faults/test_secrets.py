"""An API key set in the environment never appears in what a run leaves behind.

The key is sent (the scripted server sees ``Bearer <key>`` on every call, so these tests cannot pass by
never using it), then every output is searched for it: the run directory, `nenyax try`'s saved run and
HTML replay, each export (JSONL, Parquet read back as rows, an HF dataset), `nenyax view`'s page, the
OTLP spans a real exporter sent to a collector on loopback, the in-process GenAI spans, and every
line the CLI printed, including a run against a server that refuses the key and echoes it back in
its error (as some servers do). The model server is `ScriptedModelServer` (no real model server can be given a
key to check); everything else is the real CLI, the real reasoning-gym adapter and the real exporters.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from nenyax.core import Endpoint, Registry, Status, load, load_run
from nenyax.core.contract import genai_attributes as ga
from nenyax.core.engine.tracing import GenAISpans
from nenyax.testing.collector import Collector
from nenyax.testing.model_server import FaultPlan, ScriptedModelServer, serving_in_thread
from nenyax_testsupport.native_fakes import NativeAdapters, solving_reply

KEY = f"sk-nenyax-{secrets.token_hex(20)}"
VAR = "NENYAX_FAULT_KEY"
URI = "reasoning_gym:basic_arithmetic?size=6&seed=5"


def nenyax(*args: object, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # the key comes only from VAR
    return subprocess.run(
        [sys.executable, "-m", "nenyax.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=600,
        check=False,
    )


def readable(path: Path) -> bytes:
    """A file's bytes as a search can see them: Parquet and gzip are compressed, so read back their content."""
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes())
    return path.read_bytes()


def assert_no_key_in(root: Path, texts: list[str]) -> int:
    """Search every file under `root` and every text; return how many files were searched."""
    files = [p for p in root.rglob("*") if p.is_file()]
    for path in files:
        assert KEY.encode() not in readable(path), f"the API key is in {path}"
    for text in texts:
        assert KEY not in text
    return len(files)


def test_runs_exports_replays_logs_and_traces_never_hold_the_key(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    printed: list[str] = []
    # 30% of calls answered 429 or 500 first: the retry path, with its log lines, runs too.
    server = ScriptedModelServer(solving_reply, faults=FaultPlan(rate=0.3, kinds=("429", "500"), seed=3))
    with serving_in_thread(server), Collector() as collector:
        env = {VAR: KEY, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, ga.CAPTURE_CONTENT_ENV: "true"}
        model = ["--model", "openai:scripted", "--base-url", server.base_url, "--api-key-env", VAR]
        runs = []

        def run(*args: object) -> subprocess.CompletedProcess:
            done = nenyax(*args, env=env)
            printed.extend([done.stdout, done.stderr])
            return done

        done = run("eval", URI, *model, "--tasks", "6", "-k", "2", "--out", out / "eval", "--trace", "otlp")
        assert done.returncode == 0, done.stderr
        runs.append(out / "eval")
        done = run("try", URI, *model, "--html", out / "try.html", "--save", out / "try", "--trace", "otlp")
        assert done.returncode == 0, done.stderr
        runs.append(out / "try")
        # A server that refuses the key and echoes it in its error, as some do: the error is said, the key is not.
        with serving_in_thread(ScriptedModelServer(faults=FaultPlan(rate=1.0, kinds=("401",)))) as refusing:
            refused = ["--model", "openai:scripted", "--base-url", refusing.base_url, "--api-key-env", VAR]
            done = run("eval", URI, *refused, "--tasks", "2", "--out", out / "refused")
        assert done.returncode != 0
        assert "rejected the API key" in done.stderr
        assert "Traceback" not in done.stderr
        assert refusing.injected["401"] >= 1
        for to, rows in (("jsonl", "sft"), ("parquet", "raw"), ("hf", "raw")):
            done = run("export", out / "eval", "--to", to, "--rows", rows, "--out", out / f"export-{rows}.{to}")
            assert done.returncode == 0, done.stderr
        done = run("view", out / "eval", "--out", out / "view.html")
        assert done.returncode == 0, done.stderr

    assert server.authorizations == {f"Bearer {KEY}": server.requests}  # the key was used, on every call
    assert len(load_run(out / "eval").trajectories) == 12
    assert collector.requests, "no spans reached the collector"
    assert collector.holds("invoke_agent")
    spans = [r.body.decode("latin-1") + json.dumps(r.headers) for r in collector.requests]
    searched = assert_no_key_in(out, printed + spans)
    assert searched >= 10  # run.toml, trajectories, summaries, replays, exports: there was something to search
    assert (out / "export-raw.parquet").exists()
    assert (out / "export-raw.hf").is_dir()


def test_native_loops_and_graded_tasks_through_the_proxy_never_record_the_key(tmp_path, monkeypatch):
    """Rollout mode (a native loop on the official `openai` client, through the recording proxy) and task
    mode (a graded shell task in a local sandbox), with content captured in the spans."""
    monkeypatch.setenv(VAR, KEY)
    monkeypatch.setenv(ga.CAPTURE_CONTENT_ENV, "true")
    registry = Registry.from_plugins(("native", NativeAdapters()))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def play(server: ScriptedModelServer) -> None:
        endpoint = Endpoint("openai:scripted", base_url=server.base_url, api_key_env=VAR)
        try:
            for uri, n in (("toolmath:mul?size=4", 1), (f"shelltask:hello?root={tmp_path / 'tasks'}", 2)):
                env = load(uri, registry=registry)
                name = uri.split(":")[0]
                trajectories = await env.arollouts(
                    endpoint, None, n=n, sink=tmp_path / f"{name}.jsonl", observers=[GenAISpans(provider)]
                )
                assert trajectories
                assert all(t.status is Status.OK and t.model_calls for t in trajectories), name
        finally:
            await endpoint.aclose()

    async def main() -> int:
        async with ScriptedModelServer(solving_reply) as server:
            await play(server)
            assert server.authorizations == {f"Bearer {KEY}": server.requests}
            return server.requests

    assert asyncio.run(main()) > 0
    provider.shutdown()
    finished = exporter.get_finished_spans()
    assert any(s.name.startswith("chat") for s in finished)
    assert_no_key_in(tmp_path, [span.to_json() for span in finished])
