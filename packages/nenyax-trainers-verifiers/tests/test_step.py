"""verifiers 0.4's own runner plays Nenyax step environments as v1 tasksets against `nenyax serve-model`: the
Nenyax session is the seat's user, the judgment is verifiers' reward, and the trace carries the token ids."""

from __future__ import annotations

from support import assert_token_ids, environment, play

from nenyax.trainers.verifiers import NenyaxEnv, NenyaxHarness, NenyaxTaskset

REASONING = "reasoning_gym:basic_arithmetic?size=2"
GYM = "gymnasium:FrozenLake-v1?is_slippery=false&max_episode_steps=2&retries=0&on_unparseable=random&tasks=2"


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
