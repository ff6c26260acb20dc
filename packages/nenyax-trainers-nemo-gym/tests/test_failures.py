"""What `/run` answers when no reward can be given: a failed episode is an HTTP error NeMo RL retries, never 0."""

from __future__ import annotations

import json

import pytest
from aiohttp import ClientResponseError
from conftest import client_for, run_all, serving

from nenyax.core import load
from nenyax.trainers.nemo_gym.cli import free_port, main
from nenyax.trainers.nemo_gym.serve import agent_server, rows

URI = "reasoning_gym:basic_arithmetic?size=2"


def test_an_episode_the_policy_server_failed_is_an_http_503_never_a_reward() -> None:
    env = load(URI)
    dead = f"http://127.0.0.1:{free_port('127.0.0.1')}/v1"  # nothing listens there: the episode ends infra_error
    agent = agent_server(env, dead, "smollm2-135m", port=free_port("127.0.0.1"), max_tokens=8, max_retries=0)
    task = rows(env, limit=1)
    for url in serving(agent):
        client = client_for(url, "nenyax_agent")
        with pytest.raises(ClientResponseError) as failed:
            run_all(client, task)
        assert failed.value.status == 503  # NeMo RL: an infrastructure failure (GymTransportError), retried
        assert b"infra_error" in failed.value.response_content
        with pytest.raises(ClientResponseError) as refused:
            run_all(client, [{k: v for k, v in task[0].items() if k != "nenyax_task"}])
        assert refused.value.status == 422  # a row naming no task is the caller's mistake, before any episode


def test_write_rows_writes_the_rows_the_agent_plays(tmp_path) -> None:
    path = tmp_path / "train.jsonl"
    assert main(["--env", URI, "--write-rows", str(path), "--limit", "2"]) == 0
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert written == rows(URI, limit=2)
    assert {row["agent_ref"]["name"] for row in written} == {"nenyax_agent"}
    assert all(row["responses_create_params"]["input"][-1]["role"] == "user" for row in written)
