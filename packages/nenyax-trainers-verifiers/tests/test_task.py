"""A task-mode environment through verifiers' own runner: a shipped harbor example, played by harbor's terminus-2
in the bwrap sandbox as the seat's harness, every call it made through verifiers' interception endpoint."""

from __future__ import annotations

from support import assert_token_ids, environment, play

from nenyax.adapters.harbor.adapter import example_task

# One turn: the base model does not speak terminus-2's JSON, so its first reply ends the trial. Greedy SmolLM2
# never ends its JSON; terminus-2 asks again within the turn when a reply is cut at the token limit: at 96 tokens
# it asks once (two calls, 14 s here), at 160 five times (63 s).
TASK = example_task("hello-file") + "?max_turns=1"
MAX_TOKENS = 96


def test_verifiers_plays_a_harbor_task_through_the_nenyax_harness(served):
    env = environment(TASK, limit=1)
    (task,) = list(env.taskset)
    assert task.data.mode == "task"
    episode = play(env, task, served, MAX_TOKENS)
    (trace,) = episode.traces
    done = trace.info["nenyax"]
    # harbor's own verifier judged the trial: the file was not written, so the score is 0, and it is a reward.
    assert done["status"] == "ok", trace.errors
    assert done["score"] == 0.0
    assert trace.rewards["nenyax_score"].score == 0.0
    assert episode.ok, episode.errors
    assert done["model_calls"] == len(trace.calls) >= 1
    assert "terminal" in str(trace.messages[0].content).lower()  # terminus-2's own prompt, not Nenyax's
    assert len(trace.info["nenyax_token_ids"][0]["prompt_ids"]) > 300  # and all of it, in ids
    assert_token_ids(trace, MAX_TOKENS)
