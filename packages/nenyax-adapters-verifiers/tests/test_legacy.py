"""The legacy API (verifiers 0.3): a gsm8k-style SingleTurnEnv, environments that misbehave, and `nenyax check`."""

import pytest

from nenyax.core import Status, check, load
from nenyax_testsupport.policies import Outage, Scripted

pytestmark = pytest.mark.legacy

GSM8K = "verifiers:vf-gsm8k-legacy"


@pytest.fixture(scope="module")
def gsm8k():
    env = load(GSM8K)
    yield env
    env.close()


def test_an_installed_env_id_loads_with_stable_row_ids(gsm8k):
    assert gsm8k.manifest.extra["api"] == "legacy"
    assert gsm8k.task_ids(limit=3) == ["eval/0", "eval/1", "eval/2"]
    assert gsm8k.manifest.splits[0].count == 6
    assert gsm8k.manifest.capabilities.reference_policy


def test_the_reference_answers_in_the_parsers_format_and_scores_one(gsm8k):
    traj = gsm8k.rollout("reference", task="eval/3")
    assert traj.status is Status.OK
    assert traj.judgment.score == 1.0
    assert traj.judgment.passed is True
    assert traj.judgment.components["correct_answer"] == 1.0
    # ThinkParser(extract_boxed_answer): the reply needs its think block and a boxed answer.
    reply = traj.model_calls[0].response["content"]
    assert reply.endswith("\\boxed{624}")
    assert "</think>" in reply


def test_the_model_call_goes_through_the_proxy_with_the_environments_prompt(gsm8k):
    policy = Scripted("<think>\nhm\n</think>\n\\boxed{71}")
    traj = gsm8k.rollout(policy, task="eval/0")
    assert traj.status is Status.OK
    assert traj.judgment.score == 0.0
    assert traj.judgment.passed is False
    assert policy.seen[0][0]["role"] == "system"
    assert "48 of her friends" in policy.seen[0][1]["content"]
    assert traj.messages[-1]["content"].endswith("\\boxed{71}")


def test_an_empty_reply_is_judged_not_failed(gsm8k):
    traj = gsm8k.rollout("null", task="eval/1")
    assert traj.status is Status.OK
    assert traj.judgment.score == 0.0
    assert "EmptyModelResponseError" in traj.judgment.feedback


def test_environment_args_reach_load_environment():
    env = load("verifiers:vf-gsm8k-legacy?num_examples=2&eval_split=false")
    assert env.task_ids() == ["train/0", "train/1"]


def test_an_outage_is_infra_error_unscored_and_quick(gsm8k):
    outage = Outage()
    traj = gsm8k.rollout(outage, task="eval/0")
    assert traj.status is Status.INFRA_ERROR
    assert traj.judgment is None
    assert outage.calls == 1  # the client's retries are off: the proxy classifies the first failure


def test_an_environment_that_raises_in_its_loop_is_env_error_with_the_episode_kept():
    env = load("verifiers:vf_odd_legacy:raising")
    traj = env.rollout(Scripted("hello"))
    assert traj.status is Status.ENV_ERROR
    assert traj.judgment is None
    assert "broke on purpose" in traj.error
    assert len(traj.model_calls) == 1


def test_a_ready_environment_instance_loads():
    env = load("verifiers:vf_odd_legacy:READY")
    traj = env.rollout("reference")
    assert traj.judgment.score == 1.0


def test_check_reaches_audited_with_an_answer_column():
    report = check("verifiers:vf-gsm8k-legacy?num_examples=3", samples=3)
    assert report.tier.label == "audited", [(r.id, r.outcome, r.evidence) for r in report.results]


def test_check_without_answers_reaches_trainable_and_says_why():
    env = load("verifiers:vf_odd_legacy:no_answer")
    assert env.manifest.capabilities.reference_policy is False
    assert "no answer" in env.manifest.extra["no_reference"]
    report = check("verifiers:vf_odd_legacy:no_answer", samples=2)
    assert report.tier.label == "trainable", [(r.id, r.outcome, r.evidence) for r in report.results]


TOOLS = "verifiers:vf-tools-legacy"


def test_a_tool_env_s_tool_calls_and_results_are_recorded_through_the_proxy():
    env = load(TOOLS)
    call = {"id": "call_1", "type": "function", "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'}}
    policy = Scripted({"content": None, "tool_calls": [call]}, "42")
    traj = env.rollout(policy, task="eval/0")
    env.close()
    assert traj.status is Status.OK, traj.error
    assert traj.judgment.score == 1.0
    assert len(traj.model_calls) == 2
    assert traj.model_calls[0].tools[0]["function"]["name"] == "multiply"  # the loop offered its tool
    [tool] = traj.tool_calls
    assert (tool.name, tool.arguments, tool.result) == ("multiply", {"a": 6, "b": 7}, "42")
    assert policy.seen[1][-1] == {"role": "tool", "content": "42", "tool_call_id": "call_1"}


def test_try_with_the_embedded_model_shows_the_native_loop_s_calls_with_token_ids():
    """`nenyax try` on the ToolEnv with the real embedded model: every call the loop made, with token ids;
    a tool call the model made comes back parsed and is recorded with its result."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("nenyax.providers.local", reason="needs nenyax-providers-local (nox -s verifiers-0.3 has it)")
    envs = str(Path(__file__).parent / "envs")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join([envs, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "nenyax.cli", "try", TOOLS, "-m", "local:smollm2-135m", "--max-tokens", "48", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # try exits 0 exactly when the episode ended ok
    traj = json.loads(done.stdout)
    assert traj["status"] == "ok", traj["error"]
    assert traj["model_calls"]
    for call in traj["model_calls"]:
        assert call["provider"] == "local"
        assert len(call["completion_token_ids"]) == len(call["logprobs"]) > 0
        assert "<tools>" not in (call["response"].get("content") or "")
    asked = [c for call in traj["model_calls"] for c in call["response"].get("tool_calls") or ()]
    assert len(traj["tool_calls"]) == len(asked)  # each call the model made, answered by the loop's tool


def test_a_rubric_without_reward_functions_gives_no_score():
    env = load("verifiers:vf_odd_legacy:no_reward")
    traj = env.rollout("reference")
    assert traj.status is Status.VERIFIER_ERROR
    assert traj.judgment is None
    assert "No reward judged the episode" in traj.error
    report = check("verifiers:vf_odd_legacy:no_reward", samples=2)
    assert report.tier.label == "connectable", [(r.id, r.outcome, r.evidence) for r in report.results]
