"""A rollout environment's own loop runs as the seat's harness, in-process against verifiers' interception endpoint;
and an episode that failed for a reason that is not the policy's is no reward, in verifiers' own failed state."""

from __future__ import annotations

from support import assert_token_ids, environment, play

DEMO = "verifiers:nenyax.adapters.verifiers.demo:load_environment"
REASONING = "reasoning_gym:basic_arithmetic?size=2"


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
