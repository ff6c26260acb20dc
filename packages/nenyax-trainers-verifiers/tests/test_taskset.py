"""verifiers 0.4's own runner plays Nenyax environments as v1 tasksets against `nenyax serve-model`: a step
session is the seat's user, a rollout environment's loop runs as the seat's harness, the judgment is verifiers'
reward, the trace carries the token ids, and a failure that is not the policy's is no reward."""

from __future__ import annotations

import itertools

from support import MAX_TOKENS, environment, play

from nenyax.trainers.verifiers import NenyaxEnv, NenyaxHarness, NenyaxTaskset

REASONING = "reasoning_gym:basic_arithmetic?size=2"
DEMO = "verifiers:nenyax.adapters.verifiers.demo:load_environment"
GYM = "gymnasium:FrozenLake-v1?is_slippery=false&max_episode_steps=2&retries=0&on_unparseable=random&tasks=2"


def assert_token_ids(trace) -> None:
    """Each model call of the trace kept the ids and logprobs the server sampled."""
    calls = trace.info["nenyax_token_ids"]
    assert calls
    assert len(calls) == len(trace.calls) == trace.num_turns
    for call in calls:
        assert call["prompt_ids"]
        assert 0 < len(call["completion_ids"]) <= MAX_TOKENS
        assert len(call["logprobs"]) == len(call["completion_ids"])
    # Each later prompt extends the one before (the same conversation, one turn longer).
    for before, after in itertools.pairwise(calls):
        assert after["prompt_ids"][: len(before["prompt_ids"])] == before["prompt_ids"]


def test_verifiers_plays_a_reasoning_gym_task_and_scores_it(served):
    env = environment(REASONING)
    assert isinstance(env, NenyaxEnv)
    assert isinstance(env.taskset, NenyaxTaskset)
    assert isinstance(env._harnesses["player"], NenyaxHarness)
    tasks = list(env.taskset)
    assert [t.data.id for t in tasks] == env.taskset.env.task_ids()
    assert len({t.key for t in tasks}) == len(tasks) == 2

    episode = play(env, tasks[0], served)
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    done = trace.info["nenyax"]
    assert done["status"] in ("ok", "policy_error")
    assert done["task_id"] == tasks[0].data.id
    assert trace.rewards["nenyax_score"].score == done["score"] == trace.reward
    assert trace.num_turns == 1  # one question, one answer
    assert_token_ids(trace)


def test_verifiers_plays_a_gymnasium_episode_turn_by_turn(served):
    env = environment(GYM, limit=1)
    (task,) = list(env.taskset)
    episode = play(env, task, served)
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    done = trace.info["nenyax"]
    assert done["status"] == "ok"
    assert done["steps"] == 2
    assert trace.num_turns == 2  # the session answered the first reply with the next observation
    assert trace.rewards["nenyax_score"].score == done["score"]
    assert trace.metrics["nenyax/steps"] == 2.0
    assert_token_ids(trace)


def test_verifiers_plays_a_rollout_environment_through_the_nenyax_harness(served):
    env = environment(DEMO, limit=1)
    (task,) = list(env.taskset)
    assert task.data.mode == "rollout"
    assert task.data.prompt
    episode = play(env, task, served)
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    done = trace.info["nenyax"]
    assert done["status"] in ("ok", "policy_error")
    assert done["model_calls"] == len(trace.calls) == 1
    assert trace.rewards["nenyax_score"].score == done["score"]
    assert "nenyax/correct_answer" in trace.metrics  # the demo's own reward, as a component
    assert trace.messages[-1].content  # verifiers' interception recorded the native loop's call
    assert_token_ids(trace)


def test_a_failure_that_is_not_the_policys_is_no_reward():
    env = environment(REASONING, retries=0, limit=1)
    (task,) = list(env.taskset)
    episode = play(env, task, "http://127.0.0.1:9/v1")  # nothing listens: the model call fails
    (trace,) = episode.traces
    assert trace.info["nenyax"]["status"] == "infra_error"
    assert trace.info["nenyax"]["score"] is None
    assert trace.rewards.get("nenyax_score") is None  # never a reward of 0: verifiers scored nothing
    assert not trace.ok
    assert not episode.ok
    assert trace.errors
