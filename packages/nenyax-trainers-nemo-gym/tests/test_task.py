"""A task-mode environment behind `/run`: a shipped harbor example, played by harbor's terminus-2 in the bwrap
sandbox against the policy server the row's deployment names, as NeMo RL would post it.

Its own module, so the second xdist worker plays it while the first plays test_run.py; harbor needs a newer
openai than nemo-gym 0.4.0 allows, so the `trainers-nemo-gym-0.4` session leaves it out.
"""

from __future__ import annotations

from conftest import client_for, run_all, serving

from nenyax.adapters.harbor.adapter import example_task

# One turn: the base model does not speak terminus-2's JSON, so its first reply ends the trial. Greedy SmolLM2
# never ends its JSON; terminus-2 asks again within the turn when a reply is cut at the token limit: at 96 tokens
# it asks once (nenyax-trainers-verifiers' test_task.py measured 160 and 512 too).
URI = example_task("hello-file") + "?max_turns=1"


def test_run_plays_a_harbor_task_and_returns_every_call_with_its_token_ids(model_server) -> None:
    from nemo_gym.base_resources_server import BaseVerifyResponse
    from nemo_gym.openai_utils import NeMoGymResponseOutputMessageForTraining

    from nenyax.trainers.nemo_gym.cli import free_port
    from nenyax.trainers.nemo_gym.serve import agent_server, rows

    port = free_port("127.0.0.1")
    agent = agent_server(URI, model_server.url, "smollm2-135m", port=port, max_tokens=96, temperature=0.0)
    (row,) = rows(URI, limit=1)
    for url in serving(agent):
        (result,) = run_all(client_for(url, "nenyax_agent"), [row | {"_ng_rollout_index": 0}])
    verified = BaseVerifyResponse.model_validate(result)
    # harbor's own verifier judged the trial: the file was not written, so the reward is 0, and it is a reward.
    assert result["nenyax_status"] == "ok", result
    assert verified.reward == 0.0
    assert result["nenyax_passed"] is False
    output = result["response"]["output"]
    assert output  # each of terminus-2's model calls, in order
    for item in output:
        message = NeMoGymResponseOutputMessageForTraining.model_validate(item)
        assert message.prompt_token_ids
        assert 0 < len(message.generation_token_ids) == len(message.generation_log_probs) <= 96
    first = NeMoGymResponseOutputMessageForTraining.model_validate(output[0])
    assert len(first.prompt_token_ids) > 300  # terminus-2's own long prompt, not the row's
