"""verl's own `AgentLoopWorker` plays Nenyax rows through `NenyaxAgentLoop`: a step environment (reasoning-gym),
a rollout one (the verifiers demo, its own loop reaching verl's servers through core's recording proxy), and an
episode whose server went away. verl's servers are the tests' stand-in (`support.EmbeddedServers`)."""

from __future__ import annotations

import pytest
import torch
from support import RESPONSE_LENGTH, EmbeddedServers, batch_of, generate, verl_config

from nenyax.core import Status, merged_samples, read_trajectories

STEP = "reasoning_gym:basic_arithmetic?size=2"
ROLLOUT = "verifiers:nenyax.adapters.verifiers.demo:load_environment?num_examples=2"


@pytest.fixture(scope="module")
def servers():
    return EmbeddedServers(max_tokens=8)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def verl_worker(model_folder, servers, runs, tmp_path_factory):
    """verl's worker, its agent loops streaming every episode under `runs` (the registry entry's own key)."""
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    config = verl_config(model_folder)
    entries = OmegaConf.load(config.actor_rollout_ref.rollout.agent.agent_loop_config_path)
    entries[0].runs = str(runs)
    path = tmp_path_factory.mktemp("config") / "agent_loops.yaml"
    OmegaConf.save(entries, path)
    config.actor_rollout_ref.rollout.agent.agent_loop_config_path = str(path)
    return AgentLoopWorker(config, llm_client=servers)


@pytest.fixture
def worker(verl_worker, servers):
    servers.calls.clear()
    return verl_worker


def recorded(runs, output):
    """The trajectories of `output`'s rows, as the agent loops streamed them."""
    by_id = {t.id: t for path in runs.rglob("trajectories.jsonl") for t in read_trajectories(path)}
    return [by_id[i] for i in output.non_tensor_batch["nenyax_trajectory_id"]]


def rows(output):
    """Each row of verl's padded output, unpadded: prompt, response, mask, logprobs, score, extra fields."""
    batch = output.batch
    width = batch["prompts"].shape[1]
    for i in range(len(output)):
        attention = batch["attention_mask"][i].bool()
        prompt = batch["prompts"][i][attention[:width]].tolist()
        kept = attention[width:]
        response = batch["responses"][i][kept].tolist()
        mask = batch["response_mask"][i][kept].tolist()
        logprobs = batch["rollout_log_probs"][i][kept]
        score = batch["rm_scores"][i].sum().item() if "rm_scores" in batch.keys() else None  # noqa: SIM118 - a TensorDict
        extra = {k: output.non_tensor_batch[k][i] for k in output.non_tensor_batch if k.startswith("nenyax_")}
        yield prompt, response, mask, logprobs, score, extra


def plays_every_row_with_what_was_sampled(uri, mode, worker, servers, runs, tmp_path, *, limit=None):
    batch = batch_of(uri, worker.config, worker.tokenizer, tmp_path, repeat=2, limit=limit)
    output = generate(worker, batch)
    trajectories = recorded(runs, output)
    assert len(trajectories) == len(output) == len(batch)
    assert {t.mode.value for t in trajectories} == {mode}
    sampled = {(tuple(p), tuple(c)): lp for _, p, c, lp in servers.calls}
    played = 0
    for (prompt, response, mask, logprobs, score, extra), trajectory in zip(rows(output), trajectories, strict=True):
        assert trajectory.status in (Status.OK, Status.POLICY_ERROR), trajectory.error
        (sample,), forks = merged_samples(trajectory)
        assert forks.count == 0
        # verl got the recorded episode, cut at its response_length as its own loops cut theirs.
        assert prompt == list(sample.prompt_ids)
        assert response == list(sample.completion_ids[:RESPONSE_LENGTH])
        assert mask == list(sample.loss_mask[:RESPONSE_LENGTH])
        assert torch.allclose(logprobs, torch.tensor(sample.logprobs[:RESPONSE_LENGTH]), atol=1e-6)
        # ... which is what verl's servers sampled: every call, its exact prompt ids, tokens and logprobs.
        for call in trajectory.model_calls:
            assert list(call.logprobs) == sampled[call.prompt_token_ids, call.completion_token_ids]
            played += 1
        assert response[: len(trajectory.model_calls[0].completion_token_ids)] == list(
            trajectory.model_calls[0].completion_token_ids
        )
        # The reward is Nenyax's judgment of the episode.
        assert score == pytest.approx(trajectory.judgment.score)
        assert extra["nenyax_status"] == trajectory.status.value
        assert extra["nenyax_trainable"]
    assert played == len(servers.calls)
    # verl's copies of one prompt (its uid) are one Nenyax group, each a sample of its own.
    groups = {}
    for trajectory in trajectories:
        groups.setdefault(trajectory.group_id, []).append(trajectory)
    assert sorted(len(g) for g in groups.values()) == [2] * (len(batch) // 2)
    assert all(len({t.task_id for t in g}) == 1 and len({t.sample for t in g}) == 2 for g in groups.values())
    return output


def test_a_step_environment_is_played_token_in_token_out_by_verl_s_servers(worker, servers, runs, tmp_path):
    plays_every_row_with_what_was_sampled(STEP, "step", worker, servers, runs, tmp_path)


def test_a_rollout_environment_s_own_loop_is_played_by_verl_s_servers(worker, servers, runs, tmp_path):
    plays_every_row_with_what_was_sampled(ROLLOUT, "rollout", worker, servers, runs, tmp_path, limit=1)


def test_an_infrastructure_failure_is_masked_out_never_a_reward_of_zero(worker, servers, runs, tmp_path):
    servers.fail.add("fail")  # the batch's first call: its server goes away
    try:
        output = generate(worker, batch_of(STEP, worker.config, worker.tokenizer, tmp_path, repeat=1))
    finally:
        servers.fail.clear()
    trajectories = recorded(runs, output)
    assert sorted(t.status.value for t in trajectories) == ["infra_error", "ok"]
    lost = [t.status for t in trajectories].index(Status.INFRA_ERROR)
    assert not output.non_tensor_batch["nenyax_trainable"][lost]
    assert output.non_tensor_batch["nenyax_status"][lost] == "infra_error"
    assert not output.batch["response_mask"][lost].any()  # nothing of it is trained on
    assert output.batch["response_mask"][1 - lost].any()
    # Its reward_score is None, not 0: verl then puts no rm_scores on the batch (it scores rows itself).
    assert "rm_scores" not in output.batch.keys()  # noqa: SIM118 - a TensorDict
