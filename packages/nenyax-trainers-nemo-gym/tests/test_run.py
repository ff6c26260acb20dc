"""nemo-gym's own client (`ServerClient.post`, `raise_for_status`, `get_response_json`) posts dataset rows to
the agent server's `/run`, with `nenyax serve-model` as the policy: what comes back is what NeMo RL trains on."""

from __future__ import annotations

from typing import Any

from conftest import Recorder, client_for, run_all, serving

URI = "reasoning_gym:basic_arithmetic?size=2"


def replayed_score(env: Any, task: str, text: str) -> float:
    """The environment's own judgment of `text` as the answer to `task`, played again without the agent."""
    session = env.session(task=task)
    try:
        step = session.act(session.parse_action(text))
        return session.judge([step]).score
    finally:
        session.close()


def test_run_returns_the_served_token_ids_and_the_judgment_as_reward(recorder: Recorder) -> None:
    # Imported here, while the model server starts (see conftest).
    from nemo_gym.base_resources_server import BaseVerifyResponse
    from nemo_gym.openai_utils import NeMoGymResponseOutputMessageForTraining

    from nenyax.trainers.nemo_gym.cli import agent_from, parser
    from nenyax.trainers.nemo_gym.serve import rows

    # The agent server `nenyax-nemo-gym-agent` starts for this command line (served here in a thread).
    command = ["--env", URI, "--port", "0", "--policy-base-url", recorder.url, "--policy-model-name", "smollm2-135m"]
    agent = agent_from(parser().parse_args([*command, "--max-tokens", "12"]))
    env = agent.env
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
