"""A rollout-mode environment (the verifiers demo, verifiers' own loop) served loop-owning: OpenEnv's own
`GenericEnvClient` names the policy URL (`nenyax serve-model`, the embedded SmolLM2-135M) in its reset, the
episode runs server-side, and the final observation carries the judgment and OpenEnv's TraceEntry records."""

from __future__ import annotations

import http.server
import threading
import time

import pytest
from conftest import serving
from openenv.core import GenericEnvClient
from openenv.core.harness import LoopOwningSession, TraceEntry

from nenyax.core import load
from nenyax_testsupport.served_model import served_model

ROLLOUT = "verifiers:nenyax.adapters.verifiers.demo:load_environment"


class ServedLoopSession:
    """OpenEnv's `LoopOwningSession` over the wire: a reset starts the loop, a step waits, the trace comes back."""

    def __init__(self, client, policy, **reset):
        self.client = client
        self.first = client.reset(policy=policy, **reset)
        self.result = None

    def wait_for_completion(self, timeout_s=None):
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.result is None or not self.result.done:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError("the served episode is still running")
            self.result = self.client.step({"timeout_s": min(20.0, left or 20.0)})  # under the client's 60 s
        return 0

    def fetch_proxy_trace(self) -> list[TraceEntry]:
        return self.result.observation["trace"]


@pytest.fixture(scope="module")
def demo():
    env = load(ROLLOUT)
    played = []
    arollout = env.arollout

    async def recorded(*args, **kwargs):  # the server-side trajectory, to compare with what came over the wire
        trajectory = await arollout(*args, **kwargs)
        played.append(trajectory)
        return trajectory

    env.arollout = recorded
    with serving(env) as served:
        served.played = played
        yield served


def test_rollout_env_plays_server_side_against_the_named_policy_and_returns_its_trace(demo):
    policy = {"model": "local:smollm2-135m", "sampling": {"max_tokens": 8}}
    # A loop-owning reset must name its policy.
    with GenericEnvClient(base_url=demo.url).sync() as client, pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
        client.reset(index=1)
    with served_model() as base_url, GenericEnvClient(base_url=demo.url).sync() as client:
        session = ServedLoopSession(client, {**policy, "base_url": base_url}, index=1, seed=3)
        assert isinstance(session, LoopOwningSession)
        assert session.first.done is False
        assert session.first.metadata["status"] == "running"
        assert session.wait_for_completion(timeout_s=240) == 0
        trace = session.fetch_proxy_trace()
        final = session.result
        state = client.state()
    (trajectory,) = demo.played
    assert trajectory.status.value == "ok"
    assert trajectory.task_id == load(ROLLOUT).task_ids(None, 2)[1]
    assert final.reward == trajectory.judgment.score == final.metadata["judgment"]["score"]
    assert final.metadata["status"] == "ok"
    assert final.metadata["trajectory_id"] == trajectory.id
    assert len(trace) == len(trajectory.model_calls) >= 1
    for entry, call in zip(trace, trajectory.model_calls, strict=True):
        assert entry["completion_token_ids"] == list(call.completion_token_ids)
        assert entry["prompt_token_ids"] == list(call.prompt_token_ids)
        assert entry["per_token_logps"] == pytest.approx(list(call.logprobs))
        assert len(entry["per_token_logps"]) == len(entry["completion_token_ids"]) <= 8
        assert entry["request"]["messages"] == list(call.messages)
        assert entry["response"]["choices"][0]["message"] == call.response
        assert entry["reward"] == final.reward
    assert state["done"] is True
    assert state["status"] == "ok"
    assert state["step_count"] == len(trace)


class _Gone(http.server.BaseHTTPRequestHandler):
    """A model server that is broken for good (HTTP 410): an infrastructure failure, not retried."""

    def do_POST(self):
        self.send_response(410)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_broken_policy_server_is_an_infra_error_never_a_reward(demo):
    broken = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gone)
    threading.Thread(target=broken.serve_forever, daemon=True).start()
    policy = {"base_url": f"http://127.0.0.1:{broken.server_port}/v1", "sampling": {"max_tokens": 8}}
    try:
        with GenericEnvClient(base_url=demo.url).sync() as client:
            client.reset(policy=policy, index=0)
            with pytest.raises(RuntimeError, match="HTTP 410") as failed:
                client.step({"timeout_s": 50})
            assert client.state()["status"] == "infra_error"
            with pytest.raises(RuntimeError, match="send a reset"):  # over, unjudged: no reward was ever sent
                client.step({})
    finally:
        broken.shutdown()
    assert demo.played[-1].status.value == "infra_error"
    assert "EXECUTION_ERROR" in str(failed.value)
