"""Loading and playing the tests' own environments on the real ors-sdk server."""

import asyncio
import re

import pytest

from nenyax.core import BadURIError, Status, ToolSession, check, load
from nenyax.core.contract.trajectory import Tier


@pytest.fixture(scope="module")
def math_uri(ors_server):
    return f"ors:{ors_server.url}/mathenv"


@pytest.fixture(scope="module")
def math_env(math_uri):
    env = load(math_uri)
    yield env
    env.close()


def test_manifest_describes_what_the_server_lists(math_env, math_uri):
    manifest = math_env.manifest
    assert manifest.uri == math_uri
    assert manifest.format == "ors"
    assert manifest.name == "mathenv"
    assert set(manifest.tools) == {"hint", "slow", "submit"}
    assert [(s.name, s.count) for s in manifest.splits] == [("test", 3), ("train", 1)]
    caps = manifest.capabilities
    assert caps.stable_task_ids
    assert caps.reference_policy
    assert caps.tools
    assert caps.multi_turn
    assert not caps.seeded
    assert manifest.extra["reference"] == "calls submit(answer=<task.answer>)"
    assert manifest.extra["split_types"] == {"test": "test", "train": "train"}
    assert load(math_uri).digest == math_env.digest


def test_task_ids_follow_the_server_order_and_unknown_ones_are_refused(math_env):
    assert math_env.task_ids() == ["test/0", "test/1", "test/2"]
    assert math_env.task_ids("train") == ["train/0"]
    assert math_env.task_ids(limit=2) == ["test/0", "test/1"]
    with pytest.raises(BadURIError, match="'test/9' is not a task of mathenv; its task ids look like 'test/0'"):
        math_env.rollout("reference", task="test/9")
    with pytest.raises(BadURIError, match=re.escape("no split 'tset'. Did you mean 'test'")):
        math_env.task_ids("tset")


def test_reference_null_and_random_are_judged_by_the_server(math_env):
    ref = math_env.rollout("reference", task="test/1")
    assert ref.status is Status.OK
    assert ref.score == 1.0
    [step] = ref.steps
    assert step.action == {"name": "submit", "input": {"answer": "15"}}
    assert step.observation == {"prompt": [{"text": "What is 3*5?", "detail": None, "type": "text"}]}
    assert step.terminated
    assert step.info["output"]["metadata"] == {"tries": 1}
    assert "Correct!" in ref.judgment.feedback
    assert ref.judgment.judge == "ors:mathenv"
    assert math_env.rollout("null", task="test/1").score == 0.0
    junk = math_env.rollout("random", task="test/1")
    assert junk.score == 0.0
    assert junk.steps[0].action["input"]["answer"]


def test_a_multi_turn_episode_records_each_call(math_env):
    def policy(observation):
        return {"name": "hint"} if "prompt" in observation else {"name": "submit", "input": {"answer": "4"}}

    traj = math_env.rollout(policy, task="test/0")
    assert traj.status is Status.OK
    assert traj.score == 1.0
    assert len(traj.steps) == 2
    hint, submit = traj.steps
    assert hint.reward == 0.0
    assert not hint.terminated
    assert hint.info["output"]["reward"] is None
    assert submit.observation == {
        "tool": "hint",
        "blocks": [{"text": "Compute it step by step.", "detail": None, "type": "text"}],
        "metadata": {"hint": True},
    }
    # Every action is a tool call, recorded as one: name, input, the tool's output, when and how long.
    hinted, submitted = traj.tool_calls
    assert (hinted.name, hinted.arguments, hinted.step) == ("hint", {}, 0)
    assert hinted.result == hint.info["output"]
    assert hinted.error is None
    assert (submitted.name, submitted.arguments, submitted.step) == ("submit", {"answer": "4"}, 1)
    assert submitted.result["finished"] is True
    assert submitted.result["reward"] == 1.0
    assert traj.timing.started <= hinted.started <= submitted.started <= traj.timing.ended
    assert hinted.duration_s > 0
    assert submitted.duration_s > 0


def test_a_tool_call_the_server_refuses_is_recorded_with_its_error(math_env):
    traj = math_env.rollout(lambda _obs: {"name": "no_such_tool", "input": {}}, task="test/0")
    assert traj.status is Status.POLICY_ERROR
    [call] = traj.tool_calls
    assert call.name == "no_such_tool"
    assert call.result is None
    assert call.error.startswith("PolicyFailure: ")


