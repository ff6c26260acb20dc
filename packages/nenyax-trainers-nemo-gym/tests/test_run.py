"""nemo-gym's own client (`ServerClient.post`, `raise_for_status`, `get_response_json`) posts dataset rows to
the agent server's `/run`, with `nenyax serve-model` as the policy: what comes back is what NeMo RL trains on;
and what `/run` answers when no reward can be given.

One module, so one worker plays it all: the tests without a model run first, while the model server starts
(conftest), and the environment is loaded once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Recorder, client_for, run_all, serving

URI = "reasoning_gym:basic_arithmetic?size=2"


@pytest.fixture(scope="module")
def env() -> Any:
    from nenyax.core import load

    return load(URI)


def test_an_episode_the_policy_server_failed_is_an_http_503_never_a_reward(env: Any) -> None:
    from aiohttp import ClientResponseError

    from nenyax.trainers.nemo_gym.cli import free_port
    from nenyax.trainers.nemo_gym.serve import agent_server, rows

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
        with pytest.raises(ClientResponseError) as unknown:
            run_all(client, [task[0] | {"nenyax_task": "basic_arithmetic/nope"}])
        assert unknown.value.status == 422  # so is a task the environment does not have (NeMo RL: a data failure)
        assert b"is not a task of" in unknown.value.response_content


def test_write_rows_writes_the_rows_the_agent_plays(tmp_path: Path) -> None:
    from nenyax.trainers.nemo_gym.cli import main
    from nenyax.trainers.nemo_gym.serve import rows

    path = tmp_path / "train.jsonl"
    assert main(["--env", URI, "--write-rows", str(path), "--limit", "2"]) == 0
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert written == rows(URI, limit=2)
    assert {row["agent_ref"]["name"] for row in written} == {"nenyax_agent"}
    assert all(row["responses_create_params"]["input"][-1]["role"] == "user" for row in written)


def replayed_score(env: Any, task: str, text: str) -> float:
    """The environment's own judgment of `text` as the answer to `task`, played again without the agent."""
    session = env.session(task=task)
    try:
        step = session.act(session.parse_action(text))
        return session.judge([step]).score
    finally:
        session.close()


def test_run_returns_the_served_token_ids_and_the_judgment_as_reward(env: Any, recorder: Recorder) -> None:
    # Imported here, while the model server starts (see conftest).
    from nemo_gym.base_resources_server import BaseVerifyResponse
    from nemo_gym.openai_utils import NeMoGymResponseOutputMessageForTraining

    from nenyax.trainers.nemo_gym.cli import agent_from, parser
    from nenyax.trainers.nemo_gym.serve import rows

    # The agent server `nenyax-nemo-gym-agent` starts for this command line (served here in a thread).
    command = ["--env", URI, "--port", "0", "--policy-base-url", recorder.url, "--policy-model-name", "smollm2-135m"]
    agent = agent_from(parser().parse_args([*command, "--max-tokens", "12"]))
    batch = rows(env, limit=2)
    batch = [batch[0] | {"_ng_rollout_index": i} for i in range(2)] + [batch[1] | {"_ng_rollout_index": 0}]
    batch[0]["responses_create_params"] |= {"temperature": 0.0, "max_output_tokens": 8}
    recorder.upstream()  # the model server is up
    for url in serving(agent):
        recorder.answers.clear()
        results = run_all(client_for(url, "nenyax_agent"), batch)
    assert len(recorder.answers) == len(batch) == len(results)  # one model call per episode, every one served
    returned, texts = [], []
    for row, result in zip(batch, results, strict=True):
        verified = BaseVerifyResponse.model_validate(result)  # nemo-gym's own verify-response model
        assert result["nenyax_task"] == row["nenyax_task"]
        assert result["nenyax_status"] == "ok"
        (item,) = result["response"]["output"]
        message = NeMoGymResponseOutputMessageForTraining.model_validate(item)
        returned.append((message.prompt_token_ids, message.generation_token_ids, message.generation_log_probs))
        texts.append(message.content[0].text)
        # The reward is the environment's own judgment of the reply, played again here without the agent.
        assert verified.reward == replayed_score(env, row["nenyax_task"], message.content[0].text)
    # Exactly what the model server answered, each answer once: its prompt ids, sampled ids and their logprobs.
    served = [
        (
            answer["prompt_token_ids"],
            answer["choices"][0]["token_ids"],
            [entry["logprob"] for entry in answer["choices"][0]["logprobs"]["content"]],
        )
        for answer in recorder.answers
    ]
    assert sorted(returned) == sorted(served)
    assert sorted(texts) == sorted(answer["choices"][0]["message"]["content"] for answer in recorder.answers)
    # The row's sampling parameters reached the model: the first row asked for 8 tokens at most.
    assert len(results[0]["response"]["output"][0]["generation_token_ids"]) <= 8
