"""A real run's traces in a real Arize Phoenix server on loopback, read back through Phoenix's own REST API.

`nox -s phoenix` installs Phoenix into a server virtualenv of its own (``[tool.nenyax.server-venv]``,
cached outside the checkout) and names its interpreter in ``NENYAX_PHOENIX_PYTHON``. Without it the test
is skipped, unless ``CI`` is set: there a Phoenix that cannot be started fails it.
"""

import json
import os
import socket
import subprocess
import time
import urllib.request

import pytest

PHOENIX_PYTHON = os.environ.get("NENYAX_PHOENIX_PYTHON")
URI = "reasoning_gym:basic_arithmetic"
PROJECT = "nenyax-test"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    """A Phoenix server on 127.0.0.1 (its own working folder, no telemetry); yields its base URL."""
    if not PHOENIX_PYTHON:
        if os.environ.get("CI"):
            pytest.fail("NENYAX_PHOENIX_PYTHON is not set: run this test through `nox -s phoenix`.")
        pytest.skip("no Phoenix server venv (NENYAX_PHOENIX_PYTHON); `nox -s phoenix` builds one")
    port, grpc = _free_port(), _free_port()
    work = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [PHOENIX_PYTHON, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240  # about 40 s on the shared 2-core machine; its first start migrates SQLite
    try:
        while True:
            if server.poll() is not None:
                pytest.fail(f"Phoenix exited with {server.returncode}: {(work / 'server.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not answer in 240 s: {(work / 'server.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _flat(attributes, prefix=""):
    """Phoenix returns attributes nested by dots (``{"gen_ai": {"operation": ...}}``) or flat: flat, either way."""
    out = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def _spans(base, want, timeout=60):
    """The project's spans, once at least `want` are in (Phoenix ingests in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            spans = _get(f"{base}/v1/projects/{PROJECT}/spans?limit=1000")["data"]
        except OSError:
            spans = []  # the project exists only once its first span is in
        if len(spans) >= want or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def test_an_eval_with_the_embedded_model_is_in_phoenix_as_agent_llm_spans_with_the_run_ids(phoenix, tmp_path, cli):
    run = tmp_path / "run"
    done = cli(
        "eval", URI, "-m", "local:smollm2-135m", "--tasks", "2", "--max-tokens", "8", "--out", str(run), "-q",
        "--trace", "phoenix",
        env={"PHOENIX_COLLECTOR_ENDPOINT": phoenix, "PHOENIX_PROJECT_NAME": PROJECT,
             "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traces lost" not in done.stderr
    trajectories = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    calls = [call for traj in trajectories for call in traj["model_calls"]]
    assert len(trajectories) == 2
    assert calls  # the embedded model answered: there are chat spans to see
    spans = _spans(phoenix, len(trajectories) + len(calls))
    assert len(spans) == len(trajectories) + len(calls)
    roots = {s["context"]["span_id"]: s for s in spans if s["name"] == f"invoke_agent {URI}"}
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert len(roots) == len(trajectories)
    assert len(chats) == len(calls)
    # Phoenix read the GenAI conventions: the episode is an agent, each call an LLM span under it.
    assert {s["span_kind"] for s in roots.values()} == {"AGENT"}
    assert {s["span_kind"] for s in chats} == {"LLM"}
    by_trajectory = {_flat(s["attributes"])["gen_ai.conversation.id"]: s for s in roots.values()}
    assert set(by_trajectory) == {t["id"] for t in trajectories}
    recorded = {call["id"]: (traj["id"], call) for traj in trajectories for call in traj["model_calls"]}
    for chat in chats:
        attributes = _flat(chat["attributes"])
        trajectory_id, call = recorded[attributes["nenyax.model_call.id"]]
        root = roots[chat["parent_id"]]  # the chat span's parent is its episode's agent span
        assert root["context"]["trace_id"] == chat["context"]["trace_id"]
        assert _flat(root["attributes"])["gen_ai.conversation.id"] == trajectory_id
        assert attributes["gen_ai.provider.name"] == "local"
        assert attributes["gen_ai.usage.output_tokens"] == call["usage"]["completion_tokens"]
        assert attributes["gen_ai.request.model"] == call["model"]
        # Content was opted in: the request's messages are there, as the conventions' JSON string.
        messages = json.loads(attributes["gen_ai.input.messages"])
        assert messages[-1]["parts"][0]["content"] == call["messages"][-1]["content"]
    for traj in trajectories:
        root = by_trajectory[traj["id"]]
        attributes = _flat(root["attributes"])
        assert attributes["nenyax.status"] == traj["status"]
        if traj["judgment"] is not None:
            assert attributes["nenyax.judgment.score"] == traj["judgment"]["score"]
            [event] = [e for e in root["events"] if e["name"] == "gen_ai.evaluation.result"]
            assert _flat(event["attributes"])["gen_ai.evaluation.score.value"] == traj["judgment"]["score"]