def test_max_turns_cuts_an_episode_that_never_finishes(ors_server):
    env = load(f"ors:{ors_server.url}/mathenv?max_turns=3")
    traj = env.rollout(lambda _obs: {"name": "hint", "input": {}})
    assert traj.status is Status.OK
    assert len(traj.steps) == 3
    assert traj.score == 0.0
    assert traj.judgment.feedback.startswith("not finished after 3 call(s)")
    assert traj.judgment.components["finished"] == 0.0


def test_the_split_option_serves_that_split_only(ors_server):
    env = load(f"ors:{ors_server.url}/mathenv?split=train")
    assert env.task_ids() == ["train/0"]
    assert [s.name for s in env.manifest.splits] == ["train"]
    assert env.rollout("reference").score == 1.0


def test_concurrent_episodes_share_one_connection_pool(math_env):
    trajs = math_env.rollouts("reference", tasks=3, n=4, concurrency=8)
    assert len(trajs) == 12
    assert {t.status for t in trajs} == {Status.OK}
    assert {t.score for t in trajs} == {1.0}
    assert len({t.group_id for t in trajs}) == 3


def test_the_synchronous_session_api_works(math_env):
    session = math_env.session(task="test/2")
    try:
        assert session.observation["prompt"][0]["text"] == "What is 10-7?"
        step = session.act(session.reference_action())
        assert step.reward == 1.0
        assert session.done
    finally:
        session.close()


def test_a_session_offers_its_tools_for_a_native_tool_loop(math_env):
    # What a trainer's own tool loop (TRL's environment_factory) reads: the tools as function schemas, the task
    # as text, and each call's answer as text.
    session = math_env.session(task="test/1")
    try:
        assert isinstance(session, ToolSession)
        specs = {spec["function"]["name"]: spec["function"] for spec in session.tool_specs()}
        assert set(specs) == {"hint", "slow", "submit"}
        assert specs["submit"]["description"] == "Submit the final answer."
        assert specs["submit"]["parameters"]["properties"]["answer"]["type"] == "string"
        assert specs["hint"]["parameters"]["type"] == "object"
        assert session.task_text() == "What is 3*5?"
        hint = session.act(session.tool_action("hint", {}))
        assert session.tool_reply(hint) == "Compute it step by step."
        step = session.act(session.tool_action("submit", {"answer": "15"}))
        assert (session.tool_reply(step), step.reward, session.done) == ("Correct!", 1.0, True)
    finally:
        session.close()


def test_async_sessions_from_one_loop(math_env):
    async def main():
        sessions = [await math_env.asession(task=f"test/{i}") for i in range(3)]
        steps = [await s.aact(s.reference_action()) for s in sessions]
        for s in sessions:
            await s.aclose()
        return steps

    assert [s.reward for s in asyncio.run(main())] == [1.0, 1.0, 1.0]


def test_check_reaches_audited(math_uri):
    report = check(math_uri, samples=3)
    assert report.tier is Tier.AUDITED, [(r.id, r.evidence) for r in report.results]


def test_an_env_without_an_answer_tool_offers_no_builtin_policy(ors_server):
    env = load(f"ors:{ors_server.url}/diceenv")
    caps = env.manifest.capabilities
    assert not (caps.reference_policy)
    assert not (caps.null_policy)
    assert not (caps.random_policy)
    assert "Several tools take one string (rename, roll)" in env.manifest.extra["reference"]
    report = check(f"ors:{ors_server.url}/diceenv", samples=1)
    assert report.tier is Tier.CONNECTABLE
    named = load(f"ors:{ors_server.url}/diceenv?answer_tool=roll")
    assert named.manifest.capabilities.null_policy
    assert not named.manifest.capabilities.reference_policy
    assert named.rollout("null").score == 0.5


def test_answer_key_and_answer_tool_are_checked_against_the_server(ors_server):
    with pytest.raises(BadURIError, match="4 task\\(s\\) lack the field 'gold'"):
        load(f"ors:{ors_server.url}/mathenv?answer_key=gold")
    with pytest.raises(BadURIError, match=re.escape("mathenv has no tool 'sumbit'. Did you mean 'submit'")):
        load(f"ors:{ors_server.url}/mathenv?answer_tool=sumbit")
    with pytest.raises(BadURIError, match="'hint' of mathenv takes no single string argument"):
        load(f"ors:{ors_server.url}/mathenv?terminal_tool=hint")


def test_unknown_environment_and_ambiguous_server_are_one_sentence(ors_server):
    with pytest.raises(BadURIError, match=re.escape("serves no environment 'mathenw'. Did you mean 'mathenv'")):
        load(f"ors:{ors_server.url}/mathenw")
    with pytest.raises(BadURIError, match="serves 3 environments; name one"):
        load(f"ors:{ors_server.url}")
